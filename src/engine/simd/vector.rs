//! One small vector interface over unsigned saturating lanes (8- or 16-bit), implemented
//! for AVX-512BW, AVX2 and SSE4.1 from one macro, and in plain Rust as the portable
//! fallback. The kernels are generic over it; each instruction set gets its own compiled
//! copy through a `#[target_feature]` entry point (see `mod.rs`).
//!
//! Every method is `unsafe`: it may only run on a CPU with the type's instruction set,
//! which the engine checks once at construction.

#![allow(clippy::missing_safety_doc)]

/// Unsigned saturating lanes in one register.
pub trait Vector: Copy + Send + Sync {
    /// Lanes per register.
    const LANES: usize;
    /// Bytes per register (a multiple of 16).
    const BYTES: usize;
    /// Bytes per lane: 1 or 2.
    const WIDTH: usize;
    /// Largest lane value.
    const MAX: u32;

    unsafe fn zero() -> Self;
    /// Every lane `x`, clamped to `MAX`.
    unsafe fn splat(x: u32) -> Self;
    /// Every byte `b` (whatever the lane width).
    unsafe fn splat_bytes(b: u8) -> Self;
    unsafe fn load(p: *const u8) -> Self;
    unsafe fn store(self, p: *mut u8);
    /// Lane-wise saturating add, saturating subtract, maximum.
    unsafe fn adds(self, o: Self) -> Self;
    unsafe fn subs(self, o: Self) -> Self;
    unsafe fn max(self, o: Self) -> Self;
    unsafe fn or(self, o: Self) -> Self;
    /// Lane-wise wrapping add and subtract.
    unsafe fn add_lanes(self, o: Self) -> Self;
    unsafe fn sub_lanes(self, o: Self) -> Self;
    /// Lane-wise maximum of lanes read as signed.
    unsafe fn max_signed(self, o: Self) -> Self;
    /// `max_signed(self, floor)`, where the instruction set can spare the maximum's port:
    /// AVX-512 compares into a mask and blends, which issue on other ports than the
    /// maximum (Sapphire Rapids runs 512-bit maxima on one port only).
    #[inline(always)]
    unsafe fn floor(self, floor: Self) -> Self {
        self.max_signed(floor)
    }
    /// Byte-wise saturating add and wrapping subtract (for building shuffle indices).
    unsafe fn adds_bytes(self, o: Self) -> Self;
    unsafe fn sub_bytes(self, o: Self) -> Self;
    /// `pshufb`: each byte picks `table[idx & 15]` within its 16-byte block, or 0 when
    /// the index byte has its high bit set.
    unsafe fn shuffle_bytes(table: Self, idx: Self) -> Self;
    /// All lanes 0.
    unsafe fn is_zero(self) -> bool;
    /// Lanes moved up by one (lane k to k + 1), lane 0 becomes 0: the striped layout's
    /// step from one segment to the next.
    unsafe fn shift_up(self) -> Self;
    /// Lanes moved up by `n` (a power of two below `LANES`), zeros coming in below: the
    /// steps of a prefix scan across lanes. Callers pass constants, so the match folds.
    unsafe fn shift_up_lanes(self, n: usize) -> Self;

    /// Lane values, for the rare scalar look at a register.
    #[inline(always)]
    unsafe fn lanes(self) -> [u32; 64] {
        let mut bytes = [0u8; 128];
        self.store(bytes.as_mut_ptr());
        let mut out = [0u32; 64];
        for (l, o) in out.iter_mut().enumerate().take(Self::LANES) {
            *o = if Self::WIDTH == 1 {
                bytes[l] as u32
            } else {
                u16::from_le_bytes([bytes[2 * l], bytes[2 * l + 1]]) as u32
            };
        }
        out
    }

    /// The highest lane, reduced in log2(LANES) vector steps.
    #[inline(always)]
    unsafe fn hmax(self) -> u32 {
        // Spelled out so every shift is a constant (a loop here compiles to a jump table).
        let mut x = self;
        for n in [32, 16, 8, 4, 2, 1] {
            if n < Self::LANES {
                x = x.max(x.shift_up_lanes(n));
            }
        }
        x.lanes_top()
    }

    /// The value of the highest lane.
    #[inline(always)]
    unsafe fn lanes_top(self) -> u32 {
        let mut bytes = [0u8; 64];
        self.store(bytes.as_mut_ptr());
        let at = (Self::LANES - 1) * Self::WIDTH;
        if Self::WIDTH == 1 {
            bytes[at] as u32
        } else {
            u16::from_le_bytes([bytes[at], bytes[at + 1]]) as u32
        }
    }
}

/// What the modes' inter-sequence kernel (`modes`) needs beyond [`Vector`], for 16-bit lanes.
pub trait LaneSelect: Vector {
    /// `LANES` signed bytes from `p`, each widened to its 16-bit lane.
    unsafe fn load_widened(p: *const u8) -> Self;
}

#[cfg(target_arch = "x86_64")]
pub use x86::*;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Vector;
    use std::arch::x86_64::*;

    /// One x86 vector type from the intrinsics of its instruction set.
    macro_rules! x86_vector {
        ($name:ident, $reg:ty, $feat:literal, width: $w:expr,
         zero: $zero:ident, set1: $set1:ident as $set1_ty:ty, set1_8: $set1_8:ident,
         adds: $adds:ident, subs: $subs:ident, max: $max:ident, or: $or:ident,
         add: $add:ident, sub: $sub:ident, max_signed: $smax:ident, $(floor: $floor:ident,)?
         adds8: $adds8:ident, sub8: $sub8:ident, shuffle: $shuffle:ident,
         is_zero: $is_zero:ident, shift_bytes: $shift_bytes:ident) => {
            #[derive(Clone, Copy)]
            pub struct $name($reg);

            impl Vector for $name {
                const LANES: usize = std::mem::size_of::<$reg>() / $w;
                const BYTES: usize = std::mem::size_of::<$reg>();
                const WIDTH: usize = $w;
                const MAX: u32 = if $w == 1 { u8::MAX as u32 } else { u16::MAX as u32 };

                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn zero() -> Self {
                    $name($zero())
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn splat(x: u32) -> Self {
                    $name($set1(x.min(Self::MAX) as $set1_ty))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn splat_bytes(b: u8) -> Self {
                    $name($set1_8(b as i8))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn load(p: *const u8) -> Self {
                    $name((p as *const $reg).read_unaligned())
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn store(self, p: *mut u8) {
                    (p as *mut $reg).write_unaligned(self.0)
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn adds(self, o: Self) -> Self {
                    $name($adds(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn subs(self, o: Self) -> Self {
                    $name($subs(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn max(self, o: Self) -> Self {
                    $name($max(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn or(self, o: Self) -> Self {
                    $name($or(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn add_lanes(self, o: Self) -> Self {
                    $name($add(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn sub_lanes(self, o: Self) -> Self {
                    $name($sub(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn max_signed(self, o: Self) -> Self {
                    $name($smax(self.0, o.0))
                }
                $(
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn floor(self, floor: Self) -> Self {
                    $name($floor(self.0, floor.0))
                }
                )?
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn adds_bytes(self, o: Self) -> Self {
                    $name($adds8(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn sub_bytes(self, o: Self) -> Self {
                    $name($sub8(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn shuffle_bytes(table: Self, idx: Self) -> Self {
                    $name($shuffle(table.0, idx.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn is_zero(self) -> bool {
                    $is_zero(self.0)
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn shift_up(self) -> Self {
                    $name($shift_bytes(self.0, $w))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn shift_up_lanes(self, n: usize) -> Self {
                    $name($shift_bytes(self.0, n * $w))
                }
            }
        };
    }

    #[inline]
    #[target_feature(enable = "sse4.1")]
    unsafe fn sse_is_zero(x: __m128i) -> bool {
        _mm_testz_si128(x, x) != 0
    }
    #[inline]
    #[target_feature(enable = "sse4.1")]
    unsafe fn sse_shift_bytes(x: __m128i, b: usize) -> __m128i {
        match b {
            1 => _mm_slli_si128::<1>(x),
            2 => _mm_slli_si128::<2>(x),
            4 => _mm_slli_si128::<4>(x),
            8 => _mm_slli_si128::<8>(x),
            _ => _mm_setzero_si128(),
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_is_zero(x: __m256i) -> bool {
        _mm256_testz_si256(x, x) != 0
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_shift_bytes(x: __m256i, b: usize) -> __m256i {
        let carry = _mm256_permute2x128_si256::<0x08>(x, x);
        match b {
            1 => _mm256_alignr_epi8::<15>(x, carry),
            2 => _mm256_alignr_epi8::<14>(x, carry),
            4 => _mm256_alignr_epi8::<12>(x, carry),
            8 => _mm256_alignr_epi8::<8>(x, carry),
            16 => carry,
            _ => _mm256_setzero_si256(),
        }
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    unsafe fn avx512_is_zero(x: __m512i) -> bool {
        _mm512_test_epi8_mask(x, x) == 0
    }

    #[inline]
    #[target_feature(enable = "avx512bw")]
    unsafe fn avx512_shift_bytes(x: __m512i, b: usize) -> __m512i {
        // `below`: each 128-bit block holds the block under it.
        let below = _mm512_maskz_shuffle_i64x2::<0b10_01_00_00>(0b1111_1100, x, x);
        match b {
            1 => _mm512_alignr_epi8::<15>(x, below),
            2 => _mm512_alignr_epi8::<14>(x, below),
            4 => _mm512_alignr_epi8::<12>(x, below),
            8 => _mm512_alignr_epi8::<8>(x, below),
            16 => below,
            32 => _mm512_maskz_shuffle_i64x2::<0b01_00_00_00>(0b1111_0000, x, x),
            _ => _mm512_setzero_si512(),
        }
    }

    /// `max(x, floor)` of signed lanes as a compare into a mask and a blend. Written in
    /// assembly because the compiler turns the intrinsics back into the maximum.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    unsafe fn avx512_floor8(x: __m512i, floor: __m512i) -> __m512i {
        let mut r = x;
        std::arch::asm!("vpcmpgtb {k}, {f}, {r}", "vpblendmb {r} {{{k}}}, {r}, {f}",
            r = inout(zmm_reg) r, f = in(zmm_reg) floor, k = out(kreg) _, options(pure, nomem, nostack));
        r
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    unsafe fn avx512_floor16(x: __m512i, floor: __m512i) -> __m512i {
        let mut r = x;
        std::arch::asm!("vpcmpgtw {k}, {f}, {r}", "vpblendmw {r} {{{k}}}, {r}, {f}",
            r = inout(zmm_reg) r, f = in(zmm_reg) floor, k = out(kreg) _, options(pure, nomem, nostack));
        r
    }

    x86_vector!(Sse41x8, __m128i, "sse4.1", width: 1,
        zero: _mm_setzero_si128, set1: _mm_set1_epi8 as i8, set1_8: _mm_set1_epi8,
        adds: _mm_adds_epu8, subs: _mm_subs_epu8, max: _mm_max_epu8, or: _mm_or_si128,
        add: _mm_add_epi8, sub: _mm_sub_epi8, max_signed: _mm_max_epi8,
        adds8: _mm_adds_epu8, sub8: _mm_sub_epi8, shuffle: _mm_shuffle_epi8,
        is_zero: sse_is_zero, shift_bytes: sse_shift_bytes);
    x86_vector!(Sse41x16, __m128i, "sse4.1", width: 2,
        zero: _mm_setzero_si128, set1: _mm_set1_epi16 as i16, set1_8: _mm_set1_epi8,
        adds: _mm_adds_epu16, subs: _mm_subs_epu16, max: _mm_max_epu16, or: _mm_or_si128,
        add: _mm_add_epi16, sub: _mm_sub_epi16, max_signed: _mm_max_epi16,
        adds8: _mm_adds_epu8, sub8: _mm_sub_epi8, shuffle: _mm_shuffle_epi8,
        is_zero: sse_is_zero, shift_bytes: sse_shift_bytes);
    x86_vector!(Avx2x8, __m256i, "avx2", width: 1,
        zero: _mm256_setzero_si256, set1: _mm256_set1_epi8 as i8, set1_8: _mm256_set1_epi8,
        adds: _mm256_adds_epu8, subs: _mm256_subs_epu8, max: _mm256_max_epu8, or: _mm256_or_si256,
        add: _mm256_add_epi8, sub: _mm256_sub_epi8, max_signed: _mm256_max_epi8,
        adds8: _mm256_adds_epu8, sub8: _mm256_sub_epi8, shuffle: _mm256_shuffle_epi8,
        is_zero: avx2_is_zero, shift_bytes: avx2_shift_bytes);
    x86_vector!(Avx2x16, __m256i, "avx2", width: 2,
        zero: _mm256_setzero_si256, set1: _mm256_set1_epi16 as i16, set1_8: _mm256_set1_epi8,
        adds: _mm256_adds_epu16, subs: _mm256_subs_epu16, max: _mm256_max_epu16, or: _mm256_or_si256,
        add: _mm256_add_epi16, sub: _mm256_sub_epi16, max_signed: _mm256_max_epi16,
        adds8: _mm256_adds_epu8, sub8: _mm256_sub_epi8, shuffle: _mm256_shuffle_epi8,
        is_zero: avx2_is_zero, shift_bytes: avx2_shift_bytes);
    x86_vector!(Avx512x8, __m512i, "avx512bw", width: 1,
        zero: _mm512_setzero_si512, set1: _mm512_set1_epi8 as i8, set1_8: _mm512_set1_epi8,
        adds: _mm512_adds_epu8, subs: _mm512_subs_epu8, max: _mm512_max_epu8, or: _mm512_or_si512,
        add: _mm512_add_epi8, sub: _mm512_sub_epi8, max_signed: _mm512_max_epi8, floor: avx512_floor8,
        adds8: _mm512_adds_epu8, sub8: _mm512_sub_epi8, shuffle: _mm512_shuffle_epi8,
        is_zero: avx512_is_zero, shift_bytes: avx512_shift_bytes);
    x86_vector!(Avx512x16, __m512i, "avx512bw", width: 2,
        zero: _mm512_setzero_si512, set1: _mm512_set1_epi16 as i16, set1_8: _mm512_set1_epi8,
        adds: _mm512_adds_epu16, subs: _mm512_subs_epu16, max: _mm512_max_epu16, or: _mm512_or_si512,
        add: _mm512_add_epi16, sub: _mm512_sub_epi16, max_signed: _mm512_max_epi16, floor: avx512_floor16,
        adds8: _mm512_adds_epu8, sub8: _mm512_sub_epi8, shuffle: _mm512_shuffle_epi8,
        is_zero: avx512_is_zero, shift_bytes: avx512_shift_bytes);

    impl super::LaneSelect for Sse41x16 {
        #[inline]
        #[target_feature(enable = "sse4.1")]
        unsafe fn load_widened(p: *const u8) -> Self {
            Sse41x16(_mm_cvtepi8_epi16(_mm_loadl_epi64(p as *const __m128i)))
        }
    }
    impl super::LaneSelect for Avx2x16 {
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn load_widened(p: *const u8) -> Self {
            Avx2x16(_mm256_cvtepi8_epi16(_mm_loadu_si128(p as *const __m128i)))
        }
    }
    impl super::LaneSelect for Avx512x16 {
        #[inline]
        #[target_feature(enable = "avx512bw")]
        unsafe fn load_widened(p: *const u8) -> Self {
            Avx512x16(_mm512_cvtepi8_epi16(_mm256_loadu_si256(p as *const __m256i)))
        }
    }
}

/// The portable fallback: 16 bytes of plain Rust lanes (the compiler vectorises what it can).
macro_rules! portable_vector {
    ($name:ident, $elem:ty, $signed:ty, $lanes:expr) => {
        #[derive(Clone, Copy)]
        pub struct $name([$elem; $lanes]);

        impl $name {
            #[inline(always)]
            fn bytes(self) -> [u8; 16] {
                let mut b = [0u8; 16];
                unsafe { self.store(b.as_mut_ptr()) };
                b
            }
            #[inline(always)]
            fn from_bytes(b: [u8; 16]) -> Self {
                unsafe { Self::load(b.as_ptr()) }
            }
            #[inline(always)]
            fn zip(self, o: Self, f: impl Fn($elem, $elem) -> $elem) -> Self {
                let mut r = self.0;
                for (x, y) in r.iter_mut().zip(o.0) {
                    *x = f(*x, y);
                }
                $name(r)
            }
            #[inline(always)]
            fn zip_bytes(self, o: Self, f: impl Fn(u8, u8) -> u8) -> Self {
                let (mut a, b) = (self.bytes(), o.bytes());
                for (x, y) in a.iter_mut().zip(b) {
                    *x = f(*x, y);
                }
                Self::from_bytes(a)
            }
        }

        impl Vector for $name {
            const LANES: usize = $lanes;
            const BYTES: usize = 16;
            const WIDTH: usize = 16 / $lanes;
            const MAX: u32 = <$elem>::MAX as u32;

            #[inline(always)]
            unsafe fn zero() -> Self {
                $name([0; $lanes])
            }
            #[inline(always)]
            unsafe fn splat(x: u32) -> Self {
                $name([x.min(Self::MAX) as $elem; $lanes])
            }
            #[inline(always)]
            unsafe fn splat_bytes(b: u8) -> Self {
                Self::from_bytes([b; 16])
            }
            #[inline(always)]
            unsafe fn load(p: *const u8) -> Self {
                let mut r = [0 as $elem; $lanes];
                for (l, x) in r.iter_mut().enumerate() {
                    let mut b = [0u8; std::mem::size_of::<$elem>()];
                    std::ptr::copy_nonoverlapping(p.add(l * b.len()), b.as_mut_ptr(), b.len());
                    *x = <$elem>::from_le_bytes(b);
                }
                $name(r)
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut u8) {
                for (l, x) in self.0.iter().enumerate() {
                    let b = x.to_le_bytes();
                    std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(l * b.len()), b.len());
                }
            }
            #[inline(always)]
            unsafe fn adds(self, o: Self) -> Self {
                self.zip(o, <$elem>::saturating_add)
            }
            #[inline(always)]
            unsafe fn subs(self, o: Self) -> Self {
                self.zip(o, <$elem>::saturating_sub)
            }
            #[inline(always)]
            unsafe fn max(self, o: Self) -> Self {
                self.zip(o, Ord::max)
            }
            #[inline(always)]
            unsafe fn or(self, o: Self) -> Self {
                self.zip(o, |a, b| a | b)
            }
            #[inline(always)]
            unsafe fn add_lanes(self, o: Self) -> Self {
                self.zip(o, <$elem>::wrapping_add)
            }
            #[inline(always)]
            unsafe fn sub_lanes(self, o: Self) -> Self {
                self.zip(o, <$elem>::wrapping_sub)
            }
            #[inline(always)]
            unsafe fn max_signed(self, o: Self) -> Self {
                self.zip(o, |a, b| (a as $signed).max(b as $signed) as $elem)
            }
            #[inline(always)]
            unsafe fn adds_bytes(self, o: Self) -> Self {
                self.zip_bytes(o, u8::saturating_add)
            }
            #[inline(always)]
            unsafe fn sub_bytes(self, o: Self) -> Self {
                self.zip_bytes(o, u8::wrapping_sub)
            }
            #[inline(always)]
            unsafe fn shuffle_bytes(table: Self, idx: Self) -> Self {
                let (t, i) = (table.bytes(), idx.bytes());
                let mut r = [0u8; 16];
                for (x, k) in r.iter_mut().zip(i) {
                    *x = if k & 0x80 != 0 { 0 } else { t[(k & 15) as usize] };
                }
                Self::from_bytes(r)
            }
            #[inline(always)]
            unsafe fn is_zero(self) -> bool {
                self.0.iter().all(|&x| x == 0)
            }
            #[inline(always)]
            unsafe fn shift_up(self) -> Self {
                let mut r = [0 as $elem; $lanes];
                r[1..].copy_from_slice(&self.0[..$lanes - 1]);
                $name(r)
            }
            #[inline(always)]
            unsafe fn shift_up_lanes(self, n: usize) -> Self {
                let mut r = [0 as $elem; $lanes];
                if n < $lanes {
                    r[n..].copy_from_slice(&self.0[..$lanes - n]);
                }
                $name(r)
            }
        }
    };
}

portable_vector!(Portable8, u8, i8, 16);
portable_vector!(Portable16, u16, i16, 8);

impl LaneSelect for Portable16 {
    #[inline(always)]
    unsafe fn load_widened(p: *const u8) -> Self {
        let mut r = [0u16; 8];
        for (l, x) in r.iter_mut().enumerate() {
            *x = *p.add(l) as i8 as i16 as u16;
        }
        Portable16(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane shifts and the horizontal maximum against a plain model of the lanes.
    unsafe fn check_lane_moves<V: Vector>() {
        let mut bytes = [0u8; 64];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        let v = V::load(bytes.as_ptr());
        let lanes = v.lanes();
        let mut n = 1;
        while n < V::LANES {
            let got = v.shift_up_lanes(n).lanes();
            for l in 0..V::LANES {
                assert_eq!(got[l], if l >= n { lanes[l - n] } else { 0 }, "shift {} lane {}", n, l);
            }
            n *= 2;
        }
        assert_eq!(v.shift_up().lanes(), v.shift_up_lanes(1).lanes());
        assert_eq!(v.hmax(), lanes[..V::LANES].iter().copied().max().unwrap());
        // The maximum in each single lane in turn, the others 0.
        for l in 0..V::LANES {
            let mut one = [0u8; 64];
            one[l * V::WIDTH] = 200;
            assert_eq!(V::load(one.as_ptr()).hmax(), 200, "hmax of lane {}", l);
        }
        assert_eq!(V::zero().hmax(), 0);
    }

    /// Wrapping adds and subtracts, signed maxima and the floor against plain integer
    /// arithmetic, on lane values around both signed limits.
    unsafe fn check_signed_lanes<V: Vector>() {
        let bits = 8 * V::WIDTH as u32;
        let modulus = 1i64 << bits;
        let signed = |u: u32| if (u as i64) < modulus / 2 { u as i64 } else { u as i64 - modulus };
        let edge = [0u32, 1, 2, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff];
        let vals: Vec<u32> = edge.iter().map(|&v| v & V::MAX).collect();
        let mut a = [0u8; 128];
        let mut b = [0u8; 128];
        let mut want: Vec<[i64; 4]> = Vec::new();
        for l in 0..V::LANES {
            let (x, y) = (vals[l % vals.len()], vals[(l * 7 + 3) % vals.len()]);
            for (buf, v) in [(&mut a, x), (&mut b, y)] {
                buf[l * V::WIDTH..(l + 1) * V::WIDTH].copy_from_slice(&v.to_le_bytes()[..V::WIDTH]);
            }
            let (sx, sy) = (signed(x), signed(y));
            want.push([(sx + sy).rem_euclid(modulus), (sx - sy).rem_euclid(modulus), sx.max(sy), sx.max(sy)]);
        }
        let (va, vb) = (V::load(a.as_ptr()), V::load(b.as_ptr()));
        let got = [va.add_lanes(vb).lanes(), va.sub_lanes(vb).lanes(), va.max_signed(vb).lanes(), va.floor(vb).lanes()];
        for l in 0..V::LANES {
            let g = [got[0][l] as i64, got[1][l] as i64, signed(got[2][l]), signed(got[3][l])];
            assert_eq!(g, want[l], "lane {} (add, sub, max, floor)", l);
        }
    }

    #[test]
    fn lane_moves_on_every_instruction_set() {
        unsafe {
            check_lane_moves::<Portable8>();
            check_lane_moves::<Portable16>();
            check_signed_lanes::<Portable8>();
            check_signed_lanes::<Portable16>();
            #[cfg(target_arch = "x86_64")]
            {
                if is_x86_feature_detected!("sse4.1") {
                    check_lane_moves::<Sse41x8>();
                    check_lane_moves::<Sse41x16>();
                    check_signed_lanes::<Sse41x8>();
                    check_signed_lanes::<Sse41x16>();
                }
                if is_x86_feature_detected!("avx2") {
                    check_lane_moves::<Avx2x8>();
                    check_lane_moves::<Avx2x16>();
                    check_signed_lanes::<Avx2x8>();
                    check_signed_lanes::<Avx2x16>();
                }
                if is_x86_feature_detected!("avx512bw") {
                    check_lane_moves::<Avx512x8>();
                    check_lane_moves::<Avx512x16>();
                    check_signed_lanes::<Avx512x8>();
                    check_signed_lanes::<Avx512x16>();
                }
            }
        }
    }
}

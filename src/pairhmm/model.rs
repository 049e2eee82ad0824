//! The pair hidden Markov model of GATK's HaplotypeCaller, as Intel's GKL computes it: the
//! probabilities every engine uses, built once per precision.
//!
//! - Qualities are phred scores (0..=93, ASCII - 33 in text). Base qualities are floored at
//!   [`MIN_BASE_QUAL`] when a batch is built; insertion, deletion and gap-continuation
//!   qualities are used as given.
//! - Emission at read row i, haplotype column j: `1 - e` when the bases are equal or either is
//!   `N`, else `e / 3`, with `e = 10^(-q/10)` ([`Probabilities::ph2pr`]).
//! - Transitions of row i, from the qualities of read base i: match->match from GKL's
//!   log10-sum lookup table ([`Probabilities::match_to_match`]), match->insertion
//!   `10^(-ins/10)`, match->deletion `10^(-del/10)`, insertion->insertion =
//!   deletion->deletion = `10^(-gcp/10)`, insertion/deletion->match `1 - 10^(-gcp/10)`.
//! - Forward recurrences: M from the diagonal cell, I (insertion) from the cell above, D
//!   (deletion) from the cell to the left; row 0 has D = `initial / haplotype length` in every
//!   column, M = I = 0; column 0 is 0 below row 0. The result is
//!   `log10(sum over the last row of M + I) - log10(initial)`.
//! - Precision: a float pass with initial constant 2^120, redone in double (initial 2^1020)
//!   when the scaled float sum is below [`FLOAT_RESULT_THRESHOLD`] (GKL's rule).
//!
//! The match->match table reproduces GKL's construction step by step (Jacobian log table
//! with step 1e-4, rounded index, `log1p(..) * 0.434294`), in each precision, because it
//! differs from `1 - (e_ins + e_del)` by more than the 1e-9 the double results must match.

/// Read base qualities below this are raised to it (GATK's `MIN_USABLE_Q_SCORE`).
pub const MIN_BASE_QUAL: u8 = 6;
/// The largest phred quality accepted (`~` in ASCII - 33).
pub const MAX_QUAL: u8 = 93;
/// Scaled float sums below this are recomputed in double (GKL's `MIN_ACCEPTED`, 1e-28f).
pub const FLOAT_RESULT_THRESHOLD: f32 = 1e-28;
/// Base codes: A C G T, and N (which matches every base).
pub const BASE_N: u8 = 4;

/// Number of qualities the tables cover (GKL masks qualities with 127).
const TABLE_QUALS: usize = 128;
const JACOBIAN_TOLERANCE: f64 = 8.0;
const JACOBIAN_STEP: f64 = 0.0001;
const JACOBIAN_SIZE: usize = (JACOBIAN_TOLERANCE / JACOBIAN_STEP) as usize + 1;

/// The code of an input base (case-insensitive A C G T N), or None.
#[inline]
pub fn base_code(b: u8) -> Option<u8> {
    match b {
        b'A' | b'a' => Some(0),
        b'C' | b'c' => Some(1),
        b'G' | b'g' => Some(2),
        b'T' | b't' => Some(3),
        b'N' | b'n' => Some(BASE_N),
        _ => None,
    }
}

/// Arithmetic the model is evaluated in: f32 (the fast pass) or f64 (the exact pass).
pub trait Real: Copy + Send + Sync + PartialOrd + std::fmt::Debug + 'static {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn from_i32(v: i32) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn powf(self, e: Self) -> Self;
    /// The recurrences' multiply-add `self * a + b`. In float, rounded once (fused), as the
    /// SIMD lanes compute it with FMA, so every engine's float pass gives the same bits. In
    /// double, two roundings: the double pass is one function every engine shares, so it is
    /// identical without FMA, and stays fast on CPUs without one.
    fn madd(self, a: Self, b: Self) -> Self;
    /// `2^exp`, the scaling constant of this precision.
    fn initial() -> Self;
}

/// One implementation for both precisions; the scaling constant and the multiply-add differ.
macro_rules! real {
    ($t:ty, $initial_exp:expr, $fused:expr) => {
        impl Real for $t {
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_i32(v: i32) -> Self {
                v as $t
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn powf(self, e: Self) -> Self {
                <$t>::powf(self, e)
            }
            #[inline(always)]
            fn madd(self, a: Self, b: Self) -> Self {
                if $fused {
                    <$t>::mul_add(self, a, b)
                } else {
                    self * a + b
                }
            }
            #[inline(always)]
            fn initial() -> Self {
                (2.0 as $t).powi($initial_exp)
            }
        }
    };
}

real!(f32, 120, true);
real!(f64, 1020, false);

/// Runs `f` with denormal results and operands flushed to zero, restoring the caller's mode:
/// GKL's float pass flushes them (they only arise in cells far below the threshold, where
/// x86 computes them slowly). Every CPU engine runs its passes inside this, so they flush
/// alike: MXCSR FTZ and DAZ on x86-64, FPCR.FZ (both in one bit) on aarch64; elsewhere
/// nothing is flushed.
pub fn flush_denormals<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    #[allow(deprecated)] // the MXCSR intrinsics are the only stable way to set FTZ/DAZ
    // SAFETY: only the FTZ and DAZ bits change, and the caller's value comes back.
    unsafe {
        use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
        const FTZ_DAZ: u32 = 0x8040;
        let saved = _mm_getcsr();
        _mm_setcsr(saved | FTZ_DAZ);
        let r = f();
        _mm_setcsr(saved);
        r
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: only the FZ bit changes, and the caller's value comes back.
    unsafe {
        const FZ: u64 = 1 << 24;
        let saved: u64;
        std::arch::asm!("mrs {}, fpcr", out(reg) saved);
        std::arch::asm!("msr fpcr, {}", in(reg) saved | FZ);
        let r = f();
        std::arch::asm!("msr fpcr, {}", in(reg) saved);
        r
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    f()
}

/// The probability tables of one precision.
#[derive(Debug, Clone)]
pub struct Probabilities<T: Real> {
    /// `10^(-q/10)` for q in 0..128.
    pub ph2pr: [T; TABLE_QUALS],
    /// Match->match for (max, min) quality at `max * (max + 1) / 2 + min`.
    mm: Vec<T>,
    /// The scaling constant: `2^120` (f32) or `2^1020` (f64).
    pub initial: T,
    /// `log10(initial)`, in double.
    pub log10_initial: f64,
}

impl<T: Real> Probabilities<T> {
    pub fn new() -> Self {
        let jacobian: Vec<T> =
            (0..JACOBIAN_SIZE).map(|k| T::from_f64((1.0 + 10f64.powf(-(k as f64) * JACOBIAN_STEP)).log10())).collect();
        // In T, as GKL's template does: `(T)-0.1 * (T)q`, the difference and the index.
        let approx_log10_sum = |a: T, b: T| -> T {
            let (small, big) = if a > b { (b, a) } else { (a, b) };
            let diff = big.sub(small);
            if diff >= T::from_f64(JACOBIAN_TOLERANCE) {
                return big;
            }
            let scaled = diff.mul(T::from_f64(1.0 / JACOBIAN_STEP));
            // GKL's fastRound: truncation of x + 0.5 (diff is never negative).
            let index = scaled.add(T::from_f64(0.5)).to_f64() as usize;
            big.add(jacobian[index])
        };
        let tenth = T::from_f64(-0.1);
        // GKL's approximate 1/ln(10), part of its table's values (not LOG10_E: GKL-exact).
        #[allow(clippy::approx_constant)]
        const INV_LN10: f64 = 0.434294;
        let mut mm = Vec::with_capacity(TABLE_QUALS * (TABLE_QUALS + 1) / 2);
        for max in 0..TABLE_QUALS as i32 {
            for min in 0..=max {
                let sum = approx_log10_sum(tenth.mul(T::from_i32(max)), tenth.mul(T::from_i32(min))).to_f64();
                let log10_mm = (-(10f64.powf(sum)).min(1.0)).ln_1p() * INV_LN10;
                mm.push(T::from_f64(10f64.powf(log10_mm)));
            }
        }
        let mut ph2pr = [T::from_f64(0.0); TABLE_QUALS];
        for (q, p) in ph2pr.iter_mut().enumerate() {
            // `10^(-q/10)` evaluated in T (GKL: pow in double, powf in float).
            *p = T::from_f64(10.0).powf(T::from_i32(-(q as i32)).div(T::from_f64(10.0)));
        }
        let initial = T::initial();
        Probabilities { ph2pr, mm, initial, log10_initial: initial.to_f64().log10() }
    }

    /// Match->match probability for an insertion and a deletion quality.
    #[inline]
    pub fn match_to_match(&self, ins: u8, del: u8) -> T {
        let (a, b) = ((ins & 127) as usize, (del & 127) as usize);
        let (max, min) = if a >= b { (a, b) } else { (b, a) };
        self.mm[max * (max + 1) / 2 + min]
    }

    /// The transition and emission parameters of one read row.
    #[inline]
    pub fn row(&self, base_q: u8, ins: u8, del: u8, gcp: u8) -> Row<T> {
        let e = self.ph2pr[(base_q & 127) as usize];
        let gap_ext = self.ph2pr[(gcp & 127) as usize];
        Row {
            match_to_match: self.match_to_match(ins, del),
            gap_to_match: T::from_f64(1.0).sub(gap_ext),
            match_to_ins: self.ph2pr[(ins & 127) as usize],
            match_to_del: self.ph2pr[(del & 127) as usize],
            gap_ext,
            emit_match: T::from_f64(1.0).sub(e),
            emit_mismatch: e.div(T::from_f64(3.0)),
        }
    }
}

impl<T: Real> Default for Probabilities<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything row i of the recurrence needs from the read's qualities.
#[derive(Debug, Clone, Copy)]
pub struct Row<T> {
    pub match_to_match: T,
    pub gap_to_match: T,
    pub match_to_ins: T,
    pub match_to_del: T,
    /// Insertion->insertion and deletion->deletion.
    pub gap_ext: T,
    pub emit_match: T,
    pub emit_mismatch: T,
}

/// The tables of both precisions, built once per process.
pub fn tables() -> &'static (Probabilities<f32>, Probabilities<f64>) {
    static TABLES: std::sync::OnceLock<(Probabilities<f32>, Probabilities<f64>)> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| (Probabilities::new(), Probabilities::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-checked: the table approximates 1 - (10^-i/10 + 10^-d/10) to within the Jacobian
    // table's step, and is 0 where both are 0 (probability 2 capped at 1).
    #[test]
    fn match_to_match_is_close_to_the_exact_value() {
        let p: Probabilities<f64> = Probabilities::new();
        assert_eq!(p.match_to_match(0, 0), 0.0);
        for (i, d) in [(45u8, 45u8), (40, 30), (10, 60), (93, 93)] {
            let exact = 1.0 - (10f64.powf(-(i as f64) / 10.0) + 10f64.powf(-(d as f64) / 10.0));
            let got = p.match_to_match(i, d);
            assert!((got - exact).abs() < 1e-3 * (1.0 - exact) + 1e-12, "{i} {d}: {got} vs {exact}");
            assert_eq!(got, p.match_to_match(d, i));
        }
    }

    #[test]
    fn constants() {
        let (f, d) = tables();
        assert_eq!(f.initial, 2f32.powi(120));
        assert!((d.log10_initial - 1020.0 * 2f64.log10()).abs() < 1e-12);
        assert!((d.ph2pr[30] - 1e-3).abs() < 1e-18);
        assert_eq!(base_code(b'n'), Some(BASE_N));
        assert_eq!(base_code(b'X'), None);
    }
}

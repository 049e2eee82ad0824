//! How many byte-lane vector operations one core issues per nanosecond, by width and kind:
//! the ceiling the CPU search kernel's cells per second are measured against
//! (`engine::simd::intersequence`: ~10 operations per register of cells, five of them
//! signed maxima). Eight independent chains per kind, so latency does not bound them.
//!
//!   simd_ports [SECONDS_PER_KIND]
//!
//! x86-64 only; the 512-bit rows need AVX-512BW.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::time::Instant;

    /// Runs `body` (8 operations a call) until `secs` have passed; operations per ns.
    fn rate(secs: f64, mut body: impl FnMut(u64)) -> f64 {
        let mut n = 1u64 << 16;
        loop {
            let t = Instant::now();
            body(n);
            let e = t.elapsed().as_secs_f64();
            if e >= secs {
                return 8.0 * n as f64 / e / 1e9;
            }
            n *= 2;
        }
    }

    /// Eight chains, the even ones running `$a`, the odd ones `$b` (the same operation for a
    /// pure kind; a maximum and an add for how the two kinds share ports).
    macro_rules! kind {
        ($name:ident, $feat:literal, $reg:ident, $a:literal, $b:literal) => {
            #[target_feature(enable = $feat)]
            unsafe fn $name(n: u64) {
                let mut n = n;
                asm!(
                    "vpxor {a0:x}, {a0:x}, {a0:x}", "vpxor {a1:x}, {a1:x}, {a1:x}",
                    "vpxor {a2:x}, {a2:x}, {a2:x}", "vpxor {a3:x}, {a3:x}, {a3:x}",
                    "vpxor {a4:x}, {a4:x}, {a4:x}", "vpxor {a5:x}, {a5:x}, {a5:x}",
                    "vpxor {a6:x}, {a6:x}, {a6:x}", "vpxor {a7:x}, {a7:x}, {a7:x}",
                    "vpxor {b:x}, {b:x}, {b:x}",
                    "2:",
                    concat!($a, " {a0}, {a0}, {b}"), concat!($b, " {a1}, {a1}, {b}"),
                    concat!($a, " {a2}, {a2}, {b}"), concat!($b, " {a3}, {a3}, {b}"),
                    concat!($a, " {a4}, {a4}, {b}"), concat!($b, " {a5}, {a5}, {b}"),
                    concat!($a, " {a6}, {a6}, {b}"), concat!($b, " {a7}, {a7}, {b}"),
                    "dec {n}",
                    "jnz 2b",
                    n = inout(reg) n,
                    a0 = out($reg) _, a1 = out($reg) _, a2 = out($reg) _, a3 = out($reg) _,
                    a4 = out($reg) _, a5 = out($reg) _, a6 = out($reg) _, a7 = out($reg) _,
                    b = out($reg) _,
                    options(nostack, nomem),
                );
                let _ = n;
            }
        };
    }

    kind!(max512, "avx512bw", zmm_reg, "vpmaxsb", "vpmaxsb");
    kind!(add512, "avx512bw", zmm_reg, "vpaddb", "vpaddb");
    kind!(adds512, "avx512bw", zmm_reg, "vpaddsb", "vpaddsb");
    kind!(mixed512, "avx512bw", zmm_reg, "vpmaxsb", "vpaddb");
    kind!(max256, "avx2", ymm_reg, "vpmaxsb", "vpmaxsb");
    kind!(add256, "avx2", ymm_reg, "vpaddb", "vpaddb");
    kind!(adds256, "avx2", ymm_reg, "vpaddsb", "vpaddsb");
    kind!(mixed256, "avx2", ymm_reg, "vpmaxsb", "vpaddb");

    pub fn main() {
        let secs: f64 = std::env::args().nth(1).map_or(0.3, |s| s.parse().expect("SECONDS_PER_KIND"));
        type Kind = (&'static str, u32, unsafe fn(u64));
        let mut kinds: Vec<Kind> = Vec::new();
        if is_x86_feature_detected!("avx512bw") {
            kinds.extend([
                ("512-bit signed max (vpmaxsb)", 64, max512 as unsafe fn(u64)),
                ("512-bit wrapping add (vpaddb)", 64, add512),
                ("512-bit saturating add (vpaddsb)", 64, adds512),
                ("512-bit max + add, half each", 64, mixed512),
            ]);
        }
        if is_x86_feature_detected!("avx2") {
            kinds.extend([
                ("256-bit signed max (vpmaxsb)", 32, max256 as unsafe fn(u64)),
                ("256-bit wrapping add (vpaddb)", 32, add256),
                ("256-bit saturating add (vpaddsb)", 32, adds256),
                ("256-bit max + add, half each", 32, mixed256),
            ]);
        }
        for (name, lanes, f) in kinds {
            // Safe: each kind runs only where its instruction set was detected above.
            let r = rate(secs, |n| unsafe { f(n) });
            println!("{:<36} {:6.2} ops/ns  {:7.1} byte lanes/ns", name, r, r * lanes as f64);
        }
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::main();
    #[cfg(not(target_arch = "x86_64"))]
    eprintln!("simd_ports: x86-64 only");
}

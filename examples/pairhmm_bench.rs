//! PairHMM engine check and benchmark (scripts/gpu-check-pairhmm.sh runs it on a GPU machine).
//!
//!   pairhmm_bench check PAIRS        CUDA vs the double scalar reference on PAIRS pairs:
//!                                    within 1e-9 where recomputed in double, 1e-5 otherwise
//!   pairhmm_bench bench REGIONS ENGINE [THREADS]
//!                                    GCUPS of ENGINE (cuda, simd, scalar) on REGIONS realistic
//!                                    regions (reads 100-150 x haplotypes 300-500, 10-100
//!                                    reads x 2-10 haplotypes per region)
//!   pairhmm_bench gkl-input REGIONS  the same regions in GklPairHmm.java's input format
//!
//! Regions are generated from a fixed seed, so every engine and GKL see the same data.

use std::time::Instant;
use swarrow::pairhmm::batch::{PairBatch, PairRef, Quals};
use swarrow::pairhmm::{cuda, scalar, simd, Engine, Likelihood};

struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.next((hi - lo + 1) as u64) as usize
    }
    fn bases(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| b"ACGT"[self.next(4) as usize]).collect()
    }
    fn quals(&mut self, n: usize, lo: u8, hi: u8) -> Vec<u8> {
        (0..n).map(|_| 33 + lo + self.next((hi - lo + 1) as u64) as u8).collect()
    }
    fn mutate(&mut self, s: &[u8], per_mille: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len() + 8);
        for &c in s {
            match self.next(1000) {
                r if r < per_mille => out.push(b"ACGT"[self.next(4) as usize]),
                r if r < per_mille * 3 / 2 => {}
                r if r < per_mille * 2 => {
                    out.push(c);
                    out.push(b"ACGT"[self.next(4) as usize]);
                }
                _ => out.push(c),
            }
        }
        if out.is_empty() {
            out.push(b'A');
        }
        out
    }
}

struct Region {
    haps: Vec<Vec<u8>>,
    reads: Vec<[Vec<u8>; 5]>,
}

fn regions(n: usize, seed: u64) -> Vec<Region> {
    let mut g = Gen(seed);
    (0..n)
        .map(|_| {
            let hl = g.range(300, 500);
            let reference = g.bases(hl);
            let nh = g.range(2, 10);
            let haps: Vec<Vec<u8>> =
                (0..nh).map(|h| if h == 0 { reference.clone() } else { g.mutate(&reference, 5) }).collect();
            let nr = g.range(10, 100);
            let reads = (0..nr)
                .map(|_| {
                    let len = g.range(100, 150);
                    let src = &haps[g.next(nh as u64) as usize];
                    let start = g.next((src.len() - len.min(src.len()) + 1) as u64) as usize;
                    let bases = g.mutate(&src[start..(start + len).min(src.len())], 3);
                    let n = bases.len();
                    [bases, g.quals(n, 2, 40), g.quals(n, 40, 45), g.quals(n, 40, 45), g.quals(n, 10, 10)]
                })
                .collect();
            Region { haps, reads }
        })
        .collect()
}

/// Batches of whole regions, about `cells` cells each.
fn batches(regions: &[Region], cells: u64) -> Vec<PairBatch> {
    let mut out = Vec::new();
    let mut b = PairBatch::new();
    let mut c = 0u64;
    for (gi, region) in regions.iter().enumerate() {
        let g = b.groups.push(&format!("g{gi}"));
        let first = b.hap_count() as u32;
        for (h, hap) in region.haps.iter().enumerate() {
            b.push_hap(&format!("g{gi}h{h}"), hap).unwrap();
        }
        for (r, read) in region.reads.iter().enumerate() {
            let id = b
                .push_read(&format!("g{gi}r{r}"), &read[0], &read[1], &read[2], &read[3], Quals::Text(&read[4]))
                .unwrap();
            for h in 0..region.haps.len() as u32 {
                b.pairs.push(PairRef { read: id, hap: first + h, group: g });
                c += (read[0].len() * region.haps[h as usize].len()) as u64;
            }
        }
        if c >= cells {
            out.push(std::mem::take(&mut b));
            c = 0;
        }
    }
    if !b.pairs.is_empty() {
        out.push(b);
    }
    out
}

fn engine(name: &str, threads: usize) -> Box<dyn Engine> {
    match name {
        "cuda" => Box::new(cuda::CudaEngine::new(threads).expect("CUDA engine")),
        "simd" => Box::new(simd::SimdEngine::new(threads).expect("SIMD engine")),
        "scalar" => Box::new(scalar::ScalarEngine::new(threads).expect("scalar engine")),
        other => panic!("unknown engine {other}"),
    }
}

fn threads(arg: Option<&String>) -> usize {
    arg.map(|s| s.parse().expect("threads"))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gkl-input") => {
            let n: usize = args[2].parse().unwrap();
            let mut out = String::new();
            for region in regions(n, 42) {
                for h in &region.haps {
                    out.push_str(&format!("H {}\n", String::from_utf8_lossy(h)));
                }
                for r in &region.reads {
                    let s: Vec<String> = r.iter().map(|x| String::from_utf8_lossy(x).into_owned()).collect();
                    out.push_str(&format!("R {} {} {} {} {}\n", s[0], s[1], s[2], s[3], s[4]));
                }
                out.push_str("G\n");
            }
            print!("{out}");
        }
        Some("bench") => {
            let n: usize = args[2].parse().unwrap();
            let t = threads(args.get(4));
            let e = engine(&args[3], t);
            let regions = regions(n, 42);
            let batches = batches(&regions, e.batch_cells());
            let cells: u64 = batches.iter().map(|b| b.cells()).sum();
            let pairs: usize = batches.iter().map(|b| b.pairs.len()).sum();
            let mut out = Vec::new();
            e.compute(&batches[0], &mut out).unwrap(); // warm-up (kernel load, tables)
                                                       // Passes over the batches until BENCH_SECONDS (default 3) have gone by.
            let min_seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3.0);
            let start = Instant::now();
            let (mut recomputed, mut passes) = (0, 0u64);
            loop {
                for b in &batches {
                    e.compute(b, &mut out).unwrap();
                    recomputed += out.iter().filter(|l| l.recomputed).count();
                }
                passes += 1;
                if start.elapsed().as_secs_f64() >= min_seconds {
                    break;
                }
            }
            let s = start.elapsed().as_secs_f64();
            let (cells, pairs) = (cells * passes, pairs * passes as usize);
            println!(
                "{} threads={t} regions={n} pairs={pairs} cells={cells} recomputed={recomputed} seconds={s:.3} gcups={:.3}",
                e.name(),
                cells as f64 / s / 1e9
            );
        }
        Some("check") => {
            let want_pairs: usize = args[2].parse().unwrap();
            // Realistic regions plus unrelated reads (deep underflow, double recomputation).
            let mut rs = regions(want_pairs / 250 + 1, 7);
            let mut g = Gen(99);
            for r in rs.iter_mut().step_by(7) {
                for read in r.reads.iter_mut().take(3) {
                    let n = read[0].len();
                    read[0] = g.bases(n);
                }
            }
            let batches = batches(&rs, 1 << 30);
            let gpu = engine("cuda", 16);
            // The double reference on every pair (what the engines recompute below the threshold).
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads(args.get(3))).build().unwrap();
            let reference = |batch: &PairBatch, out: &mut Vec<Likelihood>| {
                use rayon::prelude::*;
                pool.install(|| {
                    batch
                        .pairs
                        .par_iter()
                        .map_init(Vec::new, |work, p| Likelihood {
                            log10: scalar::log10_likelihood(
                                &batch.read(p.read as usize),
                                batch.hap(p.hap as usize),
                                work,
                            ),
                            recomputed: false,
                        })
                        .collect_into_vec(out)
                })
            };
            let (mut pairs, mut recomputed, mut worst_f, mut worst_d) = (0usize, 0usize, 0f64, 0f64);
            let (mut a, mut b): (Vec<Likelihood>, Vec<Likelihood>) = (Vec::new(), Vec::new());
            let t0 = Instant::now();
            for batch in &batches {
                gpu.compute(batch, &mut a).unwrap();
                reference(batch, &mut b);
                for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                    let d = (x.log10 - y.log10).abs();
                    let tol = if x.recomputed { 1e-9 } else { 1e-5 };
                    assert!(
                        d <= tol && x.log10.is_finite(),
                        "pair {i}: GPU {} ({}) vs CPU {}",
                        x.log10,
                        x.recomputed,
                        y.log10
                    );
                    if x.recomputed {
                        worst_d = worst_d.max(d);
                    } else {
                        worst_f = worst_f.max(d);
                    }
                }
                pairs += batch.pairs.len();
                recomputed += a.iter().filter(|l| l.recomputed).count();
            }
            println!(
                "check OK: {pairs} pairs, GPU vs CPU double reference; {recomputed} recomputed in double (max diff {worst_d:.2e} <= 1e-9), others max diff {worst_f:.2e} <= 1e-5; {:.1} s",
                t0.elapsed().as_secs_f64()
            );
            assert!(pairs >= want_pairs);
        }
        _ => eprintln!(
            "usage: pairhmm_bench check PAIRS [THREADS] | bench REGIONS cuda|simd|scalar [THREADS] | gkl-input REGIONS"
        ),
    }
}

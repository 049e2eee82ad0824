//! GPU against CPU, in `cargo test`: each test runs where a usable GPU is present (CUDA
//! driver, NVRTC, a device) and is skipped loudly elsewhere (CI has no GPU: there the
//! kernels are only compiled, by tests/kernels_compile.rs). On a GPU machine:
//! `cargo test --release --test gpu`, or the test binary built elsewhere
//! (`cargo test --release --test gpu --no-run`) run there, as scripts/gpu-check-align.sh does.
//!
//! Oracles: the scalar reference engine (scores and coordinates), a naive full-matrix
//! traceback written here (path counters by the path rule), the CPU search.

use rayon::prelude::*;
use swarrow::database::Database;
use swarrow::engine::cuda::{self, align::GpuAligner, CudaConfig, CudaEngine};
use swarrow::engine::scalar::{self, ScalarEngine};
use swarrow::engine::{Alignment, Engine};
use swarrow::progress::Work;
use swarrow::scoring::{Matrix, Scoring};
use swarrow::seq::{Record, SeqPairs};

fn gpu_or_skip(test: &str) -> bool {
    if cuda::available() {
        return true;
    }
    eprintln!("\n*** SKIPPED {test}: no usable GPU (CUDA driver, NVRTC and a device are needed) ***\n");
    false
}

/// xorshift: failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Random pairs over `codes` residue codes: half are a mutated window of the target (long
/// alignments with gaps); with `overflow`, one in 500 is a long identical pair whose score
/// exceeds the 16-bit range (recomputed at 32 bits).
fn pairs(rng: &mut Rng, n: usize, codes: usize, max_len: usize, overflow: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|k| {
            let tlen = 1 + rng.below(max_len);
            let t: Vec<u8> = (0..tlen).map(|_| rng.below(codes) as u8).collect();
            if overflow && k % 500 == 7 {
                // The first four codes (ACGT: +2 each; ARND in BLOSUM62: 4-6) over 17,000
                // residues: above 32,767 (ambiguity codes would score 0 or less).
                let long: Vec<u8> = (0..17_000 + rng.below(2000)).map(|_| rng.below(4) as u8).collect();
                return (long.clone(), long);
            }
            let q: Vec<u8> = if k % 2 == 0 {
                let s = rng.below(tlen);
                let mut q = Vec::new();
                for &c in &t[s..] {
                    match rng.below(12) {
                        0 => {}                                     // deletion
                        1 => q.extend([c, rng.below(codes) as u8]), // insertion
                        2 => q.push(rng.below(codes) as u8),        // substitution
                        _ => q.push(c),
                    }
                }
                if q.is_empty() {
                    q.push(t[0]);
                }
                q
            } else {
                (0..1 + rng.below(max_len)).map(|_| rng.below(codes) as u8).collect()
            };
            (q, t)
        })
        .collect()
}

fn schemes() -> Vec<(&'static str, Scoring)> {
    vec![
        ("protein BLOSUM62 11/1", Scoring::blosum62()),
        ("protein BLOSUM62 6/1", Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 6, 1).unwrap()),
        ("DNA +2/-3 5/2", Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap()),
        // A free gap open: gap runs and DP transitions differ (the counters count runs).
        ("DNA +2/-3 0/2", Scoring::new(Matrix::dna(2, -3), 0, 2).unwrap()),
    ]
}

#[test]
fn gpu_alignments_equal_the_scalar_reference() {
    if !gpu_or_skip("gpu_alignments_equal_the_scalar_reference") {
        return;
    }
    let mut rng = Rng(0x5eed);
    for (name, sc) in schemes() {
        let owned = pairs(&mut rng, 6000, sc.matrix.size(), 1500, true);
        let refs: Vec<(&[u8], &[u8])> = owned.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let seqs = SeqPairs::from_slices(&refs);
        // Small pieces and several streams: the piece queue and result placement are exercised.
        let config = CudaConfig { align_piece_pairs: 700, align_streams: 3, ..CudaConfig::default() };
        let gpu = GpuAligner::new(&sc, &config).expect("GPU aligner");
        let got = gpu.align(seqs.view(), swarrow::engine::Level::Coordinates).expect("GPU align");
        let want: Vec<Alignment> = refs.par_iter().map(|(q, t)| scalar::align_pair(q, t, &sc).unwrap()).collect();
        let wide = want.iter().filter(|a| a.recomputed).count();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{name}: pair {i} (qlen {}, tlen {})", refs[i].0.len(), refs[i].1.len());
        }
        assert!(wide > 0, "{name}: the set must hold pairs recomputed at 32 bits");
    }
}

/// Path counters the naive way: full H/E/F matrices of the rectangle and the walk back by
/// the path rule (diagonal, then 'D', then 'I'; a gap opens as soon as the values allow).
fn naive_counts(q: &[u8], t: &[u8], sc: &Scoring, a: &Alignment) -> [u32; 3] {
    if a.score <= 0 {
        return [0; 3];
    }
    let qs = &q[a.qstart as usize - 1..a.qend as usize];
    let ts = &t[a.tstart as usize - 1..a.tend as usize];
    let (m, n, w) = (qs.len(), ts.len(), ts.len() + 1);
    let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let neg = i32::MIN / 4;
    let (mut h, mut e, mut f) = (vec![neg; (m + 1) * w], vec![neg; (m + 1) * w], vec![neg; (m + 1) * w]);
    h[0] = 0;
    for i in 1..=m {
        for j in 1..=n {
            let k = i * w + j;
            e[k] = (h[k - 1] - oe).max(e[k - 1] - ext);
            f[k] = (h[k - w] - oe).max(f[k - w] - ext);
            h[k] = (h[k - w - 1] + sc.score(qs[i - 1], ts[j - 1])).max(e[k]).max(f[k]);
        }
    }
    assert_eq!(h[m * w + n], a.score, "the rectangle scores the alignment's score end to end");
    let (mut i, mut j, mut state, mut c, mut last) = (m, n, 0u8, [0u32; 3], 0u8);
    while i > 0 || j > 0 {
        let k = i * w + j;
        match state {
            0 if i > 0 && j > 0 && h[k] == h[k - w - 1] + sc.score(qs[i - 1], ts[j - 1]) => {
                c[0] += 1;
                c[1] += (qs[i - 1] == ts[j - 1]) as u32;
                last = 0;
                i -= 1;
                j -= 1;
            }
            0 => state = if h[k] == e[k] { 1 } else { 2 },
            1 => {
                c[2] += (last != 1) as u32; // a new run of 'D' (walking back)
                last = 1;
                if e[k] == h[k - 1] - oe {
                    state = 0;
                }
                j -= 1;
            }
            _ => {
                c[2] += (last != 2) as u32; // a new run of 'I'
                last = 2;
                if f[k] == h[k - w] - oe {
                    state = 0;
                }
                i -= 1;
            }
        }
    }
    c
}

#[test]
fn gpu_path_counters_equal_a_naive_traceback() {
    if !gpu_or_skip("gpu_path_counters_equal_a_naive_traceback") {
        return;
    }
    let mut rng = Rng(0xfeed);
    for (name, sc) in schemes() {
        let owned = pairs(&mut rng, 3000, sc.matrix.size(), 800, false);
        let refs: Vec<(&[u8], &[u8])> = owned.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let seqs = SeqPairs::from_slices(&refs);
        let gpu = GpuAligner::new(&sc, &CudaConfig::default()).expect("GPU aligner");
        let alns = gpu.align(seqs.view(), swarrow::engine::Level::Coordinates).expect("GPU align");
        let got = gpu.path_counts(seqs.view(), &alns).expect("GPU path counters");
        assert!(got.iter().all(|c| c.is_some()), "{name}: these rectangles are all small enough for the GPU");
        (0..refs.len()).into_par_iter().for_each(|i| {
            let want = naive_counts(refs[i].0, refs[i].1, &sc, &alns[i]);
            assert_eq!(got[i], Some(want), "{name}: pair {i} {:?}", alns[i]);
        });
    }
}

#[test]
fn gpu_search_equals_the_cpu_search() {
    if !gpu_or_skip("gpu_search_equals_the_cpu_search") {
        return;
    }
    let mut rng = Rng(0xdb);
    let sc = Scoring::blosum62();
    let owned = pairs(&mut rng, 4000, sc.matrix.size(), 2000, false);
    let records: Vec<Record> = owned
        .iter()
        .enumerate()
        .map(|(i, (_, t))| Record { id: format!("t{i}"), seq: t.clone(), header: String::new() })
        .collect();
    let db = Database::from_records("random", records);
    let queries: Vec<&[u8]> = owned.iter().take(7).map(|(q, _)| &q[..]).collect();
    let top = 25;
    let gpu = CudaEngine::new(sc.clone()).expect("CUDA engine");
    let cpu = ScalarEngine::new(sc, 4).unwrap();
    let got = gpu.search(&queries, &db, top, &Work::new()).expect("GPU search");
    let want = cpu.search(&queries, &db, top, &Work::new()).unwrap();
    assert_eq!(got, want);
    // Streamed in small chunks, the database gives the same hits.
    let streamed = CudaEngine::with_config(
        Scoring::blosum62(),
        CudaConfig { search_chunk_bytes: Some(1 << 16), ..Default::default() },
    )
    .expect("CUDA engine");
    assert_eq!(streamed.search(&queries, &db, top, &Work::new()).expect("GPU search"), want);
}

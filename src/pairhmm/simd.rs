//! The CPU engine: float lanes across pairs (one pair per lane: 16 with AVX-512, 8 with AVX2,
//! 4 portable), pairs of similar read and haplotype lengths side by side, the recurrences
//! row by row over the haplotype; parallel over lane groups with rayon. A lane whose scaled
//! float sum is below GKL's threshold is recomputed in double by the scalar reference.
//!
//! The lane loops are plain array code compiled three times (AVX-512F, AVX2+FMA, baseline)
//! and vectorised by the compiler; the instruction set is picked at run time
//! (`SWARROW_SIMD=avx512|avx2|portable` forces one). Every build gives the same bits, and
//! the same as the scalar engine: each multiply-add is fused (rounded once: the FMA
//! instruction under AVX2 and AVX-512 and on aarch64, computed exactly in double in the
//! x86-64 baseline build, [`mul_add_by_double`]), the other operations are separate (Rust
//! never contracts them), in the order of `scalar::forward`, and denormals are flushed alike
//! ([`flush_denormals`]).

use super::batch::{PairBatch, ReadView};
use super::model::{flush_denormals, tables, Probabilities};
use super::{scalar, Engine, Likelihood};
use crate::error::{Error, Result};
use rayon::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
    Portable,
}

impl Isa {
    pub fn detect() -> Result<Isa> {
        let forced = std::env::var("SWARROW_SIMD").ok();
        let have = |isa: Isa| -> bool {
            #[cfg(target_arch = "x86_64")]
            {
                match isa {
                    Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
                    Isa::Avx2 => {
                        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
                    }
                    Isa::Portable => true,
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                isa == Isa::Portable
            }
        };
        match forced.as_deref() {
            None | Some("") => Ok([Isa::Avx512, Isa::Avx2].into_iter().find(|&i| have(i)).unwrap_or(Isa::Portable)),
            Some(name) => {
                let isa = match name {
                    "avx512" => Isa::Avx512,
                    "avx2" => Isa::Avx2,
                    "portable" | "sse41" => Isa::Portable,
                    other => {
                        return Err(Error::usage(format!("SWARROW_SIMD={other}: expected avx512, avx2 or portable")))
                    }
                };
                if have(isa) {
                    Ok(isa)
                } else {
                    Err(Error::usage(format!("SWARROW_SIMD={name}: this CPU does not support it")))
                }
            }
        }
    }

    fn lanes(self) -> usize {
        match self {
            Isa::Avx512 => 16,
            Isa::Avx2 => 8,
            Isa::Portable => 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Portable => "portable",
        }
    }
}

pub struct SimdEngine {
    pool: rayon::ThreadPool,
    isa: Isa,
}

impl SimdEngine {
    pub fn new(threads: usize) -> Result<Self> {
        Ok(SimdEngine { pool: super::thread_pool(threads)?, isa: Isa::detect()? })
    }
}

impl Engine for SimdEngine {
    fn name(&self) -> String {
        format!(
            "cpu-simd ({}, float with double recomputation, {} threads)",
            self.isa.name(),
            self.pool.current_num_threads()
        )
    }

    fn compute(&self, batch: &PairBatch, out: &mut Vec<Likelihood>) -> Result<()> {
        compute_with(self.isa, &self.pool, batch, out);
        Ok(())
    }
}

/// Pair order for lane groups: similar lengths side by side, longest first (load balance).
fn lane_order(batch: &PairBatch) -> Vec<u32> {
    let mut order: Vec<u32> = (0..batch.pairs.len() as u32).collect();
    let dims = |i: u32| {
        let p = batch.pairs[i as usize];
        (batch.read(p.read as usize).len(), batch.hap(p.hap as usize).len())
    };
    order.sort_by_key(|&i| std::cmp::Reverse(dims(i)));
    order
}

pub(crate) fn compute_with(isa: Isa, pool: &rayon::ThreadPool, batch: &PairBatch, out: &mut Vec<Likelihood>) {
    out.clear();
    out.resize(batch.pairs.len(), Likelihood { log10: f64::NAN, recomputed: false });
    let order = lane_order(batch);
    let lanes = isa.lanes();
    let results: Vec<(u32, Likelihood)> = pool.install(|| {
        order
            .par_chunks(lanes)
            .flat_map_iter(|chunk| {
                let mut res = Vec::with_capacity(chunk.len());
                flush_denormals(|| match isa {
                    Isa::Avx512 => run_lanes::<16>(isa, batch, chunk, &mut res),
                    Isa::Avx2 => run_lanes::<8>(isa, batch, chunk, &mut res),
                    Isa::Portable => run_lanes::<4>(isa, batch, chunk, &mut res),
                });
                res
            })
            .collect()
    });
    for (i, l) in results {
        out[i as usize] = l;
    }
}

/// Computes the pairs `chunk` (indexes into `batch.pairs`, at most L), appending
/// (index, likelihood) to `res`.
fn run_lanes<const L: usize>(isa: Isa, batch: &PairBatch, chunk: &[u32], res: &mut Vec<(u32, Likelihood)>) {
    let probs = &tables().0;
    let reads: Vec<ReadView<'_>> = chunk.iter().map(|&i| batch.read(batch.pairs[i as usize].read as usize)).collect();
    let haps: Vec<&[u8]> = chunk.iter().map(|&i| batch.hap(batch.pairs[i as usize].hap as usize)).collect();
    let mut lanes = Lanes::<L>::new(probs, &reads, &haps);
    let sums = match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => unsafe { forward_avx512(&mut lanes) },
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { forward_avx2(&mut lanes) },
        _ => lanes.forward::<BASELINE_FMA>(),
    };
    let mut work = Vec::new();
    for (k, &i) in chunk.iter().enumerate() {
        res.push((i, scalar::from_float_sum(sums[k], &reads[k], haps[k], &mut work)));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn forward_avx512<const L: usize>(lanes: &mut Lanes<'_, L>) -> [f32; L] {
    lanes.forward::<true>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn forward_avx2<const L: usize>(lanes: &mut Lanes<'_, L>) -> [f32; L] {
    lanes.forward::<true>()
}

/// Whether the baseline build has an FMA instruction (aarch64 always does).
const BASELINE_FMA: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// `a * b + c` rounded once: the FMA instruction where the build has one, else the same
/// result computed in double ([`mul_add_by_double`]).
#[inline(always)]
fn fused<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        mul_add_by_double(a, b, c)
    }
}

/// `f32::mul_add`'s result without an FMA instruction, in operations that vectorise (the
/// library's `fmaf`, a call per lane, made the x86-64 baseline build 19x slower): the product
/// is exact in double (24 + 24 bits); the sum is rounded to odd (an inexact sum gets an odd
/// last bit), after which rounding to float is correct (53 >= 24 + 2 bits).
#[inline(always)]
fn mul_add_by_double(a: f32, b: f32, c: f32) -> f32 {
    let (p, c) = (a as f64 * b as f64, c as f64);
    let s = p + c;
    // The rounding error of s, exactly (TwoSum).
    let t = s - p;
    let err = (p - (s - t)) + (c - t);
    // Rounded to odd: truncate (one step toward zero where s rounded away from the exact
    // sum, that is where err's sign differs) and set the last bit; integer operations only,
    // which vectorise without SSE4.
    let bits = s.to_bits();
    let inexact = (err != 0.0) as u64;
    let away = (err.to_bits() ^ bits) >> 63;
    f64::from_bits((bits - (away & inexact)) | inexact) as f32
}

/// Base bit masks: A C G T one bit each, N all four, so `read & hap != 0` is "emits a match".
const BASE_MASK: [u32; 5] = [1, 2, 4, 8, 15];

/// One lane group: per-row parameters and per-column haplotype bases, transposed so that
/// lane k of every array belongs to pair k. Lanes past the group's size and rows or columns
/// past a pair's lengths are padding that never reaches a result.
struct Lanes<'a, const L: usize> {
    rows: Vec<RowLanes<L>>,
    hap: Vec<[u32; L]>,
    read_len: [usize; L],
    hap_len: [usize; L],
    d0: [f32; L],
    _p: std::marker::PhantomData<&'a ()>,
}

#[derive(Clone, Copy)]
struct RowLanes<const L: usize> {
    mm: [f32; L],
    gm: [f32; L],
    mi: [f32; L],
    md: [f32; L],
    ext: [f32; L],
    em: [f32; L],
    ex: [f32; L],
    base: [u32; L],
}

impl<'a, const L: usize> Lanes<'a, L> {
    fn new(p: &Probabilities<f32>, reads: &[ReadView<'_>], haps: &[&[u8]]) -> Self {
        let rows_n = reads.iter().map(|r| r.len()).max().unwrap_or(0);
        let cols_n = haps.iter().map(|h| h.len()).max().unwrap_or(0);
        let zero = RowLanes {
            mm: [0.0; L],
            gm: [0.0; L],
            mi: [0.0; L],
            md: [0.0; L],
            ext: [0.0; L],
            em: [0.0; L],
            ex: [0.0; L],
            base: [0; L],
        };
        let mut rows = vec![zero; rows_n];
        let mut hap = vec![[0u32; L]; cols_n];
        let mut read_len = [0usize; L];
        let mut hap_len = [0usize; L];
        let mut d0 = [0f32; L];
        for (k, (read, h)) in reads.iter().zip(haps).enumerate() {
            read_len[k] = read.len();
            hap_len[k] = h.len();
            d0[k] = p.initial / h.len() as f32;
            for (i, row) in rows.iter_mut().enumerate().take(read.len()) {
                let t = p.row(read.base_q[i], read.ins_q[i], read.del_q[i], read.gcp_q[i]);
                row.mm[k] = t.match_to_match;
                row.gm[k] = t.gap_to_match;
                row.mi[k] = t.match_to_ins;
                row.md[k] = t.match_to_del;
                row.ext[k] = t.gap_ext;
                row.em[k] = t.emit_match;
                row.ex[k] = t.emit_mismatch;
                row.base[k] = BASE_MASK[read.bases[i] as usize];
            }
            for (j, &b) in h.iter().enumerate() {
                hap[j][k] = BASE_MASK[b as usize];
            }
        }
        Lanes { rows, hap, read_len, hap_len, d0, _p: std::marker::PhantomData }
    }

    /// The scaled sums of every lane. One state row (M, I, D per column) holds the row above;
    /// rows are computed two at a time (the second one column behind the first), so the row
    /// between them stays in registers, the state row is read and written once per two rows,
    /// and the two deletion chains along the row interleave.
    #[inline(always)]
    fn forward<const FMA: bool>(&mut self) -> [f32; L] {
        let cols = self.hap.len() + 1;
        let mut st = vec![State { m: [0.0; L], i: [0.0; L], d: self.d0 }; cols];
        let mut sums = [0f32; L];
        let mut i = 0;
        while i < self.rows.len() {
            let ends = |row: usize| self.read_len.iter().any(|&n| n == row + 1);
            if i + 1 < self.rows.len() {
                match (ends(i), ends(i + 1)) {
                    (false, false) => self.two_rows::<FMA, false, false>(&mut st, i, &mut sums),
                    (true, false) => self.two_rows::<FMA, true, false>(&mut st, i, &mut sums),
                    (false, true) => self.two_rows::<FMA, false, true>(&mut st, i, &mut sums),
                    (true, true) => self.two_rows::<FMA, true, true>(&mut st, i, &mut sums),
                }
                i += 2;
            } else {
                self.two_rows::<FMA, false, false>(&mut st, i, &mut sums);
                i += 1;
            }
        }
        sums
    }

    /// Rows `i` and `i + 1` (only `i` when it is the last), updating `st` to the last row
    /// computed; SUM_A / SUM_B: some lane's read ends at that row, whose M + I over the lane's
    /// haplotype columns goes into `sums`.
    #[inline(always)]
    fn two_rows<const FMA: bool, const SUM_A: bool, const SUM_B: bool>(
        &self,
        st: &mut [State<L>],
        i: usize,
        sums: &mut [f32; L],
    ) {
        let cols = st.len();
        let a = &self.rows[i];
        let b = self.rows.get(i + 1);
        let zero = State { m: [0.0; L], i: [0.0; L], d: [0.0; L] };
        let mut a_diag = st[0];
        let mut a_left = zero; // row i, column j - 1
        let mut a_left2 = zero; // row i, column j - 2
        let mut b_left = zero; // row i + 1, column j - 2
        let mut sum_a = [0f32; L];
        let mut sum_b = [0f32; L];
        st[0] = zero;
        let add_sum = |sum: &mut [f32; L], c: &State<L>, j: usize| {
            for k in 0..L {
                if j <= self.hap_len[k] {
                    sum[k] += c.m[k] + c.i[k];
                }
            }
        };
        for j in 1..cols {
            let up = st[j];
            let cell_a = cell::<L, FMA>(a, &self.hap[j - 1], &a_diag, &up, &a_left);
            a_diag = up;
            match b {
                Some(b) if j >= 2 => {
                    let cell_b = cell::<L, FMA>(b, &self.hap[j - 2], &a_left2, &a_left, &b_left);
                    if SUM_B {
                        add_sum(&mut sum_b, &cell_b, j - 1);
                    }
                    st[j - 1] = cell_b;
                    b_left = cell_b;
                }
                Some(_) => {}
                None => st[j] = cell_a,
            }
            if SUM_A {
                add_sum(&mut sum_a, &cell_a, j);
            }
            a_left2 = a_left;
            a_left = cell_a;
        }
        if let Some(b) = b {
            let j = cols - 1;
            let cell_b = cell::<L, FMA>(b, &self.hap[j - 1], &a_left2, &a_left, &b_left);
            if SUM_B {
                add_sum(&mut sum_b, &cell_b, j);
            }
            st[j] = cell_b;
        }
        for k in 0..L {
            if SUM_A && self.read_len[k] == i + 1 {
                sums[k] = sum_a[k];
            }
            if SUM_B && self.read_len[k] == i + 2 {
                sums[k] = sum_b[k];
            }
        }
        if b.is_none() {
            // A last single row: its sums from the state row.
            for k in 0..L {
                if self.read_len[k] == i + 1 {
                    sums[k] = (1..=self.hap_len[k]).map(|j| st[j].m[k] + st[j].i[k]).fold(0.0, |x, y| x + y);
                }
            }
        }
    }
}

/// M, I, D of one cell in every lane.
#[derive(Clone, Copy)]
struct State<const L: usize> {
    m: [f32; L],
    i: [f32; L],
    d: [f32; L],
}

/// One cell of every lane from its diagonal, upper and left neighbours.
#[inline(always)]
fn cell<const L: usize, const FMA: bool>(
    row: &RowLanes<L>,
    hb: &[u32; L],
    diag: &State<L>,
    up: &State<L>,
    left: &State<L>,
) -> State<L> {
    let mut out = State { m: [0.0; L], i: [0.0; L], d: [0.0; L] };
    for k in 0..L {
        // A bit select, not `if`: the compiler turns a select of two loads into a gather.
        let same = 0u32.wrapping_sub(((row.base[k] & hb[k]) != 0) as u32);
        let emit = f32::from_bits((row.em[k].to_bits() & same) | (row.ex[k].to_bits() & !same));
        // `scalar::forward`'s operations in its order (the engines give the same bits).
        out.m[k] = emit * fused::<FMA>(diag.m[k], row.mm[k], (diag.i[k] + diag.d[k]) * row.gm[k]);
        out.i[k] = fused::<FMA>(up.i[k], row.ext[k], up.m[k] * row.mi[k]);
        out.d[k] = fused::<FMA>(left.d[k], row.ext[k], left.m[k] * row.md[k]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairhmm::batch::Quals;

    fn random_batch(seed: u64, pairs: usize) -> PairBatch {
        let mut s = seed;
        let mut next = move |n: u64| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) % n
        };
        let mut b = PairBatch::new();
        for p in 0..pairs {
            let rl = 1 + next(120) as usize;
            let hl = 1 + next(300) as usize;
            let bases = |next: &mut dyn FnMut(u64) -> u64, n: usize| -> Vec<u8> {
                (0..n).map(|_| b"ACGTACGTACGTACGTN"[next(17) as usize]).collect()
            };
            let quals = |next: &mut dyn FnMut(u64) -> u64, n: usize, lo: u8| -> Vec<u8> {
                (0..n).map(|_| 33 + lo + next(50) as u8).collect()
            };
            let rb = bases(&mut next, rl);
            let (q, iq, dq, gq) =
                (quals(&mut next, rl, 0), quals(&mut next, rl, 10), quals(&mut next, rl, 5), quals(&mut next, rl, 3));
            let r = b.push_read(&format!("r{p}"), &rb, &q, &iq, &dq, Quals::Text(&gq)).unwrap();
            let hb = bases(&mut next, hl);
            let h = b.push_hap(&format!("h{p}"), &hb).unwrap();
            let g = b.groups.push("g");
            b.pairs.push(crate::pairhmm::batch::PairRef { read: r, hap: h, group: g });
        }
        b
    }

    // The emulation against the fused operation, on random operands of every sign and of
    // exponents far apart and close (cancellation, rounding ties in double).
    #[test]
    fn mul_add_by_double_is_fused() {
        let mut s = 12345u64;
        let mut next = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s >> 11
        };
        let mut value = |scale: i32| -> f32 {
            let r = next();
            let m = 1.0 + (r & 0xff_ffff) as f32 / (1u32 << 24) as f32;
            let sign = if r >> 40 & 1 == 1 { -1.0 } else { 1.0 };
            sign * m * 2f32.powi(scale + (r >> 32 & 31) as i32 - 16)
        };
        for n in 0..2_000_000 {
            let (a, b) = (value(0), value(0));
            let c = match n % 4 {
                0 => value(0),
                1 => -(a * b), // cancellation
                2 => value(-30),
                _ => value(30),
            };
            let (got, want) = (mul_add_by_double(a, b, c), a.mul_add(b, c));
            assert_eq!(got.to_bits(), want.to_bits(), "{a:e} * {b:e} + {c:e}: {got:e} vs {want:e}");
        }
        // Products exactly halfway between two floats plus a c below double precision: the
        // sum rounded to nearest in double is the tie, which then rounds the wrong way (a
        // plain `(a * b + c) as f32` in double fails about half of these).
        for i in 1..24 {
            for scale in [-20, 0, 7] {
                let a = (1.0 + 2f32.powi(-i)) * 2f32.powi(scale);
                let b = 1.0 + 2f32.powi(i - 24);
                for e in 50..90 {
                    for c in [2f32.powi(scale - e), -(2f32.powi(scale - e))] {
                        let (got, want) = (mul_add_by_double(a, b, c), a.mul_add(b, c));
                        assert_eq!(got.to_bits(), want.to_bits(), "{a:e} * {b:e} + {c:e}: {got:e} vs {want:e}");
                    }
                }
            }
        }
    }

    /// Pairs as HaplotypeCaller sees them: reads of 1-300 bases sampled from their haplotype
    /// (1-600 bases) with substitutions and indels, and one in five unrelated (far below the
    /// float threshold, so recomputed in double); N bases, base qualities below 6, the other
    /// qualities varied per base.
    fn realistic_batch(seed: u64, pairs: usize) -> PairBatch {
        let mut s = seed;
        let mut next = move |n: u64| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) % n
        };
        let mut b = PairBatch::new();
        for p in 0..pairs {
            let base = |next: &mut dyn FnMut(u64) -> u64| if next(50) == 0 { b'N' } else { b"ACGT"[next(4) as usize] };
            let hap: Vec<u8> = (0..1 + next(600) as usize).map(|_| base(&mut next)).collect();
            let len = 1 + next(300) as usize;
            let read: Vec<u8> = if next(5) == 0 {
                (0..len).map(|_| base(&mut next)).collect()
            } else {
                let start = next(hap.len() as u64) as usize;
                let mut r = Vec::new();
                for &c in &hap[start..(start + len).min(hap.len())] {
                    match next(100) {
                        0 => {}
                        1 => r.extend([c, base(&mut next)]),
                        2 | 3 => r.push(base(&mut next)),
                        _ => r.push(c),
                    }
                }
                if r.is_empty() {
                    r.push(b'A');
                }
                r
            };
            let n = read.len();
            let mut quals =
                |lo: u8, hi: u8| -> Vec<u8> { (0..n).map(|_| 33 + lo + next((hi - lo + 1) as u64) as u8).collect() };
            let (q, iq, dq, gq) = (quals(0, 45), quals(10, 60), quals(5, 55), quals(3, 40));
            let r = b.push_read(&format!("r{p}"), &read, &q, &iq, &dq, Quals::Text(&gq)).unwrap();
            let h = b.push_hap(&format!("h{p}"), &hap).unwrap();
            let g = b.groups.push("g");
            b.pairs.push(crate::pairhmm::batch::PairRef { read: r, hap: h, group: g });
        }
        b
    }

    /// The instruction sets this CPU runs.
    fn supported_isas() -> Vec<Isa> {
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                v.push(Isa::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    // Issue 44 item 12: every CPU engine a user can get (the scalar engine and each
    // instruction set of this one) gives the same bits for every pair, float and recomputed.
    #[test]
    fn every_cpu_engine_gives_identical_bits() {
        let batch = realistic_batch(20261127, 400);
        let pool = crate::pairhmm::thread_pool(2).unwrap();
        let mut runs: Vec<(String, Vec<Likelihood>)> = Vec::new();
        let mut out = Vec::new();
        scalar::ScalarEngine::new(2).unwrap().compute(&batch, &mut out).unwrap();
        runs.push(("scalar".into(), out));
        for isa in supported_isas() {
            let mut out = Vec::new();
            compute_with(isa, &pool, &batch, &mut out);
            let recomputed = out.iter().filter(|l| l.recomputed).count();
            assert!(recomputed >= 20 && recomputed <= out.len() - 200, "{isa:?}: {recomputed} recomputed");
            runs.push((isa.name().into(), out));
        }
        let mut report = Vec::new();
        for (a, (name_a, xs)) in runs.iter().enumerate() {
            for (name_b, ys) in &runs[a + 1..] {
                let differ: Vec<f64> = xs
                    .iter()
                    .zip(ys)
                    .filter(|(x, y)| x.log10.to_bits() != y.log10.to_bits() || x.recomputed != y.recomputed)
                    .map(|(x, y)| (x.log10 - y.log10).abs())
                    .collect();
                if !differ.is_empty() {
                    let max = differ.iter().fold(0f64, |m, &d| m.max(d));
                    report.push(format!(
                        "{name_a} vs {name_b}: {} of {} pairs differ (max {max:.2e})",
                        differ.len(),
                        xs.len()
                    ));
                }
            }
        }
        assert!(report.is_empty(), "engines disagree:\n{}", report.join("\n"));
    }

    #[test]
    fn every_isa_agrees_with_the_double_reference() {
        let batch = random_batch(7, 150);
        let pool = crate::pairhmm::thread_pool(2).unwrap();
        let want: Vec<f64> = batch
            .pairs
            .iter()
            .map(|p| scalar::log10_likelihood(&batch.read(p.read as usize), batch.hap(p.hap as usize), &mut Vec::new()))
            .collect();
        for isa in supported_isas() {
            let mut got = Vec::new();
            compute_with(isa, &pool, &batch, &mut got);
            let mut recomputed = 0;
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let tol = if g.recomputed { 1e-9 } else { 1e-5 };
                assert!((g.log10 - w).abs() < tol || g.log10 == *w, "{isa:?} pair {i}: {} vs {w}", g.log10);
                recomputed += g.recomputed as usize;
            }
            assert!(recomputed > 0 && recomputed < got.len(), "{isa:?}: {recomputed} recomputed");
        }
    }
}

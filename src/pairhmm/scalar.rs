//! The scalar engine: the model's recurrences cell by cell, row by row, in either precision.
//! In float it is GKL's float pass with the operations of every lane of [`super::simd`] in
//! the same order (each multiply-add fused), so the engines give the same bits; in double it
//! is the reference the tests check against (GKL's double mode) and the recomputation every
//! CPU engine falls back to when its float pass underflows.

use super::batch::{PairBatch, ReadView};
use super::model::{flush_denormals, tables, Probabilities, Real, BASE_N, FLOAT_RESULT_THRESHOLD};
use super::{Engine, Likelihood};
use crate::error::Result;
use rayon::prelude::*;

/// The scaled forward sum `initial * P(read | haplotype)` (the last row's M + I), in T.
/// `work` is scratch space, reused between calls. In float each multiply-add is fused
/// ([`Real::madd`]): the FMA instruction where the CPU has it, a library call elsewhere.
pub fn forward<T: Real>(p: &Probabilities<T>, read: &ReadView<'_>, hap: &[u8], work: &mut Vec<T>) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has FMA.
        return unsafe { forward_fma(p, read, hap, work) };
    }
    forward_cells(p, read, hap, work)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn forward_fma<T: Real>(p: &Probabilities<T>, read: &ReadView<'_>, hap: &[u8], work: &mut Vec<T>) -> T {
    forward_cells(p, read, hap, work)
}

#[inline(always)]
fn forward_cells<T: Real>(p: &Probabilities<T>, read: &ReadView<'_>, hap: &[u8], work: &mut Vec<T>) -> T {
    let cols = hap.len() + 1;
    let zero = T::from_f64(0.0);
    work.clear();
    work.resize(6 * cols, zero);
    let (prev, cur) = work.split_at_mut(3 * cols);
    let (mut m_prev, rest) = prev.split_at_mut(cols);
    let (mut i_prev, mut d_prev) = rest.split_at_mut(cols);
    let (mut m_cur, rest) = cur.split_at_mut(cols);
    let (mut i_cur, mut d_cur) = rest.split_at_mut(cols);
    // Row 0: free deletions before the read starts, in every column.
    let d0 = p.initial.div(T::from_i32(hap.len() as i32));
    d_prev.fill(d0);
    for i in 0..read.len() {
        let row = p.row(read.base_q[i], read.ins_q[i], read.del_q[i], read.gcp_q[i]);
        let rb = read.bases[i];
        m_cur[0] = zero;
        i_cur[0] = zero;
        d_cur[0] = zero;
        for j in 1..cols {
            let hb = hap[j - 1];
            let emit = if rb == hb || rb == BASE_N || hb == BASE_N { row.emit_match } else { row.emit_mismatch };
            // The operations and their order of `simd::cell`: which product is fused matters.
            let from_gap = i_prev[j - 1].add(d_prev[j - 1]);
            m_cur[j] = emit.mul(m_prev[j - 1].madd(row.match_to_match, from_gap.mul(row.gap_to_match)));
            i_cur[j] = i_prev[j].madd(row.gap_ext, m_prev[j].mul(row.match_to_ins));
            d_cur[j] = d_cur[j - 1].madd(row.gap_ext, m_cur[j - 1].mul(row.match_to_del));
        }
        std::mem::swap(&mut m_prev, &mut m_cur);
        std::mem::swap(&mut i_prev, &mut i_cur);
        std::mem::swap(&mut d_prev, &mut d_cur);
    }
    let mut sum = zero;
    for j in 1..cols {
        sum = sum.add(m_prev[j].add(i_prev[j]));
    }
    sum
}

/// log10 P(read | haplotype) computed in double throughout.
pub fn log10_likelihood(read: &ReadView<'_>, hap: &[u8], work: &mut Vec<f64>) -> f64 {
    let p = &tables().1;
    forward(p, read, hap, work).log10() - p.log10_initial
}

/// GKL's rule, the one every CPU engine applies to a float pass's scaled sum: kept when at
/// least [`FLOAT_RESULT_THRESHOLD`], else recomputed in double. Run with denormals flushed
/// ([`flush_denormals`]), as the float pass was.
pub fn from_float_sum(sum: f32, read: &ReadView<'_>, hap: &[u8], work: &mut Vec<f64>) -> Likelihood {
    if sum < FLOAT_RESULT_THRESHOLD {
        Likelihood { log10: log10_likelihood(read, hap, work), recomputed: true }
    } else {
        Likelihood { log10: (sum as f64).log10() - tables().0.log10_initial, recomputed: false }
    }
}

/// The scalar engine: each pair's float pass and, below the threshold, its double
/// recomputation, cell by cell; in parallel over pairs.
pub struct ScalarEngine {
    pool: rayon::ThreadPool,
}

impl ScalarEngine {
    pub fn new(threads: usize) -> Result<Self> {
        Ok(ScalarEngine { pool: super::thread_pool(threads)? })
    }
}

impl Engine for ScalarEngine {
    fn name(&self) -> String {
        format!("cpu-scalar (float with double recomputation, {} threads)", self.pool.current_num_threads())
    }

    fn compute(&self, batch: &PairBatch, out: &mut Vec<Likelihood>) -> Result<()> {
        out.clear();
        let floats = &tables().0;
        self.pool.install(|| {
            batch
                .pairs
                .par_iter()
                .map_init(
                    || (Vec::new(), Vec::new()),
                    |(w32, w64), p| {
                        let (read, hap) = (batch.read(p.read as usize), batch.hap(p.hap as usize));
                        flush_denormals(|| from_float_sum(forward(floats, &read, hap, w32), &read, hap, w64))
                    },
                )
                .collect_into_vec(out)
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairhmm::batch::{PairBatch, Quals};

    /// The model summed over every alignment path by brute recursion, written independently
    /// of `forward` (memoised probabilities of ending in each state), for tiny cases.
    fn brute_force(read: &ReadView<'_>, hap: &[u8]) -> f64 {
        let p = &tables().1;
        let (n, m) = (read.len(), hap.len());
        // probability mass (unscaled) of each state at (i, j)
        let mut mm = vec![vec![0.0f64; m + 1]; n + 1];
        let mut ii = mm.clone();
        let mut dd = mm.clone();
        for row in dd[0].iter_mut() {
            *row = 1.0 / m as f64;
        }
        for i in 1..=n {
            let t = p.row(read.base_q[i - 1], read.ins_q[i - 1], read.del_q[i - 1], read.gcp_q[i - 1]);
            for j in 1..=m {
                let same = read.bases[i - 1] == hap[j - 1] || read.bases[i - 1] == BASE_N || hap[j - 1] == BASE_N;
                let e = if same { t.emit_match } else { t.emit_mismatch };
                mm[i][j] =
                    e * (mm[i - 1][j - 1] * t.match_to_match + (ii[i - 1][j - 1] + dd[i - 1][j - 1]) * t.gap_to_match);
                ii[i][j] = mm[i - 1][j] * t.match_to_ins + ii[i - 1][j] * t.gap_ext;
                dd[i][j] = mm[i][j - 1] * t.match_to_del + dd[i][j - 1] * t.gap_ext;
            }
        }
        (1..=m).map(|j| mm[n][j] + ii[n][j]).sum::<f64>().log10()
    }

    #[test]
    fn matches_the_unscaled_recursion() {
        let mut b = PairBatch::new();
        let r = b.push_read("r", b"ACGTN", b"5+I#I", b"IHG@I", b"I?IH5", Quals::Constant(10)).unwrap();
        let h = b.push_hap("h", b"TACGGTA").unwrap();
        let read = b.read(r as usize);
        let hap = b.hap(h as usize);
        let got = log10_likelihood(&read, hap, &mut Vec::new());
        let want = brute_force(&read, hap);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    // GKL's own unit test case: ACGT vs ACGT, every quality the raw byte of '+' (43, which is
    // 'L' in phred+33): -0.6022797 (to 1e-5).
    #[test]
    fn gkl_unit_test_case() {
        let mut b = PairBatch::new();
        let r = b.push_read("r", b"ACGT", b"LLLL", b"LLLL", b"LLLL", Quals::Text(b"LLLL")).unwrap();
        let h = b.push_hap("h", b"ACGT").unwrap();
        let got = log10_likelihood(&b.read(r as usize), b.hap(h as usize), &mut Vec::new());
        assert!((got - -6.022797e-01).abs() < 1e-5, "{got}");
    }
}

//! Pieces binned on the GPU (`kernels/pair_bins.cu`): the host's side, pure CPU code tested
//! without a GPU. Short pairs spent ten times longer in the host's per-pair binning
//! (`align_plan::make_bins`: a shape per pair, a sort, the group table) than in the GPU's
//! passes (BENCHMARKS.md, session 6). Here the host makes two passes over the lengths
//! (a few nanoseconds a pair) and the GPU does the rest:
//! - the shape depends on the query length alone (the cost model at the piece's mean target
//!   length), as one table `region_of[qlen]`, where a region is one shape;
//! - the host counts the pairs of each region, which places every region in the group table
//!   and gives every launch its warp table before anything runs;
//! - the GPU writes the pair table from the batch's bounds and sorts each region's pairs by
//!   target length, longest first, into the group table.
//!
//! A piece qualifies when every query fits one pass of some shape (the default rules: at most
//! 32 x 16 rows); others take the host's binning, which also tiles long queries.

use super::align_plan::{choose_shape, halves, Launch, ShapeRules};
use super::kernels::Shape;
use crate::seq::PairSeqs;

/// Target-length buckets per region (`BUCKETS` in kernels/pair_bins.cu).
pub const BUCKETS: usize = 256;

/// The plan of one GPU-binned piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuBins {
    /// Region of each query length `0..=max_qlen` (-1 for 0: empty pairs are left out).
    pub region_of: Vec<i32>,
    /// Each region's shape, ordered by rows then threads (one launch per row count).
    pub regions: Vec<Shape>,
    /// Non-empty pairs of each region.
    pub counts: Vec<usize>,
    /// Each region's first entry in the group table (`halves` entries per group).
    pub region_first: Vec<i32>,
    /// Target lengths are bucketed as `tlen >> shift` (capped at `BUCKETS - 1`).
    pub shift: u32,
    /// Entries of the group table (groups times two), all regions.
    pub group_entries: usize,
}

impl GpuBins {
    /// The plan for `pairs`, or None when a query needs more than one pass (or the rules
    /// allow multi-pass tiling, which only the host's binning lays out). `rules` gives the
    /// shape rules for a piece of that many non-empty pairs.
    pub fn plan(pairs: PairSeqs<'_>, rules: impl Fn(usize) -> ShapeRules) -> Option<GpuBins> {
        let (mut nonempty, mut max_q, mut max_t, mut sum_t) = (0usize, 0usize, 0usize, 0u64);
        for (q, t) in pairs.iter() {
            if q.is_empty() || t.is_empty() {
                continue;
            }
            nonempty += 1;
            max_q = max_q.max(q.len());
            max_t = max_t.max(t.len());
            sum_t += t.len() as u64;
        }
        let rules = rules(nonempty);
        if rules.multipass || max_q > 32 * rules.max_rows as usize {
            return None;
        }
        let mean_t = (sum_t / nonempty.max(1) as u64) as usize;
        let shapes: Vec<Shape> = (1..=max_q).map(|q| choose_shape(q, mean_t, true, rules)).collect();
        if shapes.iter().zip(1..).any(|(s, q)| s.passes(q) > 1) {
            return None;
        }
        let mut regions: Vec<Shape> = shapes.clone();
        regions.sort_by_key(|s| (s.rows, s.threads));
        regions.dedup();
        let mut region_of = vec![-1i32; max_q + 1];
        for (q, s) in (1..).zip(&shapes) {
            region_of[q] = regions.binary_search_by_key(&(s.rows, s.threads), |r| (r.rows, r.threads)).ok()? as i32;
        }
        let mut counts = vec![0usize; regions.len()];
        for (q, t) in pairs.iter() {
            if !q.is_empty() && !t.is_empty() {
                counts[region_of[q.len()] as usize] += 1;
            }
        }
        let h = halves(true);
        let mut region_first = Vec::with_capacity(regions.len());
        let mut group_entries = 0usize;
        for &c in &counts {
            region_first.push(i32::try_from(group_entries).ok()?);
            group_entries += c.div_ceil(h) * h;
        }
        let mut shift = 0u32;
        while (max_t >> shift) >= BUCKETS {
            shift += 1;
        }
        Some(GpuBins { region_of, regions, counts, region_first, shift, group_entries })
    }

    /// Largest query length the region table covers.
    pub fn max_qlen(&self) -> usize {
        self.region_of.len() - 1
    }

    /// One launch per row count, its warps running the regions of that row count, each
    /// region's groups in table order (longest targets first, as the GPU sorts them).
    pub fn launches(&self) -> Vec<Launch> {
        let h = halves(true);
        let mut out: Vec<Launch> = Vec::new();
        for (k, (shape, &count)) in self.regions.iter().zip(&self.counts).enumerate() {
            if count == 0 {
                continue;
            }
            if out.last().map_or(true, |l| l.rows != shape.rows) {
                out.push(Launch {
                    packed: true,
                    rows: shape.rows,
                    pipelined: false,
                    warps: Vec::new(),
                    stride: 1,
                    slots: 0,
                });
            }
            let Some(launch) = out.last_mut() else { continue };
            let per_warp = (32 / shape.threads) as usize;
            let groups = count.div_ceil(h);
            let first = self.region_first[k] as usize / h;
            for j in (0..groups).step_by(per_warp) {
                launch.warps.push([shape.threads as i32, (first + j) as i32, 0, per_warp.min(groups - j) as i32]);
            }
        }
        out
    }

    /// Target-length bucket counter of a pair (`bucket_of` in kernels/pair_bins.cu), None
    /// for a pair left out.
    pub fn bucket(&self, qlen: usize, tlen: usize) -> Option<usize> {
        if qlen == 0 || tlen == 0 || qlen > self.max_qlen() {
            return None;
        }
        let r = usize::try_from(self.region_of[qlen]).ok()?;
        let b = (tlen >> self.shift).min(BUCKETS - 1);
        Some(r * BUCKETS + (BUCKETS - 1 - b))
    }

    /// What the three kernels of kernels/pair_bins.cu write, on the CPU: the group table
    /// (every non-empty pair once, in its region, by bucket; inside a bucket by index where
    /// the GPU's order follows its atomics). For tests of the plan against the kernels'
    /// rules.
    pub fn emulate(&self, pairs: PairSeqs<'_>) -> Vec<i32> {
        let mut hist = vec![0usize; self.regions.len() * BUCKETS];
        for (q, t) in pairs.iter() {
            if let Some(k) = self.bucket(q.len(), t.len()) {
                hist[k] += 1;
            }
        }
        for (r, counters) in hist.chunks_mut(BUCKETS).enumerate() {
            let mut at = self.region_first[r] as usize;
            for c in counters.iter_mut() {
                let n = *c;
                *c = at;
                at += n;
            }
        }
        let mut groups = vec![-1i32; self.group_entries + 1];
        for (p, (q, t)) in pairs.iter().enumerate() {
            if let Some(k) = self.bucket(q.len(), t.len()) {
                groups[hist[k]] = p as i32;
                hist[k] += 1;
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seq::SeqPairs;

    /// Pairs of the given (qlen, tlen), residues all code 0.
    fn pairs_of(lens: &[(usize, usize)]) -> SeqPairs {
        let mut p = SeqPairs::default();
        for &(q, t) in lens {
            p.push(&vec![0u8; q], &vec![0u8; t]);
        }
        p
    }

    fn lengths(seed: u64, n: usize, q: (usize, usize), t: (usize, usize)) -> Vec<(usize, usize)> {
        let mut x = seed.max(1);
        let mut next = move |lo: usize, hi: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (x % (hi - lo + 1) as u64) as usize
        };
        (0..n).map(|_| (next(q.0, q.1), next(t.0, t.1))).collect()
    }

    /// The plan's group table and warps, as the kernels and the align kernel read them, run
    /// every non-empty pair once, in a group whose shape is the one `choose_shape` gives its
    /// query at the piece's mean target, in one pass; each region's targets longest first.
    #[test]
    fn groups_and_warps_cover_every_pair_once_in_its_shape() {
        let rules = ShapeRules { max_rows: 16, min_group: 1, multipass: false };
        let mut lens = lengths(7, 5_000, (1, 512), (1, 3_000));
        lens.extend([(0, 5), (5, 0), (0, 0), (512, 1), (1, 1)]);
        let pairs = pairs_of(&lens);
        let plan = GpuBins::plan(pairs.view(), |_| rules).expect("one pass for every query");
        let groups = plan.emulate(pairs.view());
        let nonempty: Vec<(usize, usize)> = lens.iter().copied().filter(|&(q, t)| q > 0 && t > 0).collect();
        let mean_t = nonempty.iter().map(|p| p.1).sum::<usize>() / nonempty.len();
        let mut seen = vec![0u32; lens.len()];
        for l in plan.launches() {
            for w in &l.warps {
                let [g, first, slot, count] = *w;
                assert_eq!(slot, 0);
                assert!(count >= 1 && count as u32 <= 32 / g as u32);
                for k in 0..count as usize {
                    for h in 0..2 {
                        let p = groups[2 * (first as usize + k) + h];
                        if p < 0 {
                            continue;
                        }
                        let (q, t) = lens[p as usize];
                        seen[p as usize] += 1;
                        let want = choose_shape(q, mean_t, true, rules);
                        assert_eq!(Shape { threads: g as u32, rows: l.rows }, want, "pair {p} ({q} x {t})");
                        assert_eq!(want.passes(q), 1);
                    }
                }
            }
        }
        for (p, &(q, t)) in lens.iter().enumerate() {
            assert_eq!(seen[p], (q > 0 && t > 0) as u32, "pair {p} ({q} x {t})");
        }
        // Inside each region, targets longest first, by bucket.
        for (r, &count) in plan.counts.iter().enumerate() {
            let at = plan.region_first[r] as usize;
            let buckets: Vec<usize> =
                groups[at..at + count].iter().map(|&p| (lens[p as usize].1 >> plan.shift).min(BUCKETS - 1)).collect();
            assert!(buckets.windows(2).all(|w| w[0] >= w[1]), "region {r}");
        }
        assert!(plan.shift > 0, "targets up to 3,000 need wider buckets than one residue");
    }

    #[test]
    fn pieces_with_queries_past_one_pass_take_the_host_binning() {
        let rules = ShapeRules { max_rows: 16, min_group: 1, multipass: false };
        assert!(GpuBins::plan(pairs_of(&[(100, 100), (513, 10)]).view(), |_| rules).is_none());
        assert!(GpuBins::plan(pairs_of(&[(100, 100)]).view(), |_| ShapeRules { multipass: true, ..rules }).is_none());
        let small = ShapeRules { max_rows: 8, ..rules };
        assert!(GpuBins::plan(pairs_of(&[(257, 10)]).view(), |_| small).is_none());
        assert!(GpuBins::plan(pairs_of(&[(256, 10)]).view(), |_| small).is_some());
        // Only empty pairs: nothing to launch.
        let empty = GpuBins::plan(pairs_of(&[(0, 3), (0, 0)]).view(), |_| rules).expect("plan");
        assert!(empty.launches().is_empty());
        assert_eq!(empty.emulate(pairs_of(&[(0, 3), (0, 0)]).view()), vec![-1]);
    }

    #[test]
    fn the_rules_see_the_non_empty_pairs_and_min_group_holds() {
        let lens = lengths(3, 1_000, (100, 200), (100, 200));
        let pairs = pairs_of(&lens);
        let plan = GpuBins::plan(pairs.view(), |n| {
            assert_eq!(n, 1_000);
            ShapeRules { max_rows: 16, min_group: 16, multipass: false }
        })
        .expect("plan");
        assert!(plan.regions.iter().all(|s| s.threads >= 16), "{:?}", plan.regions);
        assert_eq!(plan.counts.iter().sum::<usize>(), 1_000);
        assert_eq!(plan.shift, 0);
    }
}

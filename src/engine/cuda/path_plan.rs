//! Planning of the GPU traceback (`kernels/path_trace.cu`), pure CPU code tested without a
//! GPU: jobs (one rectangle per thread) sorted so that a warp's rectangles have one shape,
//! each warp's region of direction words and scratch, launches that keep the directions
//! held at once under a budget, and where each job's operations go.

use crate::engine::Alignment;
use crate::seq::PairSeqs;

/// Rows per strip: one 64-bit word holds a strip's column of 4-bit directions.
pub const PATH_ROWS: u64 = 16;
/// Fewest direction words one stream holds at once (128 MiB): a launch's warps share them.
pub const PATH_BUDGET_WORDS: u64 = 1 << 24;
/// Threads whose regions interleave (a warp).
const LANES: u64 = 32;

/// One launch: jobs `first..first + count` (first a multiple of 32), with the direction
/// words and scratch cells its warps' regions take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLaunch {
    pub first: usize,
    pub count: usize,
    pub dirs_words: u64,
    pub scratch_cells: u64,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct PathPlan {
    /// Per job: (query offset, target offset, m, n) of the rectangle.
    pub jobs: Vec<u32>,
    /// Per job: the pair it belongs to.
    pub index: Vec<u32>,
    /// Per warp: (first direction word, relative to its launch; its columns | first
    /// scratch cell, relative to its launch, << 32).
    pub region: Vec<u64>,
    /// Per job: its first word of operations; `out_words` in all.
    pub out_at: Vec<u64>,
    pub out_words: usize,
    pub launches: Vec<PathLaunch>,
    /// Pairs with an alignment the GPU does not take (a warp's region over the budget).
    pub elsewhere: Vec<u32>,
}

/// Strips and columns of a rectangle of `m` by `n` (strips over the shorter side).
fn strips_cols(m: u64, n: u64) -> (u64, u64) {
    (m.min(n).div_ceil(PATH_ROWS), m.max(n))
}

/// Words of operations a job may write: one 2-bit operation per residue at most.
pub fn op_words(m: u64, n: u64) -> u64 {
    (m + n).div_ceil(16).max(1)
}

/// Jobs for the alignments with a score: rectangles q[qstart..=qend] x t[tstart..=tend]
/// (offsets into the piece's residues, as `pack_descs` lays them out), sorted by strips then
/// columns (most first) so a warp's region is close to each of its rectangles; launches
/// take whole warps while their directions stay within `budget_words`. A rectangle whose
/// warp alone would exceed it (or whose sides exceed 32 bits) is left `elsewhere`.
pub fn plan_paths(pairs: PairSeqs<'_>, alignments: &[Alignment], budget_words: u64) -> PathPlan {
    let offsets: Vec<usize> = pairs.offsets().collect();
    let mut plan = PathPlan::default();
    let mut order: Vec<((u64, u64), u32, [u32; 4])> = Vec::new();
    for (i, a) in alignments.iter().enumerate() {
        if a.score <= 0 {
            continue;
        }
        let (m, n) = ((a.qend - a.qstart + 1) as u64, (a.tend - a.tstart + 1) as u64);
        let (strips, cols) = strips_cols(m, n);
        if strips * cols * LANES > budget_words || cols >= 1 << 31 {
            plan.elsewhere.push(i as u32);
            continue;
        }
        let q = offsets[2 * i] as u32 + a.qstart - 1;
        let t = offsets[2 * i + 1] as u32 + a.tstart - 1;
        order.push(((strips, cols), i as u32, [q, t, m as u32, n as u32]));
    }
    // The pair index makes every key distinct: an unstable sort gives the one order.
    order.sort_unstable_by_key(|&(shape, i, _)| (std::cmp::Reverse(shape), i));
    for &(_, i, job) in &order {
        plan.jobs.extend_from_slice(&job);
        plan.index.push(i);
        plan.out_at.push(plan.out_words as u64);
        plan.out_words += op_words(job[2] as u64, job[3] as u64) as usize;
    }
    let mut launch = PathLaunch { first: 0, count: 0, dirs_words: 0, scratch_cells: 0 };
    for (w, warp) in order.chunks(LANES as usize).enumerate() {
        let strips = warp.iter().map(|(s, ..)| s.0).max().unwrap_or(1);
        let cols = warp.iter().map(|(s, ..)| s.1).max().unwrap_or(1);
        let words = strips * cols * LANES;
        let scratch = if strips > 1 { cols * LANES } else { 0 };
        if launch.count > 0 && launch.dirs_words + words > budget_words {
            plan.launches.push(launch);
            launch = PathLaunch { first: w * LANES as usize, count: 0, dirs_words: 0, scratch_cells: 0 };
        }
        plan.region.push(launch.dirs_words);
        plan.region.push(cols | launch.scratch_cells << 32);
        launch.count += warp.len();
        launch.dirs_words += words;
        launch.scratch_cells += scratch;
    }
    if launch.count > 0 {
        plan.launches.push(launch);
    }
    plan
}

#[cfg(test)]
mod tests {
    //! The kernel's algorithm run on the CPU over the plan's layout (directions in 4-bit
    //! cells of one shared buffer, strips, transposition, scratch between strips), against
    //! `traceback::trace`, the specification: the layout and the walk are right before any
    //! GPU runs them.
    use super::*;
    use crate::engine::traceback::{self, from_ops};
    use crate::engine::{scalar, Alignment};
    use crate::scoring::{Matrix, Scoring};
    use crate::seq::PairSeqs;

    const NEG: i32 = -(1 << 29);

    /// kernels/path_trace.cu for job `k`, step for step (in its launch's buffers); returns
    /// (operations written, H(m,n), walk ended at the start).
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        plan: &PathPlan,
        k: usize,
        seqs: &[u8],
        sc: &Scoring,
        dirs: &mut [u64],
        scratch: &mut [(i32, i32)],
        ops: &mut [u32],
    ) -> (usize, i32, bool) {
        let (mat, nc1) = super::super::align_plan::kernel_matrix(sc).unwrap();
        let job = &plan.jobs[4 * k..4 * k + 4];
        let tr = job[2] > job[3];
        let (rs, cs) = if tr { (job[1], job[0]) } else { (job[0], job[1]) };
        let (rows, cols) = if tr { (job[3] as usize, job[2] as usize) } else { (job[2] as usize, job[3] as usize) };
        let lane = k & 31;
        let (base, packed) = (plan.region[2 * (k >> 5)], plan.region[2 * (k >> 5) + 1]);
        let stride = packed & 0xffff_ffff;
        let sbase = (packed >> 32) as usize;
        let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
        let score = |r: u8, c: u8| {
            let (a, b) = if tr { (c, r) } else { (r, c) };
            mat[a as usize * nc1 + b as usize] as i32
        };
        let pad = (nc1 - 1) as u8;
        let tie = if tr { 0 } else { 1 };
        let mut result = NEG;
        let dir_at = |strip: usize, j: usize| base as usize + (strip * stride as usize + j) * 32 + lane;
        let mut strip = 0;
        let mut i0 = 0;
        while i0 < rows {
            let mut hl = [NEG; 16];
            let mut e = [NEG; 16];
            let rc: Vec<u8> = (0..16).map(|r| if i0 + r < rows { seqs[rs as usize + i0 + r] } else { pad }).collect();
            let mut diag = if i0 == 0 { 0 } else { NEG };
            let last = i0 + 16 >= rows;
            for j in 0..cols {
                let (up, fup) = if i0 > 0 { scratch[sbase + j * 32 + lane] } else { (NEG, NEG) };
                let c = seqs[cs as usize + j];
                let mut hd = diag;
                diag = up;
                let (mut hu, mut f) = (up, fup);
                let mut word = 0u64;
                for r in 0..16 {
                    let s = score(rc[r], c);
                    let (eo, ee) = (hl[r] - oe, e[r] - ext);
                    let h_open = eo >= ee;
                    e[r] = eo.max(ee);
                    let (fo, fe) = (hu - oe, f - ext);
                    let v_open = fo >= fe;
                    f = fo.max(fe);
                    let gap = e[r].max(f);
                    let gap_from = if e[r] + tie > f { 1 } else { 2 };
                    let d = hd + s;
                    let from_d = d >= gap;
                    let h = d.max(gap);
                    let nib = (if from_d { 0 } else { gap_from }) | (h_open as u64) << 2 | (v_open as u64) << 3;
                    word |= nib << (4 * r);
                    hd = hl[r];
                    hl[r] = h;
                    hu = h;
                }
                dirs[dir_at(strip, j)] = word;
                if !last {
                    scratch[sbase + j * 32 + lane] = (hu, f);
                }
            }
            if last {
                result = hl[rows - 1 - i0];
            }
            i0 += 16;
            strip += 1;
        }
        let (h_kind, v_kind) = if tr { (2u32, 1u32) } else { (1, 2) };
        let out = plan.out_at[k] as usize;
        let (mut i, mut j, mut state) = (rows as i64 - 1, cols as i64 - 1, 0);
        let (mut acc, mut n) = (0u32, 0usize);
        while i >= 0 && j >= 0 {
            let word = dirs[dir_at(i as usize / 16, j as usize)];
            let nib = (word >> (4 * (i % 16))) as u32 & 15;
            let mut op = 4;
            match state {
                0 => match nib & 3 {
                    0 => {
                        op = 0;
                        i -= 1;
                        j -= 1;
                    }
                    from => state = from,
                },
                1 => {
                    op = h_kind;
                    if nib & 4 != 0 {
                        state = 0;
                    }
                    j -= 1;
                }
                _ => {
                    op = v_kind;
                    if nib & 8 != 0 {
                        state = 0;
                    }
                    i -= 1;
                }
            }
            if op < 4 {
                acc |= op << (2 * (n & 15));
                n += 1;
                if n & 15 == 0 {
                    ops[out + (n >> 4) - 1] = acc;
                    acc = 0;
                }
            }
        }
        if n & 15 != 0 {
            ops[out + (n >> 4)] = acc;
        }
        (n, result, i == -1 && j == -1 && state == 0)
    }

    /// Every pair traced through the plan and the emulated kernel, compared with `trace`.
    fn check(sc: &Scoring, seqs: &[(Vec<u8>, Vec<u8>)], budget: u64) {
        let refs: Vec<(&[u8], &[u8])> = seqs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let owned = crate::seq::SeqPairs::from_slices(&refs);
        let pairs: PairSeqs<'_> = owned.view();
        let alignments: Vec<Alignment> = refs.iter().map(|(q, t)| scalar::align_pair(q, t, sc).unwrap()).collect();
        let plan = plan_paths(pairs, &alignments, budget);
        let residues = pairs.residues();
        let mut ops = vec![0u32; plan.out_words];
        let mut traced = vec![None; seqs.len()];
        for launch in &plan.launches {
            let mut dirs = vec![0u64; launch.dirs_words as usize];
            let mut scratch = vec![(0, 0); launch.scratch_cells as usize];
            for k in launch.first..launch.first + launch.count {
                let (n, h, ended) = kernel(&plan, k, residues, sc, &mut dirs, &mut scratch, &mut ops);
                let i = plan.index[k] as usize;
                assert_eq!(h, alignments[i].score, "pair {i}: H(m,n)");
                assert!(ended, "pair {i}: walk did not end at the start");
                let at = plan.out_at[k] as usize;
                let op = |x: usize| (ops[at + x / 16] >> (2 * (x % 16)) & 3) as u8;
                traced[i] = Some(from_ops(&seqs[i].0, &seqs[i].1, sc, &alignments[i], n, op).unwrap());
                // The counting variant (PATH_COUNTS) counts in the walk's order what it would
                // have written: its counts against the forward-carry specification.
                let a = &alignments[i];
                let (q, t) = (&seqs[i].0[a.qstart as usize - 1..], &seqs[i].1[a.tstart as usize - 1..]);
                let (mut qi, mut tj) = ((a.qend - a.qstart) as usize, (a.tend - a.tstart) as usize);
                let (mut pairs, mut ident, mut opens, mut last) = (0u32, 0u32, 0u32, 3u8);
                for x in 0..n {
                    let o = op(x);
                    if o == 0 {
                        pairs += 1;
                        ident += (q[qi] == t[tj] && q[qi] < sc.identity_codes()) as u32;
                    }
                    opens += (o != 0 && o != last) as u32;
                    last = o;
                    // Wraps past 0 only after the walk's last operation.
                    qi = qi.wrapping_sub((o != 1) as usize);
                    tj = tj.wrapping_sub((o != 2) as usize);
                }
                let want = traceback::path_stats(&seqs[i].0, &seqs[i].1, sc, a).unwrap();
                assert_eq!((pairs, ident, opens), (want.nident + want.mismatch, want.nident, want.gapopen), "pair {i}");
            }
        }
        for (i, (q, t)) in seqs.iter().enumerate() {
            let want = traceback::trace(q, t, sc, &alignments[i]).unwrap();
            match &traced[i] {
                Some(got) => assert_eq!(got, &want, "pair {i}: {:?}", alignments[i]),
                None => assert!(
                    alignments[i].score <= 0 || plan.elsewhere.contains(&(i as u32)),
                    "pair {i} neither traced nor left elsewhere"
                ),
            }
        }
    }

    fn random_pairs(seed: u64, n: usize, letters: u8, max_len: usize, related: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut x = seed | 1;
        let mut next = move |k: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % k as u64) as usize
        };
        (0..n)
            .map(|p| {
                let q: Vec<u8> = (0..1 + next(max_len)).map(|_| next(letters as usize) as u8).collect();
                let t: Vec<u8> = if related && p % 2 == 0 {
                    let mut t = Vec::new();
                    for &c in &q {
                        match next(12) {
                            0 => {}
                            1 => t.push(next(letters as usize) as u8),
                            _ => t.push(c),
                        }
                    }
                    for _ in 0..next(40) {
                        t.push(next(letters as usize) as u8);
                    }
                    t
                } else {
                    (0..1 + next(max_len)).map(|_| next(letters as usize) as u8).collect()
                };
                (q, t)
            })
            .collect()
    }

    #[test]
    fn emulated_kernel_traces_protein_as_the_specification() {
        let sc = Scoring::blosum62();
        check(&sc, &random_pairs(7, 300, 20, 120, true), 1 << 20);
        let six_one = Scoring { gap_open: 6, ..Scoring::blosum62() };
        check(&six_one, &random_pairs(8, 200, 20, 90, true), 1 << 20);
    }

    #[test]
    fn emulated_kernel_traces_dna_ties_and_free_opens() {
        // Few letters and small scores: ties between the diagonal and both gap states are
        // everywhere, and a free gap open lets runs of one kind meet.
        for (open, ext, seed) in [(5, 2, 9u64), (0, 2, 10), (0, 1, 11), (2, 2, 12)] {
            let sc = Scoring::new(Matrix::dna(2, -3), open, ext).unwrap();
            // Code 4 is an ambiguity code: equal codes there count as a mismatch (issue 54).
            check(&sc, &random_pairs(seed, 300, 5, 70, true), 1 << 20);
        }
    }

    #[test]
    fn small_budgets_split_launches_and_leave_the_largest_elsewhere() {
        let sc = Scoring::blosum62();
        let seqs = random_pairs(13, 200, 20, 200, true);
        // Room for a few warps only: many launches; rectangles over the budget go elsewhere.
        check(&sc, &seqs, 1 << 13);
        let refs: Vec<(&[u8], &[u8])> = seqs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let owned = crate::seq::SeqPairs::from_slices(&refs);
        let alignments: Vec<Alignment> = refs.iter().map(|(q, t)| scalar::align_pair(q, t, &sc).unwrap()).collect();
        let plan = plan_paths(owned.view(), &alignments, 1 << 13);
        assert!(plan.launches.len() >= 2, "{:?}", plan.launches);
        assert!(plan.launches.iter().all(|l| l.first % 32 == 0 && l.dirs_words <= 1 << 13));
        assert!(!plan.elsewhere.is_empty());
        let taken: usize = plan.launches.iter().map(|l| l.count).sum();
        let scored = alignments.iter().filter(|a| a.score > 0).count();
        assert_eq!(taken + plan.elsewhere.len(), scored);
    }
}

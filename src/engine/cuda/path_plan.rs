//! Planning of the GPU traceback (`kernels/path_trace.cu`), pure CPU code tested without a
//! GPU: jobs (one rectangle per thread) sorted so that a warp's rectangles have one shape,
//! each warp's region of direction words and scratch, launches that keep the directions
//! held at once under a budget, and where each job's operations go.

use crate::engine::mode::AlignMode;
use crate::engine::{traceback, Alignment};
use crate::scoring::Scoring;
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
    /// Pairs with an alignment the GPU does not take (a warp's region over the budget; in
    /// the modes also a side without residues, or values past the path rule's 32 bits).
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

/// Jobs for the alignments of `mode` the kernel traces: rectangles q[qstart..=qend] x
/// t[tstart..=tend] (offsets into the piece's residues, as `pack_descs` lays them out),
/// sorted by strips then columns (most first) so a warp's region is close to each of its
/// rectangles; launches take whole warps while their directions stay within
/// `budget_words`. A rectangle whose warp alone would exceed it (or whose sides exceed 32
/// bits) is left `elsewhere`. In local mode a score of 0 or below is no alignment (no job,
/// an empty path); in the global and semi-global modes every alignment has a path (the
/// kernel's modes variant, `traceback::trace_mode`'s rule), and those with a side without
/// residues (one gap) or values past the rule's 32 bits (`traceback::mode_values_fit`,
/// with `sc`) are left `elsewhere` too.
pub fn plan_paths(
    pairs: PairSeqs<'_>,
    alignments: &[Alignment],
    budget_words: u64,
    mode: AlignMode,
    sc: &Scoring,
) -> PathPlan {
    let offsets: Vec<usize> = pairs.offsets().collect();
    let mut plan = PathPlan::default();
    let mut order: Vec<((u64, u64), u32, [u32; 4])> = Vec::new();
    for (i, a) in alignments.iter().enumerate() {
        if mode.is_local() && a.score <= 0 {
            continue;
        }
        if !mode.is_local() && (a.qstart == 0 || a.tstart == 0) {
            plan.elsewhere.push(i as u32);
            continue;
        }
        let (m, n) = ((a.qend - a.qstart + 1) as u64, (a.tend - a.tstart + 1) as u64);
        let (strips, cols) = strips_cols(m, n);
        let fits = mode.is_local() || traceback::mode_values_fit(m as usize, n as usize, sc);
        if strips * cols * LANES > budget_words || cols >= 1 << 31 || !fits {
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
    //! `traceback::trace`, the specification, and in its modes variant (`-DMODE=1`) against
    //! `traceback::trace_mode`: the layout and the walk are right before any GPU runs them.
    use super::*;
    use crate::engine::mode::FreeEnds;
    use crate::engine::traceback::from_ops;
    use crate::engine::{scalar, scalar_modes, Alignment};
    use crate::scoring::{Alphabet, Matrix, Scoring};
    use crate::seq::PairSeqs;

    const NEG: i32 = -(1 << 29);

    /// kernels/path_trace.cu for job `k`, step for step (in its launch's buffers), `modes`
    /// its MODE variant; returns (operations written, H(m,n), walk ended at the start).
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        plan: &PathPlan,
        k: usize,
        seqs: &[u8],
        sc: &Scoring,
        modes: bool,
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
            // H(i0 + r + 1, 0), and H(i0, 0) the diagonal of the strip's first column.
            let mut hl = [NEG; 16];
            if modes {
                for (r, h) in hl.iter_mut().enumerate() {
                    *h = -(oe + (i0 + r) as i32 * ext);
                }
            }
            let mut e = [NEG; 16];
            let rc: Vec<u8> = (0..16).map(|r| if i0 + r < rows { seqs[rs as usize + i0 + r] } else { pad }).collect();
            let mut diag = match (i0, modes) {
                (0, _) => 0,
                (_, true) => -(oe + (i0 - 1) as i32 * ext),
                _ => NEG,
            };
            let last = i0 + 16 >= rows;
            for j in 0..cols {
                let (up, fup) = match (i0, modes) {
                    (0, true) => (-(oe + j as i32 * ext), NEG),
                    (0, false) => (NEG, NEG),
                    _ => scratch[sbase + j * 32 + lane],
                };
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
        if modes && state == 0 && (i < 0) != (j < 0) {
            // Leading gaps: a border's gap back to the corner.
            let op = if i < 0 { h_kind } else { v_kind };
            for _ in 0..(if i < 0 { j } else { i }) + 1 {
                acc |= op << (2 * (n & 15));
                n += 1;
                if n & 15 == 0 {
                    ops[out + (n >> 4) - 1] = acc;
                    acc = 0;
                }
            }
            (i, j) = (-1, -1);
        }
        if n & 15 != 0 {
            ops[out + (n >> 4)] = acc;
        }
        (n, result, i == -1 && j == -1 && state == 0)
    }

    /// Every pair traced through the plan and the emulated kernel, compared with `trace`.
    fn check(sc: &Scoring, seqs: &[(Vec<u8>, Vec<u8>)], budget: u64) {
        check_mode(sc, seqs, budget, AlignMode::Local);
    }

    /// What a check covered: pairs the kernel traced, of them scoring 0 or below, and pairs
    /// whose alignment holds no residue of one side (left to the CPU).
    #[derive(Debug, Default)]
    struct Covered {
        traced: usize,
        nonpositive: usize,
        transposed: usize,
        empty_side: usize,
    }

    /// Every pair aligned in `mode` by the scalar reference, traced through the plan and
    /// the emulated kernel (its modes variant outside local mode), compared with
    /// `trace_mode`: operations, statistics and the counting variant's counters.
    fn check_mode(sc: &Scoring, seqs: &[(Vec<u8>, Vec<u8>)], budget: u64, mode: AlignMode) -> Covered {
        let refs: Vec<(&[u8], &[u8])> = seqs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let owned = crate::seq::SeqPairs::from_slices(&refs);
        let pairs: PairSeqs<'_> = owned.view();
        let alignments: Vec<Alignment> = refs
            .iter()
            .map(|(q, t)| match mode {
                AlignMode::Local => scalar::align_pair(q, t, sc).unwrap(),
                _ => scalar_modes::align_pair_mode(q, t, sc, mode).unwrap(),
            })
            .collect();
        let plan = plan_paths(pairs, &alignments, budget, mode, sc);
        let modes = !mode.is_local();
        let residues = pairs.residues();
        let mut ops = vec![0u32; plan.out_words];
        let mut traced = vec![None; seqs.len()];
        for launch in &plan.launches {
            let mut dirs = vec![0u64; launch.dirs_words as usize];
            let mut scratch = vec![(0, 0); launch.scratch_cells as usize];
            for k in launch.first..launch.first + launch.count {
                let (n, h, ended) = kernel(&plan, k, residues, sc, modes, &mut dirs, &mut scratch, &mut ops);
                let i = plan.index[k] as usize;
                assert_eq!(h, alignments[i].score, "pair {i}: H(m,n)");
                assert!(ended, "pair {i}: walk did not end at the start");
                let at = plan.out_at[k] as usize;
                let op = |x: usize| (ops[at + x / 16] >> (2 * (x % 16)) & 3) as u8;
                traced[i] = Some(from_ops(&seqs[i].0, &seqs[i].1, sc, &alignments[i], mode, n, op).unwrap());
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
                let want = match mode {
                    AlignMode::Local => traceback::path_stats(&seqs[i].0, &seqs[i].1, sc, a).unwrap(),
                    _ => traceback::trace_mode(&seqs[i].0, &seqs[i].1, sc, a, mode).unwrap().stats,
                };
                assert_eq!((pairs, ident, opens), (want.nident + want.mismatch, want.nident, want.gapopen), "pair {i}");
            }
        }
        for (i, (q, t)) in seqs.iter().enumerate() {
            let want = traceback::trace_mode(q, t, sc, &alignments[i], mode).unwrap();
            match &traced[i] {
                Some(got) => assert_eq!(got, &want, "pair {i} {mode}: {:?}", alignments[i]),
                None if modes => {
                    let a = &alignments[i];
                    assert!(plan.elsewhere.contains(&(i as u32)), "pair {i} {mode} neither traced nor left elsewhere");
                    assert!(
                        a.qstart == 0 || a.tstart == 0 || budget < 1 << 20,
                        "pair {i} {mode}: {a:?} left elsewhere with a side of residues each"
                    );
                }
                None => assert!(
                    alignments[i].score <= 0 || plan.elsewhere.contains(&(i as u32)),
                    "pair {i} neither traced nor left elsewhere"
                ),
            }
        }
        let mut c = Covered::default();
        for (i, a) in alignments.iter().enumerate() {
            if traced[i].is_some() {
                c.traced += 1;
                c.nonpositive += (a.score <= 0) as usize;
                c.transposed += (a.qend - a.qstart > a.tend - a.tstart) as usize;
            }
            c.empty_side += (modes && (a.qstart == 0 || a.tstart == 0)) as usize;
        }
        c
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

    /// Pairs where the path rule's ties decide: every fourth pair of `random_pairs`, then
    /// tandem repeats of a short unit against a copy with a few units or residues more or
    /// fewer (equal-cost gap placements along the repeat), homopolymer runs of different
    /// lengths around one other residue, pairs over two letters, pairs with an empty side
    /// (both empty too), and pairs whose path begins with a gap of more than a strip's rows
    /// on the shorter side (column 0 of the kernel's later strips).
    fn adversarial_pairs(seed: u64, n: usize, letters: u8, max_len: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut x = seed | 1;
        let mut next = move |k: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % k.max(1) as u64) as usize
        };
        let mut out = random_pairs(seed ^ 0x9e37, n / 4, letters, max_len, true);
        while out.len() < n {
            let kind = out.len() % 6;
            let pair = match kind {
                0 => {
                    let unit: Vec<u8> = (0..1 + next(4)).map(|_| next(letters as usize) as u8).collect();
                    let (a, b) = (1 + next(max_len / unit.len()), 1 + next(max_len / unit.len()));
                    let mut q: Vec<u8> = unit.iter().copied().cycle().take(a * unit.len()).collect();
                    let mut t: Vec<u8> = unit.iter().copied().cycle().take(b * unit.len()).collect();
                    for _ in 0..next(3) {
                        let at = next(q.len() + 1);
                        q.insert(at, next(letters as usize) as u8);
                    }
                    if next(2) == 0 && !t.is_empty() {
                        t.remove(next(t.len()));
                    }
                    (q, t)
                }
                1 => {
                    let (c, d) = (next(letters as usize) as u8, next(letters as usize) as u8);
                    let run = |k: usize| std::iter::repeat_n(c, k);
                    let q: Vec<u8> = run(next(12)).chain([d]).chain(run(next(12))).collect();
                    let t: Vec<u8> =
                        run(next(12)).chain(if next(2) == 0 { vec![d] } else { vec![] }).chain(run(next(12))).collect();
                    (q, t)
                }
                2 => {
                    let two = |k: usize, next: &mut dyn FnMut(usize) -> usize| -> Vec<u8> {
                        (0..k).map(|_| next(2) as u8).collect()
                    };
                    let (a, b) = (1 + next(max_len), 1 + next(max_len));
                    (two(a, &mut next), two(b, &mut next))
                }
                3 => {
                    let k = next(max_len / 2);
                    let s: Vec<u8> = (0..k).map(|_| next(letters as usize) as u8).collect();
                    match next(3) {
                        0 => (Vec::new(), s),
                        1 => (s, Vec::new()),
                        _ => (Vec::new(), Vec::new()),
                    }
                }
                5 => {
                    // junk + core against core + longer junk: leading gaps down column 0 across
                    // the strips when the first side is the shorter one.
                    let core: Vec<u8> = (0..1 + next(10)).map(|_| next(letters as usize) as u8).collect();
                    let k = [15, 16, 17, 31, 32, 33][next(6)]; // at and around the strips' edges
                    let mut q: Vec<u8> =
                        (0..k).map(|_| if next(2) == 0 { 0 } else { next(letters as usize) as u8 }).collect();
                    q.extend_from_slice(&core);
                    let mut t = core;
                    t.extend((0..k + 1 + next(5)).map(|_| (letters - 1).min(2)));
                    if next(2) == 0 {
                        (q, t)
                    } else {
                        (t, q)
                    }
                }
                _ => {
                    // A short query against a long target (and the reverse): ends mostly in gaps.
                    let a: Vec<u8> = (0..1 + next(4)).map(|_| next(letters as usize) as u8).collect();
                    let b: Vec<u8> = (0..1 + next(max_len)).map(|_| next(letters as usize) as u8).collect();
                    if next(2) == 0 {
                        (a, b)
                    } else {
                        (b, a)
                    }
                }
            };
            out.push(pair);
        }
        out
    }

    /// Global mode and semi-global with every set of free ends.
    fn every_mode() -> Vec<AlignMode> {
        let mut modes = vec![AlignMode::Global];
        for f in 0..16u8 {
            modes.push(AlignMode::SemiGlobal(FreeEnds::from_flags([0, 1, 2, 3].map(|b| f >> b & 1 == 1))));
        }
        modes
    }

    #[test]
    fn emulated_modes_kernel_traces_as_trace_mode_on_adversarial_ties() {
        let dna = |m: i32, x: i32, o: i32, e: i32| Scoring::new(Matrix::dna(m, -x), o, e).unwrap();
        let blosum = |o: i32, e: i32| Scoring::new(Scoring::blosum62().matrix, o, e).unwrap();
        // (scoring, letters, max length): DNA with ties everywhere (free gap opens, match and
        // mismatch of one size, gaps cheaper than a mismatch), protein at two gap costs.
        let settings = [
            (dna(2, 3, 5, 2), 4u8, 40usize),
            (dna(2, 3, 0, 2), 4, 40),
            (dna(1, 1, 0, 1), 4, 40),
            (dna(1, 1, 1, 1), 4, 40),
            (dna(2, 9, 1, 1), 4, 30),
            (blosum(11, 1), 20, 50),
            (blosum(6, 1), 20, 50),
        ];
        let mut total = Covered::default();
        for (k, (sc, letters, max_len)) in settings.iter().enumerate() {
            let seqs = adversarial_pairs(100 + k as u64, 60, *letters, *max_len);
            for mode in every_mode() {
                let c = check_mode(sc, &seqs, 1 << 20, mode);
                total.traced += c.traced;
                total.nonpositive += c.nonpositive;
                total.transposed += c.transposed;
                total.empty_side += c.empty_side;
            }
        }
        // The cases the test exists for were there.
        assert!(total.traced > 5000 && total.nonpositive > 1000, "{total:?}");
        assert!(total.transposed > 1000 && total.empty_side > 200, "{total:?}");
    }

    #[test]
    fn emulated_modes_kernel_hand_checked_ties() {
        // The rule's choices where placements cost the same, traced by the emulated kernel
        // (both orientations: the transposed walk keeps 'D' before 'I').
        let dna = |s: &str| Alphabet::Dna.encode(s.as_bytes()).unwrap();
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let cases = [
            ("AAAAAGGGGG", "AAAAATTGGGGG"),
            ("AAAAATTGGGGG", "AAAAAGGGGG"),
            ("ACACACAC", "ACACAC"),
            ("ACACAC", "ACACACAC"),
            ("AAAA", "AAAAAAAA"),
            ("AAAAAAAA", "AAAA"),
            ("C", "AAAAAAAAAA"),
            ("AAAAAAAAAA", "C"),
        ];
        let seqs: Vec<(Vec<u8>, Vec<u8>)> = cases.iter().map(|(q, t)| (dna(q), dna(t))).collect();
        for mode in every_mode() {
            let c = check_mode(&sc, &seqs, 1 << 20, mode);
            assert_eq!(c.traced + c.empty_side, seqs.len(), "{mode}");
        }
        // Leading and trailing gaps of a global alignment, as trace_mode places them.
        let tb = |q: &str, t: &str| {
            let a = scalar_modes::align_pair_mode(&dna(q), &dna(t), &sc, AlignMode::Global).unwrap();
            traceback::trace_mode(&dna(q), &dna(t), &sc, &a, AlignMode::Global).unwrap().cigar()
        };
        assert_eq!(tb("AAAA", "AAAAAAAA"), "4D4=");
        assert_eq!(tb("AAAAAAAA", "AAAA"), "4I4=");
    }

    #[test]
    fn emulated_modes_kernel_with_small_budgets_and_larger_pairs() {
        let sc = Scoring::blosum62();
        let seqs = random_pairs(21, 120, 20, 200, true);
        for mode in [AlignMode::Global, AlignMode::SemiGlobal(FreeEnds::ALL)] {
            let c = check_mode(&sc, &seqs, 1 << 13, mode);
            assert!(c.traced > 0 && c.traced < seqs.len(), "{mode}: {c:?}");
        }
        let sc = Scoring::new(Matrix::dna(2, -3), 0, 2).unwrap();
        let seqs = random_pairs(22, 120, 4, 150, true);
        check_mode(&sc, &seqs, 1 << 20, AlignMode::SemiGlobal(FreeEnds::parse("target-start,target-end").unwrap()));
    }

    #[test]
    fn modes_rectangles_past_32_bits_are_left_to_the_cpu() {
        // The largest gap costs, and a rectangle whose values leave the rule's 32 bits: the
        // plan leaves it to trace_mode (which refuses it) whatever the budget.
        let sc = Scoring::new(Matrix::dna(2, -3), 1000, 1000).unwrap();
        let (m, n) = (200_000usize, 100_000usize);
        let seqs = [(vec![0u8; m], vec![1u8; n]), (vec![0u8; 30], vec![1u8; 20])];
        let refs: Vec<(&[u8], &[u8])> = seqs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let owned = crate::seq::SeqPairs::from_slices(&refs);
        let whole = |m: usize, n: usize| Alignment {
            score: -1,
            qstart: 1,
            qend: m as u32,
            tstart: 1,
            tend: n as u32,
            recomputed: false,
            internal: false,
        };
        assert!(!traceback::mode_values_fit(m, n, &sc) && traceback::mode_values_fit(30, 20, &sc));
        let plan = plan_paths(owned.view(), &[whole(m, n), whole(30, 20)], 1 << 40, AlignMode::Global, &sc);
        assert_eq!((&plan.index[..], &plan.elsewhere[..]), (&[1u32][..], &[0u32][..]));
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
        let plan = plan_paths(owned.view(), &alignments, 1 << 13, AlignMode::Local, &sc);
        assert!(plan.launches.len() >= 2, "{:?}", plan.launches);
        assert!(plan.launches.iter().all(|l| l.first % 32 == 0 && l.dirs_words <= 1 << 13));
        assert!(!plan.elsewhere.is_empty());
        let taken: usize = plan.launches.iter().map(|l| l.count).sum();
        let scored = alignments.iter().filter(|a| a.score > 0).count();
        assert_eq!(taken + plan.elsewhere.len(), scored);
    }
}

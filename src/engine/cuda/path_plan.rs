//! Planning of the GPU traceback (`kernels/path_trace.cu`), pure CPU code tested without a
//! GPU: jobs (one rectangle per thread, or per warp for long rectangles) sorted so that
//! neighbours have one shape, each job's or warp's region of direction words and scratch,
//! launches that keep the directions held at once under a budget, and where each job's
//! operations go.

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
/// Rows of one band of the warp variant (a strip per lane).
const BAND_ROWS: u64 = LANES * PATH_ROWS;
/// Rectangles whose shorter side has at least this many rows go to the warp variant: one
/// thread walking 10,000 x 10,000 cells alone kept the GPU idle (a launch holds few such
/// rectangles), while short rectangles fill a warp's lanes with 32 rectangles.
pub const WARP_MIN_ROWS: u64 = 256;

/// One launch: jobs `first..first + count` (with one thread per job, first a multiple of
/// 32), with the direction words and scratch cells its jobs' regions take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLaunch {
    pub first: usize,
    pub count: usize,
    pub dirs_words: u64,
    pub scratch_cells: u64,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct PathPlan {
    /// Threads per job: the kernel variant (`kernels::PATH_THREADS`).
    pub threads: u32,
    /// Per job: (query offset, target offset, m, n) of the rectangle.
    pub jobs: Vec<u32>,
    /// Per job: the pair it belongs to.
    pub index: Vec<u32>,
    /// One thread per job, per warp of jobs: (first direction word, relative to its launch;
    /// its columns | first scratch cell, relative to its launch, << 32). A warp per job,
    /// per job: (first direction word; first scratch cell | window columns << 40), relative
    /// to its launch.
    pub region: Vec<u64>,
    /// Per job: its first word of operations; `out_words` in all.
    pub out_at: Vec<u64>,
    pub out_words: usize,
    pub launches: Vec<PathLaunch>,
    /// Pairs with an alignment the GPU does not take (a region over the budget; in the
    /// modes also a side without residues, or values past the path rule's 32 bits).
    pub elsewhere: Vec<u32>,
}

/// Strips and columns of a rectangle of `m` by `n` (strips over the shorter side).
fn strips_cols(m: u64, n: u64) -> (u64, u64) {
    (m.min(n).div_ceil(PATH_ROWS), m.max(n))
}

/// Columns beside the diagonal a warp-variant strip stores on each side: a path that
/// leaves them (a gap imbalance of this many residues somewhere along the rectangle) is
/// traced elsewhere.
pub const WINDOW_MARGIN: u64 = 256;

/// Columns each strip of a warp-variant rectangle of `rows` by `cols` (rows the shorter
/// side) stores: the diagonal's run across a strip and [`WINDOW_MARGIN`] on each side.
pub fn warp_window(rows: u64, cols: u64) -> u64 {
    (PATH_ROWS * cols.div_ceil(rows.max(1)) + 2 * WINDOW_MARGIN).min(cols)
}

/// The first column of the window of the strip from row `i0` (kernels/path_trace.cu's
/// `window_lo`: centred on the diagonal at the strip's middle row).
pub fn window_lo(i0: u64, rows: u64, cols: u64, width: u64) -> u64 {
    let center = (i0 + PATH_ROWS / 2) * cols / rows;
    center.saturating_sub(width / 2).min(cols - width)
}

/// Direction words and scratch cells of one rectangle in the warp variant, and the columns
/// of each strip's window: [`warp_window`] (or every column, `full`) words per strip over
/// the shorter side, and a scratch row between bands of [`BAND_ROWS`].
fn warp_region(m: u64, n: u64, full: bool) -> (u64, u64, u64) {
    let (rows, cols) = (m.min(n), m.max(n));
    let bands = rows.div_ceil(BAND_ROWS);
    let width = if full { cols } else { warp_window(rows, cols) };
    (rows.div_ceil(PATH_ROWS) * width, if bands > 1 { cols } else { 0 }, width)
}

/// Which rectangles a plan takes, and how the warp variant stores their directions.
#[derive(Debug, Clone, Copy)]
pub struct Variant<'a> {
    /// Threads per rectangle (`kernels::PATH_THREADS`).
    pub threads: u32,
    /// Shorter sides from which rectangles go to the warp variant ([`WARP_MIN_ROWS`]).
    pub warp_min_rows: u64,
    /// Every column of each strip stored (the warp variant's pass over the walks that left
    /// their windows), not a window around the diagonal.
    pub full_window: bool,
    /// Only the pairs marked here (every pair when `None`).
    pub only: Option<&'a [bool]>,
}

impl Variant<'_> {
    /// Every pair `threads` takes from `warp_min_rows` on, windows around the diagonal.
    pub fn of(threads: u32, warp_min_rows: u64) -> Variant<'static> {
        Variant { threads, warp_min_rows, full_window: false, only: None }
    }
}

/// Threads per rectangle of `m` by `n` when the warp variant takes shorter sides from
/// `warp_min_rows` on ([`WARP_MIN_ROWS`] outside tests).
pub fn path_threads(m: u64, n: u64, warp_min_rows: u64) -> u32 {
    if m.min(n) >= warp_min_rows {
        LANES as u32
    } else {
        1
    }
}

/// Words of operations a job may write: one 2-bit operation per residue at most.
pub fn op_words(m: u64, n: u64) -> u64 {
    (m + n).div_ceil(16).max(1)
}

/// Jobs for the alignments of `mode` the kernel variant of `variant.threads` per rectangle
/// traces (those [`path_threads`] gives it, of `variant.only`): rectangles q[qstart..=qend] x
/// t[tstart..=tend] (offsets into the piece's residues, as `pack_descs` lays them out),
/// sorted by strips then columns (most first) so that a warp's or a launch's rectangles
/// are alike; launches take whole warps (one thread per job) or jobs (a warp per job) while
/// their directions stay within `budget_words`. A rectangle whose region alone would
/// exceed it (or whose sides exceed 32 bits) is left `elsewhere`. In local mode a score of
/// 0 or below is no alignment (no job, an empty path); in the global and semi-global modes
/// every alignment has a path (the kernel's modes variant, `traceback::trace_mode`'s rule),
/// and those with a side without residues (one gap) or values past the rule's 32 bits
/// (`traceback::mode_values_fit`, with `sc`) are left `elsewhere` too (by every variant).
#[allow(clippy::too_many_arguments)]
pub fn plan_paths(
    pairs: PairSeqs<'_>,
    alignments: &[Alignment],
    budget_words: u64,
    mode: AlignMode,
    sc: &Scoring,
    variant: Variant<'_>,
) -> PathPlan {
    let Variant { threads, warp_min_rows, full_window, only } = variant;
    let warp = threads as u64 == LANES;
    let offsets: Vec<usize> = pairs.offsets().collect();
    let mut plan = PathPlan { threads, ..PathPlan::default() };
    let mut order: Vec<((u64, u64), u32, [u32; 4])> = Vec::new();
    for (i, a) in alignments.iter().enumerate() {
        if (mode.is_local() && a.score <= 0) || only.is_some_and(|o| !o[i]) {
            continue;
        }
        if !mode.is_local() && (a.qstart == 0 || a.tstart == 0) {
            plan.elsewhere.push(i as u32);
            continue;
        }
        let (m, n) = ((a.qend - a.qstart + 1) as u64, (a.tend - a.tstart + 1) as u64);
        if path_threads(m, n, warp_min_rows) != threads {
            continue;
        }
        let (strips, cols) = strips_cols(m, n);
        let words = if warp { warp_region(m, n, full_window).0 } else { strips * cols * LANES };
        let fits = mode.is_local() || traceback::mode_values_fit(m as usize, n as usize, sc);
        if words > budget_words || cols >= 1 << 31 || !fits {
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
    // Each unit (a warp of jobs, or one job of a warp) takes its region in its launch.
    let unit = if warp { 1 } else { LANES as usize };
    let mut launch = PathLaunch { first: 0, count: 0, dirs_words: 0, scratch_cells: 0 };
    for (w, group) in order.chunks(unit).enumerate() {
        let (words, scratch, width) = if warp {
            let job = &group[0].2;
            warp_region(job[2] as u64, job[3] as u64, full_window)
        } else {
            let strips = group.iter().map(|(s, ..)| s.0).max().unwrap_or(1);
            let cols = group.iter().map(|(s, ..)| s.1).max().unwrap_or(1);
            (strips * cols * LANES, if strips > 1 { cols * LANES } else { 0 }, 0)
        };
        if launch.count > 0 && launch.dirs_words + words > budget_words {
            plan.launches.push(launch);
            launch = PathLaunch { first: w * unit, count: 0, dirs_words: 0, scratch_cells: 0 };
        }
        plan.region.push(launch.dirs_words);
        if warp {
            plan.region.push(launch.scratch_cells | width << 40);
        } else {
            let cols = group.iter().map(|(s, ..)| s.1).max().unwrap_or(1);
            plan.region.push(cols | launch.scratch_cells << 32);
        }
        launch.count += group.len();
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
    /// its MODE variant; returns (operations written, H(m,n), 1 if the walk ended at the
    /// start, 2 if it left the stored window).
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
    ) -> (usize, i32, i32) {
        let (mat, nc1) = super::super::align_plan::kernel_matrix(sc).unwrap();
        let job = &plan.jobs[4 * k..4 * k + 4];
        let tr = job[2] > job[3];
        let (rs, cs) = if tr { (job[1], job[0]) } else { (job[0], job[1]) };
        let (rows, cols) = if tr { (job[3] as usize, job[2] as usize) } else { (job[2] as usize, job[3] as usize) };
        let warp = plan.threads == 32;
        let lane = k & 31;
        // One thread per job: its warp's region, interleaved by lane; a warp per job: its
        // own region, words [band][step][lane] (lane = strip % 32, step = column + lane).
        let (base, packed) = if warp {
            (plan.region[2 * k], plan.region[2 * k + 1])
        } else {
            (plan.region[2 * (k >> 5)], plan.region[2 * (k >> 5) + 1])
        };
        let stride = packed & 0xffff_ffff;
        let sbase = if warp { (packed & ((1 << 40) - 1)) as usize } else { (packed >> 32) as usize };
        let width = (packed >> 40) as usize;
        // Where the word of (strip, column) lies; None outside a warp-variant strip's window.
        let dir_at = |strip: usize, j: usize| {
            if warp {
                let lo = window_lo((strip * 16) as u64, rows as u64, cols as u64, width as u64) as usize;
                (lo..lo + width).contains(&j).then(|| base as usize + strip * width + j - lo)
            } else {
                Some(base as usize + (strip * stride as usize + j) * 32 + lane)
            }
        };
        // The row above a strip: the scratch row between strips (one thread per job) or
        // between bands (a warp per job, whose strips inside a band pass it by shuffles,
        // kept here in `passed`).
        let scratch_at = |j: usize| if warp { sbase + j } else { sbase + j * 32 + lane };
        let mut passed = vec![(NEG, NEG); cols];
        let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
        let score = |r: u8, c: u8| {
            let (a, b) = if tr { (c, r) } else { (r, c) };
            mat[a as usize * nc1 + b as usize] as i32
        };
        let pad = (nc1 - 1) as u8;
        let tie = if tr { 0 } else { 1 };
        let mut result = NEG;
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
                    _ if warp && strip % 32 != 0 => passed[j],
                    _ => scratch[scratch_at(j)],
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
                if let Some(at) = dir_at(strip, j) {
                    dirs[at] = word;
                }
                if !last {
                    if warp && strip % 32 != 31 {
                        passed[j] = (hu, f);
                    } else {
                        scratch[scratch_at(j)] = (hu, f);
                    }
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
            let Some(at) = dir_at(i as usize / 16, j as usize) else {
                return (n, result, 2); // outside the stored window: a miss
            };
            let word = dirs[at];
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
        (n, result, (i == -1 && j == -1 && state == 0) as i32)
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
        missed: usize,
    }

    /// Every pair aligned in `mode` by the scalar reference, traced through the plan and
    /// the emulated kernel (its modes variant outside local mode), compared with
    /// `trace_mode`: operations, statistics and the counting variant's counters.
    /// Both variants: every rectangle to one thread, then every rectangle to a warp.
    fn check_mode(sc: &Scoring, seqs: &[(Vec<u8>, Vec<u8>)], budget: u64, mode: AlignMode) -> Covered {
        let warped = check_variant(sc, seqs, budget, mode, 32, 1, false);
        let threaded = check_variant(sc, seqs, budget, mode, 1, u64::MAX, false);
        assert_eq!(warped.empty_side, threaded.empty_side);
        threaded
    }

    /// [`check_mode`] of the variant of `threads` per rectangle, taking rectangles from
    /// `warp_min_rows` on (1 or `u64::MAX`: every rectangle), every column stored if
    /// `full_window`.
    fn check_variant(
        sc: &Scoring,
        seqs: &[(Vec<u8>, Vec<u8>)],
        budget: u64,
        mode: AlignMode,
        threads: u32,
        warp_min_rows: u64,
        full_window: bool,
    ) -> Covered {
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
        let plan = plan_paths(
            pairs,
            &alignments,
            budget,
            mode,
            sc,
            Variant { full_window, ..Variant::of(threads, warp_min_rows) },
        );
        let modes = !mode.is_local();
        let residues = pairs.residues();
        let mut ops = vec![0u32; plan.out_words];
        let mut traced = vec![None; seqs.len()];
        let mut missed = vec![false; seqs.len()];
        for launch in &plan.launches {
            let mut dirs = vec![0u64; launch.dirs_words as usize];
            let mut scratch = vec![(0, 0); launch.scratch_cells as usize];
            for k in launch.first..launch.first + launch.count {
                let (n, h, ended) = kernel(&plan, k, residues, sc, modes, &mut dirs, &mut scratch, &mut ops);
                let i = plan.index[k] as usize;
                assert_eq!(h, alignments[i].score, "pair {i}: H(m,n)");
                if ended == 2 {
                    assert_eq!(threads, 32, "pair {i}: a miss without a window");
                    missed[i] = true;
                    continue;
                }
                assert_eq!(ended, 1, "pair {i}: walk did not end at the start");
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
        let mut c = Covered::default();
        for (i, (q, t)) in seqs.iter().enumerate() {
            let a = &alignments[i];
            let (m, n) = ((a.qend - a.qstart + 1) as u64, (a.tend - a.tstart + 1) as u64);
            if a.qstart > 0 && a.tstart > 0 && path_threads(m, n, warp_min_rows) != threads {
                continue; // the other variant's
            }
            let want = traceback::trace_mode(q, t, sc, &alignments[i], mode).unwrap();
            if missed[i] {
                // Traced elsewhere: its path leaves the window somewhere.
                let (rows, cols) = (m.min(n), m.max(n));
                let width = warp_window(rows, cols);
                assert!(width < cols, "pair {i}: a miss with every column stored");
                c.missed += 1;
                continue;
            }
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
        for (threads, split) in [(1, u64::MAX), (32, 1)] {
            let plan = plan_paths(
                owned.view(),
                &[whole(m, n), whole(30, 20)],
                1 << 40,
                AlignMode::Global,
                &sc,
                Variant::of(threads, split),
            );
            assert_eq!((&plan.index[..], &plan.elsewhere[..]), (&[1u32][..], &[0u32][..]), "{threads} threads");
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
        let plan = plan_paths(owned.view(), &alignments, 1 << 13, AlignMode::Local, &sc, Variant::of(1, u64::MAX));
        assert!(plan.launches.len() >= 2, "{:?}", plan.launches);
        assert!(plan.launches.iter().all(|l| l.first % 32 == 0 && l.dirs_words <= 1 << 13));
        assert!(!plan.elsewhere.is_empty());
        let taken: usize = plan.launches.iter().map(|l| l.count).sum();
        let scored = alignments.iter().filter(|a| a.score > 0).count();
        assert_eq!(taken + plan.elsewhere.len(), scored);
    }

    #[test]
    fn emulated_warp_variant_traces_rectangles_of_several_bands() {
        // Shorter sides past one band (512 rows) and past two, both orientations: the scratch
        // row between bands, the shuffled rows inside a band and the [band][step][lane]
        // layout, in local mode and with leading gaps in the modes.
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let mut seqs = random_pairs(31, 6, 4, 1300, true);
        seqs.retain(|(q, t)| q.len().min(t.len()) > 520);
        let (q, t) = random_pairs(32, 1, 4, 1100, true).remove(0);
        seqs.push((t.clone(), [&q[..], &q[..]].concat()));
        assert!(seqs.len() >= 2, "{}", seqs.len());
        for mode in [AlignMode::Local, AlignMode::Global, AlignMode::SemiGlobal(FreeEnds::ALL)] {
            let c = check_variant(&sc, &seqs, 1 << 30, mode, 32, WARP_MIN_ROWS, false);
            assert!(c.traced >= 2, "{mode}: {c:?}");
        }
        // A gap longer than the window's margin in the middle of a global alignment: the
        // warp variant's walk leaves its window and reports a miss (the pair is traced
        // elsewhere), where the thread variant, which stores every cell, traces it.
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let letters = |seed: u64, len: usize| -> Vec<u8> {
            let mut x = seed;
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 4) as u8
                })
                .collect()
        };
        let (x, y, insert) = (letters(34, 600), letters(35, 600), letters(36, 1500));
        let gapped = vec![([&x[..], &y[..]].concat(), [&x[..], &insert[..], &y[..]].concat())];
        let c = check_variant(&sc, &gapped, 1 << 30, AlignMode::Global, 32, WARP_MIN_ROWS, false);
        assert_eq!((c.missed, c.traced), (1, 0), "{c:?}");
        // The host's second pass over a miss: every column of each strip stored.
        let c = check_variant(&sc, &gapped, 1 << 30, AlignMode::Global, 32, WARP_MIN_ROWS, true);
        assert_eq!((c.missed, c.traced), (0, 1), "{c:?}");
        let c = check_variant(&sc, &gapped, 1 << 30, AlignMode::Global, 1, u64::MAX, false);
        assert_eq!(c.traced, 1, "{c:?}");
        // The production split: short rectangles to threads, long ones to warps.
        let mut both = random_pairs(33, 40, 4, 120, true);
        both.extend(seqs);
        let sc = Scoring::new(Matrix::dna(1, -1), 0, 1).unwrap();
        let warped = check_variant(&sc, &both, 1 << 30, AlignMode::Local, 32, WARP_MIN_ROWS, false);
        let threaded = check_variant(&sc, &both, 1 << 30, AlignMode::Local, 1, WARP_MIN_ROWS, false);
        assert!(warped.traced > 0 && threaded.traced > 0, "{warped:?} {threaded:?}");
    }
}

//! Global and semi-global alignment ([`crate::engine::mode`]) on the CPU: inter-sequence
//! lanes, one pair per 16-bit lane, pairs of similar lengths side by side. Every lane runs
//! the recurrences of [`crate::engine::scalar_modes`] exactly (no lazy-F loop, so the path
//! rule's tie priorities hold cell by cell), and at [`Level::Coordinates`] with a free start
//! it carries each state's origin forward as the reference does.
//!
//! 16 bits hold a pair exactly when no value leaves their range: below, a static bound from
//! its lengths ([`Tables::fits_16`]); above, the lane's highest H, checked after the run. Other
//! pairs, pairs of lanes that passed the top, empty sides and matrices whose scores are no
//! bytes go to the scalar reference.
//!
//! Substitution scores: each lane has its query's profile (one byte row per target code);
//! per column, 16 rows of every lane's row for its target residue are loaded and transposed
//! into one score vector per row.

use super::vector::LaneSelect;
use crate::engine::mode::{AlignMode, FreeEnds};
use crate::engine::scalar_modes::align_pair_mode;
use crate::engine::{Alignment, Level};
use crate::error::Result;
use crate::scoring::Scoring;
use rayon::prelude::*;

/// Rows of one transposed block of substitution scores.
const ROWS: usize = 16;

/// Pairs per lane in one run of the kernel: more balance the lanes' columns better, fewer keep
/// the run's query lengths (its rows) closer.
const RUN_PAIRS_PER_LANE: usize = 8;

/// The scoring of one call, as the kernel reads it.
pub(super) struct Tables {
    open: i32,
    ext: i32,
    ends: FreeEnds,
    codes: usize,
    /// `by_target[c * codes + q]`: score(q, c) as a byte.
    by_target: Vec<i8>,
    min_score: i32,
    top_score: i32,
}

impl Tables {
    /// `None` when the matrix's scores are no bytes.
    pub(super) fn new(sc: &Scoring, mode: AlignMode) -> Option<Tables> {
        let codes = sc.matrix.size();
        let (min_score, max_score) = (sc.matrix.min_score(), sc.matrix.max_score());
        if min_score < i8::MIN as i32 || max_score > i8::MAX as i32 {
            return None;
        }
        let mut by_target = Vec::with_capacity(codes * codes);
        for c in 0..codes as u8 {
            by_target.extend((0..codes as u8).map(|q| sc.score(q, c) as i8));
        }
        Some(Tables {
            open: sc.gap_open,
            ext: sc.gap_extend,
            ends: mode.free_ends(),
            codes,
            by_target,
            min_score,
            top_score: max_score.max(0),
        })
    }

    /// Whether no value the recurrences compute for an m x n pair (H, E, F, and the sums
    /// before their maxima) falls below signed 16 bits, nor to the lanes' sentinel: every H
    /// is at least the all-gap path's -(2 open + ext (i + j)), E and F one gap opening below
    /// an H. (The high side is checked as the lanes run: [`Tables::highest_exact`].)
    pub(super) fn fits_16(&self, m: usize, n: usize) -> bool {
        let (m, n) = (m as i64, n as i64);
        let low = 3 * self.open as i64 + self.ext as i64 * (m + n + 2) + (-self.min_score as i64).max(0);
        let sentinel_gap = 2 * self.ext as i64;
        low + sentinel_gap < i16::MAX as i64
    }

    /// The highest H a lane may reach and still be exact: no diagonal sum above it wraps.
    fn highest_exact(&self) -> i32 {
        i16::MAX as i32 - self.top_score
    }
}

/// One thread's buffers, reused batch after batch.
pub(super) struct Scratch<V> {
    /// Per lane and target code, the query's scores (`mpad` bytes), then one zero row.
    prof: Vec<i8>,
    /// One transposed block: `ROWS` rows of `LANES` bytes.
    scores: Vec<i8>,
    h: Vec<V>,
    e: Vec<V>,
    h_origin: Vec<V>,
    e_origin: Vec<V>,
}

impl<V> Default for Scratch<V> {
    fn default() -> Self {
        Scratch {
            prof: Vec::new(),
            scores: Vec::new(),
            h: Vec::new(),
            e: Vec::new(),
            h_origin: Vec::new(),
            e_origin: Vec::new(),
        }
    }
}

/// A lane's end cell and the origin its path carried: +i for (i, 0), -j for (0, j), 0 for
/// (0, 0) (only border cells are origins).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LaneEnd {
    pub score: i32,
    pub qend: u32,
    pub tend: u32,
    pub origin: i16,
    /// An H of the lane passed [`Tables::highest_exact`]: the lane's results may have wrapped.
    pub saturated: bool,
}

impl LaneEnd {
    /// The reference's alignment: the start follows the stop cell; a side with no residue in
    /// the alignment is 0, 0.
    fn alignment(self, mode: AlignMode) -> Alignment {
        let (i0, j0) = match self.origin {
            o if o > 0 => (o as u32, 0),
            o => (0, (-(o as i32)) as u32),
        };
        let side = |stop: u32, end: u32| if stop >= end { (0, 0) } else { (stop + 1, end) };
        let ((qstart, qend), (tstart, tend)) = (side(i0, self.qend), side(j0, self.tend));
        Alignment { score: self.score, qstart, qend, tstart, tend, recomputed: mode.recomputed(self.score) }
    }
}

/// The lane value of a signed score.
#[inline(always)]
fn lane(v: i32) -> u32 {
    v as i16 as u16 as u32
}

/// Per lane, the pairs it aligns one after the other, their target columns end to end: the
/// longest targets first, each to the lane with the fewest columns so far.
fn lane_queues(pairs: &[(&[u8], &[u8])], lanes: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_unstable_by_key(|&p| std::cmp::Reverse(pairs[p].1.len()));
    let mut queues = vec![Vec::new(); lanes];
    let mut columns = vec![0usize; lanes];
    for p in order {
        let l = (0..lanes).min_by_key(|&l| columns[l]).unwrap_or(0);
        columns[l] += pairs[p].1.len();
        queues[l].push(p);
    }
    queues
}

/// `pairs` (each fitting 16 bits, no side empty; best of similar query lengths), streamed
/// through the lanes: each lane aligns its queue's pairs one after another, starting the
/// next pair's first column right after the last one's. Each pair's end cell and, with
/// `ORIGINS`, its origin. Unsafe: the CPU must run V's instructions.
#[inline(always)]
pub(super) unsafe fn align_lanes<V: LaneSelect, const ORIGINS: bool>(
    t: &Tables,
    pairs: &[(&[u8], &[u8])],
    s: &mut Scratch<V>,
    out: &mut [LaneEnd],
) {
    let lanes = V::LANES;
    let np = pairs.len();
    debug_assert!(out.len() == np);
    let m_max = pairs.iter().map(|p| p.0.len()).max().unwrap_or(0);
    let mpad = m_max.div_ceil(ROWS) * ROWS;
    let codes = t.codes;
    s.prof.clear();
    s.prof.resize((np * codes + 1) * mpad, 0);
    for (p, (q, _)) in pairs.iter().enumerate() {
        for c in 0..codes {
            let row = &t.by_target[c * codes..(c + 1) * codes];
            let dst = &mut s.prof[(p * codes + c) * mpad..][..q.len()];
            for (d, &r) in dst.iter_mut().zip(q.iter()) {
                *d = row[r as usize];
            }
        }
    }
    s.scores.clear();
    s.scores.resize(ROWS * lanes, 0);

    let (open, ext) = (t.open, t.ext);
    let ends = t.ends;
    let neg_value = lane(i16::MIN as i32 + ext) as u16;
    let neg = V::splat(neg_value as u32);
    let (v_ext, v_first) = (V::splat(lane(ext)), V::splat(lane(open + ext)));
    let zero = V::zero();
    s.h.clear();
    s.h.resize(m_max, zero);
    s.e.clear();
    s.e.resize(m_max, neg);
    s.h_origin.clear();
    s.e_origin.clear();
    if ORIGINS {
        s.h_origin.resize(m_max, zero);
        s.e_origin.resize(m_max, zero);
    }
    let col0 = |i: usize| lane(if ends.query_start { 0 } else { -(open + i as i32 * ext) }) as u16;
    let col0_origin = |i: usize| if ends.query_start { i as u16 } else { 0 };
    let row0 = |j: usize| lane(if ends.target_start || j == 0 { 0 } else { -(open + j as i32 * ext) }) as u16;
    let row0_origin = |j: usize| lane(if ends.target_start { -(j as i32) } else { 0 }) as u16;

    let queues = lane_queues(pairs, lanes);
    let columns = queues.iter().map(|q| q.iter().map(|&p| pairs[p].1.len()).sum::<usize>()).max().unwrap_or(0);
    // Per lane: its next pair in the queue, the pair it aligns and the column in it (from 1).
    let mut next = vec![0usize; lanes];
    let mut current: Vec<Option<usize>> = vec![None; lanes];
    let mut col = vec![0usize; lanes];
    let mut best: Vec<Option<LaneEnd>> = vec![None; lanes];
    // Every H of a lane stays at or above its pairs' least value (past a pair's last row the
    // scores are 0, and H never falls below its diagonal there), so the lane's highest H
    // covers its garbage rows too.
    let mut highest = neg;
    let zero_row = s.prof.as_ptr().add(np * codes * mpad);
    let mut rows: [*const i8; 64] = [zero_row; 64];
    let mut border = [[0u16; 64]; 4]; // H(0, j-1), H(0, j) and their origins, per lane
    let (hp, ep, hop, eop) = (s.h.as_mut_ptr(), s.e.as_mut_ptr(), s.h_origin.as_mut_ptr(), s.e_origin.as_mut_ptr());
    let at = |p: *mut V, i: usize, l: usize| (p as *mut u16).add((i - 1) * lanes + l);
    let scores = s.scores.as_mut_ptr();
    for _ in 0..columns {
        for l in 0..lanes {
            if current[l].is_none_or(|p| col[l] == pairs[p].1.len()) {
                current[l] = queues[l].get(next[l]).copied();
                next[l] += 1;
                col[l] = 0;
                best[l] = None;
                // A new pair: its column 0, as the reference starts it.
                if let Some(p) = current[l] {
                    for i in 1..=pairs[p].0.len() {
                        *at(hp, i, l) = col0(i);
                        *at(ep, i, l) = neg_value;
                        if ORIGINS {
                            *at(hop, i, l) = col0_origin(i);
                            *at(eop, i, l) = 0;
                        }
                    }
                }
            }
            col[l] += 1;
            let j = col[l];
            rows[l] = match current[l] {
                Some(p) => s.prof.as_ptr().add((p * codes + pairs[p].1[j - 1] as usize) * mpad),
                None => zero_row, // an idle lane computes on, unread
            };
            border[0][l] = row0(j - 1);
            border[1][l] = row0(j);
            if ORIGINS {
                border[2][l] = row0_origin(j - 1);
                border[3][l] = row0_origin(j);
            }
        }
        let mut diag = V::load(border[0].as_ptr() as *const u8);
        let mut up = V::load(border[1].as_ptr() as *const u8);
        let (mut diag_o, mut up_o) = (zero, zero);
        if ORIGINS {
            diag_o = V::load(border[2].as_ptr() as *const u8);
            up_o = V::load(border[3].as_ptr() as *const u8);
        }
        let mut f = neg;
        let mut f_o = zero;
        let mut ib = 0;
        while ib < m_max {
            transpose_rows(&rows[..lanes], ib, lanes, scores);
            for r in 0..ROWS.min(m_max - ib) {
                let i = ib + r;
                let sv = V::load_widened(scores.add(r * lanes) as *const u8);
                let h_left = *hp.add(i);
                // 'D' state from the left, opening on ties.
                let e_open = h_left.sub_lanes(v_first);
                let e_ext = (*ep.add(i)).sub_lanes(v_ext);
                let e = e_open.max_signed(e_ext);
                // 'I' state from above.
                let f_open = up.sub_lanes(v_first);
                let f_ext = f.sub_lanes(v_ext);
                f = f_open.max_signed(f_ext);
                let d = diag.add_lanes(sv);
                let ef = e.max_signed(f);
                let h = d.max_signed(ef);
                highest = highest.max_signed(h);
                *ep.add(i) = e;
                *hp.add(i) = h;
                diag = h_left;
                up = h;
                if ORIGINS {
                    // The path rule's order: diagonal, then 'D', then 'I'.
                    let e_o = V::pick_gt(e_ext, e_open, *eop.add(i), *hop.add(i));
                    f_o = V::pick_gt(f_ext, f_open, f_o, up_o);
                    let o = V::pick_gt(ef, d, V::pick_gt(f, e, f_o, e_o), diag_o);
                    diag_o = *hop.add(i);
                    *eop.add(i) = e_o;
                    *hop.add(i) = o;
                    up_o = o;
                }
            }
            ib += ROWS;
        }
        // End cells of this column, per lane, in the tie rule's order (smallest row first).
        for l in 0..lanes {
            let Some(p) = current[l] else { continue };
            let (m, n, j) = (pairs[p].0.len(), pairs[p].1.len(), col[l]);
            let mut consider = |i: usize| {
                let v = *at(hp, i, l) as i16 as i32;
                if best[l].is_none_or(|b| v > b.score) {
                    let origin = if ORIGINS { *at(hop, i, l) as i16 } else { 0 };
                    best[l] = Some(LaneEnd { score: v, qend: i as u32, tend: j as u32, origin, saturated: false });
                }
            };
            if j < n {
                if ends.target_end {
                    consider(m);
                }
            } else {
                if ends.query_end {
                    (1..=m).for_each(&mut consider);
                } else {
                    consider(m);
                }
                out[p] = best[l].unwrap_or_default();
            }
        }
    }
    let mut high = [0u16; 64];
    highest.store(high.as_mut_ptr() as *mut u8);
    for (l, queue) in queues.iter().enumerate() {
        if high[l] as i16 as i32 > t.highest_exact() {
            queue.iter().for_each(|&p| out[p].saturated = true);
        }
    }
}

/// Scores of rows `from..from + ROWS` of every lane's profile row (`rows`, `lanes` of them)
/// into `out`, one row of `lanes` bytes after another.
#[inline(always)]
unsafe fn transpose_rows(rows: &[*const i8], from: usize, lanes: usize, out: *mut i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SSE2 (every x86-64): 16 lanes at a time, a 16 x 16 byte transpose in four steps.
        let mut g = 0;
        while g < lanes {
            let mut a = [_mm_setzero_si128(); 16];
            for (k, x) in a.iter_mut().enumerate() {
                let p = rows.get(g + k).copied().unwrap_or(rows[0]);
                *x = _mm_loadu_si128(p.add(from) as *const __m128i);
            }
            // Each step interleaves pairs of registers at twice the last step's width.
            let mut b = [_mm_setzero_si128(); 16];
            for p in 0..8 {
                b[p] = _mm_unpacklo_epi8(a[2 * p], a[2 * p + 1]);
                b[p + 8] = _mm_unpackhi_epi8(a[2 * p], a[2 * p + 1]);
            }
            for p in 0..8 {
                a[p] = _mm_unpacklo_epi16(b[2 * p], b[2 * p + 1]);
                a[p + 8] = _mm_unpackhi_epi16(b[2 * p], b[2 * p + 1]);
            }
            for p in 0..8 {
                b[p] = _mm_unpacklo_epi32(a[2 * p], a[2 * p + 1]);
                b[p + 8] = _mm_unpackhi_epi32(a[2 * p], a[2 * p + 1]);
            }
            for p in 0..8 {
                a[p] = _mm_unpacklo_epi64(b[2 * p], b[2 * p + 1]);
                a[p + 8] = _mm_unpackhi_epi64(b[2 * p], b[2 * p + 1]);
            }
            // After the four steps register k holds row ROW_OF[k] (the steps' bit reversal).
            for (k, x) in a.iter().enumerate() {
                let row = ROW_OF[k];
                let dst = out.add(row * lanes + g) as *mut __m128i;
                if lanes - g >= 16 {
                    _mm_storeu_si128(dst, *x);
                } else {
                    _mm_storel_epi64(dst, *x);
                }
            }
            g += 16;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        for (l, p) in rows.iter().enumerate().take(lanes) {
            for r in 0..ROWS {
                *out.add(r * lanes + l) = *p.add(from + r);
            }
        }
    }
}

/// Which row each register of [`transpose_rows`] ends holding: the four steps reverse the
/// bits of the register index.
#[cfg(target_arch = "x86_64")]
const ROW_OF: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// The mode kernels of one instruction set.
pub(super) trait ModeKernels: Sync {
    type Lanes: LaneSelect;

    unsafe fn align_lanes(
        t: &Tables,
        pairs: &[(&[u8], &[u8])],
        origins: bool,
        s: &mut Scratch<Self::Lanes>,
        out: &mut [LaneEnd],
    );
}

/// Each pair in `mode` at `level`, exactly as [`align_pair_mode`].
pub(super) fn align<K: ModeKernels>(
    sc: &Scoring,
    mode: AlignMode,
    pairs: &[(&[u8], &[u8])],
    level: Level,
) -> Result<Vec<Alignment>> {
    let reference = |(q, t): &(&[u8], &[u8])| align_pair_mode(q, t, sc, mode);
    let Some(tabs) = Tables::new(sc, mode) else {
        return pairs.par_iter().map(reference).map(|a| a.map(|a| at_level(a, level))).collect();
    };
    let ends = mode.free_ends();
    let free_start = ends.query_start || ends.target_start;
    // Origins decide starts (at this level) and, for a score at most 0 with a free start,
    // whether a side holds no residue: such pairs run again with them.
    let origins = level == Level::Coordinates && free_start;
    let (lanes, rest): (Vec<usize>, Vec<usize>) = (0..pairs.len()).partition(|&i| {
        !pairs[i].0.is_empty() && !pairs[i].1.is_empty() && tabs.fits_16(pairs[i].0.len(), pairs[i].1.len())
    });
    let mut results = vec![Alignment::default(); pairs.len()];
    let mut reference_pairs = rest;
    let mut with_origins = Vec::new();
    for (i, a) in run_lanes::<K>(&tabs, mode, pairs, lanes, origins) {
        match a {
            Some(a) if origins || !free_start || a.score > 0 => results[i] = at_level(a, level),
            Some(_) => with_origins.push(i),
            None => reference_pairs.push(i),
        }
    }
    for (i, a) in run_lanes::<K>(&tabs, mode, pairs, with_origins, true) {
        match a {
            Some(a) => results[i] = at_level(a, level),
            None => reference_pairs.push(i),
        }
    }
    let redone: Vec<(usize, Result<Alignment>)> =
        reference_pairs.par_iter().map(|&i| (i, reference(&pairs[i]))).collect();
    for (i, a) in redone {
        results[i] = at_level(a?, level);
    }
    Ok(results)
}

/// Pairs `lanes` of `pairs` through the lanes: each one's alignment, `None` where its lane
/// passed 16 bits.
fn run_lanes<K: ModeKernels>(
    tabs: &Tables,
    mode: AlignMode,
    pairs: &[(&[u8], &[u8])],
    mut lanes: Vec<usize>,
    origins: bool,
) -> Vec<(usize, Option<Alignment>)> {
    // Similar query lengths in one run (the rows all its lanes compute); targets stream.
    lanes.sort_unstable_by_key(|&i| (pairs[i].0.len(), pairs[i].1.len()));
    let run_pairs = <K::Lanes as super::vector::Vector>::LANES * RUN_PAIRS_PER_LANE;
    let runs: Vec<Vec<(usize, Option<Alignment>)>> = lanes
        .par_chunks(run_pairs)
        .map_init(Scratch::<K::Lanes>::default, |scratch, idx| {
            let batch: Vec<(&[u8], &[u8])> = idx.iter().map(|&i| pairs[i]).collect();
            let mut out = vec![LaneEnd::default(); idx.len()];
            // Safe: the engine checked at construction that this CPU runs K's instructions.
            unsafe { K::align_lanes(tabs, &batch, origins, scratch, &mut out) };
            idx.iter().zip(out).map(|(&i, e)| (i, (!e.saturated).then(|| e.alignment(mode)))).collect()
        })
        .collect();
    runs.into_iter().flatten().collect()
}

fn at_level(a: Alignment, level: Level) -> Alignment {
    match level {
        Level::Coordinates => a,
        Level::ScoreEnd => a.end_only(),
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn transpose_puts_every_lane_row_in_place() {
        for lanes in [8usize, 16, 32] {
            let data: Vec<Vec<i8>> = (0..lanes).map(|l| (0..32).map(|r| (l * 32 + r) as i8).collect()).collect();
            let rows: Vec<*const i8> = data.iter().map(|d| d.as_ptr()).collect();
            let mut out = vec![0i8; ROWS * lanes];
            unsafe { transpose_rows(&rows, 3, lanes, out.as_mut_ptr()) };
            for r in 0..ROWS {
                for l in 0..lanes {
                    assert_eq!(out[r * lanes + l], data[l][3 + r], "lanes {lanes} row {r} lane {l}");
                }
            }
        }
    }
}

//! Global and semi-global alignment ([`crate::engine::mode`]) on the CPU: inter-sequence
//! lanes, one pair per 16-bit lane. Every lane runs the recurrences of
//! [`crate::engine::scalar_modes`] exactly and gives the score and end cell by the mode's end
//! rule. The start, as in the reference, comes from the mode's reverse pass
//! ([`AlignMode::reverse_pass`]): the same lanes over the reversed prefixes up to the end
//! cell, combined by [`mode::with_start`]. At [`Level::ScoreEnd`] only the pairs whose start
//! may leave a side without residues (which zeroes that side's end,
//! [`AlignMode::may_empty_a_side`]) take the reverse pass.
//!
//! Lanes stream jobs ([`align_stream`]) from one queue the threads share, tallest first: a
//! lane takes the next pair when its last one ends. A query past [`STRIP`] rows is cut into
//! strips of equal heights, run one after another over all the target's columns, each
//! starting from the last row of the one before (H and the next row's F). Each column pass
//! computes the rows of the tallest strip in the lanes.
//!
//! 16 bits hold a pair exactly when no value leaves their range: below, a static bound from
//! its lengths ([`Tables::fits_16`]); above, the lane's highest H, watched where cells can
//! pass [`Tables::highest_exact`] ([`Tables::safe_side`]). Other pairs, pairs of lanes that
//! passed the top, empty sides and matrices whose scores are no bytes go to the scalar
//! reference (a reverse pass that passes the top, to the reference's end cell on the reversed
//! prefixes).
//!
//! Substitution scores: each lane has its strip's profile (one byte row per target code,
//! built by byte shuffles); per column, 16 rows of every lane's row for its target residue
//! are loaded and transposed into one score vector per row.

use super::vector::{LaneSelect, Vector};
use crate::engine::mode::{self, AlignMode, FreeEnds};
use crate::engine::scalar_modes::{align_pair_mode, end_cell};
use crate::engine::{Alignment, Level};
use crate::error::Result;
use crate::scoring::Scoring;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of one transposed block of substitution scores.
const ROWS: usize = 16;

/// Rows of one strip at most (a multiple of `ROWS` and of every vector's bytes): longer
/// queries are cut into strips of equal heights, so that one tall pair does not make every
/// lane beside it compute its rows.
const STRIP: usize = 512;

/// A query code whose two shuffle lookups both give 0 (see [`build_slot`]).
const PAD: u8 = 0x90;

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
    /// With at most 32 codes: per target code, 16 bytes of score(q, c) for q < 16 then 16 for
    /// q >= 16, the byte shuffles' tables.
    luts: Option<Vec<u8>>,
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
        let luts = (codes <= 32).then(|| {
            let mut luts = Vec::with_capacity(codes * 32);
            for c in 0..codes {
                luts.extend((0..32).map(|q| if q < codes { by_target[c * codes + q] as u8 } else { 0 }));
            }
            luts
        });
        Some(Tables {
            luts,
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

    /// Cells (i, j) with i or j at most this are never above [`Tables::highest_exact`]: every
    /// border is at most 0 and each step of a path adds at most the top score on the diagonal,
    /// so H(i, j) <= top score x min(i, j). Only cells past it in both need a watch.
    fn safe_side(&self) -> usize {
        match self.top_score {
            0 => usize::MAX,
            top => (self.highest_exact() / top) as usize,
        }
    }
}

/// One thread's buffers, reused call after call.
pub(super) struct Scratch<V> {
    /// Per lane, the scores of its strip's query rows for every target code (`STRIP` bytes a
    /// code), then one slot of zeros (idle lanes read it).
    prof: Vec<i8>,
    /// One strip's query codes, padded with [`PAD`].
    qbuf: Vec<u8>,
    /// One transposed block: `ROWS` rows of `LANES` bytes.
    scores: Vec<i8>,
    /// Per strip row: H of the last column, E and (where asked) F of the next cell.
    h: Vec<V>,
    e: Vec<V>,
    f: Vec<V>,
    /// Per lane, the last row of its strip for every column of the pair: H and the next
    /// row's F (the next strip's top border).
    bound: Vec<Vec<u16>>,
}

impl<V> Default for Scratch<V> {
    fn default() -> Self {
        Scratch {
            prof: Vec::new(),
            qbuf: Vec::new(),
            scores: Vec::new(),
            h: Vec::new(),
            e: Vec::new(),
            f: Vec::new(),
            bound: Vec::new(),
        }
    }
}

/// A lane's score and end cell (row and column of its matrix, both >= 1).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LaneEnd {
    pub score: i32,
    pub qend: u32,
    pub tend: u32,
    /// An H of the lane passed [`Tables::highest_exact`]: the lane's results may have wrapped.
    pub saturated: bool,
}

impl LaneEnd {
    /// As the reference's pass gives it: no start yet.
    fn alignment(self, mode: AlignMode) -> Alignment {
        Alignment {
            score: self.score,
            qend: self.qend,
            tend: self.tend,
            recomputed: mode.recomputed(self.score),
            ..Default::default()
        }
    }
}

/// The lane value of a signed score.
#[inline(always)]
fn lane(v: i32) -> u32 {
    v as i16 as u16 as u32
}

/// One pair for the lanes: its query cut into strips of `height` rows (the last may be
/// shorter), each run over all the target's columns before the next.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    pub pair: u32,
    pub height: u32,
}

/// Jobs of `pairs` (indices `idx`), tallest strips first (then longest targets): lanes
/// working side by side hold strips of similar heights.
fn jobs(pairs: &[(&[u8], &[u8])], idx: &[usize]) -> Vec<Job> {
    let mut jobs: Vec<Job> = idx
        .iter()
        .map(|&p| {
            let m = pairs[p].0.len();
            let strips = m.div_ceil(STRIP);
            Job { pair: p as u32, height: m.div_ceil(strips) as u32 }
        })
        .collect();
    jobs.sort_unstable_by_key(|j| (std::cmp::Reverse(j.height), std::cmp::Reverse(pairs[j.pair as usize].1.len())));
    jobs
}

/// The best end cell among candidates seen in the tie rule's order: the first strictly
/// better.
#[inline(always)]
fn consider(best: &mut Option<LaneEnd>, score: i32, qend: usize, tend: usize) {
    if best.is_none_or(|b| score > b.score) {
        *best = Some(LaneEnd { score, qend: qend as u32, tend: tend as u32, saturated: false });
    }
}

/// What one lane works on.
#[derive(Clone, Copy)]
struct LaneState {
    /// The pair (`IDLE`: none) and its target's residues.
    pair: usize,
    target: *const u8,
    m: usize,
    n: usize,
    height: usize,
    /// Query rows before this strip; its rows; whether it is the pair's last.
    base: usize,
    rows: usize,
    last: bool,
    /// The column of the strip being computed (from 1).
    j: usize,
    /// End cells among the last row's cells (m, j < n) and among the last column's.
    best_row: Option<LaneEnd>,
    best_col: Option<LaneEnd>,
}

const IDLE: usize = usize::MAX;

/// Where one column pass of the rows reads and writes.
struct Rows<V> {
    h: *mut V,
    e: *mut V,
    f: *mut V,
    scores: *const i8,
    lanes: usize,
    first: V,
    ext: V,
}

/// The running values down one column: H of the row above in the last column, F of the
/// next cell, and the highest H.
struct Carry<V> {
    diag: V,
    f: V,
    highest: V,
}

/// Rows `from..from + count` of the column pass (their scores in `p.scores`). The reference's
/// recurrences, each state's next value computed in the cell it leaves: E(i, j+1) and
/// F(i+1, j) from H(i, j). `TRACK` watches the highest H; `STORE_F` keeps F per row (for
/// the next strip's border).
#[inline(always)]
unsafe fn cells<V: LaneSelect, const TRACK: bool, const STORE_F: bool>(
    p: &Rows<V>,
    from: usize,
    count: usize,
    c: &mut Carry<V>,
) {
    let (mut diag, mut f, mut highest) = (c.diag, c.f, c.highest);
    for r in 0..count {
        let i = from + r;
        let sv = V::load_widened(p.scores.add(r * p.lanes) as *const u8);
        let h_left = *p.h.add(i);
        let e = *p.e.add(i);
        let d = diag.add_lanes(sv);
        let ef = e.max_signed(f);
        let h = d.max_signed(ef);
        if TRACK {
            highest = highest.max_signed(h);
        }
        let h_open = h.sub_lanes(p.first);
        let e_ext = e.sub_lanes(p.ext);
        let f_ext = f.sub_lanes(p.ext);
        let e_next = h_open.max_signed(e_ext);
        let f_next = h_open.max_signed(f_ext);
        *p.h.add(i) = h;
        *p.e.add(i) = e_next;
        if STORE_F {
            *p.f.add(i) = f_next;
        }
        diag = h_left;
        f = f_next;
    }
    (c.diag, c.f, c.highest) = (diag, f, highest);
}

/// The scores of one strip's query (`q`, at most `STRIP` codes) against every target code,
/// into its lane's profile slot (`dst`, `STRIP` bytes a code): rows past the strip up to the
/// next multiple of `ROWS` score 0 (rows past those keep an earlier strip's scores: what
/// rows past its strip compute is read by none of its cells).
#[inline(always)]
unsafe fn build_slot<V: Vector>(t: &Tables, luts: &[V], q: &[u8], qbuf: &mut [u8], dst: *mut i8) {
    let codes = t.codes;
    let filled = q.len().div_ceil(ROWS) * ROWS;
    if luts.is_empty() {
        for c in 0..codes {
            let row = &t.by_target[c * codes..(c + 1) * codes];
            let d = dst.add(c * STRIP);
            for (r, &x) in q.iter().enumerate() {
                *d.add(r) = row[x as usize];
            }
            std::ptr::write_bytes(d.add(q.len()), 0, filled - q.len());
        }
    } else {
        qbuf[..q.len()].copy_from_slice(q);
        let padded = filled.div_ceil(V::BYTES) * V::BYTES;
        qbuf[q.len()..padded].fill(PAD);
        let (lo_add, hi_sub) = (V::splat_bytes(0x70), V::splat_bytes(16));
        let mut k = 0;
        while k < filled {
            let idx = V::load(qbuf.as_ptr().add(k));
            let (lo, hi) = (idx.adds_bytes(lo_add), idx.sub_bytes(hi_sub));
            for c in 0..codes {
                let s = V::shuffle_bytes(luts[2 * c], lo).or(V::shuffle_bytes(luts[2 * c + 1], hi));
                s.store(dst.add(c * STRIP + k) as *mut u8);
            }
            k += V::BYTES;
        }
    }
}

/// The jobs of `jobs` from `next` on (shared with the other threads) streamed through the
/// lanes: each lane takes the next job when its last one ends, and runs its strips one after
/// another; each column pass computes the rows of the tallest strip in the lanes. Each
/// pair's score and end cell into `out`. The highest H is watched in
/// the blocks of rows that hold cells past [`Tables::safe_side`] (a pair whose lane passed
/// [`Tables::highest_exact`] there comes back `saturated`). Unsafe: the CPU must run V's
/// instructions.
#[inline(always)]
pub(super) unsafe fn align_stream<V: LaneSelect, const VBMI: bool>(
    t: &Tables,
    pairs: &[(&[u8], &[u8])],
    jobs: &[Job],
    next: &AtomicUsize,
    s: &mut Scratch<V>,
    out: &mut Vec<(usize, LaneEnd)>,
) {
    let lanes = V::LANES;
    let codes = t.codes;
    let slot = codes * STRIP;
    s.prof.clear();
    s.prof.resize((lanes + 1) * slot, 0);
    s.qbuf.clear();
    s.qbuf.resize(STRIP + V::BYTES, PAD);
    s.scores.clear();
    s.scores.resize(ROWS * lanes, 0);
    let mut luts = Vec::new();
    if let Some(tabs) = &t.luts {
        for half in tabs.chunks(16) {
            let wide: Vec<u8> = (0..V::BYTES).map(|b| half[b % 16]).collect();
            luts.push(V::load(wide.as_ptr()));
        }
    }

    let (open, ext) = (t.open, t.ext);
    let first = open + ext;
    let ends = t.ends;
    let zero = V::zero();
    for v in [&mut s.h, &mut s.e, &mut s.f] {
        v.clear();
        v.resize(STRIP, zero);
    }
    s.bound.resize_with(lanes, Vec::new);
    // H(i, 0) and H(0, j), as the reference starts them.
    let col0 = |i: usize| if ends.query_start || i == 0 { 0 } else { -(open + i as i32 * ext) };
    let row0 = |j: usize| if ends.target_start || j == 0 { 0 } else { -(open + j as i32 * ext) };

    let safe_side = t.safe_side();
    let zero_row = s.prof.as_ptr().add(lanes * slot);
    let mut rows_ptr: [*const i8; 64] = [zero_row; 64];
    // Per lane: H(top, j-1) (the diagonal of the strip's first row) and F of its first row,
    // and H(top, j) (the next column's diagonal).
    let mut bd = [[0u16; 64]; 2];
    let mut up = [0u16; 64];
    let neg = lane(i16::MIN as i32) as u16;
    let mut high = [neg; 64];
    let mut st = [LaneState {
        pair: IDLE,
        target: std::ptr::null(),
        m: 0,
        n: 0,
        height: 0,
        base: 0,
        rows: 0,
        last: true,
        j: 0,
        best_row: None,
        best_col: None,
    }; 64];
    let p = Rows {
        h: s.h.as_mut_ptr(),
        e: s.e.as_mut_ptr(),
        f: s.f.as_mut_ptr(),
        scores: s.scores.as_ptr(),
        lanes,
        first: V::splat(lane(first)),
        ext: V::splat(lane(ext)),
    };
    let at = |v: *mut V, r: usize, l: usize| (v as *mut u16).add(r * lanes + l);
    let prof = s.prof.as_mut_ptr();
    let scores = s.scores.as_mut_ptr();
    let mut drained = false;
    loop {
        let mut r_max = 0;
        let mut f_chunks = 0u64;
        let mut watch_chunks = 0u64;
        for l in 0..lanes {
            let ln = &mut st[l];
            if ln.pair != IDLE && ln.j == ln.n {
                if ln.last {
                    let mut end = match (ln.best_row, ln.best_col) {
                        (Some(r), Some(c)) if r.score >= c.score => r,
                        (r, c) => c.or(r).unwrap_or_default(),
                    };
                    end.saturated = high[l] as i16 as i32 > t.highest_exact();
                    out.push((ln.pair, end));
                    ln.pair = IDLE;
                } else {
                    ln.base += ln.rows;
                    ln.rows = ln.height.min(ln.m - ln.base);
                    ln.last = ln.base + ln.rows == ln.m;
                    ln.j = 0;
                }
            }
            if ln.pair == IDLE {
                let job = if drained { None } else { jobs.get(next.fetch_add(1, Ordering::Relaxed)) };
                let Some(job) = job else {
                    drained = true;
                    rows_ptr[l] = zero_row;
                    continue;
                };
                let pi = job.pair as usize;
                let (m, n) = (pairs[pi].0.len(), pairs[pi].1.len());
                *ln = LaneState {
                    pair: pi,
                    target: pairs[pi].1.as_ptr(),
                    m,
                    n,
                    height: job.height as usize,
                    base: 0,
                    rows: (job.height as usize).min(m),
                    last: job.height as usize >= m,
                    j: 0,
                    best_row: None,
                    best_col: None,
                };
                high[l] = neg;
                if !ln.last && s.bound[l].len() < 2 * (n + 1) {
                    s.bound[l].resize(2 * (n + 1), 0);
                }
            }
            if ln.j == 0 {
                // A new strip: its profile and column 0.
                let (base, rows) = (ln.base, ln.rows);
                let q = &pairs[ln.pair].0[base..base + rows];
                build_slot(t, &luts, q, &mut s.qbuf, prof.add(l * slot));
                for r in 0..rows {
                    let i = base + r + 1;
                    *at(p.h, r, l) = lane(col0(i)) as u16;
                    *at(p.e, r, l) = lane(col0(i) - first) as u16;
                }
                up[l] = lane(col0(base)) as u16;
            }
            ln.j += 1;
            let j = ln.j;
            rows_ptr[l] = prof.add(l * slot + *ln.target.add(j - 1) as usize * STRIP);
            bd[0][l] = up[l];
            if ln.base == 0 {
                up[l] = lane(row0(j)) as u16;
                bd[1][l] = lane(row0(j) - first) as u16;
            } else {
                let b = &s.bound[l][2 * j..2 * j + 2];
                up[l] = b[0];
                bd[1][l] = b[1];
            }
            r_max = r_max.max(ln.rows);
            if !ln.last {
                f_chunks |= 1 << ((ln.rows - 1) / ROWS);
            }
            if j > safe_side && ln.base + ln.rows > safe_side {
                // The strip's rows past the safe side: local rows safe_side - base on.
                let from = safe_side.saturating_sub(ln.base) / ROWS;
                watch_chunks |= (u64::MAX << from) & (u64::MAX >> (63 - (ln.rows - 1) / ROWS));
            }
        }
        if r_max == 0 {
            break;
        }
        let mut c = Carry {
            diag: V::load(bd[0].as_ptr() as *const u8),
            f: V::load(bd[1].as_ptr() as *const u8),
            highest: zero,
        };
        if watch_chunks != 0 {
            c.highest = V::load(high.as_ptr() as *const u8);
        }
        let mut from = 0;
        while from < r_max {
            #[cfg(target_arch = "x86_64")]
            if VBMI && lanes == 32 {
                transpose_32_vbmi(&rows_ptr, from, scores);
            } else {
                transpose_rows(&rows_ptr[..lanes], from, lanes, scores);
            }
            #[cfg(not(target_arch = "x86_64"))]
            transpose_rows(&rows_ptr[..lanes], from, lanes, scores);
            let count = ROWS.min(r_max - from);
            match (f_chunks >> (from / ROWS) & 1 != 0, watch_chunks >> (from / ROWS) & 1 != 0) {
                (false, false) => cells::<V, false, false>(&p, from, count, &mut c),
                (true, false) => cells::<V, false, true>(&p, from, count, &mut c),
                (false, true) => cells::<V, true, false>(&p, from, count, &mut c),
                (true, true) => cells::<V, true, true>(&p, from, count, &mut c),
            }
            from += ROWS;
        }
        if watch_chunks != 0 {
            c.highest.store(high.as_mut_ptr() as *mut u8);
        }
        // The strips' last rows: the next strip's border, or end cells.
        for l in 0..lanes {
            let ln = &mut st[l];
            if ln.pair == IDLE {
                continue;
            }
            let (j, b) = (ln.j, ln.rows - 1);
            if !ln.last {
                let dst = &mut s.bound[l][2 * j..2 * j + 2];
                dst[0] = *at(p.h, b, l);
                dst[1] = *at(p.f, b, l);
            } else if j < ln.n && ends.target_end {
                consider(&mut ln.best_row, *at(p.h, b, l) as i16 as i32, ln.m, j);
            }
            if j == ln.n {
                if ends.query_end {
                    for r in 0..=b {
                        consider(&mut ln.best_col, *at(p.h, r, l) as i16 as i32, ln.base + r + 1, j);
                    }
                } else if ln.last {
                    consider(&mut ln.best_col, *at(p.h, b, l) as i16 as i32, ln.m, j);
                }
            }
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
        if lanes == 32 {
            // AVX-512's 32 lanes (whose kernels run AVX2 too): both 16 x 16 transposes at once,
            // lanes k and 16 + k in the two halves of register k, so each row ends whole.
            let mut a = [_mm256_setzero_si256(); 16];
            for (k, x) in a.iter_mut().enumerate() {
                let lo = _mm_loadu_si128(rows[k].add(from) as *const __m128i);
                let hi = _mm_loadu_si128(rows[16 + k].add(from) as *const __m128i);
                *x = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            }
            let mut b = [_mm256_setzero_si256(); 16];
            for p in 0..8 {
                b[p] = _mm256_unpacklo_epi8(a[2 * p], a[2 * p + 1]);
                b[p + 8] = _mm256_unpackhi_epi8(a[2 * p], a[2 * p + 1]);
            }
            for p in 0..8 {
                a[p] = _mm256_unpacklo_epi16(b[2 * p], b[2 * p + 1]);
                a[p + 8] = _mm256_unpackhi_epi16(b[2 * p], b[2 * p + 1]);
            }
            for p in 0..8 {
                b[p] = _mm256_unpacklo_epi32(a[2 * p], a[2 * p + 1]);
                b[p + 8] = _mm256_unpackhi_epi32(a[2 * p], a[2 * p + 1]);
            }
            for p in 0..8 {
                a[p] = _mm256_unpacklo_epi64(b[2 * p], b[2 * p + 1]);
                a[p + 8] = _mm256_unpackhi_epi64(b[2 * p], b[2 * p + 1]);
            }
            for (k, x) in a.iter().enumerate() {
                _mm256_storeu_si256(out.add(ROW_OF[k] * 32) as *mut __m256i, *x);
            }
            return;
        }
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

/// [`transpose_rows`] for 32 lanes with AVX-512 VBMI's two-register byte permutes: four
/// lanes a register (one per 128 bits), then three rounds of eight permutes, each merging
/// two registers' lanes and halving their rows, into two rows of 32 lanes a register.
/// Unsafe: the CPU must run AVX-512BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn transpose_32_vbmi(rows: &[*const i8; 64], from: usize, out: *mut i8) {
    use std::arch::x86_64::*;
    let idx = |k: usize| _mm512_loadu_si512(VBMI_STEPS[k].as_ptr() as *const __m512i);
    let mut z = [_mm512_setzero_si512(); 8];
    for (g, x) in z.iter_mut().enumerate() {
        let lane = |b: usize| _mm_loadu_si128(rows[4 * g + b].add(from) as *const __m128i);
        let v = _mm512_castsi128_si512(lane(0));
        let v = _mm512_inserti32x4::<1>(v, lane(1));
        let v = _mm512_inserti32x4::<2>(v, lane(2));
        *x = _mm512_inserti32x4::<3>(v, lane(3));
    }
    // Round 1: lanes 8g..8g+8, rows 8h..8h+8 in s[2g + h] (row-major: 8 bytes a row).
    let (i0, i1) = (idx(0), idx(1));
    let mut s = [_mm512_setzero_si512(); 8];
    for g in 0..4 {
        s[2 * g] = _mm512_permutex2var_epi8(z[2 * g], i0, z[2 * g + 1]);
        s[2 * g + 1] = _mm512_permutex2var_epi8(z[2 * g], i1, z[2 * g + 1]);
    }
    // Round 2: lanes 16c..16c+16, rows 8h + 4q..+4 in t[4c + 2h + q] (16 bytes a row).
    let (i2, i3) = (idx(2), idx(3));
    let mut t = [_mm512_setzero_si512(); 8];
    for c in 0..2 {
        for h in 0..2 {
            let (a, b) = (s[4 * c + h], s[4 * c + 2 + h]);
            t[4 * c + 2 * h] = _mm512_permutex2var_epi8(a, i2, b);
            t[4 * c + 2 * h + 1] = _mm512_permutex2var_epi8(a, i3, b);
        }
    }
    // Round 3: all 32 lanes, rows 4v + 2w..+2 (32 bytes a row), in place in `out`.
    let (i4, i5) = (idx(4), idx(5));
    for v in 0..4 {
        let (a, b) = (t[v], t[4 + v]);
        _mm512_storeu_si512(out.add(v * 128) as *mut __m512i, _mm512_permutex2var_epi8(a, i4, b));
        _mm512_storeu_si512(out.add(v * 128 + 64) as *mut __m512i, _mm512_permutex2var_epi8(a, i5, b));
    }
}

/// The permutes of [`transpose_32_vbmi`]'s rounds, two a round (the halves of the rows each
/// output keeps). Index bit 6 picks the second register.
#[cfg(target_arch = "x86_64")]
const VBMI_STEPS: [[u8; 64]; 6] = {
    let mut steps = [[0u8; 64]; 6];
    let mut k = 0;
    while k < 64 {
        let mut h = 0;
        while h < 2 {
            // Round 1: byte k = row 8h + k/8 of lane k%8; the inputs hold 4 lanes of 16 rows.
            let (row, lane) = (8 * h + k / 8, k % 8);
            steps[h][k] = ((lane / 4) * 64 + (lane % 4) * 16 + row) as u8;
            // Round 2: byte k = row 4h + k/16 (of the input's 8) of lane k%16; inputs hold 8
            // lanes of 8 rows.
            let (row, lane) = (4 * h + k / 16, k % 16);
            steps[2 + h][k] = ((lane / 8) * 64 + row * 8 + lane % 8) as u8;
            // Round 3: byte k = row 2h + k/32 (of the input's 4) of lane k%32; inputs hold 16
            // lanes of 4 rows.
            let (row, lane) = (2 * h + k / 32, k % 32);
            steps[4 + h][k] = ((lane / 16) * 64 + row * 16 + lane % 16) as u8;
            h += 1;
        }
        k += 1;
    }
    steps
};

/// Which row each register of [`transpose_rows`] ends holding: the four steps reverse the
/// bits of the register index.
#[cfg(target_arch = "x86_64")]
const ROW_OF: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// The mode kernels of one instruction set.
pub(super) trait ModeKernels: Sync {
    type Lanes: LaneSelect;

    unsafe fn align_stream(
        t: &Tables,
        pairs: &[(&[u8], &[u8])],
        jobs: &[Job],
        next: &AtomicUsize,
        s: &mut Scratch<Self::Lanes>,
        out: &mut Vec<(usize, LaneEnd)>,
    );
}

/// Each pair in `mode` at `level`, exactly as [`align_pair_mode`]: the forward pass in the
/// lanes, then where the start is asked for (or may zero an end) the reverse pass in the
/// lanes too.
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
    let (lanes, rest): (Vec<usize>, Vec<usize>) = (0..pairs.len()).partition(|&i| {
        !pairs[i].0.is_empty() && !pairs[i].1.is_empty() && tabs.fits_16(pairs[i].0.len(), pairs[i].1.len())
    });
    let mut results = vec![Alignment::default(); pairs.len()];
    let mut reference_pairs = rest;
    // The forward pass's score and end cell of each pair the lanes held.
    let mut ends = Vec::with_capacity(lanes.len());
    for (i, e) in run_lanes::<K>(&tabs, pairs, &lanes) {
        match e {
            Some(e) => ends.push((i, e.alignment(mode))),
            None => reference_pairs.push(i),
        }
    }
    match mode.reverse_pass() {
        // No free start: both starts are residue 1, no side is ever empty.
        None => {
            for (i, end) in ends {
                results[i] = at_level(mode::with_start(&end, None, sc, mode)?, level);
            }
        }
        Some(rm) => {
            let (need, done): (Vec<_>, Vec<_>) =
                ends.into_iter().partition(|(_, end)| level == Level::Coordinates || mode.may_empty_a_side(end, sc));
            for (i, end) in done {
                results[i] = at_level(end, level);
            }
            for (i, a) in reverse_pass::<K>(sc, mode, rm, pairs, need)? {
                results[i] = at_level(a, level);
            }
        }
    }
    let redone: Vec<(usize, Result<Alignment>)> =
        reference_pairs.par_iter().map(|&i| (i, reference(&pairs[i]))).collect();
    for (i, a) in redone {
        results[i] = at_level(a?, level);
    }
    Ok(results)
}

/// The alignments of `ends` (pair index, the forward pass's score and end cell), their
/// starts found by the reverse pass in `rm` over the reversed prefixes up to each end cell:
/// in the lanes where they hold it, else by the reference's end cell.
fn reverse_pass<K: ModeKernels>(
    sc: &Scoring,
    mode: AlignMode,
    rm: AlignMode,
    pairs: &[(&[u8], &[u8])],
    ends: Vec<(usize, Alignment)>,
) -> Result<Vec<(usize, Alignment)>> {
    // The reversed prefixes, query then target of each pair, in one buffer.
    let total: usize = ends.iter().map(|(_, e)| e.qend as usize + e.tend as usize).sum();
    let mut buf = Vec::with_capacity(total);
    for &(i, ref e) in &ends {
        let (q, t) = pairs[i];
        buf.extend(q[..e.qend as usize].iter().rev());
        buf.extend(t[..e.tend as usize].iter().rev());
    }
    let mut rev_pairs: Vec<(&[u8], &[u8])> = Vec::with_capacity(ends.len());
    let mut rest = buf.as_slice();
    for (_, e) in &ends {
        let (q, after) = rest.split_at(e.qend as usize);
        let (t, after) = after.split_at(e.tend as usize);
        rev_pairs.push((q, t));
        rest = after;
    }
    let rtabs = Tables::new(sc, rm);
    let (lanes, mut scalar): (Vec<usize>, Vec<usize>) = (0..rev_pairs.len())
        .partition(|&k| rtabs.as_ref().is_some_and(|t| t.fits_16(rev_pairs[k].0.len(), rev_pairs[k].1.len())));
    let mut rev = vec![Alignment::default(); ends.len()];
    if let Some(rtabs) = &rtabs {
        for (k, e) in run_lanes::<K>(rtabs, &rev_pairs, &lanes) {
            match e {
                Some(e) => rev[k] = e.alignment(rm),
                None => scalar.push(k),
            }
        }
    }
    let redone = scalar
        .par_iter()
        .map(|&k| Ok((k, end_cell(rev_pairs[k].0, rev_pairs[k].1, sc, rm)?)))
        .collect::<Result<Vec<_>>>()?;
    for (k, a) in redone {
        rev[k] = a;
    }
    ends.iter().zip(&rev).map(|(&(i, ref end), rev)| Ok((i, mode::with_start(end, Some(rev), sc, mode)?))).collect()
}

/// Pairs `idx` of `pairs` (both sides non-empty) through the lanes: each one's score and end
/// cell, `None` where its lane passed 16 bits.
fn run_lanes<K: ModeKernels>(tabs: &Tables, pairs: &[(&[u8], &[u8])], idx: &[usize]) -> Vec<(usize, Option<LaneEnd>)> {
    let jobs = jobs(pairs, idx);
    let next = AtomicUsize::new(0);
    let streams = rayon::current_num_threads().min(idx.len().div_ceil(<K::Lanes as Vector>::LANES)).max(1);
    let outs: Vec<Vec<(usize, LaneEnd)>> = (0..streams)
        .into_par_iter()
        .map_init(Scratch::<K::Lanes>::default, |scratch, _| {
            let mut out = Vec::new();
            // Safe: the engine checked at construction that this CPU runs K's instructions.
            unsafe { K::align_stream(tabs, pairs, &jobs, &next, scratch, &mut out) };
            out
        })
        .collect();
    outs.into_iter().flatten().map(|(i, e)| (i, (!e.saturated).then_some(e))).collect()
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

    #[test]
    fn vbmi_transpose_puts_every_lane_row_in_place() {
        if !(is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vbmi")) {
            eprintln!("no AVX-512 VBMI here: transpose_32_vbmi untested");
            return;
        }
        #[target_feature(enable = "avx512bw,avx512vbmi")]
        unsafe fn run(rows: &[*const i8; 64], from: usize, out: *mut i8) {
            transpose_32_vbmi(rows, from, out)
        }
        let data: Vec<Vec<i8>> = (0..32).map(|l| (0..40).map(|r| (l * 40 + r) as i8).collect()).collect();
        let mut rows = [data[0].as_ptr(); 64];
        for (l, d) in data.iter().enumerate() {
            rows[l] = d.as_ptr();
        }
        for from in [0, 5, 16] {
            let mut out = vec![0i8; ROWS * 32];
            unsafe { run(&rows, from, out.as_mut_ptr()) };
            for r in 0..ROWS {
                for l in 0..32 {
                    assert_eq!(out[r * 32 + l], data[l][from + r], "from {from} row {r} lane {l}");
                }
            }
        }
    }
}

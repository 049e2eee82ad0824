//! Traceback of reported local alignments: the one path rule every engine follows, the
//! path as an extended CIGAR, its statistics (identity, length, mismatches, gap opens) and
//! the aligned strings.
//!
//! Path rule. A reported alignment (score S > 0, start and end by the engines' tie rule) is
//! traced inside its rectangle q[qstart..=qend] x t[tstart..=tend], aligned end to end (no
//! restarts: the path begins with the pair (qstart, tstart) and ends with (qend, tend)):
//!   E(i,j) = max(H(i,j-1) - o - e, E(i,j-1) - e)   target residue against a gap ('D')
//!   F(i,j) = max(H(i-1,j) - o - e, F(i-1,j) - e)   query residue against a gap ('I')
//!   H(i,j) = max(H(i-1,j-1) + s(q_i, t_j), E(i,j), F(i,j)),  H(0,0) = 0, other borders -inf
//! H(m,n) equals S. Walking back from (m,n): a cell takes the diagonal when that attains its
//! value, else the 'D' state, else the 'I' state; a gap state goes back to H (the gap opens
//! there) when that attains its value, else it extends. In words: pairs before gaps, a gap
//! in the query before a gap in the target, and gaps as short as the values allow.
//!
//! Statistics: `length` = columns of the alignment (pairs + gap positions), `nident` = pairs
//! of equal residue codes (`Scoring::identical`: protein letters outside the matrix alphabet
//! are all X, so they count as identical to each other; a DNA ambiguity code scores as a
//! mismatch against everything, itself included, so it is never an identity), `mismatch` =
//! other pairs, `gapopen` = runs of 'I' or 'D',
//! `gaps` = gap positions.
//!
//! [`trace`] stores one direction byte per cell; rectangles over [`BLOCK_CELLS`] are walked
//! block by block from checkpoint columns, so memory stays bounded whatever the lengths.
//! [`path_stats`] computes the same statistics in one forward pass without directions (the
//! counters of the path the rule picks, carried per state), tested equal to [`trace`].
//!
//! Global and semi-global alignments ([`super::mode`]) follow the same rule through
//! [`trace_mode`]: their rectangle may begin with gaps (its row 0 and column 0 are gap
//! borders instead of -inf), may score 0 or below, and may hold no residue of one sequence.

use super::mode::AlignMode;
use super::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;

const NEG: i32 = i32::MIN / 4;
/// Cells of direction bytes one block of [`trace`] holds (16 MiB).
pub const BLOCK_CELLS: usize = 1 << 24;

/// One column of an alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `=`: a pair of identical residues.
    Match,
    /// `X`: a pair of different residues.
    Mismatch,
    /// `I`: a query residue against a gap.
    Insertion,
    /// `D`: a target residue against a gap.
    Deletion,
}

impl Op {
    pub fn letter(self) -> char {
        match self {
            Op::Match => '=',
            Op::Mismatch => 'X',
            Op::Insertion => 'I',
            Op::Deletion => 'D',
        }
    }
}

/// Statistics of a path (all zero for score 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PathStats {
    pub length: u32,
    pub nident: u32,
    pub mismatch: u32,
    pub gapopen: u32,
    pub gaps: u32,
}

impl PathStats {
    /// From the counters the forward pass carries: `pairs` (diagonal steps), `nident`,
    /// `gapopen`, over a rectangle of `m` query by `n` target residues.
    pub fn from_counts(pairs: u32, nident: u32, gapopen: u32, m: u32, n: u32) -> PathStats {
        let gaps = (m - pairs) + (n - pairs);
        PathStats { length: pairs + gaps, nident, mismatch: pairs - nident, gapopen, gaps }
    }

    /// Percent identity over the alignment's length (BLAST's pident); 0 for no alignment.
    pub fn pident(&self) -> f64 {
        if self.length == 0 {
            0.0
        } else {
            100.0 * self.nident as f64 / self.length as f64
        }
    }
}

/// A traced path: its operations in order, run-length encoded, and its statistics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Traceback {
    pub ops: Vec<(u32, Op)>,
    pub stats: PathStats,
}

impl Traceback {
    /// The extended CIGAR, e.g. `3=1X2D5=` (empty for no alignment).
    pub fn cigar(&self) -> String {
        let mut s = String::new();
        self.write_cigar(&mut s);
        s
    }

    /// Appends the extended CIGAR to `out`.
    pub fn write_cigar(&self, out: &mut String) {
        use std::fmt::Write;
        for &(n, op) in &self.ops {
            let _ = write!(out, "{}{}", n, op.letter());
        }
    }

    /// Appends the aligned query and target (letters by `decode`, `-` for gaps) of the
    /// alignment `a` of `query` and `target` to `qaln` and `taln`.
    pub fn write_aligned(
        &self,
        query: &[u8],
        target: &[u8],
        a: &Alignment,
        decode: impl Fn(u8) -> u8,
        qaln: &mut Vec<u8>,
        taln: &mut Vec<u8>,
    ) {
        let (mut i, mut j) = (a.qstart.max(1) as usize - 1, a.tstart.max(1) as usize - 1);
        for &(n, op) in &self.ops {
            for _ in 0..n {
                match op {
                    Op::Match | Op::Mismatch => {
                        qaln.push(decode(query[i]));
                        taln.push(decode(target[j]));
                        i += 1;
                        j += 1;
                    }
                    Op::Insertion => {
                        qaln.push(decode(query[i]));
                        taln.push(b'-');
                        i += 1;
                    }
                    Op::Deletion => {
                        qaln.push(b'-');
                        taln.push(decode(target[j]));
                        j += 1;
                    }
                }
            }
        }
    }
}

/// The rectangle of `a` in a non-local mode: as [`rectangle`], but a side of which the
/// alignment holds no residue (start and end 0) is empty.
fn rectangle_or_empty<'a>(query: &'a [u8], target: &'a [u8], a: &Alignment) -> Result<(&'a [u8], &'a [u8])> {
    let side = |start: u32, end: u32, seq: &'a [u8]| -> Option<&'a [u8]> {
        match (start, end) {
            (0, 0) => Some(&seq[..0]),
            (s, e) if s >= 1 && s <= e && e as usize <= seq.len() => Some(&seq[s as usize - 1..e as usize]),
            _ => None,
        }
    };
    match (side(a.qstart, a.qend, query), side(a.tstart, a.tend, target)) {
        (Some(q), Some(t)) => Ok((q, t)),
        _ => Err(Error::Internal(format!(
            "traceback of {a:?} on sequences of {} and {} residues",
            query.len(),
            target.len()
        ))),
    }
}

/// The rectangle of `a` in `query` and `target`, checked against their lengths.
fn rectangle<'a>(query: &'a [u8], target: &'a [u8], a: &Alignment) -> Result<(&'a [u8], &'a [u8])> {
    let ok = a.qstart >= 1
        && a.tstart >= 1
        && a.qstart <= a.qend
        && a.tstart <= a.tend
        && a.qend as usize <= query.len()
        && a.tend as usize <= target.len();
    if !ok {
        return Err(Error::Internal(format!(
            "traceback of {a:?} on sequences of {} and {} residues",
            query.len(),
            target.len()
        )));
    }
    Ok((&query[a.qstart as usize - 1..a.qend as usize], &target[a.tstart as usize - 1..a.tend as usize]))
}

// Direction byte of a cell: bits 0-1 the H choice (0 diagonal, 1 'D' state, 2 'I' state),
// bit 2 the 'D' state opens here, bit 3 the 'I' state opens here.
const FROM_E: u8 = 1;
const FROM_F: u8 = 2;
const E_OPENS: u8 = 4;
const F_OPENS: u8 = 8;

/// One column j of the anchored DP: updates `h` (H(.,j-1) -> H(.,j)) and `e` in place, with
/// H(0,j-1) = `corner` and H(0,j) = `top`, and writes the direction bytes of rows 1..=m into
/// `dirs` if given.
#[inline]
#[allow(clippy::too_many_arguments)]
fn column(
    q: &[u8],
    t: u8,
    sc: &Scoring,
    h: &mut [i32],
    e: &mut [i32],
    corner: i32,
    top: i32,
    mut dirs: Option<&mut [u8]>,
) {
    let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let mut diag = corner;
    h[0] = top;
    let mut f = NEG;
    let mut up = top; // H(i-1, j)
    for i in 1..=q.len() {
        let (eo, ee) = (h[i] - oe, e[i] - ext);
        let e_open = eo >= ee;
        let ev = if e_open { eo } else { ee };
        let (fo, fe) = (up - oe, f - ext);
        let f_open = fo >= fe;
        f = if f_open { fo } else { fe };
        let d = diag + sc.score(q[i - 1], t);
        let (hv, from) = if d >= ev && d >= f {
            (d, 0)
        } else if ev >= f {
            (ev, FROM_E)
        } else {
            (f, FROM_F)
        };
        diag = h[i];
        h[i] = hv;
        e[i] = ev;
        up = hv;
        if let Some(d) = dirs.as_deref_mut() {
            d[i - 1] = from | if e_open { E_OPENS } else { 0 } | if f_open { F_OPENS } else { 0 };
        }
    }
}

/// Reusable buffers of [`trace`] (one per thread: no allocation per pair).
#[derive(Default)]
pub struct Scratch {
    h: Vec<i32>,
    e: Vec<i32>,
    dirs: Vec<u8>,
    checkpoints: Vec<i32>,
    ops: Vec<Op>,
}

/// The path of `a` by the path rule (see the module documentation).
pub fn trace(query: &[u8], target: &[u8], sc: &Scoring, a: &Alignment) -> Result<Traceback> {
    trace_with(query, target, sc, a, &mut Scratch::default(), BLOCK_CELLS)
}

/// [`trace`] with caller-owned buffers and a block size (cells of direction bytes held at
/// once; tests use small ones to exercise the checkpoints).
pub fn trace_with(
    query: &[u8],
    target: &[u8],
    sc: &Scoring,
    a: &Alignment,
    s: &mut Scratch,
    block_cells: usize,
) -> Result<Traceback> {
    if a.score <= 0 {
        return Ok(Traceback::default());
    }
    let (q, t) = rectangle(query, target, a)?;
    trace_rectangle(q, t, sc, a, s, block_cells, Borders::Local)
}

/// The path of `a`, an alignment in `mode`, by the path rule: local mode is [`trace`]; in
/// the other modes (see [`super::mode`]) the rectangle from the start to the end is traced
/// aligned end to end with leading gaps allowed: H(0,j) = -(open + j * extend) through the
/// 'D' state and H(i,0) = -(open + i * extend) through the 'I' state (the reverse pass chose
/// the start so that this rectangle scores the alignment's score). A score of 0 or below is
/// an alignment there; a sequence of which it holds no residue has start and end 0 (the
/// path is one gap of the other).
pub fn trace_mode(query: &[u8], target: &[u8], sc: &Scoring, a: &Alignment, mode: AlignMode) -> Result<Traceback> {
    trace_mode_with(query, target, sc, a, mode, &mut Scratch::default(), BLOCK_CELLS)
}

/// [`trace_mode`] with caller-owned buffers and a block size, as [`trace_with`].
pub fn trace_mode_with(
    query: &[u8],
    target: &[u8],
    sc: &Scoring,
    a: &Alignment,
    mode: AlignMode,
    s: &mut Scratch,
    block_cells: usize,
) -> Result<Traceback> {
    // The overlap mode: each alignment's own mode.
    let mode = mode.of(a);
    if mode.is_local() {
        return trace_with(query, target, sc, a, s, block_cells);
    }
    let (q, t) = rectangle_or_empty(query, target, a)?;
    let (m, n) = (q.len(), t.len());
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    if !mode_values_fit(m, n, sc) {
        let worst = sc.matrix.max_score().abs().max(sc.matrix.min_score().abs()) as i64;
        let columns = m as i64 + n as i64 + 2;
        let largest = (-(NEG as i64) / 2 - 1 - 3 * o - 2 * worst) / columns;
        let fix = match largest {
            1.. => format!("with these lengths --gap-extend can be at most {largest} (got {e})"),
            _ => "the sequences are too long for any gap cost".to_string(),
        };
        return Err(Error::Input(format!(
            "the traceback of a {mode} alignment over {m} query by {n} target residues leaves the 32-bit \
             range of the path rule (gaps across both sequences cost {} with --gap-open {o} --gap-extend {e}): \
             {fix}",
            2 * o + (m as i64 + n as i64) * e
        )));
    }
    if m == 0 || n == 0 {
        // One gap of the other sequence, or nothing.
        let (k, op) = if m == 0 { (n, Op::Deletion) } else { (m, Op::Insertion) };
        let mut tb = Traceback::default();
        let mut rescored = 0i64;
        if k > 0 {
            tb.ops.push((k as u32, op));
            tb.stats = PathStats { length: k as u32, nident: 0, mismatch: 0, gapopen: 1, gaps: k as u32 };
            rescored = -(o + k as i64 * e);
        }
        if rescored != a.score as i64 {
            return Err(Error::Internal(format!("traceback of {a:?} re-scores to {rescored}")));
        }
        return Ok(tb);
    }
    trace_rectangle(q, t, sc, a, s, block_cells, Borders::Gaps)
}

/// Whether the path rule's values over a rectangle of `m` query by `n` target residues in
/// a non-local mode stay in its 32-bit range with these gap costs (else [`trace_mode`]
/// refuses the rectangle, and the GPU traceback kernel leaves it to it). Every H(i,j) is at
/// least the path of two gaps, -(2 open + (i + j) extend), so every E and F at least
/// -(3 open + (i + j + 1) extend), and a candidate H(i-1,j-1) + s one substitution score
/// lower; H is at most max s * min(m, n) (checked with the lengths). All must stay far
/// enough above NEG (i32::MIN / 4, the kernel's sentinel too) for it to lose every maximum.
pub fn mode_values_fit(m: usize, n: usize, sc: &Scoring) -> bool {
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    let worst = sc.matrix.max_score().abs().max(sc.matrix.min_score().abs()) as i64;
    3 * o + (m as i64 + n as i64 + 2) * e + 2 * worst < -(NEG as i64) / 2
}

/// The borders of the traced rectangle: local alignments start with a pair (H(0,0) = 0, the
/// rest -inf); the other modes may start with gaps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Borders {
    Local,
    Gaps,
}

impl Borders {
    /// H(0, j): the row above the rectangle.
    #[inline]
    fn top(self, sc: &Scoring, j: usize) -> i32 {
        match (self, j) {
            (_, 0) => 0,
            (Borders::Local, _) => NEG,
            (Borders::Gaps, _) => -(sc.gap_open + j as i32 * sc.gap_extend),
        }
    }
}

/// The walk of the path rule over the rectangle `q` x `t` (both non-empty) of `a`.
fn trace_rectangle(
    q: &[u8],
    t: &[u8],
    sc: &Scoring,
    a: &Alignment,
    s: &mut Scratch,
    block_cells: usize,
    borders: Borders,
) -> Result<Traceback> {
    let (m, n) = (q.len(), t.len());
    // Columns per block, and checkpoints: H and E of the column before each block.
    let width = (block_cells / m).clamp(1, n);
    let blocks = n.div_ceil(width);
    s.h.clear();
    s.h.resize(m + 1, NEG);
    s.e.clear();
    s.e.resize(m + 1, NEG);
    s.h[0] = 0;
    if borders == Borders::Gaps {
        // H(i, 0): a gap in the target ('I' state).
        for (i, h) in s.h.iter_mut().enumerate().skip(1) {
            *h = -(sc.gap_open + i as i32 * sc.gap_extend);
        }
    }
    s.checkpoints.clear();
    if blocks > 1 {
        s.checkpoints.reserve(blocks * 2 * (m + 1));
        for j in 0..n {
            if j % width == 0 {
                s.checkpoints.extend_from_slice(&s.h);
                s.checkpoints.extend_from_slice(&s.e);
            }
            column(q, t[j], sc, &mut s.h, &mut s.e, borders.top(sc, j), borders.top(sc, j + 1), None);
        }
        if s.h[m] != a.score {
            return Err(end_to_end(a, s.h[m]));
        }
    }
    // Walk back block by block: recompute the block's directions from its checkpoint.
    s.ops.clear();
    let (mut i, mut j) = (m, n); // cell (i, j), 1-based; (0, 0) ends the walk
    let mut state = 0u8; // 0 H, 1 E ('D'), 2 F ('I')
    let mut subst = 0i64;
    for b in (0..blocks).rev() {
        if j == 0 {
            break; // the walk reached row 0 and took the border back to the corner
        }
        let j0 = b * width; // columns j0+1 ..= j1 (1-based) are this block's
        let j1 = ((b + 1) * width).min(n);
        if blocks > 1 {
            let at = b * 2 * (m + 1);
            s.h.copy_from_slice(&s.checkpoints[at..at + m + 1]);
            s.e.copy_from_slice(&s.checkpoints[at + m + 1..at + 2 * (m + 1)]);
        }
        s.dirs.clear();
        s.dirs.resize(m * (j1 - j0), 0);
        for j in j0..j1 {
            let col = &mut s.dirs[(j - j0) * m..(j - j0 + 1) * m];
            column(q, t[j], sc, &mut s.h, &mut s.e, borders.top(sc, j), borders.top(sc, j + 1), Some(col));
        }
        if b == blocks - 1 && s.h[m] != a.score {
            return Err(end_to_end(a, s.h[m]));
        }
        while j > j0 {
            if i == 0 {
                if borders == Borders::Local || state == 2 {
                    return Err(Error::Internal(format!("traceback of {a:?} left the rectangle")));
                }
                // Row 0: leading 'D's back to the corner.
                s.ops.extend(std::iter::repeat_n(Op::Deletion, j));
                (j, state) = (0, 0);
                break;
            }
            let d = s.dirs[(j - 1 - j0) * m + (i - 1)];
            match state {
                0 => match d & 3 {
                    0 => {
                        subst += sc.score(q[i - 1], t[j - 1]) as i64;
                        s.ops.push(if sc.identical(q[i - 1], t[j - 1]) { Op::Match } else { Op::Mismatch });
                        i -= 1;
                        j -= 1;
                    }
                    FROM_E => state = 1,
                    _ => state = 2,
                },
                1 => {
                    s.ops.push(Op::Deletion);
                    if d & E_OPENS != 0 {
                        state = 0;
                    }
                    j -= 1;
                }
                _ => {
                    s.ops.push(Op::Insertion);
                    if d & F_OPENS != 0 {
                        state = 0;
                    }
                    i -= 1;
                }
            }
        }
    }
    if borders == Borders::Gaps && i > 0 && j == 0 && state != 1 {
        // Column 0: leading 'I's up to the corner.
        s.ops.extend(std::iter::repeat_n(Op::Insertion, i));
        (i, state) = (0, 0);
    }
    if i != 0 || j != 0 || state != 0 {
        return Err(Error::Internal(format!("traceback of {a:?} did not end at its start")));
    }
    // Runs in path order, and the statistics; the path must re-score to the score.
    let mut tb = Traceback::default();
    let mut gap_positions = 0u64;
    for &op in s.ops.iter().rev() {
        match tb.ops.last_mut() {
            Some((n, last)) if *last == op => *n += 1,
            _ => tb.ops.push((1, op)),
        }
        match op {
            Op::Match => tb.stats.nident += 1,
            Op::Mismatch => tb.stats.mismatch += 1,
            _ => gap_positions += 1,
        }
    }
    // Adjacent I and D runs are separate gaps (each opened), as the rule counts them.
    tb.stats.gapopen = count_gap_opens(&s.ops);
    tb.stats.gaps = gap_positions as u32;
    tb.stats.length = tb.stats.nident + tb.stats.mismatch + tb.stats.gaps;
    let rescored = subst - (tb.stats.gapopen as i64) * sc.gap_open as i64 - gap_positions as i64 * sc.gap_extend as i64;
    if rescored != a.score as i64 {
        return Err(Error::Internal(format!("traceback of {a:?} re-scores to {rescored}")));
    }
    Ok(tb)
}

/// A path given as operations last first (`op(k)`, k < `n`: 0 a pair, 1 'D', 2 'I'), as
/// the GPU kernel `kernels/path_trace.cu` writes them, made into a [`Traceback`]: pairs
/// become '=' or 'X' by the residues, and the path must cover the rectangle of `a` and
/// re-score to its score (the same checks [`trace`] and [`trace_mode`] make of their own
/// walks). In local mode score 0 is no alignment (an empty path); in the other modes every
/// score is one, and the kernel takes only rectangles with residues on both sides.
pub fn from_ops(
    query: &[u8],
    target: &[u8],
    sc: &Scoring,
    a: &Alignment,
    mode: AlignMode,
    n: usize,
    op: impl Fn(usize) -> u8,
) -> Result<Traceback> {
    if mode.is_local() && a.score <= 0 {
        return Ok(Traceback::default());
    }
    let (q, t) = rectangle(query, target, a)?;
    let mut tb = Traceback::default();
    let (mut i, mut j) = (0usize, 0usize);
    let (mut subst, mut gap_positions) = (0i64, 0u32);
    let bad = || Error::Internal(format!("GPU traceback of {a:?} left its rectangle"));
    for k in (0..n).rev() {
        let o = match op(k) {
            0 => {
                let (x, y) = (*q.get(i).ok_or_else(bad)?, *t.get(j).ok_or_else(bad)?);
                subst += sc.score(x, y) as i64;
                i += 1;
                j += 1;
                if sc.identical(x, y) {
                    tb.stats.nident += 1;
                    Op::Match
                } else {
                    tb.stats.mismatch += 1;
                    Op::Mismatch
                }
            }
            1 => {
                j += 1;
                gap_positions += 1;
                Op::Deletion
            }
            2 => {
                i += 1;
                gap_positions += 1;
                Op::Insertion
            }
            x => return Err(Error::Internal(format!("GPU traceback of {a:?}: operation code {x}"))),
        };
        match tb.ops.last_mut() {
            Some((run, last)) if *last == o => *run += 1,
            _ => {
                if matches!(o, Op::Insertion | Op::Deletion) {
                    tb.stats.gapopen += 1;
                }
                tb.ops.push((1, o));
            }
        }
    }
    if i != q.len() || j != t.len() {
        return Err(bad());
    }
    tb.stats.gaps = gap_positions;
    tb.stats.length = tb.stats.nident + tb.stats.mismatch + gap_positions;
    let rescored = subst - tb.stats.gapopen as i64 * sc.gap_open as i64 - gap_positions as i64 * sc.gap_extend as i64;
    if rescored != a.score as i64 {
        return Err(Error::Internal(format!("GPU traceback of {a:?} re-scores to {rescored}")));
    }
    Ok(tb)
}

/// [`trace`] of every alignment of `pairs` on the current rayon pool (one scratch per
/// thread); with `path` false the operations are dropped (statistics only).
pub fn trace_all(
    pairs: crate::seq::PairSeqs<'_>,
    alignments: &[Alignment],
    sc: &Scoring,
    path: bool,
) -> Result<Vec<Traceback>> {
    trace_all_mode(pairs, alignments, sc, AlignMode::Local, path)
}

/// [`trace_all`] of alignments in `mode` ([`trace_mode`]).
pub fn trace_all_mode(
    pairs: crate::seq::PairSeqs<'_>,
    alignments: &[Alignment],
    sc: &Scoring,
    mode: AlignMode,
    path: bool,
) -> Result<Vec<Traceback>> {
    use rayon::prelude::*;
    if alignments.len() != pairs.len() {
        return Err(Error::Internal("traceback: alignments and pairs differ in number".into()));
    }
    (0..pairs.len())
        .into_par_iter()
        .with_min_len(64)
        .map_init(Scratch::default, |scratch, i| {
            let (q, t) = pairs.pair(i);
            let mut tb = trace_mode_with(q, t, sc, &alignments[i], mode, scratch, BLOCK_CELLS)?;
            if !path {
                tb.ops = Vec::new();
            }
            Ok(tb)
        })
        .collect()
}

/// Gap opens of a path given backwards: runs of one gap kind (an 'I' run next to a 'D' run
/// is two gaps).
fn count_gap_opens(ops_backwards: &[Op]) -> u32 {
    let mut opens = 0;
    let mut prev: Option<Op> = None;
    for &op in ops_backwards {
        if matches!(op, Op::Insertion | Op::Deletion) && prev != Some(op) {
            opens += 1;
        }
        prev = Some(op);
    }
    opens
}

fn end_to_end(a: &Alignment, got: i32) -> Error {
    Error::Internal(format!("the rectangle of {a:?} scores {got} end to end, not its score"))
}

/// The statistics [`trace`] gives, in one forward pass without directions: per row the
/// counters (pairs, nident, gap opens) of the path the rule picks into H and into E, and
/// into F down the column, each chosen by the rule's priorities. A gap opened from an H
/// whose path ends in a gap of the same kind continues that run (possible only with a free
/// gap open), so opens count runs, as [`trace`] does. O(m) memory.
pub fn path_stats(query: &[u8], target: &[u8], sc: &Scoring, a: &Alignment) -> Result<PathStats> {
    if a.score <= 0 {
        return Ok(PathStats::default());
    }
    let (q, t) = rectangle(query, target, a)?;
    let (m, n) = (q.len(), t.len());
    let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let idents = sc.identity_codes();
    // pairs, nident, gap opens, kind of the path's last column (0 pair, 1 'D', 2 'I').
    type C = [u32; 4];
    let open = |c: C, kind: u32| -> C { [c[0], c[1], c[2] + (c[3] != kind) as u32, kind] };
    let mut h = vec![NEG; m + 1];
    let mut e = vec![NEG; m + 1];
    let mut hc: Vec<C> = vec![[0; 4]; m + 1];
    let mut ec: Vec<C> = vec![[0; 4]; m + 1];
    h[0] = 0;
    for (j, &tj) in t.iter().enumerate() {
        let (mut diag, mut diag_c) = (if j == 0 { 0 } else { NEG }, [0u32; 4]);
        h[0] = NEG;
        let (mut f, mut f_c) = (NEG, [0u32; 4]);
        let (mut up, mut up_c) = (NEG, [0u32; 4]);
        for i in 1..=m {
            // 'D' state from the left: open from H(i,j-1) on ties.
            let (eo, ee) = (h[i] - oe, e[i] - ext);
            if eo >= ee {
                e[i] = eo;
                ec[i] = open(hc[i], 1);
            } else {
                e[i] = ee;
            }
            // 'I' state from above.
            let (fo, fe) = (up - oe, f - ext);
            if fo >= fe {
                f = fo;
                f_c = open(up_c, 2);
            } else {
                f = fe;
            }
            let d = diag + sc.score(q[i - 1], tj);
            let (hv, c) = if d >= e[i] && d >= f {
                (d, [diag_c[0] + 1, diag_c[1] + (q[i - 1] == tj && tj < idents) as u32, diag_c[2], 0])
            } else if e[i] >= f {
                (e[i], ec[i])
            } else {
                (f, f_c)
            };
            diag = h[i];
            diag_c = hc[i];
            h[i] = hv;
            hc[i] = c;
            up = hv;
            up_c = c;
        }
    }
    if h[m] != a.score {
        return Err(end_to_end(a, h[m]));
    }
    let c = hc[m];
    Ok(PathStats::from_counts(c[0], c[1], c[2], m as u32, n as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scalar::align_pair;
    use crate::scoring::{Alphabet, Matrix};
    use proptest::prelude::*;

    /// The naive oracle: full H/E/F matrices of the rectangle and its own walk by the rule.
    fn naive(q: &[u8], t: &[u8], sc: &Scoring, a: &Alignment) -> Vec<Op> {
        if a.score <= 0 {
            return Vec::new();
        }
        let qs = &q[a.qstart as usize - 1..a.qend as usize];
        let ts = &t[a.tstart as usize - 1..a.tend as usize];
        let (m, n) = (qs.len(), ts.len());
        let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
        let mut hm = vec![vec![NEG; n + 1]; m + 1];
        let mut em = hm.clone();
        let mut fm = hm.clone();
        hm[0][0] = 0;
        for i in 1..=m {
            for j in 1..=n {
                em[i][j] = (hm[i][j - 1] - oe).max(em[i][j - 1] - ext);
                fm[i][j] = (hm[i - 1][j] - oe).max(fm[i - 1][j] - ext);
                hm[i][j] = (hm[i - 1][j - 1] + sc.score(qs[i - 1], ts[j - 1])).max(em[i][j]).max(fm[i][j]);
            }
        }
        assert_eq!(hm[m][n], a.score);
        let (mut i, mut j, mut st) = (m, n, 'H');
        let mut ops = Vec::new();
        while i > 0 || j > 0 {
            match st {
                'H' if i > 0 && j > 0 && hm[i][j] == hm[i - 1][j - 1] + sc.score(qs[i - 1], ts[j - 1]) => {
                    // Identical letters, except DNA's ambiguity codes (all shown as N), which
                    // mismatch everything, themselves included.
                    let (x, y) = (sc.alphabet().letter(qs[i - 1]), sc.alphabet().letter(ts[j - 1]));
                    let ambiguous = sc.alphabet() == Alphabet::Dna && !b"ACGT".contains(&x);
                    ops.push(if x == y && !ambiguous { Op::Match } else { Op::Mismatch });
                    i -= 1;
                    j -= 1;
                }
                'H' => st = if hm[i][j] == em[i][j] { 'E' } else { 'F' },
                'E' => {
                    ops.push(Op::Deletion);
                    if em[i][j] == hm[i][j - 1] - oe {
                        st = 'H';
                    }
                    j -= 1;
                }
                _ => {
                    ops.push(Op::Insertion);
                    if fm[i][j] == hm[i - 1][j] - oe {
                        st = 'H';
                    }
                    i -= 1;
                }
            }
        }
        ops.reverse();
        ops
    }

    fn expand(tb: &Traceback) -> Vec<Op> {
        tb.ops.iter().flat_map(|&(n, op)| std::iter::repeat(op).take(n as usize)).collect()
    }

    fn check(q: &[u8], t: &[u8], sc: &Scoring, block: usize) {
        let a = align_pair(q, t, sc).unwrap();
        let tb = trace_with(q, t, sc, &a, &mut Scratch::default(), block).unwrap();
        let want = naive(q, t, sc, &a);
        assert_eq!(expand(&tb), want, "q {q:?} t {t:?} {a:?}");
        assert_eq!(path_stats(q, t, sc, &a).unwrap(), tb.stats);
        // The path spans the reported coordinates.
        let ops = expand(&tb);
        let qspan = ops.iter().filter(|o| !matches!(o, Op::Deletion)).count() as u32;
        let tspan = ops.iter().filter(|o| !matches!(o, Op::Insertion)).count() as u32;
        if a.score > 0 {
            assert_eq!((qspan, tspan), (a.qend - a.qstart + 1, a.tend - a.tstart + 1));
            assert!(
                matches!(ops[0], Op::Match | Op::Mismatch) && matches!(ops[ops.len() - 1], Op::Match | Op::Mismatch)
            );
        }
        assert_eq!(tb.stats.length as usize, ops.len());
    }

    /// A target and a mutated copy of a window of it (gaps and substitutions).
    fn related(codes: u8) -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (prop::collection::vec(0..codes, 1..80), prop::collection::vec((0u8..10, 0..codes), 0..80)).prop_map(
            move |(t, edits)| {
                let mut q = Vec::new();
                for (k, &c) in t.iter().enumerate() {
                    match edits.get(k).map(|e| e.0) {
                        Some(0) => {}
                        Some(1) => q.extend([c, edits[k].1]),
                        Some(2) => q.push(edits[k].1),
                        _ => q.push(c),
                    }
                }
                (q, t)
            },
        )
    }

    proptest! {
        #[test]
        fn trace_equals_the_naive_walk_protein(pair in related(24), open in 0i32..12, ext in 1i32..3, block in 1usize..300) {
            let sc = Scoring::new(Matrix::protein("BLOSUM62").unwrap(), open, ext).unwrap();
            check(&pair.0, &pair.1, &sc, block);
        }

        #[test]
        fn trace_equals_the_naive_walk_dna(pair in related(5), open in 0i32..6, ext in 1i32..3, block in 1usize..300) {
            let sc = Scoring::new(Matrix::dna(2, -3), open, ext).unwrap();
            check(&pair.0, &pair.1, &sc, block);
        }
    }

    fn enc(s: &str) -> Vec<u8> {
        Alphabet::Protein.encode(s.as_bytes()).unwrap()
    }

    #[test]
    fn hand_checked_gap() {
        // HEAGAWGHEE / PAWHEAE (BLOSUM62 11/1): the best local alignment is HEA/HEA (17), no gap.
        let sc = Scoring::blosum62();
        let (q, t) = (enc("HEAGAWGHEE"), enc("PAWHEAE"));
        let a = align_pair(&q, &t, &sc).unwrap();
        let tb = trace(&q, &t, &sc, &a).unwrap();
        assert_eq!(tb.cigar(), "3=");
        // DNA +2/-3, gap 5/2: AAAAAGGGGG vs AAAAATTGGGGG aligns with one 2-base gap in the query.
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let q = Alphabet::Dna.encode(b"AAAAAGGGGG").unwrap();
        let t = Alphabet::Dna.encode(b"AAAAATTGGGGG").unwrap();
        let a = align_pair(&q, &t, &sc).unwrap();
        let tb = trace(&q, &t, &sc, &a).unwrap();
        assert_eq!(tb.cigar(), "5=2D5=");
        assert_eq!(tb.stats, PathStats { length: 12, nident: 10, mismatch: 0, gapopen: 1, gaps: 2 });
        let (mut qa, mut ta) = (Vec::new(), Vec::new());
        tb.write_aligned(&q, &t, &a, |c| Alphabet::Dna.letter(c), &mut qa, &mut ta);
        assert_eq!((&qa[..], &ta[..]), (&b"AAAAA--GGGGG"[..], &b"AAAAATTGGGGG"[..]));
    }

    // Issue 54, item 2: an ambiguity code scores as a mismatch against itself, so the path
    // columns count it as one (X), under every path rule (local, global, the GPU's ops).
    #[test]
    fn dna_ambiguity_codes_are_mismatches_in_the_path() {
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let q = Alphabet::Dna.encode(b"AAAARRRRAAAA").unwrap();
        let t = Alphabet::Dna.encode(b"AAAAYYYYAAAA").unwrap();
        let a = crate::engine::scalar_modes::align_pair_mode(&q, &t, &sc, AlignMode::Global).unwrap();
        assert_eq!(a.score, 4, "8 matches x 2, 4 mismatches x -3");
        let tb = trace_mode(&q, &t, &sc, &a, AlignMode::Global).unwrap();
        assert_eq!(tb.cigar(), "4=4X4=");
        assert_eq!(tb.stats, PathStats { length: 12, nident: 8, mismatch: 4, gapopen: 0, gaps: 0 });
        assert_eq!(path_stats(&q, &t, &sc, &a).unwrap(), tb.stats);
        // Local: N against N in the middle of a longer match.
        let q = Alphabet::Dna.encode(b"ACGTNACGT").unwrap();
        let a = align_pair(&q, &q, &sc).unwrap();
        assert_eq!(a.score, 13);
        let tb = trace(&q, &q, &sc, &a).unwrap();
        assert_eq!(tb.cigar(), "4=1X4=");
        assert_eq!(tb.stats.nident, 8);
        assert_eq!(path_stats(&q, &q, &sc, &a).unwrap(), tb.stats);
        let ops = [0u8; 9];
        assert_eq!(from_ops(&q, &q, &sc, &a, AlignMode::Local, 9, |k| ops[k]).unwrap(), tb);
        // Protein: X against X stays an identity (letters outside the alphabet read as X).
        let p = enc("WWWXWWW");
        let sc = Scoring::blosum62();
        let a = align_pair(&p, &p, &sc).unwrap();
        assert_eq!(trace(&p, &p, &sc, &a).unwrap().cigar(), "7=");
    }

    // Issue 54, item 9: a mismatch of -1,000,000 does not limit the path rule (a pair adds
    // one substitution score, not one per column); the gap costs across both sequences do,
    // and the message names --gap-extend with the largest value that fits.
    #[test]
    fn the_path_rule_range_follows_the_gaps_and_names_the_option() {
        let sc = Scoring::new(Matrix::dna(2, -1_000_000), 5, 2).unwrap();
        let mut x = 99u64;
        let mut dna = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 4) as u8
                })
                .collect()
        };
        let (q, t) = (dna(400), dna(380));
        let a = crate::engine::scalar_modes::align_pair_mode(&q, &t, &sc, AlignMode::Global).unwrap();
        let tb = trace_mode(&q, &t, &sc, &a, AlignMode::Global).unwrap();
        assert_eq!(tb.stats.mismatch, 0, "no mismatch is worth a million");
        // The whole of both sequences: every pair takes one residue of each, a gap one.
        let pairs = (tb.stats.length - tb.stats.gaps) as usize;
        assert_eq!(2 * pairs + tb.stats.gaps as usize, q.len() + t.len());
        // 150,000 x 150,000 residues at extend 1000 leave the range; the largest extend that
        // fits, worked out from the bound.
        let sc = Scoring::new(Matrix::dna(2, -1_000_000), 5, 1000).unwrap();
        let long = vec![0u8; 150_000];
        let a = Alignment {
            score: 0,
            qstart: 1,
            qend: 150_000,
            tstart: 1,
            tend: 150_000,
            recomputed: false,
            internal: false,
        };
        let e = trace_mode(&long, &long, &sc, &a, AlignMode::Global).unwrap_err().to_string();
        let limit = -(NEG as i64) / 2;
        let largest = (limit - 1 - 15 - 2_000_000) / 300_002;
        assert!(15 + 300_002 * largest + 2_000_000 < limit && 15 + 300_002 * (largest + 1) + 2_000_000 >= limit);
        assert!(e.contains(&format!("--gap-extend can be at most {largest} (got 1000)")), "{e}");
    }

    #[test]
    fn ties_take_the_query_gap_first_walking_back() {
        // A gap in the query and one in the target cost the same: the 'D' state (target
        // residue against a gap) wins over 'I' walking back.
        let q = Alphabet::Dna.encode(b"AAAACAAAA").unwrap();
        let t = Alphabet::Dna.encode(b"AAAAGAAAA").unwrap();
        let sc = Scoring::new(Matrix::dna(2, -9), 1, 1).unwrap();
        let a = align_pair(&q, &t, &sc).unwrap();
        let tb = trace(&q, &t, &sc, &a).unwrap();
        // C/G mismatch costs 9; a D and an I cost 2 + 2 = 4 < 9: 4= then 1D1I or 1I1D.
        assert_eq!(tb.cigar(), "4=1I1D4=", "walking back, 'D' is taken first, so it comes last");
        assert_eq!(tb.stats.gapopen, 2);
    }

    #[test]
    fn long_pairs_are_traced_in_blocks_within_bounded_memory() {
        let mut x = 12345u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let t: Vec<u8> = (0..3000).map(|_| rnd(20) as u8).collect();
        let mut q = Vec::new();
        for &c in &t {
            match rnd(30) {
                0 => {}
                1..=4 => q.push(rnd(20) as u8),
                _ => q.push(c),
            }
        }
        let sc = Scoring::blosum62();
        let a = align_pair(&q, &t, &sc).unwrap();
        let whole = trace_with(&q, &t, &sc, &a, &mut Scratch::default(), usize::MAX).unwrap();
        let mut s = Scratch::default();
        let blocked = trace_with(&q, &t, &sc, &a, &mut s, 200_000).unwrap();
        assert_eq!(blocked, whole);
        assert!(s.dirs.capacity() <= 200_000 + q.len(), "one block of directions at a time");
        assert_eq!(path_stats(&q, &t, &sc, &a).unwrap(), whole.stats);
        assert_eq!(expand(&whole), naive(&q, &t, &sc, &a));
    }
}

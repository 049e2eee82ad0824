//! Align: each pair scored striped for its end cell, at 8 bits until the best score comes
//! near their limit and on at 16 bits from that column, then the reversed prefixes up to
//! that end for the start cell, at the narrowest width that holds the known score; threads
//! take pairs, each thread reusing its profiles and column buffers. A long pair whose
//! score passes 16 bits is aligned at 32 bits by the wavefront on every thread, after the
//! others (`wavefront`); a short one by the scalar reference on its own thread.
//!
//! Why a forward local pass over the reversed prefixes finds the reference's start: every
//! local alignment inside the prefixes that scores the best score S ends at the end cell
//! (an earlier end would have been chosen by the tie rule), so the cells reaching S are
//! exactly those of the reference's anchored reverse pass, and "first column, then
//! smallest row" is the same rule on both. No cell there scores above S, so a width that
//! holds S exactly holds the whole start pass.

use super::intersequence::fits;
use super::striped::{run as run_pass, widen, Best, Columns, Pass, Profile, Span, Tables};
use super::vector::Vector;
use super::AlignKernels;
use crate::engine::scalar::{self, ScoreEnd};
use crate::engine::{wavefront, Alignment, Level};
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use rayon::prelude::*;

/// The profile tables of both widths, built once per call.
pub(super) struct AlignTables<N, W> {
    narrow: Tables<N>,
    wide: Tables<W>,
}

/// One thread's profiles and column buffers, reused pair after pair.
pub(super) struct AlignScratch<N, W> {
    narrow_prof: Profile<N>,
    narrow_cols: Columns<N>,
    wide_prof: Profile<W>,
    wide_cols: Columns<W>,
    rows: Vec<u32>,
}

impl<N, W> Default for AlignScratch<N, W> {
    fn default() -> Self {
        AlignScratch {
            narrow_prof: Profile::default(),
            narrow_cols: Columns::default(),
            wide_prof: Profile::default(),
            wide_cols: Columns::default(),
            rows: Vec::new(),
        }
    }
}

/// What the vector passes made of one pair.
pub(super) enum PairResult {
    Aligned(Alignment),
    /// Even 16 bits may have saturated: the scalar reference aligns it.
    Saturated,
    /// The start pass disagreed with the end pass (a bug, reported as such).
    Mismatch {
        forward: i32,
        reverse: Option<i32>,
    },
}

/// What one pair's passes compute: the end cell, the end and start cells, or the start
/// of an end an earlier call found.
#[derive(Debug, Clone, Copy)]
pub(super) enum Job {
    End,
    EndStart,
    StartFrom(ScoreEnd),
}

impl Job {
    fn of(level: Level) -> Job {
        match level {
            Level::ScoreEnd => Job::End,
            Level::Coordinates => Job::EndStart,
        }
    }
}

/// Each pair at `level` ([`Job::End`] or [`Job::EndStart`]).
pub(super) fn align<K: AlignKernels>(sc: &Scoring, pairs: &[(&[u8], &[u8])], level: Level) -> Result<Vec<Alignment>> {
    run::<K>(sc, pairs, |_| Job::of(level))
}

/// The starts of alignments whose score and end `ends` hold ([`Job::StartFrom`]).
pub(super) fn starts<K: AlignKernels>(
    sc: &Scoring,
    pairs: &[(&[u8], &[u8])],
    ends: &[Alignment],
) -> Result<Vec<Alignment>> {
    if ends.len() != pairs.len() {
        return Err(Error::Internal(format!("{} ends for {} pairs", ends.len(), pairs.len())));
    }
    run::<K>(sc, pairs, |i| Job::StartFrom(ScoreEnd { score: ends[i].score, qend: ends[i].qend, tend: ends[i].tend }))
}

fn run<K: AlignKernels>(
    sc: &Scoring,
    pairs: &[(&[u8], &[u8])],
    job: impl Fn(usize) -> Job + Sync,
) -> Result<Vec<Alignment>> {
    if !fits(sc) {
        return pairs.par_iter().enumerate().map(|(i, (q, t))| fallback(q, t, sc, job(i), 1)).collect();
    }
    // Safe: the engine checked at construction that this CPU runs K's instruction set.
    let tabs = unsafe { AlignTables { narrow: Tables::<K::Narrow>::new(sc), wide: Tables::<K::Wide>::new(sc) } };
    let threads = rayon::current_num_threads();
    // `None`: a long pair past 16 bits, left for the wavefront on every thread.
    let results: Vec<Option<Result<Alignment>>> = pairs
        .par_iter()
        .enumerate()
        .map_init(AlignScratch::<K::Narrow, K::Wide>::default, |scratch, (i, (q, t))| {
            match unsafe { K::align_pair(&tabs, q, t, job(i), scratch) } {
                PairResult::Aligned(a) => Some(Ok(a)),
                PairResult::Saturated if threads > 1 && q.len() * t.len() >= wavefront::MIN_CELLS => None,
                PairResult::Saturated => Some(fallback(q, t, sc, job(i), 1)),
                PairResult::Mismatch { forward, reverse } => {
                    Some(Err(Error::Internal(format!("reverse pass scored {:?}, forward pass {}", reverse, forward))))
                }
            }
        })
        .collect();
    results
        .into_iter()
        .zip(pairs)
        .enumerate()
        .map(|(i, (r, (q, t)))| r.unwrap_or_else(|| fallback(q, t, sc, job(i), threads)))
        .collect()
}

/// A pair the vector passes cannot hold, at 32 bits: the wavefront on `threads` threads
/// for a long pair, else the scalar reference.
fn fallback(q: &[u8], t: &[u8], sc: &Scoring, job: Job, threads: usize) -> Result<Alignment> {
    let long = threads > 1 && q.len() * t.len() >= wavefront::MIN_CELLS;
    match job {
        Job::StartFrom(end) if !long => scalar::start_of(q, t, sc, &Alignment::from_end(end)),
        _ => {
            let full = if long { wavefront::align_pair(q, t, sc, threads)? } else { scalar::align_pair(q, t, sc)? };
            match job {
                Job::End => Ok(full.end_only()),
                Job::EndStart => Ok(full),
                Job::StartFrom(end) => {
                    crate::engine::check_same_ends(&[Alignment::from_end(end)], &[full])?;
                    Ok(full)
                }
            }
        }
    }
}

/// One pair through the vector passes. Unsafe: the CPU must run N's and W's instructions.
#[inline(always)]
pub(super) unsafe fn align_pair<N: Vector, W: Vector>(
    tabs: &AlignTables<N, W>,
    q: &[u8],
    t: &[u8],
    job: Job,
    scratch: &mut AlignScratch<N, W>,
) -> PairResult {
    if q.is_empty() || t.is_empty() {
        return PairResult::Aligned(Alignment::default());
    }
    let end = match job {
        Job::StartFrom(end) => end,
        Job::End | Job::EndStart => match end_cell(tabs, q, t, scratch) {
            Some(end) => end,
            None => return PairResult::Saturated,
        },
    };
    if end.score == 0 {
        return PairResult::Aligned(Alignment::default());
    }
    if let Job::End = job {
        return PairResult::Aligned(Alignment::from_end(end));
    }
    let (qe, te) = (end.qend as usize, end.tend as usize);
    let score = end.score as u32;
    let s = scratch;
    let mut best = Best::default();
    // No cell of the start pass passes the score, so below a width's `widen_at` it never
    // widens (and its wrapping score add never wraps).
    let start_span = Span { target: &t[..te], rev: true, from: 0, stop_at: score, widen_at: 0 };
    let start = if score < tabs.narrow.widen_at() {
        s.narrow_prof.build(&tabs.narrow, &q[..qe], true);
        s.narrow_cols.reset(&tabs.narrow, s.narrow_prof.segs);
        let span = Span { widen_at: tabs.narrow.widen_at(), ..start_span };
        match run_pass(&s.narrow_prof, &tabs.narrow, span, &mut best, &mut s.narrow_cols) {
            Pass::Done => s.narrow_cols.end(&tabs.narrow, &s.narrow_prof, &best),
            _ => None,
        }
    } else if score < tabs.wide.widen_at() {
        s.wide_prof.build(&tabs.wide, &q[..qe], true);
        s.wide_cols.reset(&tabs.wide, s.wide_prof.segs);
        let span = Span { widen_at: tabs.wide.widen_at(), ..start_span };
        match run_pass(&s.wide_prof, &tabs.wide, span, &mut best, &mut s.wide_cols) {
            Pass::Done => s.wide_cols.end(&tabs.wide, &s.wide_prof, &best),
            _ => None,
        }
    } else {
        return PairResult::Saturated;
    };
    match start {
        Some(st) if st.score == end.score => PairResult::Aligned(coordinates(end, st)),
        other => PairResult::Mismatch { forward: end.score, reverse: other.map(|s| s.score) },
    }
}

/// The end cell: 8-bit lanes until the best score comes near saturating them, then on at
/// 16 bits from that column; `None` when 16 bits may have saturated.
#[inline(always)]
unsafe fn end_cell<N: Vector, W: Vector>(
    tabs: &AlignTables<N, W>,
    q: &[u8],
    t: &[u8],
    s: &mut AlignScratch<N, W>,
) -> Option<ScoreEnd> {
    let mut best = Best::default();
    let widen_at = tabs.narrow.widen_at();
    let span = Span { target: t, rev: false, from: 0, stop_at: u32::MAX, widen_at };
    let narrow = if widen_at == 0 {
        Pass::Saturated
    } else {
        s.narrow_prof.build(&tabs.narrow, q, false);
        s.narrow_cols.reset(&tabs.narrow, s.narrow_prof.segs);
        run_pass(&s.narrow_prof, &tabs.narrow, span, &mut best, &mut s.narrow_cols)
    };
    let from = match narrow {
        Pass::Done => return s.narrow_cols.end(&tabs.narrow, &s.narrow_prof, &best),
        Pass::Widen { col } => {
            s.wide_prof.build(&tabs.wide, q, false);
            widen(
                &tabs.narrow,
                &s.narrow_prof,
                &s.narrow_cols,
                &mut best,
                &tabs.wide,
                &s.wide_prof,
                &mut s.wide_cols,
                &mut s.rows,
            )?;
            col
        }
        // 8-bit lanes that cannot hold one column (huge scores or gap costs): the 16-bit
        // pass starts afresh.
        Pass::Saturated => {
            best = Best::default();
            s.wide_prof.build(&tabs.wide, q, false);
            s.wide_cols.reset(&tabs.wide, s.wide_prof.segs);
            0
        }
    };
    // Past the 16-bit `widen_at` (Pass::Widen here) the scalar reference takes over.
    match run_pass(
        &s.wide_prof,
        &tabs.wide,
        Span { from, widen_at: tabs.wide.widen_at(), ..span },
        &mut best,
        &mut s.wide_cols,
    ) {
        Pass::Done => s.wide_cols.end(&tabs.wide, &s.wide_prof, &best),
        _ => None,
    }
}

/// The alignment from the end pass and the start pass's end cell in reversed coordinates.
fn coordinates(end: ScoreEnd, start: ScoreEnd) -> Alignment {
    Alignment {
        score: end.score,
        qstart: end.qend + 1 - start.qend,
        qend: end.qend,
        tstart: end.tend + 1 - start.tend,
        tend: end.tend,
        recomputed: crate::engine::recomputed(end.score),
        internal: false,
    }
}

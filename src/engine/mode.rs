//! Alignment modes (issue 42): local (Smith-Waterman, the default), global (Needleman-Wunsch
//! with affine gaps) and semi-global (chosen ends of either sequence may stay unaligned at no
//! cost). The scalar reference of the non-local modes is [`super::scalar_modes`]; its path is
//! [`super::traceback::trace_mode`].
//!
//! # The dynamic programme of the non-local modes
//! Query residues are the rows i = 1..=m, target residues the columns j = 1..=n; a gap of
//! length k costs open + k * extend, as everywhere in swarrow. No floor at 0 (scores can go
//! far below zero; the reference computes at 64 bits and reports 32). Borders:
//! - H(0,0) = 0;
//! - column 0, H(i,0): 0 when the query start is free (the query's first i residues stay
//!   unaligned), else a gap in the target, -(open + i * extend);
//! - row 0, H(0,j): 0 when the target start is free, else a gap in the query,
//!   -(open + j * extend);
//! - inside, Gotoh's recurrences of [`super::traceback`] (E: target residue against a gap,
//!   'D'; F: query residue against a gap, 'I').
//!
//! # Tie rule, one per mode (identical on every engine)
//! **End cell.**
//! - `global`: the corner (m, n): the whole query against the whole target.
//! - `semi-global`: the best cell among (m, n) and, when the query end is free, the cells
//!   (i, n) of the last column, i >= 1, and, when the target end is free, the cells (m, j) of
//!   the last row, j >= 1 (as parasail: cells of row 0 or column 0 never end an alignment).
//!   Ties as in local mode: the smallest target end, then the smallest query end.
//!
//! **Start cell.** Found as in local mode, by a reverse pass anchored at the end cell
//! (qe, te): the reversed prefixes q[qe..1] and t[te..1] aligned from that cell, every gap
//! costing (the borders of a global alignment), ending anywhere this mode lets a path
//! begin: with a free query start any cell of the reversed last column, row 0 included
//! (the query's first residues unaligned), with a free target start any cell of the
//! reversed last row, column 0 included ([`AlignMode::reverse_pass`] is that pass's
//! mode; the two border cells, a gap of a whole prefix, are added by [`with_start`]). Its
//! best cell by the end rule on the reversed sequences (smallest reversed target end, then
//! smallest reversed query end: the largest target start, then the largest query start)
//! scores the forward score and gives the start. Without a free start the reverse pass has
//! one cell to end in, so both starts are residue 1.
//!
//! **Path.** The rectangle from the start to the end, aligned end to end with leading gaps
//! allowed, by [`super::traceback`]'s path rule ([`super::traceback::trace_mode`]).
//!
//! # The overlap mode (issue 57)
//! Read overlaps: `overlap` with a clipping penalty P >= 0 is an exact composition of two
//! modes every engine has. For each pair, S is its semi-global alignment with all four ends
//! free ([`OVERLAP_SEMI_GLOBAL`]: it starts on the first row or column and ends on the last
//! row or column, a dovetail or a containment) and L its local alignment; the result is S
//! when score(S) + P >= score(L) (a tie goes to S), else L, marked
//! [`Alignment::internal`] (an internal match: a repeat, or a candidate that shares less
//! than its ends). Since S is one of the local alignments, score(L) >= score(S), so this is
//! the optimum over all local alignments of the score plus P for an alignment that reaches
//! a start border and an end border (a bonus for reaching the ends, BWA-MEM's `-L` taken
//! once for both ends): max(score(S) + P, score(L)); with P >= 0 an internal match never
//! reaches both borders. Each pair's tie rules, start and path are those of its chosen
//! mode ([`AlignMode::of`]); [`overlap_choice`] is the one rule every engine applies.
//!
//! # Coordinates
//! 1-based and inclusive; global: the whole sequences. A sequence of which the alignment
//! holds no residue (all its residues are in free ends: the path only runs through gaps of
//! it) has start and end 0. Unlike local mode, score 0 or below is an alignment.
//!
//! # Empty sequences
//! With an empty query (or target) no cell has both i >= 1 and j >= 1: the alignment is the
//! other sequence against one gap, -(open + k * extend) for its k residues, or nothing at
//! score 0 when that sequence has a free end (start or end); both empty: score 0. Nothing
//! aligned means coordinates 0.

use super::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use crate::seq::Reach;
use std::fmt;

/// The ends of each sequence that a semi-global alignment may leave unaligned at no cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FreeEnds {
    pub query_start: bool,
    pub query_end: bool,
    pub target_start: bool,
    pub target_end: bool,
}

/// The names of `--free-ends`, in order.
pub const FREE_END_NAMES: [&str; 4] = ["query-start", "query-end", "target-start", "target-end"];

impl FreeEnds {
    pub const ALL: FreeEnds = FreeEnds { query_start: true, query_end: true, target_start: true, target_end: true };
    pub const NONE: FreeEnds =
        FreeEnds { query_start: false, query_end: false, target_start: false, target_end: false };

    /// From a comma list of [`FREE_END_NAMES`] (`--free-ends`), e.g.
    /// `target-start,target-end`. Each name at most once; at least one.
    pub fn parse(list: &str) -> Result<FreeEnds> {
        let mut ends = FreeEnds::NONE;
        for name in list.split(',').map(str::trim) {
            let flag = match name {
                "query-start" => &mut ends.query_start,
                "query-end" => &mut ends.query_end,
                "target-start" => &mut ends.target_start,
                "target-end" => &mut ends.target_end,
                "" => {
                    return Err(Error::usage(format!(
                        "--free-ends {list:?}: an empty name; give a comma list of {}",
                        FREE_END_NAMES.join(", ")
                    )))
                }
                other => {
                    return Err(Error::usage(format!(
                        "--free-ends: unknown end {other:?}; the ends are {}",
                        FREE_END_NAMES.join(", ")
                    )))
                }
            };
            if *flag {
                return Err(Error::usage(format!("--free-ends: {name} is named twice")));
            }
            *flag = true;
        }
        Ok(ends)
    }

    /// The four flags in [`FREE_END_NAMES`] order.
    pub fn flags(self) -> [bool; 4] {
        [self.query_start, self.query_end, self.target_start, self.target_end]
    }

    /// From the four flags in [`FREE_END_NAMES`] order.
    pub fn from_flags(f: [bool; 4]) -> FreeEnds {
        FreeEnds { query_start: f[0], query_end: f[1], target_start: f[2], target_end: f[3] }
    }

    /// Any end free.
    pub fn any(self) -> bool {
        self.flags().iter().any(|&f| f)
    }
}

impl Default for FreeEnds {
    /// All four: `--mode semi-global` without `--free-ends` ("overlap" alignment).
    fn default() -> FreeEnds {
        FreeEnds::ALL
    }
}

impl fmt::Display for FreeEnds {
    /// The `--free-ends` list (`none` for no end).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = FREE_END_NAMES.iter().zip(self.flags()).filter(|(_, on)| *on).map(|(n, _)| *n).collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// How a pair is aligned. See the module documentation for each mode's definition and tie
/// rule; local mode's is in [`super`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AlignMode {
    /// Smith-Waterman: the best-scoring pair of substrings (the default).
    #[default]
    Local,
    /// Needleman-Wunsch with affine gaps: the whole query against the whole target.
    Global,
    /// The ends named free may stay unaligned at no cost; the others are aligned.
    SemiGlobal(FreeEnds),
    /// Read overlaps (issue 57), with its clipping penalty P: of the pair's semi-global
    /// alignment with all four ends free (a dovetail or a containment) and its local
    /// alignment, the semi-global one when its score + P >= the local score, else the local
    /// one (an internal match, [`Alignment::internal`]). See "The overlap mode" above.
    Overlap(u32),
}

/// The names of `--mode`.
pub const MODE_NAMES: [&str; 4] = ["local", "global", "semi-global", "overlap"];

/// The overlap mode's clipping penalty when `--clip-penalty` is not given (BENCHMARKS.md,
/// issue 57: the assemblies of clean and noisy reads at several penalties).
pub const DEFAULT_CLIP_PENALTY: u32 = 20;

/// The semi-global mode of the overlap mode's first alignment: all four ends free.
pub const OVERLAP_SEMI_GLOBAL: AlignMode = AlignMode::SemiGlobal(FreeEnds::ALL);

impl AlignMode {
    /// From `--mode` and `--free-ends` (the latter only with `semi-global`; all four ends
    /// when absent).
    pub fn parse(mode: &str, free_ends: Option<&str>) -> Result<AlignMode> {
        let m = match mode {
            "local" => AlignMode::Local,
            "global" => AlignMode::Global,
            "semi-global" => AlignMode::SemiGlobal(FreeEnds::ALL),
            "overlap" => AlignMode::Overlap(DEFAULT_CLIP_PENALTY),
            other => {
                return Err(Error::usage(format!(
                    "--mode: unknown mode {other:?}; the modes are {}",
                    MODE_NAMES.join(", ")
                )))
            }
        };
        match (m, free_ends) {
            (AlignMode::SemiGlobal(_), Some(list)) => Ok(AlignMode::SemiGlobal(FreeEnds::parse(list)?)),
            (_, Some(_)) => Err(Error::usage(format!(
                "--free-ends applies to --mode semi-global only (the mode is {mode}: {})",
                match m {
                    AlignMode::Local => "local alignments have every end free",
                    AlignMode::Overlap(_) => "overlaps have all four ends free",
                    _ => "no end is free",
                }
            ))),
            (m, None) => Ok(m),
        }
    }

    /// This mode with `--clip-penalty` (the overlap mode only; `None`: as it is).
    pub fn with_clip_penalty(self, penalty: Option<u32>) -> Result<AlignMode> {
        match (self, penalty) {
            (_, None) => Ok(self),
            (AlignMode::Overlap(_), Some(p)) => Ok(AlignMode::Overlap(p)),
            (m, Some(_)) => {
                Err(Error::usage(format!("--clip-penalty applies to --mode overlap only (the mode is {m})")))
            }
        }
    }

    pub fn is_local(self) -> bool {
        self == AlignMode::Local
    }

    /// The sides where a candidate's windows run along its diagonal to the sequences'
    /// borders before the margin (`seq::windows`): each side with a free end in the
    /// semi-global and overlap modes, so that no free end is taken at a window edge that is
    /// no border of the sequences. Local and global modes align the regions widened by the
    /// margin (a local alignment has no end to reach; a global one aligns the windows).
    pub fn window_reach(self) -> Reach {
        match self {
            AlignMode::SemiGlobal(_) | AlignMode::Overlap(_) => {
                let f = self.free_ends();
                Reach { start: f.query_start || f.target_start, end: f.query_end || f.target_end }
            }
            AlignMode::Local | AlignMode::Global => Reach::default(),
        }
    }

    /// The mode whose dynamic programme gave `a`, an alignment in this mode: in the overlap
    /// mode the local one for an internal match, else the semi-global one; every other mode
    /// is itself.
    pub fn of(self, a: &Alignment) -> AlignMode {
        match self {
            AlignMode::Overlap(_) if a.internal => AlignMode::Local,
            AlignMode::Overlap(_) => OVERLAP_SEMI_GLOBAL,
            m => m,
        }
    }

    /// What the mode maximises for `a`, one of its alignments: the score, plus the overlap
    /// mode's clipping penalty for an alignment that is no internal match (what `--strand
    /// both` compares).
    pub fn objective(self, a: &Alignment) -> i64 {
        match self {
            AlignMode::Overlap(p) if !a.internal => a.score as i64 + p as i64,
            _ => a.score as i64,
        }
    }

    /// The ends left free at no cost: none for global, all for local (whose restarts at 0
    /// free more than the ends).
    pub fn free_ends(self) -> FreeEnds {
        match self {
            AlignMode::Local => FreeEnds::ALL,
            AlignMode::Global => FreeEnds::NONE,
            AlignMode::SemiGlobal(f) => f,
            AlignMode::Overlap(_) => FreeEnds::ALL,
        }
    }

    /// The `recomputed` output column in this mode, one rule for every engine, decided from
    /// the final score: it lies outside the 16-bit range (local scores are never negative, so
    /// this is [`super::recomputed`] there).
    pub fn recomputed(self, score: i32) -> bool {
        match self {
            AlignMode::Local => super::recomputed(score),
            _ => score > i16::MAX as i32 || score < i16::MIN as i32,
        }
    }
}

/// The overlap mode's alignment of a pair from its two alignments at the same level, `semi`
/// in [`OVERLAP_SEMI_GLOBAL`] and `local`: `semi` when its score + `clip_penalty` >= the
/// local score (a tie goes to the semi-global alignment), else `local`, marked internal.
pub fn overlap_choice(semi: Alignment, local: Alignment, clip_penalty: u32) -> Alignment {
    if semi.score as i64 + clip_penalty as i64 >= local.score as i64 {
        Alignment { internal: false, ..semi }
    } else {
        Alignment { internal: true, ..local }
    }
}

impl AlignMode {
    /// The mode of the reverse pass that finds starts (module documentation, "Start
    /// cell"): this mode's free starts as its free ends, no free start. `None` without a
    /// free start (then both starts are residue 1) and in local and overlap modes (whose
    /// engines run each alignment's own mode).
    pub fn reverse_pass(self) -> Option<AlignMode> {
        let f = self.free_ends();
        if matches!(self, AlignMode::Local | AlignMode::Overlap(_)) || !(f.query_start || f.target_start) {
            return None;
        }
        Some(AlignMode::SemiGlobal(FreeEnds {
            query_start: false,
            query_end: f.query_start,
            target_start: false,
            target_end: f.target_start,
        }))
    }

    /// Whether the start of `end` (score and end cell from the forward pass) can leave a
    /// side without residues, which zeroes that side's end too: only when the reverse pass's
    /// border cell, a gap of the other prefix, attains the score. Score and end then need
    /// the reverse pass as well.
    pub fn may_empty_a_side(self, end: &Alignment, sc: &Scoring) -> bool {
        let f = self.free_ends();
        let gap = |k: u32| -(sc.gap_open as i64 + k as i64 * sc.gap_extend as i64);
        !self.is_local()
            && ((f.query_start && end.score as i64 == gap(end.tend))
                || (f.target_start && end.score as i64 == gap(end.qend)))
    }
}

/// The alignment of `end` (score, and the end cell as `qend`, `tend`, both >= 1) with its
/// start, from `rev`: the best cell (as `qend`, `tend`) and score of the reverse pass over
/// the reversed prefixes in [`AlignMode::reverse_pass`], or `None` without a free start.
/// Adds the pass's two border cells, picks by the end rule (highest score, smallest
/// reversed target end, smallest reversed query end) and maps back: a side with no
/// residue gets start = end = 0.
pub fn with_start(end: &Alignment, rev: Option<&Alignment>, sc: &Scoring, mode: AlignMode) -> Result<Alignment> {
    let (qe, te) = (end.qend, end.tend);
    let Some(rev) = rev else {
        return Ok(Alignment { qstart: 1, tstart: 1, ..*end });
    };
    let f = mode.free_ends();
    let gap = |k: u32| -(sc.gap_open as i64 + k as i64 * sc.gap_extend as i64);
    // (score, reversed target end, reversed query end), ordered by the end rule.
    let mut best = (rev.score as i64, rev.tend, rev.qend);
    let mut consider = |c: (i64, u32, u32)| {
        if c.0 > best.0 || (c.0 == best.0 && (c.1, c.2) < (best.1, best.2)) {
            best = c;
        }
    };
    if f.target_start {
        consider((gap(qe), 0, qe)); // the reversed last row's column 0: no target residue
    }
    if f.query_start {
        consider((gap(te), te, 0)); // the reversed last column's row 0: no query residue
    }
    let (score, rt, rq) = best;
    if score != end.score as i64 || rt > te || rq > qe {
        return Err(Error::Internal(format!(
            "{mode}: the reverse pass from the end cell ({qe}, {te}) found {score} at ({rq}, {rt}), the forward \
             pass {}",
            end.score
        )));
    }
    let side = |k: u32, e: u32| if k == 0 { (0, 0) } else { (e - k + 1, e) };
    let ((qstart, qend), (tstart, tend)) = (side(rq, qe), side(rt, te));
    Ok(Alignment { qstart, qend, tstart, tend, ..*end })
}

/// What every engine of the global and semi-global modes answers to `search`.
pub fn search_refused(mode: AlignMode) -> Error {
    Error::usage(format!("search aligns locally; {mode} alignment is for align"))
}

impl fmt::Display for AlignMode {
    /// `local`, `global`, `semi-global` (all four ends free) or
    /// `semi-global (free ends: query-start,target-end)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignMode::Local => f.write_str("local"),
            AlignMode::Global => f.write_str("global"),
            AlignMode::SemiGlobal(ends) if *ends == FreeEnds::ALL => f.write_str("semi-global"),
            AlignMode::SemiGlobal(ends) => write!(f, "semi-global (free ends: {ends})"),
            AlignMode::Overlap(p) => write!(f, "overlap (clip penalty {p})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_modes_and_free_ends() {
        assert_eq!(AlignMode::parse("local", None).unwrap(), AlignMode::Local);
        assert_eq!(AlignMode::parse("global", None).unwrap(), AlignMode::Global);
        assert_eq!(AlignMode::parse("semi-global", None).unwrap(), AlignMode::SemiGlobal(FreeEnds::ALL));
        let m = AlignMode::parse("semi-global", Some("target-start,target-end")).unwrap();
        assert_eq!(
            m,
            AlignMode::SemiGlobal(FreeEnds {
                query_start: false,
                query_end: false,
                target_start: true,
                target_end: true
            })
        );
        assert_eq!(m.to_string(), "semi-global (free ends: target-start,target-end)");
        assert_eq!(AlignMode::parse("semi-global", Some("query-end")).unwrap().free_ends().to_string(), "query-end");
        assert_eq!(AlignMode::SemiGlobal(FreeEnds::ALL).to_string(), "semi-global");
        assert_eq!(AlignMode::Global.to_string(), "global");
        assert_eq!(AlignMode::default(), AlignMode::Local);
        for flags in 0..16u8 {
            let f = FreeEnds::from_flags([flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0]);
            if f.any() {
                assert_eq!(FreeEnds::parse(&f.to_string()).unwrap(), f);
            }
        }
    }

    #[test]
    fn bad_modes_and_ends_are_usage_errors() {
        let msg = |r: Result<AlignMode>| match r {
            Err(Error::Input(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        };
        assert!(msg(AlignMode::parse("glocal", None)).contains("unknown mode \"glocal\""));
        assert!(msg(AlignMode::parse("global", Some("query-end"))).contains("semi-global only"));
        assert!(msg(AlignMode::parse("local", Some("query-end"))).contains("semi-global only"));
        assert!(msg(AlignMode::parse("semi-global", Some("query-begin"))).contains("unknown end \"query-begin\""));
        assert!(msg(AlignMode::parse("semi-global", Some("query-end,query-end"))).contains("named twice"));
        assert!(msg(AlignMode::parse("semi-global", Some(""))).contains("empty name"));
        assert!(msg(AlignMode::parse("semi-global", Some("query-end,"))).contains("empty name"));
    }

    #[test]
    fn the_overlap_mode_parses_and_refuses_what_it_has_not() {
        let m = AlignMode::parse("overlap", None).unwrap();
        assert_eq!(m, AlignMode::Overlap(DEFAULT_CLIP_PENALTY));
        assert_eq!(m.with_clip_penalty(Some(7)).unwrap(), AlignMode::Overlap(7));
        assert_eq!(m.with_clip_penalty(None).unwrap(), m);
        assert_eq!(AlignMode::Overlap(7).to_string(), "overlap (clip penalty 7)");
        assert_eq!(m.free_ends(), FreeEnds::ALL);
        assert!(!m.is_local() && m.reverse_pass().is_none());
        let usage = |r: Result<AlignMode>| matches!(r, Err(Error::Input(_)));
        assert!(usage(AlignMode::parse("overlap", Some("query-end"))));
        assert!(usage(AlignMode::Local.with_clip_penalty(Some(3))));
        assert!(usage(OVERLAP_SEMI_GLOBAL.with_clip_penalty(Some(3))));
        // Reach along the diagonal where an end is free, in the modes that free ends.
        assert_eq!(m.window_reach(), Reach { start: true, end: true });
        assert_eq!(AlignMode::Local.window_reach(), Reach::default());
        assert_eq!(AlignMode::Global.window_reach(), Reach::default());
        let glocal = AlignMode::parse("semi-global", Some("target-end")).unwrap();
        assert_eq!(glocal.window_reach(), Reach { start: false, end: true });
        // The choice: a tie goes to the semi-global alignment; the objective adds P to it.
        let al = |score: i32| Alignment { score, qend: 1, tend: 1, ..Alignment::default() };
        assert!(!overlap_choice(al(10), al(30), 20).internal);
        let l = overlap_choice(al(10), al(31), 20);
        assert!(l.internal && l.score == 31);
        assert_eq!(AlignMode::Overlap(20).objective(&overlap_choice(al(10), al(30), 20)), 30);
        assert_eq!(AlignMode::Overlap(20).objective(&l), 31);
        assert_eq!(AlignMode::Overlap(20).of(&l), AlignMode::Local);
        assert_eq!(AlignMode::Overlap(20).of(&al(3)), OVERLAP_SEMI_GLOBAL);
    }

    #[test]
    fn recomputed_leaves_the_16_bit_range_either_way() {
        assert!(!AlignMode::Global.recomputed(-32768));
        assert!(AlignMode::Global.recomputed(-32769));
        assert!(AlignMode::Global.recomputed(32768));
        assert!(!AlignMode::Local.recomputed(32767));
    }
}

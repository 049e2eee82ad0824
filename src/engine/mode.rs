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
//! **Path and start cell.** The path is the walk of [`super::traceback`]'s path rule (a cell
//! takes the diagonal when that attains its value, else the 'D' state, else the 'I' state; a
//! gap state goes back to H when opening there attains its value, else it extends) applied
//! backwards from the end cell over the whole matrix above, borders included. It stops at
//! the first free start cell it reaches: (0, 0); (i, 0) when the query start is free; (0, j)
//! when the target start is free. On a border that is not free the walk continues along it
//! to (0, 0) (leading gaps, which cost). The start is the cell after the one the walk stops
//! at: query start i0 + 1, target start j0 + 1 for a stop at (i0, j0). So in `global`, and
//! whenever a start is not free, that start is residue 1.
//!
//! The walk is the same as [`super::traceback::trace_mode`] tracing the rectangle from the
//! start to the end with leading gaps allowed: engines report start and end, and the path
//! follows. (An engine can find the start without the walk by carrying, forward, the start
//! of the path the rule picks into each state: [`super::scalar_modes`] does.)
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

use crate::error::{Error, Result};
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
}

/// The names of `--mode`.
pub const MODE_NAMES: [&str; 3] = ["local", "global", "semi-global"];

impl AlignMode {
    /// From `--mode` and `--free-ends` (the latter only with `semi-global`; all four ends
    /// when absent).
    pub fn parse(mode: &str, free_ends: Option<&str>) -> Result<AlignMode> {
        let m = match mode {
            "local" => AlignMode::Local,
            "global" => AlignMode::Global,
            "semi-global" => AlignMode::SemiGlobal(FreeEnds::ALL),
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
                if m == AlignMode::Local { "local alignments have every end free" } else { "no end is free" }
            ))),
            (m, None) => Ok(m),
        }
    }

    pub fn is_local(self) -> bool {
        self == AlignMode::Local
    }

    /// The ends left free at no cost: none for global, all for local (whose restarts at 0
    /// free more than the ends).
    pub fn free_ends(self) -> FreeEnds {
        match self {
            AlignMode::Local => FreeEnds::ALL,
            AlignMode::Global => FreeEnds::NONE,
            AlignMode::SemiGlobal(f) => f,
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
    fn recomputed_leaves_the_16_bit_range_either_way() {
        assert!(!AlignMode::Global.recomputed(-32768));
        assert!(AlignMode::Global.recomputed(-32769));
        assert!(AlignMode::Global.recomputed(32768));
        assert!(!AlignMode::Local.recomputed(32767));
    }
}

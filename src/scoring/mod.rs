//! The scoring model: alphabet, substitution matrix and affine gap costs, plus the
//! Karlin-Altschul statistics that turn scores into bit scores and E-values.

pub mod alphabet;
pub mod matrix;
pub mod stats;

pub use alphabet::Alphabet;
pub use matrix::Matrix;

use crate::error::{Error, Result};

/// Largest magnitude of a substitution score (DNA `--match`/`--mismatch`): the engines
/// subtract scores from a far-negative 32-bit sentinel, which must not wrap.
pub const MAX_SCORE_MAGNITUDE: i32 = 1_000_000;

/// Largest `--gap-open` and `--gap-extend`.
pub const MAX_GAP_COST: i32 = 1000;

/// Everything an engine needs to score an alignment. A gap of length k costs
/// `gap_open + k * gap_extend` (the BLAST convention).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scoring {
    pub matrix: Matrix,
    pub gap_open: i32,
    pub gap_extend: i32,
}

impl Scoring {
    pub fn new(matrix: Matrix, gap_open: i32, gap_extend: i32) -> Result<Scoring> {
        if gap_open < 0 || gap_extend < 1 {
            return Err(Error::usage(format!(
                "gap costs must be --gap-open >= 0 and --gap-extend >= 1 (got {} and {})",
                gap_open, gap_extend
            )));
        }
        for (option, cost) in [("--gap-open", gap_open), ("--gap-extend", gap_extend)] {
            if cost > MAX_GAP_COST {
                return Err(Error::usage(format!(
                    "{option} {cost} is above {MAX_GAP_COST}, the largest gap cost swarrow supports"
                )));
            }
        }
        Ok(Scoring { matrix, gap_open, gap_extend })
    }

    /// BLOSUM62 with gap open 11, extend 1: the protein default.
    pub fn blosum62() -> Scoring {
        Scoring { matrix: Matrix::protein("BLOSUM62").expect("embedded BLOSUM62 parses"), gap_open: 11, gap_extend: 1 }
    }

    pub fn alphabet(&self) -> Alphabet {
        self.matrix.alphabet
    }

    /// Cost of opening a gap including its first position.
    #[inline]
    pub fn gap_first(&self) -> i32 {
        self.gap_open + self.gap_extend
    }

    /// Residue codes below this can be identical: every code under protein scoring (letters
    /// outside the matrix alphabet all read as X, identical to each other), A C G T under DNA
    /// (an ambiguity code scores as a mismatch against everything, itself included, and so
    /// counts as one: `X` in a CIGAR, a mismatch in the identity columns).
    #[inline]
    pub fn identity_codes(&self) -> u8 {
        match self.alphabet() {
            Alphabet::Dna => alphabet::DNA_OTHER,
            _ => u8::MAX,
        }
    }

    /// Whether the pair (`a`, `b`) is an identity of the path columns (`=`, nident).
    #[inline]
    pub fn identical(&self, a: u8, b: u8) -> bool {
        a == b && a < self.identity_codes()
    }

    #[inline]
    pub fn score(&self, a: u8, b: u8) -> i32 {
        self.matrix.score(a, b)
    }

    /// An upper bound on any local alignment score of sequences of these lengths.
    pub fn max_possible(&self, qlen: usize, tlen: usize) -> i64 {
        (self.matrix.max_score().max(0) as i64).saturating_mul(qlen.min(tlen) as i64)
    }

    /// Why a pair of these lengths cannot be scored exactly in the engines' 32-bit
    /// arithmetic (and the int32 score column), or `Ok` when it can: the best possible score
    /// must fit, and so must the most negative value a gap run across both sequences reaches.
    pub fn check_lengths(&self, qlen: usize, tlen: usize) -> std::result::Result<(), String> {
        self.check_lengths_in(qlen, tlen, false)
    }

    /// [`Scoring::check_lengths`] for `local` alignments or not. A local alignment of a
    /// sequence of one residue is one pair: no gap run crosses the pair anywhere (forward
    /// values stay at 0 or above, the start and the path lie in the pair's one cell), so only
    /// the best score must fit (a 1 x 2.2M pair at gap cost 1000 is fine).
    pub fn check_lengths_in(&self, qlen: usize, tlen: usize, local: bool) -> std::result::Result<(), String> {
        let best = self.max_possible(qlen, tlen);
        if best > i32::MAX as i64 {
            return Err(format!(
                "lengths {} and {} could score up to {} with {}, beyond the 32-bit score range; \
                 use smaller scores or shorter sequences",
                qlen,
                tlen,
                best,
                self.describe()
            ));
        }
        if local && qlen.min(tlen) <= 1 {
            return Ok(());
        }
        let drift = 2 * self.gap_open as i64
            + self.gap_extend as i64 * (qlen as i64 + tlen as i64)
            + self.matrix.scores.iter().map(|s| s.unsigned_abs() as i64).max().unwrap_or(0);
        if drift > (i32::MAX / 2) as i64 {
            return Err(format!(
                "lengths {} and {} are too long for exact 32-bit scoring with {}",
                qlen,
                tlen,
                self.describe()
            ));
        }
        Ok(())
    }

    /// A one-line description for metadata and messages.
    pub fn describe(&self) -> String {
        format!("{}, gap open {}, gap extend {}", self.matrix.name, self.gap_open, self.gap_extend)
    }
}

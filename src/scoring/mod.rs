//! The scoring model: alphabet, substitution matrix and affine gap costs, plus the
//! Karlin-Altschul statistics that turn scores into bit scores and E-values.

pub mod alphabet;
pub mod matrix;
pub mod stats;

pub use alphabet::Alphabet;
pub use matrix::Matrix;

use crate::error::{Error, Result};

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
        if gap_open > 1000 || gap_extend > 1000 {
            return Err(Error::usage("gap costs above 1000 are not supported"));
        }
        Ok(Scoring { matrix, gap_open, gap_extend })
    }

    /// BLOSUM62 with gap open 11, extend 1: the protein default.
    pub fn blosum62() -> Scoring {
        Scoring {
            matrix: Matrix::protein("BLOSUM62").expect("embedded BLOSUM62 parses"),
            gap_open: 11,
            gap_extend: 1,
        }
    }

    pub fn alphabet(&self) -> Alphabet {
        self.matrix.alphabet
    }

    /// Cost of opening a gap including its first position.
    #[inline]
    pub fn gap_first(&self) -> i32 {
        self.gap_open + self.gap_extend
    }

    #[inline]
    pub fn score(&self, a: u8, b: u8) -> i32 {
        self.matrix.score(a, b)
    }

    /// An upper bound on any local alignment score of sequences of these lengths.
    pub fn max_possible(&self, qlen: usize, tlen: usize) -> i64 {
        self.matrix.max_score().max(0) as i64 * qlen.min(tlen) as i64
    }

    /// A one-line description for metadata and messages.
    pub fn describe(&self) -> String {
        format!("{}, gap open {}, gap extend {}", self.matrix.name, self.gap_open, self.gap_extend)
    }
}

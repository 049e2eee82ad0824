//! Karlin-Altschul statistics (placeholder interface; tables filled in by the stats work).

use super::Scoring;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KarlinAltschul {
    pub lambda: f64,
    pub k: f64,
    pub h: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl KarlinAltschul {
    /// BLAST's gapped parameters for this scoring scheme, or None where BLAST has none.
    pub fn lookup(_scoring: &Scoring) -> Option<KarlinAltschul> {
        None
    }

    /// Bit score of a raw score.
    pub fn bits(&self, score: i32) -> f64 {
        (self.lambda * score as f64 - self.k.ln()) / std::f64::consts::LN_2
    }

    /// E-value of `score` for a query of `qlen` residues against a database of `db_residues`
    /// residues in `db_seqs` sequences, with BLAST's length adjustment.
    pub fn evalue(&self, score: i32, qlen: u64, db_residues: u64, db_seqs: u64) -> f64 {
        let space = self.search_space(qlen, db_residues, db_seqs);
        space * (-self.lambda * score as f64).exp() * self.k
    }

    /// Effective search space after BLAST's length adjustment.
    pub fn search_space(&self, qlen: u64, db_residues: u64, _db_seqs: u64) -> f64 {
        qlen as f64 * db_residues as f64
    }
}

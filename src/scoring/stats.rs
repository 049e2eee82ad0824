//! Karlin-Altschul statistics exactly as NCBI BLAST+ computes them: the published gapped
//! parameter tables of `blast_stat.c`, BLAST's length adjustment (`BLAST_ComputeLengthAdjustment`,
//! `BLAST_CalcEffLengths` in `blast_setup.c`), bit scores, and both E-value formulas BLAST uses:
//!
//! * [`KarlinAltschul::evalue`]: the classic `K m' n' e^(-lambda S)` over the length-adjusted
//!   search space. This is what `blastn` prints, and what `blastp` prints when run with the
//!   environment variable `OLD_FSC` set.
//! * [`KarlinAltschul::evalue_for_subject`]: what BLAST+ prints by default. For protein matrices
//!   it is Spouge's finite-size correction (`BLAST_SpougeStoE`), which needs the subject length;
//!   for DNA (no Gumbel parameters in BLAST) it equals [`KarlinAltschul::evalue`].
//!
//! Every number in the tables below is copied from `c++/src/algo/blast/core/blast_stat.c`
//! (ncbi/ncbi-cxx-toolkit-public); the row layout is kept so the source can be compared line by
//! line.

use super::{Alphabet, Scoring};

/// `INT2_MAX`, BLAST's "infinite" gap cost marking the ungapped row of a protein table.
const INT2_MAX: f64 = 32767.0;

/// Which E-value the outputs carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EvalueModel {
    /// Karlin-Altschul over BLAST's length-adjusted search space: what `blastp
    /// -comp_based_stats 0` prints with `OLD_FSC=1`; monotone in score for a query.
    #[default]
    Classic,
    /// Spouge's finite-size correction: what `blastp -comp_based_stats 0` prints by default
    /// (it depends on each target's length; protein matrices only, classic elsewhere).
    Spouge,
}

impl EvalueModel {
    pub fn name(self) -> &'static str {
        match self {
            EvalueModel::Classic => "classic",
            EvalueModel::Spouge => "spouge",
        }
    }
}

/// BLAST's statistical parameters for one scoring scheme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KarlinAltschul {
    pub lambda: f64,
    pub k: f64,
    pub h: f64,
    /// Length-adjustment slope (per unit score); `alpha / lambda` is the slope per nat.
    pub alpha: f64,
    /// Length-adjustment intercept.
    pub beta: f64,
    /// Spouge's finite-size-correction parameters; BLAST has them for protein matrices only.
    pub gumbel: Option<Gumbel>,
    /// BLAST rounds odd scores down to even before computing the E-value (not the bit score)
    /// for DNA reward/penalty 2/-7, 2/-5, 2/-3 and 3/-4 (after dividing out a common factor).
    pub round_down: bool,
}

/// The `Blast_GumbelBlk` fields `BLAST_SpougeStoE` reads, as `Blast_GumbelBlkLoadFromTables`
/// fills them from a table row and the table's ungapped row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gumbel {
    /// Lambda of the table row (BLAST rescales by `kbp->Lambda / gbp->Lambda`, here 1).
    pub lambda: f64,
    /// Mean length slope `a` and intercept `b = 2 G (a_un - a)`.
    pub a: f64,
    pub b: f64,
    /// Length variance slope `Alpha` and intercept `Beta = 2 G (Alpha_un - Alpha)`.
    pub alpha_v: f64,
    pub beta_v: f64,
    /// Length covariance slope `Sigma` and intercept `Tau = 2 G (Alpha_un - Sigma)`.
    pub sigma: f64,
    pub tau: f64,
}

impl KarlinAltschul {
    /// BLAST's gapped parameters for this scoring scheme, or None where BLAST has none (an
    /// unknown matrix, unsupported gap costs, an unsupported reward/penalty pair, or DNA gap
    /// costs in BLAST's "infinite" regime, where BLAST uses query-dependent ungapped values).
    pub fn lookup(scoring: &Scoring) -> Option<KarlinAltschul> {
        match scoring.matrix.alphabet {
            Alphabet::Protein => lookup_protein(&scoring.matrix.name, scoring.gap_open, scoring.gap_extend),
            Alphabet::Dna => {
                // Matrix::dna: code 0 (A) against itself is the reward, A against C the penalty.
                let reward = scoring.matrix.score(0, 0);
                let penalty = scoring.matrix.score(0, 1);
                lookup_dna(reward, penalty, scoring.gap_open, scoring.gap_extend)
            }
        }
    }

    /// Bit score of a raw score: `(lambda S - ln K) / ln 2` (`Blast_HSPListGetBitScores`).
    pub fn bits(&self, score: i32) -> f64 {
        (score as f64 * self.lambda - self.k.ln()) / std::f64::consts::LN_2
    }

    /// Classic E-value of `score` for a query of `qlen` residues against a database of
    /// `db_residues` residues in `db_seqs` sequences, over BLAST's length-adjusted search space
    /// (`BLAST_KarlinStoE_simple`). For a pairwise alignment pass the target length and 1.
    pub fn evalue(&self, score: i32, qlen: u64, db_residues: u64, db_seqs: u64) -> f64 {
        let space = self.search_space(qlen, db_residues, db_seqs);
        space * (-self.lambda * self.evalue_score(score) as f64 + self.k.ln()).exp()
    }

    /// The E-value BLAST+ prints by default for a hit on a subject of `subject_len` residues:
    /// Spouge's finite-size correction where BLAST has Gumbel parameters (protein matrices),
    /// scaled to the database by `db_residues / subject_len` as `BLAST_SpougeStoE` does;
    /// otherwise the classic [`KarlinAltschul::evalue`].
    pub fn evalue_for_subject(&self, score: i32, qlen: u64, subject_len: u64, db_residues: u64, db_seqs: u64) -> f64 {
        match &self.gumbel {
            Some(g) => spouge_evalue(self, g, self.evalue_score(score), qlen, subject_len, db_residues),
            None => self.evalue(score, qlen, db_residues, db_seqs),
        }
    }

    /// The E-value of `model` for a hit on a subject of `subject_len` residues.
    pub fn evalue_by(
        &self,
        model: EvalueModel,
        score: i32,
        qlen: u64,
        subject_len: u64,
        db_residues: u64,
        db_seqs: u64,
    ) -> f64 {
        match model {
            EvalueModel::Classic => self.evalue(score, qlen, db_residues, db_seqs),
            EvalueModel::Spouge => self.evalue_for_subject(score, qlen, subject_len, db_residues, db_seqs),
        }
    }

    /// Effective search space after BLAST's length adjustment `L`:
    /// `max(db_residues - db_seqs L, 1) * (qlen - L)` (`BLAST_CalcEffLengths`).
    pub fn search_space(&self, qlen: u64, db_residues: u64, db_seqs: u64) -> f64 {
        let adj = self.length_adjustment(qlen, db_residues, db_seqs) as i128;
        let db = (db_residues as i128 - db_seqs as i128 * adj).max(1);
        (db * (qlen as i128 - adj)) as f64
    }

    /// BLAST's length adjustment: the integer below the fixed point of
    /// `L = (alpha / lambda) (ln K + ln((m - L)(n - N L))) + beta`, found by the bracketed
    /// iteration of `BLAST_ComputeLengthAdjustment` (20 iterations at most).
    pub fn length_adjustment(&self, qlen: u64, db_residues: u64, db_seqs: u64) -> u64 {
        compute_length_adjustment(
            self.k,
            self.k.ln(),
            self.alpha / self.lambda,
            self.beta,
            qlen as f64,
            db_residues as f64,
            db_seqs as f64,
        )
    }

    /// The score the E-value is computed from (`Blast_HSPListAdjustOddBlastnScores`).
    fn evalue_score(&self, score: i32) -> i32 {
        if self.round_down {
            score - (score & 1)
        } else {
            score
        }
    }
}

/// `BLAST_ComputeLengthAdjustment` (blast_stat.c), on doubles `m`, `n`, `N`.
fn compute_length_adjustment(k: f64, log_k: f64, alpha_d_lambda: f64, beta: f64, m: f64, n: f64, seqs: f64) -> u64 {
    const MAX_ITERATIONS: u32 = 20;
    // Largest ell with K (m - ell)(n - N ell) > max(m, n), by the quadratic formula.
    let (a, mb, c) = (seqs, m * seqs + n, n * m - m.max(n) / k);
    if c < 0.0 {
        return 0;
    }
    let mut ell_max = 2.0 * c / (mb + (mb * mb - 4.0 * a * c).sqrt());
    let mut ell_min = 0.0;
    let mut ell_next = 0.0;
    let mut converged = false;
    for i in 1..=MAX_ITERATIONS {
        let ell = ell_next;
        let ss = (m - ell) * (n - seqs * ell);
        let ell_bar = alpha_d_lambda * (log_k + ss.ln()) + beta;
        if ell_bar >= ell {
            ell_min = ell;
            if ell_bar - ell_min <= 1.0 {
                converged = true;
                break;
            }
            if ell_min == ell_max {
                break;
            }
        } else {
            ell_max = ell;
        }
        ell_next = if ell_min <= ell_bar && ell_bar <= ell_max {
            ell_bar
        } else if i == 1 {
            ell_max
        } else {
            (ell_min + ell_max) / 2.0
        };
    }
    let mut adjustment = ell_min as u64;
    if converged {
        // floor(ell_min) is taken as floor(fixed point) unless ceil(ell_min) is still below it.
        let ell = ell_min.ceil();
        if ell <= ell_max {
            let ss = (m - ell) * (n - seqs * ell);
            if alpha_d_lambda * (log_k + ss.ln()) + beta >= ell {
                adjustment = ell as u64;
            }
        }
    }
    adjustment
}

/// `BLAST_SpougeStoE` (blast_stat.c) with `kbp->Lambda == gbp->Lambda` (no rescaling) and
/// `gbp->db_length = db_residues`.
fn spouge_evalue(ka: &KarlinAltschul, g: &Gumbel, score: i32, qlen: u64, subject_len: u64, db_residues: u64) -> f64 {
    // 1/sqrt(2 pi), as BLAST writes it.
    const CONST_VAL: f64 = 0.398_942_280_401_432_677_939_946_059_934_38;
    let scale = ka.lambda / g.lambda;
    // A zero-length subject cannot hold a hit; keep the result finite for score-0 rows.
    let db_scale = if db_residues != 0 && subject_len != 0 { db_residues as f64 / subject_len as f64 } else { 1.0 };
    let (lambda, y) = (ka.lambda, score as f64);
    let (a_hat, b_hat) = (g.a * scale, g.b);
    let (alpha_hat, beta_hat) = (g.alpha_v * scale, g.beta_v);
    let (sigma_hat, tau_hat) = (g.sigma * scale, g.tau);

    // Query and subject sides are symmetric (same a, b, alpha, beta).
    let side = |len: f64| -> (f64, f64) {
        let li_y = len - (a_hat * y + b_hat);
        let v_y = (2.0 * alpha_hat / lambda).max(alpha_hat * y + beta_hat);
        let sqrt_v = v_y.sqrt();
        let f = li_y / sqrt_v;
        let p_f = libm::erfc(-f / std::f64::consts::SQRT_2) / 2.0;
        (li_y * p_f + sqrt_v * CONST_VAL * (-0.5 * f * f).exp(), p_f)
    };
    let (p1, p_m_f) = side(qlen as f64);
    let (p2, p_n_f) = side(subject_len as f64);
    let c_y = (2.0 * sigma_hat / lambda).max(sigma_hat * y + tau_hat);
    let area = p1 * p2 + c_y * p_m_f * p_n_f;
    area * ka.k * (-lambda * y).exp() * db_scale
}

/// `Blast_KarlinBlkGappedLoadFromTables`, `BLAST_GetAlphaBeta` and
/// `Blast_GumbelBlkLoadFromTables` for one protein matrix.
fn lookup_protein(name: &str, gap_open: i32, gap_extend: i32) -> Option<KarlinAltschul> {
    let (_, table) = PROTEIN_TABLES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))?;
    let ungapped = &table[0];
    // Row 0 is the ungapped row (gap costs INT2_MAX); our gap costs never reach it.
    let row = table[1..].iter().find(|r| r[0] == gap_open as f64 && r[1] == gap_extend as f64)?;
    let g = (gap_open + gap_extend) as f64;
    let (a, alpha_v, sigma) = (row[6], row[9], row[10]);
    let (a_un, alpha_un) = (ungapped[6], ungapped[9]);
    Some(KarlinAltschul {
        lambda: row[3],
        k: row[4],
        h: row[5],
        alpha: row[6],
        beta: row[7],
        gumbel: Some(Gumbel {
            lambda: row[3],
            a,
            b: 2.0 * g * (a_un - a),
            alpha_v,
            beta_v: 2.0 * g * (alpha_un - alpha_v),
            sigma,
            tau: 2.0 * g * (alpha_un - sigma),
        }),
        round_down: false,
    })
}

/// One blastn table as `s_GetNuclValuesArray` selects it: the reduced reward/penalty it serves
/// and whether scores round down. (BLAST's `gap_open_max`/`gap_extend_max`, where its ungapped
/// regime starts, are not needed: that regime has no tabulated values.)
struct NuclTable {
    reward: i32,
    penalty: i32,
    rows: &'static [[f64; 8]],
    round_down: bool,
}

/// `Blast_KarlinBlkNuclGappedCalc` and `Blast_GetNuclAlphaBeta` (blast_stat.c).
///
/// A common factor `d` of reward and penalty is divided out first and the reduced pair's table
/// used with gap costs multiplied by `d`, lambda and alpha divided by `d`
/// (`s_AdjustGapParametersByGcd`); e.g. 2/-2 with gaps 4/2 is 1/-1's row 2/1 with lambda/2.
///
/// A leading row with gap costs 0/0 is BLAST's non-affine greedy (megablast) scoring, which the
/// comment above the tables defines as gap open 0, gap extend `reward/2 - penalty`; it is used
/// for our gap open 0 and that extend when the extend is a whole number and no explicit row
/// matches. Gap costs at or beyond the table's maxima, which BLAST scores with ungapped
/// parameters computed from the query's composition, get None.
fn lookup_dna(reward: i32, penalty: i32, gap_open: i32, gap_extend: i32) -> Option<KarlinAltschul> {
    if reward <= 0 || penalty >= 0 {
        return None;
    }
    let divisor = gcd(reward, -penalty);
    let (r, p) = (reward / divisor, penalty / divisor);
    let table = NUCL_TABLES.iter().find(|t| t.reward == r && t.penalty == p)?;
    let (linear, normal) = match table.rows.split_first() {
        Some((first, rest)) if first[0] == 0.0 && first[1] == 0.0 => (Some(first), rest),
        _ => (None, table.rows),
    };
    let d = divisor as f64;
    let matches = |row: &[f64; 8]| row[0] * d == gap_open as f64 && row[1] * d == gap_extend as f64;
    let row = normal.iter().find(|row| matches(row)).or_else(|| {
        // Greedy linear gap cost reward/2 - penalty, in the caller's (unreduced) units.
        let linear_extend = reward - 2 * penalty;
        // BLAST's own spelling of these costs, 0/0, is accepted too (Scoring never has it).
        let is_linear =
            gap_open == 0 && (gap_extend == 0 || (linear_extend % 2 == 0 && gap_extend == linear_extend / 2));
        linear.filter(|_| is_linear)
    })?;
    Some(KarlinAltschul {
        lambda: row[2] / d,
        k: row[3],
        h: row[4],
        alpha: row[5] / d,
        beta: row[6],
        gumbel: None,
        round_down: table.round_down,
    })
}

/// `BLAST_Gcd`, on positive arguments.
fn gcd(mut a: i32, mut b: i32) -> i32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

// --- Protein tables: blast_stat.c `*_values`, rows {gap open, gap extend, decline-to-align,
// --- lambda, K, H, alpha, beta, C, alpha_v, sigma}; row 0 is ungapped.

#[rustfmt::skip]
static BLOSUM45_VALUES: [[f64; 11]; 14] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.2291, 0.0924, 0.2514, 0.9113, -5.7, 0.641318, 9.611060, 9.611060],
    [13.0, 3.0, INT2_MAX, 0.207, 0.049, 0.14, 1.5, -22.0, 0.671128, 35.855900, 35.963900],
    [12.0, 3.0, INT2_MAX, 0.199, 0.039, 0.11, 1.8, -34.0, 0.691530, 45.693600, 45.851700],
    [11.0, 3.0, INT2_MAX, 0.190, 0.031, 0.095, 2.0, -38.0, 0.691181, 62.874100, 63.103700],
    [10.0, 3.0, INT2_MAX, 0.179, 0.023, 0.075, 2.4, -51.0, 0.710529, 88.286800, 88.639100],
    [16.0, 2.0, INT2_MAX, 0.210, 0.051, 0.14, 1.5, -24.0, 0.666680, 36.279800, 36.452400],
    [15.0, 2.0, INT2_MAX, 0.203, 0.041, 0.12, 1.7, -31.0, 0.673871, 44.825700, 45.060400],
    [14.0, 2.0, INT2_MAX, 0.195, 0.032, 0.10, 1.9, -36.0, 0.685753, 60.736200, 61.102300],
    [13.0, 2.0, INT2_MAX, 0.185, 0.024, 0.084, 2.2, -45.0, 0.698480, 85.148100, 85.689400],
    [12.0, 2.0, INT2_MAX, 0.171, 0.016, 0.061, 2.8, -65.0, 0.713429, 127.758000, 128.582000],
    [19.0, 1.0, INT2_MAX, 0.205, 0.040, 0.11, 1.9, -43.0, 0.672302, 53.071400, 53.828200],
    [18.0, 1.0, INT2_MAX, 0.198, 0.032, 0.10, 2.0, -43.0, 0.682580, 72.342400, 73.403900],
    [17.0, 1.0, INT2_MAX, 0.189, 0.024, 0.079, 2.4, -57.0, 0.695035, 103.055000, 104.721000],
    [16.0, 1.0, INT2_MAX, 0.176, 0.016, 0.063, 2.8, -67.0, 0.712966, 170.100000, 173.003000],
];

#[rustfmt::skip]
static BLOSUM50_VALUES: [[f64; 11]; 16] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.2318, 0.112, 0.3362, 0.6895, -4.0, 0.609639, 5.388310, 5.388310],
    [13.0, 3.0, INT2_MAX, 0.212, 0.063, 0.19, 1.1, -16.0, 0.639287, 18.113800, 18.202800],
    [12.0, 3.0, INT2_MAX, 0.206, 0.055, 0.17, 1.2, -18.0, 0.644715, 22.654600, 22.777700],
    [11.0, 3.0, INT2_MAX, 0.197, 0.042, 0.14, 1.4, -25.0, 0.656327, 29.861100, 30.045700],
    [10.0, 3.0, INT2_MAX, 0.186, 0.031, 0.11, 1.7, -34.0, 0.671150, 42.393800, 42.674000],
    [9.0, 3.0, INT2_MAX, 0.172, 0.022, 0.082, 2.1, -48.0, 0.694326, 66.069600, 66.516400],
    [16.0, 2.0, INT2_MAX, 0.215, 0.066, 0.20, 1.05, -15.0, 0.633899, 17.951800, 18.092100],
    [15.0, 2.0, INT2_MAX, 0.210, 0.058, 0.17, 1.2, -20.0, 0.641985, 21.940100, 22.141800],
    [14.0, 2.0, INT2_MAX, 0.202, 0.045, 0.14, 1.4, -27.0, 0.650682, 28.681200, 28.961900],
    [13.0, 2.0, INT2_MAX, 0.193, 0.035, 0.12, 1.6, -32.0, 0.660984, 42.059500, 42.471600],
    [12.0, 2.0, INT2_MAX, 0.181, 0.025, 0.095, 1.9, -41.0, 0.678090, 63.747600, 64.397300],
    [19.0, 1.0, INT2_MAX, 0.212, 0.057, 0.18, 1.2, -21.0, 0.635714, 26.311200, 26.923300],
    [18.0, 1.0, INT2_MAX, 0.207, 0.050, 0.15, 1.4, -28.0, 0.643523, 34.903700, 35.734800],
    [17.0, 1.0, INT2_MAX, 0.198, 0.037, 0.12, 1.6, -33.0, 0.654504, 48.895800, 50.148600],
    [16.0, 1.0, INT2_MAX, 0.186, 0.025, 0.10, 1.9, -42.0, 0.667750, 76.469100, 78.443000],
    [15.0, 1.0, INT2_MAX, 0.171, 0.015, 0.063, 2.7, -76.0, 0.694575, 140.053000, 144.160000],
];

#[rustfmt::skip]
static BLOSUM62_VALUES: [[f64; 11]; 12] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.3176, 0.134, 0.4012, 0.7916, -3.2, 0.623757, 4.964660, 4.964660],
    [11.0, 2.0, INT2_MAX, 0.297, 0.082, 0.27, 1.1, -10.0, 0.641766, 12.673800, 12.757600],
    [10.0, 2.0, INT2_MAX, 0.291, 0.075, 0.23, 1.3, -15.0, 0.649362, 16.474000, 16.602600],
    [9.0, 2.0, INT2_MAX, 0.279, 0.058, 0.19, 1.5, -19.0, 0.659245, 22.751900, 22.950000],
    [8.0, 2.0, INT2_MAX, 0.264, 0.045, 0.15, 1.8, -26.0, 0.672692, 35.483800, 35.821300],
    [7.0, 2.0, INT2_MAX, 0.239, 0.027, 0.10, 2.5, -46.0, 0.702056, 61.238300, 61.886000],
    [6.0, 2.0, INT2_MAX, 0.201, 0.012, 0.061, 3.3, -58.0, 0.740802, 140.417000, 141.882000],
    [13.0, 1.0, INT2_MAX, 0.292, 0.071, 0.23, 1.2, -11.0, 0.647715, 19.506300, 19.893100],
    [12.0, 1.0, INT2_MAX, 0.283, 0.059, 0.19, 1.5, -19.0, 0.656391, 27.856200, 28.469900],
    [11.0, 1.0, INT2_MAX, 0.267, 0.041, 0.14, 1.9, -30.0, 0.669720, 42.602800, 43.636200],
    [10.0, 1.0, INT2_MAX, 0.243, 0.024, 0.10, 2.5, -44.0, 0.693267, 83.178700, 85.065600],
    [9.0, 1.0, INT2_MAX, 0.206, 0.010, 0.052, 4.0, -87.0, 0.731887, 210.333000, 214.842000],
];

#[rustfmt::skip]
static BLOSUM80_VALUES: [[f64; 11]; 10] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.3430, 0.177, 0.6568, 0.5222, -1.6, 0.564057, 1.918130, 1.918130],
    [25.0, 2.0, INT2_MAX, 0.342, 0.17, 0.66, 0.52, -1.6, 0.563956, 1.731000, 1.731300],
    [13.0, 2.0, INT2_MAX, 0.336, 0.15, 0.57, 0.59, -3.0, 0.570979, 2.673470, 2.692300],
    [9.0, 2.0, INT2_MAX, 0.319, 0.11, 0.42, 0.76, -6.0, 0.587837, 5.576090, 5.667860],
    [8.0, 2.0, INT2_MAX, 0.308, 0.090, 0.35, 0.89, -9.0, 0.597556, 7.536950, 7.686230],
    [7.0, 2.0, INT2_MAX, 0.293, 0.070, 0.27, 1.1, -14.0, 0.615254, 11.586600, 11.840400],
    [6.0, 2.0, INT2_MAX, 0.268, 0.045, 0.19, 1.4, -19.0, 0.644054, 19.958100, 20.441200],
    [11.0, 1.0, INT2_MAX, 0.314, 0.095, 0.35, 0.90, -9.0, 0.590702, 8.808610, 9.223320],
    [10.0, 1.0, INT2_MAX, 0.299, 0.071, 0.27, 1.1, -14.0, 0.609620, 13.833800, 14.533400],
    [9.0, 1.0, INT2_MAX, 0.279, 0.048, 0.20, 1.4, -19.0, 0.623800, 24.252000, 25.490400],
];

#[rustfmt::skip]
static BLOSUM90_VALUES: [[f64; 11]; 8] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.3346, 0.190, 0.7547, 0.4434, -1.4, 0.544178, 1.377760, 1.377760],
    [9.0, 2.0, INT2_MAX, 0.310, 0.12, 0.46, 0.67, -6.0, 0.570267, 4.232290, 4.334170],
    [8.0, 2.0, INT2_MAX, 0.300, 0.099, 0.39, 0.76, -7.0, 0.581580, 5.797020, 5.961420],
    [7.0, 2.0, INT2_MAX, 0.283, 0.072, 0.30, 0.93, -11.0, 0.600024, 9.040880, 9.321600],
    [6.0, 2.0, INT2_MAX, 0.259, 0.048, 0.22, 1.2, -16.0, 0.629344, 16.024400, 16.531600],
    [11.0, 1.0, INT2_MAX, 0.302, 0.093, 0.39, 0.78, -8.0, 0.576919, 7.143250, 7.619190],
    [10.0, 1.0, INT2_MAX, 0.290, 0.075, 0.28, 1.04, -15.0, 0.591366, 11.483900, 12.269800],
    [9.0, 1.0, INT2_MAX, 0.265, 0.044, 0.20, 1.3, -19.0, 0.613013, 21.408300, 22.840900],
];

#[rustfmt::skip]
static PAM250_VALUES: [[f64; 11]; 16] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.2252, 0.0868, 0.2223, 0.98, -5.0, 0.660059, 11.754300, 11.754300],
    [15.0, 3.0, INT2_MAX, 0.205, 0.049, 0.13, 1.6, -23.0, 0.687656, 34.578400, 34.928000],
    [14.0, 3.0, INT2_MAX, 0.200, 0.043, 0.12, 1.7, -26.0, 0.689768, 43.353000, 43.443800],
    [13.0, 3.0, INT2_MAX, 0.194, 0.036, 0.10, 1.9, -31.0, 0.697431, 50.948500, 51.081700],
    [12.0, 3.0, INT2_MAX, 0.186, 0.029, 0.085, 2.2, -41.0, 0.704565, 69.606500, 69.793600],
    [11.0, 3.0, INT2_MAX, 0.174, 0.020, 0.070, 2.5, -48.0, 0.722438, 98.653500, 98.927100],
    [17.0, 2.0, INT2_MAX, 0.204, 0.047, 0.12, 1.7, -28.0, 0.684799, 41.583800, 41.735800],
    [16.0, 2.0, INT2_MAX, 0.198, 0.038, 0.11, 1.8, -29.0, 0.691098, 51.635200, 51.843900],
    [15.0, 2.0, INT2_MAX, 0.191, 0.031, 0.087, 2.2, -44.0, 0.699051, 67.256700, 67.558500],
    [14.0, 2.0, INT2_MAX, 0.182, 0.024, 0.073, 2.5, -53.0, 0.714103, 96.315100, 96.756800],
    [13.0, 2.0, INT2_MAX, 0.171, 0.017, 0.059, 2.9, -64.0, 0.728738, 135.653000, 136.339000],
    [21.0, 1.0, INT2_MAX, 0.205, 0.045, 0.11, 1.8, -34.0, 0.683265, 48.728200, 49.218800],
    [20.0, 1.0, INT2_MAX, 0.199, 0.037, 0.10, 1.9, -35.0, 0.689380, 60.832000, 61.514100],
    [19.0, 1.0, INT2_MAX, 0.192, 0.029, 0.083, 2.3, -52.0, 0.696344, 84.019700, 84.985600],
    [18.0, 1.0, INT2_MAX, 0.183, 0.021, 0.070, 2.6, -60.0, 0.710525, 113.829000, 115.184000],
    [17.0, 1.0, INT2_MAX, 0.171, 0.014, 0.052, 3.3, -86.0, 0.727000, 175.071000, 177.196000],
];

#[rustfmt::skip]
static PAM30_VALUES: [[f64; 11]; 7] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.3400, 0.283, 1.754, 0.1938, -0.3, 0.436164, 0.161818, 0.161818],
    [7.0, 2.0, INT2_MAX, 0.305, 0.15, 0.87, 0.35, -3.0, 0.479087, 1.014010, 1.162730],
    [6.0, 2.0, INT2_MAX, 0.287, 0.11, 0.68, 0.42, -4.0, 0.499980, 1.688060, 1.951430],
    [5.0, 2.0, INT2_MAX, 0.264, 0.079, 0.45, 0.59, -7.0, 0.533009, 3.377010, 3.871950],
    [10.0, 1.0, INT2_MAX, 0.309, 0.15, 0.88, 0.35, -3.0, 0.474741, 1.372050, 1.788770],
    [9.0, 1.0, INT2_MAX, 0.294, 0.11, 0.61, 0.48, -6.0, 0.492716, 2.463920, 3.186150],
    [8.0, 1.0, INT2_MAX, 0.270, 0.072, 0.40, 0.68, -10.0, 0.521286, 5.368130, 6.763480],
];

#[rustfmt::skip]
static PAM70_VALUES: [[f64; 11]; 7] = [
    [INT2_MAX, INT2_MAX, INT2_MAX, 0.3345, 0.229, 1.029, 0.3250, -0.7, 0.511296, 0.633439, 0.633439],
    [8.0, 2.0, INT2_MAX, 0.301, 0.12, 0.54, 0.56, -5.0, 0.549019, 2.881650, 3.025710],
    [7.0, 2.0, INT2_MAX, 0.286, 0.093, 0.43, 0.67, -7.0, 0.565659, 4.534540, 4.785780],
    [6.0, 2.0, INT2_MAX, 0.264, 0.064, 0.29, 0.90, -12.0, 0.596330, 7.942630, 8.402720],
    [11.0, 1.0, INT2_MAX, 0.305, 0.12, 0.52, 0.59, -6.0, 0.543514, 3.681400, 4.108020],
    [10.0, 1.0, INT2_MAX, 0.291, 0.091, 0.41, 0.71, -9.0, 0.560723, 6.002970, 6.716570],
    [9.0, 1.0, INT2_MAX, 0.270, 0.060, 0.28, 0.97, -14.0, 0.585186, 11.360800, 12.636700],
];

static PROTEIN_TABLES: [(&str, &[[f64; 11]]); 8] = [
    ("BLOSUM45", &BLOSUM45_VALUES),
    ("BLOSUM50", &BLOSUM50_VALUES),
    ("BLOSUM62", &BLOSUM62_VALUES),
    ("BLOSUM80", &BLOSUM80_VALUES),
    ("BLOSUM90", &BLOSUM90_VALUES),
    ("PAM30", &PAM30_VALUES),
    ("PAM70", &PAM70_VALUES),
    ("PAM250", &PAM250_VALUES),
];

// --- DNA tables: blast_stat.c `blastn_values_R_P`, rows {gap open, gap extend, lambda, K, H,
// --- alpha, beta, theta}; a leading 0/0 row is the non-affine (greedy) one.

#[rustfmt::skip]
static BLASTN_VALUES_1_5: [[f64; 8]; 2] = [
    [0.0, 0.0, 1.39, 0.747, 1.38, 1.00, 0.0, 100.0],
    [3.0, 3.0, 1.39, 0.747, 1.38, 1.00, 0.0, 100.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_1_4: [[f64; 8]; 5] = [
    [0.0, 0.0, 1.383, 0.738, 1.36, 1.02, 0.0, 100.0],
    [1.0, 2.0, 1.36, 0.67, 1.2, 1.1, 0.0, 98.0],
    [0.0, 2.0, 1.26, 0.43, 0.90, 1.4, -1.0, 91.0],
    [2.0, 1.0, 1.35, 0.61, 1.1, 1.2, -1.0, 98.0],
    [1.0, 1.0, 1.22, 0.35, 0.72, 1.7, -3.0, 88.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_2_7: [[f64; 8]; 5] = [
    [0.0, 0.0, 0.69, 0.73, 1.34, 0.515, 0.0, 100.0],
    [2.0, 4.0, 0.68, 0.67, 1.2, 0.55, 0.0, 99.0],
    [0.0, 4.0, 0.63, 0.43, 0.90, 0.7, -1.0, 91.0],
    [4.0, 2.0, 0.675, 0.62, 1.1, 0.6, -1.0, 98.0],
    [2.0, 2.0, 0.61, 0.35, 0.72, 1.7, -3.0, 88.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_1_3: [[f64; 8]; 6] = [
    [0.0, 0.0, 1.374, 0.711, 1.31, 1.05, 0.0, 100.0],
    [2.0, 2.0, 1.37, 0.70, 1.2, 1.1, 0.0, 99.0],
    [1.0, 2.0, 1.35, 0.64, 1.1, 1.2, -1.0, 98.0],
    [0.0, 2.0, 1.25, 0.42, 0.83, 1.5, -2.0, 91.0],
    [2.0, 1.0, 1.34, 0.60, 1.1, 1.2, -1.0, 97.0],
    [1.0, 1.0, 1.21, 0.34, 0.71, 1.7, -2.0, 88.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_2_5: [[f64; 8]; 5] = [
    [0.0, 0.0, 0.675, 0.65, 1.1, 0.6, -1.0, 99.0],
    [2.0, 4.0, 0.67, 0.59, 1.1, 0.6, -1.0, 98.0],
    [0.0, 4.0, 0.62, 0.39, 0.78, 0.8, -2.0, 91.0],
    [4.0, 2.0, 0.67, 0.61, 1.0, 0.65, -2.0, 98.0],
    [2.0, 2.0, 0.56, 0.32, 0.59, 0.95, -4.0, 82.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_1_2: [[f64; 8]; 7] = [
    [0.0, 0.0, 1.28, 0.46, 0.85, 1.5, -2.0, 96.0],
    [2.0, 2.0, 1.33, 0.62, 1.1, 1.2, 0.0, 99.0],
    [1.0, 2.0, 1.30, 0.52, 0.93, 1.4, -2.0, 97.0],
    [0.0, 2.0, 1.19, 0.34, 0.66, 1.8, -3.0, 89.0],
    [3.0, 1.0, 1.32, 0.57, 1.0, 1.3, -1.0, 99.0],
    [2.0, 1.0, 1.29, 0.49, 0.92, 1.4, -1.0, 96.0],
    [1.0, 1.0, 1.14, 0.26, 0.52, 2.2, -5.0, 85.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_2_3: [[f64; 8]; 9] = [
    [0.0, 0.0, 0.55, 0.21, 0.46, 1.2, -5.0, 87.0],
    [4.0, 4.0, 0.63, 0.42, 0.84, 0.75, -2.0, 99.0],
    [2.0, 4.0, 0.615, 0.37, 0.72, 0.85, -3.0, 97.0],
    [0.0, 4.0, 0.55, 0.21, 0.46, 1.2, -5.0, 87.0],
    [3.0, 3.0, 0.615, 0.37, 0.68, 0.9, -3.0, 97.0],
    [6.0, 2.0, 0.63, 0.42, 0.84, 0.75, -2.0, 99.0],
    [5.0, 2.0, 0.625, 0.41, 0.78, 0.8, -2.0, 99.0],
    [4.0, 2.0, 0.61, 0.35, 0.68, 0.9, -3.0, 96.0],
    [2.0, 2.0, 0.515, 0.14, 0.33, 1.55, -9.0, 81.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_3_4: [[f64; 8]; 6] = [
    [6.0, 3.0, 0.389, 0.25, 0.56, 0.7, -5.0, 95.0],
    [5.0, 3.0, 0.375, 0.21, 0.47, 0.8, -6.0, 92.0],
    [4.0, 3.0, 0.351, 0.14, 0.35, 1.0, -9.0, 86.0],
    [6.0, 2.0, 0.362, 0.16, 0.45, 0.8, -4.0, 88.0],
    [5.0, 2.0, 0.330, 0.092, 0.28, 1.2, -13.0, 81.0],
    [4.0, 2.0, 0.281, 0.046, 0.16, 1.8, -23.0, 69.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_4_5: [[f64; 8]; 5] = [
    [0.0, 0.0, 0.22, 0.061, 0.22, 1.0, -15.0, 74.0],
    [6.0, 5.0, 0.28, 0.21, 0.47, 0.6, -7.0, 93.0],
    [5.0, 5.0, 0.27, 0.17, 0.39, 0.7, -9.0, 90.0],
    [4.0, 5.0, 0.25, 0.10, 0.31, 0.8, -10.0, 83.0],
    [3.0, 5.0, 0.23, 0.065, 0.25, 0.9, -11.0, 76.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_1_1: [[f64; 8]; 7] = [
    [3.0, 2.0, 1.09, 0.31, 0.55, 2.0, -2.0, 99.0],
    [2.0, 2.0, 1.07, 0.27, 0.49, 2.2, -3.0, 97.0],
    [1.0, 2.0, 1.02, 0.21, 0.36, 2.8, -6.0, 92.0],
    [0.0, 2.0, 0.80, 0.064, 0.17, 4.8, -16.0, 72.0],
    [4.0, 1.0, 1.08, 0.28, 0.54, 2.0, -2.0, 98.0],
    [3.0, 1.0, 1.06, 0.25, 0.46, 2.3, -4.0, 96.0],
    [2.0, 1.0, 0.99, 0.17, 0.30, 3.3, -10.0, 90.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_3_2: [[f64; 8]; 1] = [
    [5.0, 5.0, 0.208, 0.030, 0.072, 2.9, -47.0, 77.0],
];

#[rustfmt::skip]
static BLASTN_VALUES_5_4: [[f64; 8]; 2] = [
    [10.0, 6.0, 0.163, 0.068, 0.16, 1.0, -19.0, 85.0],
    [8.0, 6.0, 0.146, 0.039, 0.11, 1.3, -29.0, 76.0],
];

/// `s_GetNuclValuesArray`: the table and round_down flag per reduced reward/penalty pair.
#[rustfmt::skip]
static NUCL_TABLES: [NuclTable; 12] = [
    NuclTable { reward: 1, penalty: -5, rows: &BLASTN_VALUES_1_5, round_down: false },
    NuclTable { reward: 1, penalty: -4, rows: &BLASTN_VALUES_1_4, round_down: false },
    NuclTable { reward: 2, penalty: -7, rows: &BLASTN_VALUES_2_7, round_down: true },
    NuclTable { reward: 1, penalty: -3, rows: &BLASTN_VALUES_1_3, round_down: false },
    NuclTable { reward: 2, penalty: -5, rows: &BLASTN_VALUES_2_5, round_down: true },
    NuclTable { reward: 1, penalty: -2, rows: &BLASTN_VALUES_1_2, round_down: false },
    NuclTable { reward: 2, penalty: -3, rows: &BLASTN_VALUES_2_3, round_down: true },
    NuclTable { reward: 3, penalty: -4, rows: &BLASTN_VALUES_3_4, round_down: true },
    NuclTable { reward: 1, penalty: -1, rows: &BLASTN_VALUES_1_1, round_down: false },
    NuclTable { reward: 3, penalty: -2, rows: &BLASTN_VALUES_3_2, round_down: false },
    NuclTable { reward: 4, penalty: -5, rows: &BLASTN_VALUES_4_5, round_down: false },
    NuclTable { reward: 5, penalty: -4, rows: &BLASTN_VALUES_5_4, round_down: false },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::Matrix;

    fn protein(name: &str, open: i32, extend: i32) -> Option<KarlinAltschul> {
        KarlinAltschul::lookup(&Scoring::new(Matrix::protein(name).unwrap(), open, extend).unwrap())
    }

    fn dna(reward: i32, penalty: i32, open: i32, extend: i32) -> Option<KarlinAltschul> {
        KarlinAltschul::lookup(&Scoring::new(Matrix::dna(reward, penalty), open, extend).unwrap())
    }

    /// (lambda, K, H, alpha, beta) of a lookup, for comparison with table rows.
    fn params(ka: Option<KarlinAltschul>) -> (f64, f64, f64, f64, f64) {
        let ka = ka.expect("BLAST supports this scoring");
        (ka.lambda, ka.k, ka.h, ka.alpha, ka.beta)
    }

    /// Checks `value` against a number as BLAST printed it: within half a unit of its last
    /// printed digit. Bit scores above 99.9 BLAST prints truncated to an integer
    /// (`(int)bit_score` in align_format_util.cpp), so `truncated` checks those.
    fn assert_printed(value: f64, printed: &str, truncated: bool) {
        let target: f64 = printed.parse().unwrap();
        if truncated {
            assert_eq!(value.trunc(), target, "{} printed as {}", value, printed);
            return;
        }
        let (mantissa, exponent) = match printed.split_once('e') {
            Some((m, e)) => (m, e.parse::<i32>().unwrap()),
            None => (printed, 0),
        };
        let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        let half_unit = 0.5 * 10f64.powi(exponent - decimals);
        assert!((value - target).abs() <= half_unit * (1.0 + 1e-9), "{} does not print as {}", value, printed);
    }

    #[test]
    fn protein_rows_match_blast_stat_c() {
        // blast_stat.c blosum62_values:
        //   {11, 1, (double) INT2_MAX, 0.267, 0.041, 0.14, 1.9, -30, 0.669720, 42.602800, 43.636200}
        // and blastp 2.12.0 prints for BLOSUM62 11/1 "Lambda 0.267 K 0.0410 H 0.140 a 1.90
        // alpha 42.6 sigma 43.6".
        assert_eq!(params(protein("BLOSUM62", 11, 1)), (0.267, 0.041, 0.14, 1.9, -30.0));
        //   {9, 1, (double) INT2_MAX, 0.206, 0.010, 0.052, 4.0, -87, 0.731887, 210.333000, 214.842000}
        assert_eq!(params(protein("BLOSUM62", 9, 1)), (0.206, 0.010, 0.052, 4.0, -87.0));
        // blosum45_values: {14, 2, (double) INT2_MAX, 0.195, 0.032, 0.10, 1.9, -36, ...}
        assert_eq!(params(protein("BLOSUM45", 14, 2)), (0.195, 0.032, 0.10, 1.9, -36.0));
        // blosum50_values: {16, 2, (double) INT2_MAX, 0.215, 0.066, 0.20, 1.05, -15, ...}
        assert_eq!(params(protein("BLOSUM50", 16, 2)), (0.215, 0.066, 0.20, 1.05, -15.0));
        // blosum80_values: {25, 2, (double) INT2_MAX, 0.342, 0.17, 0.66, 0.52, -1.6, ...}
        assert_eq!(params(protein("BLOSUM80", 25, 2)), (0.342, 0.17, 0.66, 0.52, -1.6));
        // blosum90_values: {6, 2, (double) INT2_MAX, 0.259, 0.048, 0.22, 1.2, -16, ...}
        assert_eq!(params(protein("BLOSUM90", 6, 2)), (0.259, 0.048, 0.22, 1.2, -16.0));
        // pam30_values: {9, 1, (double) INT2_MAX, 0.294, 0.11, 0.61, 0.48, -6, ...}
        assert_eq!(params(protein("PAM30", 9, 1)), (0.294, 0.11, 0.61, 0.48, -6.0));
        // pam70_values: {10, 1, (double) INT2_MAX, 0.291, 0.091, 0.41, 0.71, -9, ...}
        assert_eq!(params(protein("PAM70", 10, 1)), (0.291, 0.091, 0.41, 0.71, -9.0));
        // pam250_values: {14, 2, (double) INT2_MAX, 0.182, 0.024, 0.073, 2.5, -53, ...}
        assert_eq!(params(protein("PAM250", 14, 2)), (0.182, 0.024, 0.073, 2.5, -53.0));
    }

    #[test]
    fn gumbel_parameters_follow_blast_gumbel_blk_load_from_tables() {
        // BLOSUM62 11/1: C 0.669720, Alpha 42.6028, Sigma 43.6362 from the row; a_un 0.7916 and
        // Alpha_un 4.96466 from the ungapped row; G = 12, b = 2G(a_un - a), Beta = 2G(Alpha_un -
        // Alpha), Tau = 2G(Alpha_un - Sigma).
        let g = protein("BLOSUM62", 11, 1).unwrap().gumbel.unwrap();
        assert_eq!((g.lambda, g.a, g.alpha_v, g.sigma), (0.267, 1.9, 42.6028, 43.6362));
        assert!((g.b - 24.0 * (0.7916 - 1.9)).abs() < 1e-12);
        assert!((g.beta_v - 24.0 * (4.96466 - 42.6028)).abs() < 1e-12);
        assert!((g.tau - 24.0 * (4.96466 - 43.6362)).abs() < 1e-12);
    }

    #[test]
    fn unsupported_protein_gap_costs_have_no_statistics() {
        // BLOSUM62 supports 11/2 and 11/1 but not 11/3; PAM30 has no 11/1 row.
        assert!(protein("BLOSUM62", 11, 3).is_none());
        assert!(protein("BLOSUM62", 10, 2).is_some());
        assert!(protein("PAM30", 11, 1).is_none());
        assert!(protein("BLOSUM62", 0, 1).is_none());
        let mut odd = Matrix::protein("BLOSUM62").unwrap();
        odd.name = "MYMATRIX".into();
        assert!(KarlinAltschul::lookup(&Scoring::new(odd, 11, 1).unwrap()).is_none());
    }

    #[test]
    fn dna_rows_match_blast_stat_c() {
        // blastn_values_2_3: { 5, 2, 0.625, 0.41, 0.78, 0.8, -2, 99 }; blastn 2.12.0 prints
        // "Lambda 0.625 K 0.410 H 0.780" for -reward 2 -penalty -3 -gapopen 5 -gapextend 2.
        let ka = dna(2, -3, 5, 2).unwrap();
        assert_eq!(params(Some(ka)), (0.625, 0.41, 0.78, 0.8, -2.0));
        assert!(ka.round_down && ka.gumbel.is_none());
        // blastn_values_1_2: { 2, 1, 1.29, 0.49, 0.92, 1.4, -1, 96 }
        let ka = dna(1, -2, 2, 1).unwrap();
        assert_eq!(params(Some(ka)), (1.29, 0.49, 0.92, 1.4, -1.0));
        assert!(!ka.round_down);
        // blastn_values_1_5: { 3, 3, 1.39, 0.747, 1.38, 1.00, 0, 100 }
        assert_eq!(params(dna(1, -5, 3, 3)), (1.39, 0.747, 1.38, 1.00, 0.0));
        // blastn_values_3_4 (no 0/0 row): { 4, 2, 0.281, 0.046, 0.16, 1.8, -23, 69 }, round down.
        assert_eq!(params(dna(3, -4, 4, 2)), (0.281, 0.046, 0.16, 1.8, -23.0));
        assert!(dna(3, -4, 4, 2).unwrap().round_down);
        // blastn_values_3_2: { 5, 5, 0.208, 0.030, 0.072, 2.9, -47, 77}
        assert_eq!(params(dna(3, -2, 5, 5)), (0.208, 0.030, 0.072, 2.9, -47.0));
        // blastn_values_5_4: { 8, 6, 0.146, 0.039, 0.11, 1.3, -29, 76 }
        assert_eq!(params(dna(5, -4, 8, 6)), (0.146, 0.039, 0.11, 1.3, -29.0));
        // blastn_values_4_5: { 3, 5, 0.23, 0.065, 0.25, 0.9, -11, 76 }
        assert_eq!(params(dna(4, -5, 3, 5)), (0.23, 0.065, 0.25, 0.9, -11.0));
        // blastn_values_1_1: { 0, 2, 0.80, 0.064, 0.17, 4.8, -16, 72 } (gap open 0 is a real row)
        assert_eq!(params(dna(1, -1, 0, 2)), (0.80, 0.064, 0.17, 4.8, -16.0));
    }

    #[test]
    fn dna_common_factor_scales_the_reduced_table() {
        // 2/-2 is 1/-1 with gap costs doubled, lambda and alpha halved (s_AdjustGapParametersByGcd):
        // blastn_values_1_1 { 2, 1, 0.99, 0.17, 0.30, 3.3, -10, 90 } serves 2/-2 with gaps 4/2,
        // and blastn 2.12.0 prints "Lambda 0.495 K 0.170 H 0.300" for it.
        assert_eq!(params(dna(2, -2, 4, 2)), (0.495, 0.17, 0.30, 1.65, -10.0));
        assert!(dna(2, -2, 2, 1).is_none(), "2/1 is the unscaled row");
        // 4/-6 reduces to 2/-3 (round down applies), gaps 10/4 to its 5/2 row.
        let ka = dna(4, -6, 10, 4).unwrap();
        assert_eq!(params(Some(ka)), (0.3125, 0.41, 0.78, 0.4, -2.0));
        assert!(ka.round_down);
    }

    #[test]
    fn dna_linear_rows_are_gap_open_zero_extend_half_reward_minus_penalty() {
        // The 0/0 row (greedy, non-affine: open 0, extend reward/2 - penalty).
        // blastn_values_2_7 { 0, 0, 0.69, 0.73, 1.34, 0.515, 0, 100 }: extend 1 + 7 = 8.
        assert_eq!(params(dna(2, -7, 0, 8)), (0.69, 0.73, 1.34, 0.515, 0.0));
        // 2/-4 = 2 x (1/-2); blastn_values_1_2 { 0, 0, 1.28, 0.46, 0.85, 1.5, -2, 96 } with
        // lambda and alpha halved; extend 1 + 4 = 5.
        assert_eq!(params(dna(2, -4, 0, 5)), (0.64, 0.46, 0.85, 0.75, -2.0));
        // 1/-2 would need extend 2.5: not expressible, so no statistics for 0/2 or 0/3 beyond
        // the explicit { 0, 2, ... } row.
        assert_eq!(params(dna(1, -2, 0, 2)), (1.19, 0.34, 0.66, 1.8, -3.0));
        assert!(dna(1, -2, 0, 3).is_none());
    }

    #[test]
    fn unsupported_dna_scoring_has_no_statistics() {
        assert!(dna(1, -6, 3, 3).is_none(), "no 1/-6 table");
        assert!(dna(2, -3, 7, 2).is_none(), "2/-3 has no 7/2 row and 7/2 is not >= 6/4");
        // BLAST's infinite regime (gap costs >= the table maxima, here 4/2 for 1/-1) uses
        // query-dependent ungapped statistics, which have no table: None.
        assert!(dna(1, -1, 5, 5).is_none());
        assert!(dna(0, -1, 5, 2).is_none());
        assert!(dna(1, 0, 5, 2).is_none());
    }

    #[test]
    fn length_adjustment_worked_examples() {
        // BLAST_ComputeLengthAdjustment re-implemented in Python from blast_stat.c:
        //
        //   def adj(K, alpha_d_lambda, beta, m, n, N):
        //       logK = log(K); ell_min = 0.0; ell_next = 0.0; converged = False
        //       a, mb, c = N, m*N + n, n*m - max(m, n)/K
        //       if c < 0: return 0
        //       ell_max = 2*c/(mb + sqrt(mb*mb - 4*a*c))
        //       for i in range(1, 21):
        //           ell = ell_next; ss = (m - ell)*(n - N*ell)
        //           ell_bar = alpha_d_lambda*(logK + log(ss)) + beta
        //           if ell_bar >= ell:
        //               ell_min = ell
        //               if ell_bar - ell_min <= 1.0: converged = True; break
        //               if ell_min == ell_max: break
        //           else: ell_max = ell
        //           if ell_min <= ell_bar <= ell_max: ell_next = ell_bar
        //           else: ell_next = ell_max if i == 1 else (ell_min + ell_max)/2
        //       L = int(ell_min)
        //       if converged:
        //           ell = ceil(ell_min)
        //           if ell <= ell_max and alpha_d_lambda*(logK + log((m-ell)*(n-N*ell))) + beta >= ell:
        //               L = int(ell)
        //       return L
        //
        // BLOSUM62 11/1 (K 0.041, alpha/lambda 1.9/0.267, beta -30), search space
        // max(n - N L, 1) (m - L):
        //   m 350, n 200000000, N 570000 -> L 119, space 132170000 * 231 = 30531270000
        //   m 1000, n 1000, N 1       -> L 44,  space 956 * 956 = 913936
        //   m 5, n 5, N 1             -> c = 25 - 5/0.041 < 0, L 0, space 25
        let ka = protein("BLOSUM62", 11, 1).unwrap();
        assert_eq!(ka.length_adjustment(350, 200_000_000, 570_000), 119);
        assert_eq!(ka.search_space(350, 200_000_000, 570_000), 30_531_270_000.0);
        assert_eq!(ka.length_adjustment(1000, 1000, 1), 44);
        assert_eq!(ka.search_space(1000, 1000, 1), 913_936.0);
        assert_eq!(ka.length_adjustment(5, 5, 1), 0);
        assert_eq!(ka.search_space(5, 5, 1), 25.0);
        // The same snippet gives for score 100: K * space * exp(-0.267 * 100) = 3.175894e-03.
        let e = ka.evalue(100, 350, 200_000_000, 570_000);
        assert!((e / 3.175894e-03 - 1.0).abs() < 1e-6, "{}", e);
        // An empty database keeps the space at the query length (effective db length >= 1).
        assert_eq!(ka.search_space(10, 0, 0), 10.0);
    }

    #[test]
    fn degenerate_lengths_stay_finite() {
        // Score-0 rows (no alignment) may carry empty sequences; nothing may turn into NaN.
        let ka = protein("BLOSUM62", 11, 1).unwrap();
        for (q, t, db, n) in [(0, 0, 0, 0), (10, 0, 100, 3), (0, 10, 10, 1), (1, 1, 1, 1)] {
            assert!(ka.evalue(0, q, db, n).is_finite());
            assert!(ka.evalue_for_subject(0, q, t, db, n).is_finite());
        }
    }

    // --- Independent oracle: NCBI BLAST+ 2.12.0 (Debian ncbi-blast+), run on tiny inputs.
    //
    // Query q1 (277 aa):
    //   MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQ
    //   HDFSAGEGLYTHMKALRPDEDRLSPLHSVYVDQWDWERVMGDGERQFSTLKSTVEAIWAGIKATEAAVSEEFGLAPFLPDQIHF
    //   VHSQELLSRYPDLDAKGRERAIAKDLGAVFLVGIGGKLSDGHRHDVRAPDYDDWUAAIRGRSGSLKRHGATMAVIQIDGDCPT
    //   WILEFSLPAKSSTEERIRLAEHHLSGL
    // Database db.fa: s1 = q1[1..141] (141 aa), s2 = q1[142..220] (79 aa), s3 an unrelated
    // 191 aa sequence; 3 sequences, 411 letters.
    //   makeblastdb -in db.fa -dbtype prot -out db
    //   blastp -query q.fa -db db -comp_based_stats 0 -seg no -evalue 1000 \
    //          -outfmt "6 qseqid sseqid score bitscore evalue"
    // and the same with OLD_FSC=1 in the environment (classic Karlin-Altschul E-values).
    // blastp reports "Effective search space used: 82500".

    const QLEN: u64 = 277;
    const DB_RESIDUES: u64 = 411;
    const DB_SEQS: u64 = 3;

    #[test]
    fn blastp_database_search_matches_blast_output() {
        let ka = protein("BLOSUM62", 11, 1).unwrap();
        assert_eq!(ka.search_space(QLEN, DB_RESIDUES, DB_SEQS), 82_500.0);
        // (subject length, score, bits, default E-value, OLD_FSC E-value) as blastp printed them.
        let hits = [
            (141, 730, "285", "2.17e-103", "7.60e-82"),
            (141, 17, "11.2", "47", "36"),
            (79, 409, "162", "1.42e-55", "1.27e-44"),
            (79, 17, "11.2", "46", "36"),
            (191, 25, "14.2", "4.9", "4.3"),
            (191, 21, "12.7", "15", "12"),
            (191, 20, "12.3", "20", "16"),
            (191, 19, "11.9", "27", "21"),
            (191, 13, "9.6", "148", "105"),
            (191, 11, "8.8", "262", "179"),
        ];
        for (subject_len, score, bits, evalue, old_fsc) in hits {
            assert_printed(ka.bits(score), bits, !bits.contains('.'));
            assert_printed(ka.evalue_for_subject(score, QLEN, subject_len, DB_RESIDUES, DB_SEQS), evalue, false);
            assert_printed(ka.evalue(score, QLEN, DB_RESIDUES, DB_SEQS), old_fsc, false);
        }
    }

    #[test]
    fn blastp_with_pinned_database_size_matches_blast_output() {
        // Same inputs plus -dbsize 1000000 (and -evalue 100000); blastp reports
        // "Effective search space used: 193951694".
        let ka = protein("BLOSUM62", 11, 1).unwrap();
        let db = 1_000_000;
        assert_eq!(ka.search_space(QLEN, db, DB_SEQS), 193_951_694.0);
        for (subject_len, score, evalue, old_fsc) in
            [(141, 730, "5.29e-100", "1.79e-78"), (79, 409, "3.45e-52", "2.98e-41"), (191, 19, "65720", "49808")]
        {
            assert_printed(ka.evalue_for_subject(score, QLEN, subject_len, db, DB_SEQS), evalue, false);
            assert_printed(ka.evalue(score, QLEN, db, DB_SEQS), old_fsc, false);
        }
    }

    #[test]
    fn blastp_pairwise_matches_blast_output() {
        // Align mode: blastp -query q.fa -subject s3.fa -comp_based_stats 0 -seg no -evalue 1000
        // (s3 alone, 191 aa): "Effective search space used: 42672"; scores 25 and 21 print
        // E 2.3 and 7.1 (default), 2.2 and 6.4 (OLD_FSC=1).
        let ka = protein("BLOSUM62", 11, 1).unwrap();
        assert_eq!(ka.search_space(QLEN, 191, 1), 42_672.0);
        for (score, evalue, old_fsc) in [(25, "2.3", "2.2"), (21, "7.1", "6.4")] {
            assert_printed(ka.evalue_for_subject(score, QLEN, 191, 191, 1), evalue, false);
            assert_printed(ka.evalue(score, QLEN, 191, 1), old_fsc, false);
        }
    }

    #[test]
    fn blastp_pam30_matches_blast_output() {
        // blastp ... -matrix PAM30 -gapopen 9 -gapextend 1 on the database above.
        let ka = protein("PAM30", 9, 1).unwrap();
        for (subject_len, score, bits, evalue, old_fsc) in [
            (141, 1070, "457", "2.13e-152", "2.71e-133"),
            (79, 582, "250", "2.62e-79", "5.53e-71"),
            (191, 22, "12.5", "19", "18"),
        ] {
            assert_printed(ka.bits(score), bits, !bits.contains('.'));
            assert_printed(ka.evalue_for_subject(score, QLEN, subject_len, DB_RESIDUES, DB_SEQS), evalue, false);
            assert_printed(ka.evalue(score, QLEN, DB_RESIDUES, DB_SEQS), old_fsc, false);
        }
    }

    #[test]
    fn blastn_matches_blast_output() {
        // Query nq (200 nt) against ndb.fa (3 sequences, 692 nt; n1 holds a mutated copy of
        // the query's middle 120 nt with a 2 nt insertion):
        //   blastn -task blastn -query nq.fa -db ndb -dust no -strand plus -evalue 1000 \
        //          -outfmt "6 qseqid sseqid score bitscore evalue" <scoring>
        // (<scoring>, reward, penalty, open, extend, score, bits, E-value, effective space)
        let cases = [
            ("-reward 2 -penalty -3 -gapopen 5 -gapextend 2", 2, -3, 5, 2, 218, "197", "3.43e-55", 124_551.0),
            ("-reward 1 -penalty -2 -gapopen 2 -gapextend 1", 1, -2, 2, 1, 108, "202", "1.92e-56", 125_780.0),
            ("-reward 2 -penalty -2 -gapopen 4 -gapextend 2", 2, -2, 4, 2, 222, "161", "3.57e-44", 111_428.0),
            ("-reward 1 -penalty -3 -gapopen 2 -gapextend 2", 1, -3, 2, 2, 103, "204", "4.63e-57", 127_015.0),
        ];
        for (_, reward, penalty, open, extend, score, bits, evalue, space) in cases {
            let ka = dna(reward, penalty, open, extend).unwrap();
            assert_eq!(ka.search_space(200, 692, 3), space);
            assert_printed(ka.bits(score), bits, true);
            assert_printed(ka.evalue(score, 200, 692, 3), evalue, false);
            // No Gumbel parameters for DNA: the default E-value is the classic one.
            assert_eq!(ka.evalue_for_subject(score, 200, 242, 692, 3), ka.evalue(score, 200, 692, 3));
        }
    }

    #[test]
    fn blastn_rounds_odd_scores_down_for_the_evalue_only() {
        // Query oq (100 nt) = o1 (101 nt) without the T at o1 position 51; odb.fa holds o1 and a
        // 200 nt random o2 (2 sequences, 301 nt).
        //   blastn -task blastn -query oq.fa -db odb -reward 2 -penalty -3 -gapopen 5 \
        //          -gapextend 2 -dust no -strand plus -outfmt "6 ... score bitscore evalue ..."
        // prints score 193 (100 matches, one 1-nt gap: 200 - 7), bits 175 (from 193: 175.3;
        // 192 would give 174.4) and E 8.10e-49 (from 192; 193 would give 4.33e-49).
        let ka = dna(2, -3, 5, 2).unwrap();
        assert_printed(ka.bits(193), "175", true);
        assert_printed(ka.evalue(193, 100, 301, 2), "8.10e-49", false);
        assert_eq!(ka.evalue(193, 100, 301, 2), ka.evalue(192, 100, 301, 2));
    }

    /// Every protein table row against what blastp 2.12.0 prints for it:
    ///   blastp -query q.fa -db db -comp_based_stats 0 -seg no -dbsize 1000000 \
    ///          -matrix M -gapopen O -gapextend E -evalue 1e-300
    /// "Gapped / Lambda K H a alpha sigma" (3 significant digits) and "Effective search space
    /// used", which exercises the row's alpha and beta through the length adjustment.
    #[test]
    fn every_protein_row_matches_blastp_printout() {
        type Row = (&'static str, i32, i32, [&'static str; 6], u64);
        #[rustfmt::skip]
        let printed: [Row; 82] = [
        ("BLOSUM45", 13, 3, ["0.207", "0.0490", "0.140", "1.50", "35.9", "36.0"], 182948394),
        ("BLOSUM45", 12, 3, ["0.199", "0.0390", "0.110", "1.80", "45.7", "45.9"], 168945244),
        ("BLOSUM45", 11, 3, ["0.190", "0.0310", "0.0950", "2.00", "62.9", "63.1"], 153943174),
        ("BLOSUM45", 10, 3, ["0.179", "0.0230", "0.0750", "2.40", "88.3", "88.6"], 128942724),
        ("BLOSUM45", 16, 2, ["0.210", "0.0510", "0.140", "1.50", "36.3", "36.5"], 186949510),
        ("BLOSUM45", 15, 2, ["0.203", "0.0410", "0.120", "1.70", "44.8", "45.1"], 175946672),
        ("BLOSUM45", 14, 2, ["0.195", "0.0320", "0.100", "1.90", "60.7", "61.1"], 162944254),
        ("BLOSUM45", 13, 2, ["0.185", "0.0240", "0.0840", "2.20", "85.1", "85.7"], 143942544),
        ("BLOSUM45", 12, 2, ["0.171", "0.0160", "0.0610", "2.80", "128.", "129."], 106945430),
        ("BLOSUM45", 19, 1, ["0.205", "0.0400", "0.110", "1.90", "53.1", "53.8"], 173946234),
        ("BLOSUM45", 18, 1, ["0.198", "0.0320", "0.100", "2.00", "72.3", "73.4"], 163944404),
        ("BLOSUM45", 17, 1, ["0.189", "0.0240", "0.0790", "2.40", "103.", "105."], 142942514),
        ("BLOSUM45", 16, 1, ["0.176", "0.0160", "0.0630", "2.80", "170.", "173."], 114944110),
        ("BLOSUM50", 13, 3, ["0.212", "0.0630", "0.190", "1.10", "18.1", "18.2"], 207956944),
        ("BLOSUM50", 12, 3, ["0.206", "0.0550", "0.170", "1.20", "22.7", "22.8"], 200954172),
        ("BLOSUM50", 11, 3, ["0.197", "0.0420", "0.140", "1.40", "29.9", "30.0"], 189950410),
        ("BLOSUM50", 10, 3, ["0.186", "0.0310", "0.110", "1.70", "42.4", "42.7"], 169945430),
        ("BLOSUM50", 9, 3, ["0.172", "0.0220", "0.0820", "2.10", "66.1", "66.5"], 142942514),
        ("BLOSUM50", 16, 2, ["0.215", "0.0660", "0.200", "1.05", "18.0", "18.1"], 211958660),
        ("BLOSUM50", 15, 2, ["0.210", "0.0580", "0.170", "1.20", "21.9", "22.1"], 203955324),
        ("BLOSUM50", 14, 2, ["0.202", "0.0450", "0.140", "1.40", "28.7", "29.0"], 193951694),
        ("BLOSUM50", 13, 2, ["0.193", "0.0350", "0.120", "1.60", "42.1", "42.5"], 179947620),
        ("BLOSUM50", 12, 2, ["0.181", "0.0250", "0.0950", "1.90", "63.7", "64.4"], 158943714),
        ("BLOSUM50", 19, 1, ["0.212", "0.0570", "0.180", "1.20", "26.3", "26.9"], 205956122),
        ("BLOSUM50", 18, 1, ["0.207", "0.0500", "0.150", "1.40", "34.9", "35.7"], 196952720),
        ("BLOSUM50", 17, 1, ["0.198", "0.0370", "0.120", "1.60", "48.9", "50.1"], 182948394),
        ("BLOSUM50", 16, 1, ["0.186", "0.0250", "0.100", "1.90", "76.5", "78.4"], 163944404),
        ("BLOSUM50", 15, 1, ["0.171", "0.0150", "0.0630", "2.70", "140.", "144."], 124943000),
        ("BLOSUM62", 11, 2, ["0.297", "0.0820", "0.270", "1.10", "12.7", "12.8"], 225965422),
        ("BLOSUM62", 10, 2, ["0.291", "0.0750", "0.230", "1.30", "16.5", "16.6"], 217961414),
        ("BLOSUM62", 9, 2, ["0.279", "0.0580", "0.190", "1.50", "22.8", "22.9"], 208957364),
        ("BLOSUM62", 8, 2, ["0.264", "0.0450", "0.150", "1.80", "35.5", "35.8"], 194952030),
        ("BLOSUM62", 7, 2, ["0.239", "0.0270", "0.100", "2.50", "61.2", "61.9"], 162944254),
        ("BLOSUM62", 6, 2, ["0.201", "0.0120", "0.0610", "3.30", "140.", "142."], 104945820),
        ("BLOSUM62", 13, 1, ["0.292", "0.0710", "0.230", "1.20", "19.5", "19.9"], 219962380),
        ("BLOSUM62", 12, 1, ["0.283", "0.0590", "0.190", "1.50", "27.9", "28.5"], 209957790),
        ("BLOSUM62", 11, 1, ["0.267", "0.0410", "0.140", "1.90", "42.6", "43.6"], 193951694),
        ("BLOSUM62", 10, 1, ["0.243", "0.0240", "0.100", "2.50", "83.2", "85.1"], 164944560),
        ("BLOSUM62", 9, 1, ["0.206", "0.0100", "0.0520", "4.00", "210.", "215."], 100946672),
        ("BLOSUM80", 25, 2, ["0.342", "0.170", "0.660", "0.520", "1.73", "1.73"], 251981100),
        ("BLOSUM80", 13, 2, ["0.336", "0.150", "0.570", "0.590", "2.67", "2.69"], 249979750),
        ("BLOSUM80", 9, 2, ["0.319", "0.110", "0.420", "0.760", "5.58", "5.67"], 242975214),
        ("BLOSUM80", 8, 2, ["0.308", "0.0900", "0.350", "0.890", "7.54", "7.69"], 237972154),
        ("BLOSUM80", 7, 2, ["0.293", "0.0700", "0.270", "1.10", "11.6", "11.8"], 228967024),
        ("BLOSUM80", 6, 2, ["0.268", "0.0450", "0.190", "1.40", "20.0", "20.4"], 212959104),
        ("BLOSUM80", 11, 1, ["0.314", "0.0950", "0.350", "0.900", "8.81", "9.22"], 237972154),
        ("BLOSUM80", 10, 1, ["0.299", "0.0710", "0.270", "1.10", "13.8", "14.5"], 229967570),
        ("BLOSUM80", 9, 1, ["0.279", "0.0480", "0.200", "1.40", "24.3", "25.5"], 214960010),
        ("BLOSUM90", 9, 2, ["0.310", "0.120", "0.460", "0.670", "4.23", "4.33"], 245977122),
        ("BLOSUM90", 8, 2, ["0.300", "0.0990", "0.390", "0.760", "5.80", "5.96"], 240973972),
        ("BLOSUM90", 7, 2, ["0.283", "0.0720", "0.300", "0.930", "9.04", "9.32"], 233969814),
        ("BLOSUM90", 6, 2, ["0.259", "0.0480", "0.220", "1.20", "16.0", "16.5"], 218961894),
        ("BLOSUM90", 11, 1, ["0.302", "0.0930", "0.390", "0.780", "7.14", "7.62"], 241974590),
        ("BLOSUM90", 10, 1, ["0.290", "0.0750", "0.280", "1.04", "11.5", "12.3"], 232969244),
        ("BLOSUM90", 9, 1, ["0.265", "0.0440", "0.200", "1.30", "21.4", "22.8"], 217961414),
        ("PAM30", 7, 2, ["0.305", "0.150", "0.870", "0.350", "1.01", "1.16"], 259986740),
        ("PAM30", 6, 2, ["0.287", "0.110", "0.680", "0.420", "1.69", "1.95"], 255983872),
        ("PAM30", 5, 2, ["0.264", "0.0790", "0.450", "0.590", "3.38", "3.87"], 246977770),
        ("PAM30", 10, 1, ["0.309", "0.150", "0.880", "0.350", "1.37", "1.79"], 260987472),
        ("PAM30", 9, 1, ["0.294", "0.110", "0.610", "0.480", "2.46", "3.19"], 255983872),
        ("PAM30", 8, 1, ["0.270", "0.0720", "0.400", "0.680", "5.37", "6.76"], 244976480),
        ("PAM70", 8, 2, ["0.301", "0.120", "0.540", "0.560", "2.88", "3.03"], 249979750),
        ("PAM70", 7, 2, ["0.286", "0.0930", "0.430", "0.670", "4.53", "4.79"], 244976480),
        ("PAM70", 6, 2, ["0.264", "0.0640", "0.290", "0.900", "7.94", "8.40"], 232969244),
        ("PAM70", 11, 1, ["0.305", "0.120", "0.520", "0.590", "3.68", "4.11"], 249979750),
        ("PAM70", 10, 1, ["0.291", "0.0910", "0.410", "0.710", "6.00", "6.72"], 244976480),
        ("PAM70", 9, 1, ["0.270", "0.0600", "0.280", "0.970", "11.4", "12.6"], 231968680),
        ("PAM250", 15, 3, ["0.205", "0.0490", "0.130", "1.60", "34.6", "34.9"], 175946672),
        ("PAM250", 14, 3, ["0.200", "0.0430", "0.120", "1.70", "43.4", "43.4"], 168945244),
        ("PAM250", 13, 3, ["0.194", "0.0360", "0.100", "1.90", "50.9", "51.1"], 155943372),
        ("PAM250", 12, 3, ["0.186", "0.0290", "0.0850", "2.20", "69.6", "69.8"], 138942454),
        ("PAM250", 11, 3, ["0.174", "0.0200", "0.0700", "2.50", "98.7", "98.9"], 114944110),
        ("PAM250", 17, 2, ["0.204", "0.0470", "0.120", "1.70", "41.6", "41.7"], 172946024),
        ("PAM250", 16, 2, ["0.198", "0.0380", "0.110", "1.80", "51.6", "51.8"], 163944404),
        ("PAM250", 15, 2, ["0.191", "0.0310", "0.0870", "2.20", "67.3", "67.6"], 144942580),
        ("PAM250", 14, 2, ["0.182", "0.0240", "0.0730", "2.50", "96.3", "96.8"], 125942922),
        ("PAM250", 13, 2, ["0.171", "0.0170", "0.0590", "2.90", "136.", "136."], 98947134),
        ("PAM250", 21, 1, ["0.205", "0.0450", "0.110", "1.80", "48.7", "49.2"], 171945820),
        ("PAM250", 20, 1, ["0.199", "0.0370", "0.100", "1.90", "60.8", "61.5"], 162944254),
        ("PAM250", 19, 1, ["0.192", "0.0290", "0.0830", "2.30", "84.0", "85.0"], 146942670),
        ("PAM250", 18, 1, ["0.183", "0.0210", "0.0700", "2.60", "114.", "115."], 126942850),
        ("PAM250", 17, 1, ["0.171", "0.0140", "0.0520", "3.30", "175.", "177."], 91948940),
        ];
        for (matrix, open, extend, [lambda, k, h, a, alpha_v, sigma], space) in printed {
            let ka = protein(matrix, open, extend).unwrap();
            let g = ka.gumbel.unwrap();
            for (ours, blast) in
                [(ka.lambda, lambda), (ka.k, k), (ka.h, h), (ka.alpha, a), (g.alpha_v, alpha_v), (g.sigma, sigma)]
            {
                assert_printed(ours, blast, false);
            }
            assert_eq!(ka.search_space(QLEN, 1_000_000, DB_SEQS), space as f64, "{} {}/{}", matrix, open, extend);
        }
    }

    /// Every blastn table row (and a few rows scaled by a common factor) against blastn 2.12.0:
    ///   blastn -task blastn -query nq.fa -db ndb -dust no -strand plus -dbsize 1000000 \
    ///          -reward R -penalty P -gapopen O -gapextend E -evalue 1e-300
    /// (-task megablast for the 0/0 rows): "Gapped / Lambda K H" and the effective search space.
    #[test]
    fn every_blastn_row_matches_blastn_printout() {
        type Row = (i32, i32, i32, i32, [&'static str; 3], u64);
        #[rustfmt::skip]
        let printed: [Row; 64] = [
        (1, -5, 0, 0, ["1.39", "0.747", "1.38"], 186992707),
        (1, -5, 3, 3, ["1.39", "0.747", "1.38"], 186992707),
        (1, -4, 0, 0, ["1.38", "0.738", "1.36"], 186992707),
        (1, -4, 1, 2, ["1.36", "0.670", "1.20"], 184991675),
        (1, -4, 0, 2, ["1.26", "0.430", "0.900"], 180989683),
        (1, -4, 2, 1, ["1.35", "0.610", "1.10"], 184991675),
        (1, -4, 1, 1, ["1.22", "0.350", "0.720"], 177988252),
        (2, -7, 0, 0, ["0.690", "0.730", "1.34"], 186992707),
        (2, -7, 2, 4, ["0.680", "0.670", "1.20"], 184991675),
        (2, -7, 0, 4, ["0.630", "0.430", "0.900"], 180989683),
        (2, -7, 4, 2, ["0.675", "0.620", "1.10"], 184991675),
        (2, -7, 2, 2, ["0.610", "0.350", "0.720"], 153978748),
        (1, -3, 0, 0, ["1.37", "0.711", "1.31"], 185992188),
        (1, -3, 2, 2, ["1.37", "0.700", "1.20"], 185992188),
        (1, -3, 1, 2, ["1.35", "0.640", "1.10"], 184991675),
        (1, -3, 0, 2, ["1.25", "0.420", "0.830"], 180989683),
        (1, -3, 2, 1, ["1.34", "0.600", "1.10"], 184991675),
        (1, -3, 1, 1, ["1.21", "0.340", "0.710"], 176987787),
        (2, -5, 0, 0, ["0.675", "0.650", "1.10"], 184991675),
        (2, -5, 2, 4, ["0.670", "0.590", "1.10"], 184991675),
        (2, -5, 0, 4, ["0.620", "0.390", "0.780"], 178988723),
        (2, -5, 4, 2, ["0.670", "0.610", "1.00"], 184991675),
        (2, -5, 2, 2, ["0.560", "0.320", "0.590"], 173986428),
        (1, -2, 0, 0, ["1.28", "0.460", "0.850"], 180989683),
        (1, -2, 2, 2, ["1.33", "0.620", "1.10"], 183991168),
        (1, -2, 1, 2, ["1.30", "0.520", "0.930"], 182990667),
        (1, -2, 0, 2, ["1.19", "0.340", "0.660"], 175987328),
        (1, -2, 3, 1, ["1.32", "0.570", "1.00"], 182990667),
        (1, -2, 2, 1, ["1.29", "0.490", "0.920"], 181990172),
        (1, -2, 1, 1, ["1.14", "0.260", "0.520"], 171985552),
        (2, -3, 0, 0, ["0.550", "0.210", "0.460"], 167983872),
        (2, -3, 4, 4, ["0.630", "0.420", "0.840"], 180989683),
        (2, -3, 2, 4, ["0.615", "0.370", "0.720"], 178988723),
        (2, -3, 0, 4, ["0.550", "0.210", "0.460"], 167983872),
        (2, -3, 3, 3, ["0.615", "0.370", "0.680"], 176987787),
        (2, -3, 6, 2, ["0.630", "0.420", "0.840"], 180989683),
        (2, -3, 5, 2, ["0.625", "0.410", "0.780"], 178988723),
        (2, -3, 4, 2, ["0.610", "0.350", "0.680"], 176987787),
        (2, -3, 2, 2, ["0.515", "0.140", "0.330"], 158980443),
        (3, -4, 6, 3, ["0.389", "0.250", "0.560"], 173986428),
        (3, -4, 5, 3, ["0.375", "0.210", "0.470"], 168984283),
        (3, -4, 4, 3, ["0.351", "0.140", "0.350"], 160981163),
        (3, -4, 6, 2, ["0.362", "0.160", "0.450"], 166983467),
        (3, -4, 5, 2, ["0.330", "0.0920", "0.280"], 153978748),
        (3, -4, 4, 2, ["0.281", "0.0460", "0.160"], 123971728),
        (4, -5, 0, 0, ["0.220", "0.0610", "0.220"], 142975547),
        (4, -5, 6, 5, ["0.280", "0.210", "0.470"], 169984700),
        (4, -5, 5, 5, ["0.270", "0.170", "0.390"], 164982675),
        (4, -5, 4, 5, ["0.250", "0.100", "0.310"], 156979747),
        (4, -5, 3, 5, ["0.230", "0.0650", "0.250"], 148977203),
        (1, -1, 3, 2, ["1.09", "0.310", "0.550"], 169984700),
        (1, -1, 2, 2, ["1.07", "0.270", "0.490"], 166983467),
        (1, -1, 1, 2, ["1.02", "0.210", "0.360"], 158980443),
        (1, -1, 0, 2, ["0.800", "0.0640", "0.170"], 120971323),
        (1, -1, 4, 1, ["1.08", "0.280", "0.540"], 169984700),
        (1, -1, 3, 1, ["1.06", "0.250", "0.460"], 165983068),
        (1, -1, 2, 1, ["0.990", "0.170", "0.300"], 153978748),
        (3, -2, 5, 5, ["0.208", "0.0300", "0.0720"], 49977500),
        (5, -4, 10, 6, ["0.163", "0.0680", "0.160"], 121971452),
        (5, -4, 8, 6, ["0.146", "0.0390", "0.110"], 94970075),
        (2, -2, 6, 4, ["0.545", "0.310", "0.550"], 169984700),
        (2, -4, 0, 0, ["0.640", "0.460", "0.850"], 180989683),
        (4, -6, 10, 4, ["0.312", "0.410", "0.780"], 178988723),
        (3, -6, 6, 3, ["0.430", "0.490", "0.920"], 181990172),
        ];
        for (reward, penalty, open, extend, [lambda, k, h], space) in printed {
            let ka = lookup_dna(reward, penalty, open, extend).unwrap();
            for (ours, blast) in [(ka.lambda, lambda), (ka.k, k), (ka.h, h)] {
                assert_printed(ours, blast, false);
            }
            assert_eq!(ka.search_space(200, 1_000_000, 3), space as f64, "{}/{} {}/{}", reward, penalty, open, extend);
        }
    }
}

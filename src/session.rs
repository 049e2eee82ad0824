//! A run's setup, shared by the command line and the Python package: the scoring of
//! `align`'s options (with their checks), an engine opened once and reused for any number of
//! inputs ([`Aligner`]), a search's numbers and search space ([`SearchSettings`]), the run
//! metadata every output carries, and the nucleotide look of protein input. The callers only
//! say where the pairs come from and where the rows go.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::database::Database;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::io::{BatchLimits, PairReader, SeqSet};
use crate::output::{Need, ResultWriter, RunMetadata, Thresholds};
use crate::pipeline::{self, StageTimes};
use crate::progress::Progress;
use crate::scoring::{
    alphabet::NucleotideLook,
    stats::{EvalueModel, KarlinAltschul},
    Alphabet, Matrix, Scoring,
};
use crate::seq::{Carried, PairBatch};

/// `align`'s scoring options as given (`None`: the default of protein or DNA scoring).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlignScoring {
    /// Protein substitution matrix (default BLOSUM62); not with `dna`.
    pub matrix: Option<String>,
    pub dna: bool,
    pub match_score: i32,
    pub mismatch: i32,
    pub gap_open: Option<i32>,
    pub gap_extend: Option<i32>,
}

impl Default for AlignScoring {
    fn default() -> Self {
        AlignScoring { matrix: None, dna: false, match_score: 2, mismatch: -3, gap_open: None, gap_extend: None }
    }
}

impl AlignScoring {
    /// The scoring scheme: BLOSUM62 11/1 for proteins, match 2 mismatch -3 open 5 extend 2
    /// for DNA unless given; numbers that would make scores meaningless are usage errors.
    pub fn scoring(&self) -> Result<Scoring> {
        if self.dna && self.matrix.is_some() {
            return Err(Error::usage("--matrix and --dna exclude each other: DNA is scored by --match/--mismatch"));
        }
        let (matrix, open, extend) = if self.dna {
            (Matrix::dna(self.match_score, self.mismatch), 5, 2)
        } else {
            (Matrix::protein(self.matrix.as_deref().unwrap_or("BLOSUM62"))?, 11, 1)
        };
        if self.dna && self.match_score <= 0 {
            return Err(Error::usage(format!("--match must be positive (got {})", self.match_score)));
        }
        if self.dna {
            check_mismatch(self.match_score, self.mismatch)?;
        }
        check_dna_scores(self.match_score, self.mismatch)?;
        Scoring::new(matrix, self.gap_open.unwrap_or(open), self.gap_extend.unwrap_or(extend))
    }
}

/// A DNA mismatch is a score, below 0 and below the match score: BWA, minimap2 and GASAL2
/// take it as a positive penalty, which here would reward mismatches.
fn check_mismatch(matched: i32, mismatched: i32) -> Result<()> {
    if mismatched >= 0 || mismatched >= matched {
        let hint = if mismatched > 0 { mismatched.saturating_neg() } else { -3 };
        return Err(Error::usage(format!(
            "--mismatch is a score, not a penalty: it must be below 0 and below --match {matched} \
             (got {mismatched}); did you mean --mismatch {hint}?"
        )));
    }
    Ok(())
}

/// DNA scores are bounded so that the engines' 32-bit arithmetic (which subtracts scores from
/// a far-negative sentinel) cannot wrap; scores per pair are bounded again by its lengths.
fn check_dna_scores(matched: i32, mismatched: i32) -> Result<()> {
    const LIMIT: i32 = crate::scoring::MAX_SCORE_MAGNITUDE;
    if matched > LIMIT || mismatched < -LIMIT || mismatched > LIMIT {
        return Err(Error::usage(format!(
            "--match and --mismatch must lie within -{LIMIT}..={LIMIT} (got {matched} and {mismatched})"
        )));
    }
    Ok(())
}

pub fn check_threads(threads: Option<usize>) -> Result<()> {
    if threads == Some(0) {
        return Err(Error::usage("--threads must be at least 1"));
    }
    Ok(())
}

/// Karlin-Altschul parameters, or a one-line warning that bits and E-values will be null.
pub fn statistics(scoring: &Scoring) -> Option<KarlinAltschul> {
    let stats = KarlinAltschul::lookup(scoring);
    if stats.is_none() {
        eprintln!("swarrow: warning: no BLAST statistics for {}; bits and evalue will be null", scoring.describe());
    }
    stats
}

/// The facts every output of `mode` carries about its run.
pub fn run_metadata(mode: &str, scoring: &Scoring, engine: &dyn Engine) -> RunMetadata {
    let mut meta = RunMetadata::new();
    meta.push("swarrow_version", env!("CARGO_PKG_VERSION"));
    meta.push("mode", mode);
    meta.push("scoring", &scoring.matrix.name);
    meta.push("gap_open", &scoring.gap_open.to_string());
    meta.push("gap_extend", &scoring.gap_extend.to_string());
    meta.push("gap_cost_rule", "a gap of length k costs gap_open + k * gap_extend");
    if engine.mode().is_local() {
        meta.push("coordinates", "1-based inclusive; 0 when score is 0");
    } else {
        meta.push("alignment_mode", &engine.mode().to_string());
        meta.push("coordinates", "1-based inclusive; 0 for a sequence with no residue in the alignment");
    }
    meta.push_engine(&engine.name());
    meta
}

/// An engine opened once for one scoring scheme, aligning any number of pair inputs.
#[derive(Clone)]
pub struct Aligner {
    engine: Arc<dyn Engine>,
    stats: Option<KarlinAltschul>,
    evalue_model: EvalueModel,
    /// Pairs per batch and batches in flight (tuning; `None`: the engine's defaults).
    batch_pairs: Option<usize>,
    in_flight: Option<usize>,
    /// Rows kept (empty: every pair's).
    thresholds: Thresholds,
    /// Bits and E-values are written (when not, they are computed only for thresholds).
    statistics_written: bool,
    /// The strands queries are aligned on, and whether a column writes the query's end.
    strand: pipeline::orient::StrandRule,
    query_end_written: bool,
}

impl Aligner {
    /// An aligner on `engine` (built for its scoring); warns once when the scoring has no
    /// statistics. `batch_pairs` of 0 is a usage error.
    pub fn new(
        engine: Arc<dyn Engine>,
        evalue_model: EvalueModel,
        batch_pairs: Option<usize>,
        in_flight: Option<usize>,
    ) -> Result<Aligner> {
        if batch_pairs == Some(0) {
            return Err(Error::usage("--batch must be at least 1"));
        }
        // Karlin-Altschul statistics hold for local alignments only: bits and E-values of
        // the other modes are null (no warning: nothing is missing).
        let stats = if engine.mode().is_local() { statistics(engine.scoring()) } else { None };
        let thresholds = Thresholds::default();
        Ok(Aligner {
            engine,
            stats,
            evalue_model,
            batch_pairs,
            in_flight,
            thresholds,
            statistics_written: true,
            strand: pipeline::orient::StrandRule::AsGiven,
            query_end_written: true,
        })
    }

    /// The same aligner for outputs with or without bits and E-value columns: without them,
    /// statistics are computed only where a threshold needs them (~200 ns a pair).
    pub fn with_statistics_written(mut self, written: bool) -> Aligner {
        self.statistics_written = written;
        self
    }

    /// The same aligner on the strands `rule` names; DNA only (a protein has no reverse
    /// complement). `query_end_written`: a column writes where the query's alignment ends
    /// (on the minus strand that takes the start pass; without it, score and target end
    /// need the forward pass alone).
    pub fn with_strand(mut self, rule: pipeline::orient::StrandRule, query_end_written: bool) -> Result<Aligner> {
        use pipeline::orient::StrandRule;
        if matches!(rule, StrandRule::Minus | StrandRule::Both)
            && self.scoring().alphabet() != crate::scoring::Alphabet::Dna
        {
            return Err(Error::usage(
                "--strand minus and --strand both need DNA scoring (--dna or a DNA matrix): proteins have one strand",
            ));
        }
        self.strand = rule;
        self.query_end_written = query_end_written;
        Ok(self)
    }

    /// The same aligner writing only the pairs that pass `thresholds`; an error when one
    /// needs statistics this scoring has not.
    pub fn with_thresholds(mut self, thresholds: Thresholds) -> Result<Aligner> {
        let mode = self.engine.mode();
        if let Some(option) = thresholds.statistics_option().filter(|_| self.stats.is_none()) {
            return Err(Error::usage(if mode.is_local() {
                format!("{option} needs BLAST statistics, which {} has not", self.scoring().describe())
            } else {
                format!(
                    "{option}: E-values and bits need local mode (--mode local); in {mode} mode they are null \
                     (Karlin-Altschul statistics hold for local alignments only)"
                )
            }));
        }
        if mode.is_local() {
            thresholds.check_local()?;
        }
        self.thresholds = thresholds;
        Ok(self)
    }

    /// How pair readers make windows for this aligner: its mode's reach along the diagonal
    /// and its strands (`io::PairOptions::reach`, `strand`).
    pub fn place_windows(&self, options: &mut crate::io::PairOptions) {
        options.reach = self.engine.mode().window_reach();
        options.strand = self.strand;
    }

    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    pub fn scoring(&self) -> &Scoring {
        self.engine.scoring()
    }

    fn options(&self, need: Need, progress: &Progress) -> pipeline::align::AlignOptions {
        pipeline::align::AlignOptions {
            stats: self.stats.filter(|_| self.statistics_written || self.thresholds.need_statistics()),
            scoring: self.scoring().clone(),
            progress: progress.clone(),
            batch_pairs: self.batch_pairs,
            in_flight: self.in_flight,
            need,
            evalue_model: self.evalue_model,
            thresholds: self.thresholds.clone(),
            strand: self.strand,
            query_end_written: self.query_end_written,
        }
    }

    /// What a run whose columns need `need` computes, its thresholds included.
    pub fn work_need(&self, need: Need) -> Need {
        self.options(need, &Progress::hidden()).work_need()
    }

    /// How large pair readers make batches for this engine.
    pub fn limits(&self) -> BatchLimits {
        pipeline::align::batch_limits(self.engine.as_ref(), &self.options(Need::ScoreEnd, &Progress::hidden()))
    }

    /// The run metadata of this aligner's outputs.
    pub fn metadata(&self) -> RunMetadata {
        let mut meta = run_metadata("align", self.scoring(), self.engine.as_ref());
        meta.push("evalue_model", self.evalue_model.name());
        if !self.thresholds.is_empty() {
            meta.push("thresholds", self.thresholds.describe());
        }
        meta
    }

    /// Aligns every pair of `pairs` (computing what `need` asks for) into `writer`, which is
    /// finished on success; says where the time went.
    pub fn run(
        &self,
        pairs: Box<dyn PairReader>,
        need: Need,
        progress: &Progress,
        writer: Box<dyn ResultWriter>,
    ) -> Result<StageTimes> {
        pipeline::align::align(self.engine.clone(), pairs, self.options(need, progress), writer)
    }

    /// [`Aligner::run`] for pairs by id given as sequence numbers into `sets`, their score
    /// and end from `paired` (the GPU's kernel of pairs grouped by query).
    pub fn run_paired(
        &self,
        paired: &crate::engine::cuda::paired::PairedAligner,
        sets: (Arc<crate::io::SeqSet>, Arc<crate::io::SeqSet>),
        pairs: Box<dyn PairReader>,
        need: Need,
        progress: &Progress,
        writer: Box<dyn ResultWriter>,
    ) -> Result<StageTimes> {
        let opts = self.options(need, progress);
        pipeline::align::align_paired(self.engine.clone(), paired, sets, pairs, opts, writer)
    }
}

/// A search's numbers as given: hits per query, E-value cut, and the whole database's size
/// when a workflow shards it (`None`: the loaded database's).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    pub top: usize,
    pub max_evalue: f64,
    pub db_size: Option<u64>,
    pub db_seqs: Option<u64>,
    pub evalue_model: EvalueModel,
    /// Hits kept of each query's best `top` (E-values: `max_evalue`).
    pub thresholds: Thresholds,
}

impl SearchSettings {
    /// Numbers that would make a search meaningless are usage errors, not silently accepted:
    /// `--max-evalue NaN` would turn filtering off, `--db-size 0` would print E-values of nothing.
    pub fn check(&self) -> Result<()> {
        if self.top == 0 {
            return Err(Error::usage("--top must be at least 1"));
        }
        if !(self.max_evalue.is_finite() && self.max_evalue >= 0.0) {
            return Err(Error::usage(format!("--max-evalue must be a finite number >= 0 (got {})", self.max_evalue)));
        }
        self.thresholds.check_local()?;
        if self.db_size == Some(0) {
            return Err(Error::usage("--db-size must be at least 1 residue"));
        }
        if self.db_seqs == Some(0) {
            return Err(Error::usage("--db-seqs must be at least 1 sequence"));
        }
        match (self.db_size, self.db_seqs) {
            (None, Some(_)) => {
                return Err(Error::usage(
                    "--db-seqs without --db-size: give both, the residues and the sequences of the whole database",
                ))
            }
            (Some(size), Some(seqs)) if seqs > size => {
                return Err(Error::usage(format!(
                    "--db-seqs {seqs} is more than --db-size {size}: every sequence has at least one residue"
                )))
            }
            _ => {}
        }
        Ok(())
    }

    /// The pipeline's options and the run metadata for a search of `db` on `engine`.
    pub fn prepare(
        &self,
        engine: &dyn Engine,
        db: &Database,
        need: Need,
        progress: &Progress,
    ) -> (pipeline::search::SearchOptions, RunMetadata) {
        let scoring = engine.scoring();
        let db_residues = self.db_size.unwrap_or_else(|| db.total_residues());
        let db_seqs = self.db_seqs.unwrap_or(db.len() as u64);
        let mut meta = run_metadata("search", scoring, engine);
        meta.push("evalue_model", self.evalue_model.name());
        if !self.thresholds.is_empty() {
            meta.push("thresholds", self.thresholds.describe());
        }
        // What decides which hits a shard kept: merge checks them (a shard of -k 3 cannot
        // give a merged top 10).
        meta.push("top", self.top.to_string());
        meta.push("max_evalue", self.max_evalue.to_string());
        meta.push("database", db.name.as_str());
        meta.push("database_residues", &db.total_residues().to_string());
        meta.push("database_sequences", &db.len().to_string());
        meta.push(
            "search_space",
            &format!("BLAST length-adjusted, database of {} residues in {} sequences", db_residues, db_seqs),
        );
        let opts = pipeline::search::SearchOptions {
            need,
            evalue_model: self.evalue_model,
            top: self.top,
            max_evalue: Some(self.max_evalue),
            db_residues,
            db_seqs,
            stats: statistics(scoring),
            scoring: scoring.clone(),
            progress: progress.clone(),
            thresholds: self.thresholds.clone(),
        };
        (opts, meta)
    }
}

/// Prints `look`'s warning for `name` if it has one, and looks no further.
pub fn warn_once(look: &mut Option<NucleotideLook>, name: &str) {
    if let Some(warning) = look.take().and_then(|l| l.warning(name)) {
        eprintln!("{warning}");
    }
}

/// A warning when a protein database looks like nucleotides, from sequences spread over it
/// (`name`: the database as messages call it).
pub fn warn_if_nucleotides(db: &Database, name: &str) {
    warn_if_spread_nucleotides(db.len(), |i| db.seq(i), &format!("database {name}"));
}

/// The same warning for a resident sequence set of pairs by id (protein scoring), naming
/// it: the pairs' residues come from it.
pub fn warn_if_nucleotide_set(set: &SeqSet, alphabet: Alphabet) {
    if alphabet == Alphabet::Protein {
        warn_if_spread_nucleotides(set.len(), |i| set.seq(i as u32), &format!("sequence set {}", set.place()));
    }
}

/// Looks at sequences spread over `0..n` (`seq(i)`) and warns once, as `what`.
fn warn_if_spread_nucleotides<'a>(n: usize, seq: impl Fn(usize) -> &'a [u8], what: &str) {
    let mut look = NucleotideLook::default();
    let step = (n / 64).max(1);
    for i in (0..n).step_by(step) {
        look.add(seq(i));
        if look.full() {
            break;
        }
    }
    if let Some(warning) = look.warning(what) {
        eprintln!("{warning}");
    }
}

/// A pair reader counting pairs into `count` and, for protein scoring, warning once when the
/// first pairs look like nucleotides (DNA scoring forgotten); `name` names the input, `None`
/// for pairs by id (their sets are looked at as they load: [`warn_if_nucleotide_set`]).
pub fn watch_pairs(
    inner: Box<dyn PairReader>,
    name: Option<&str>,
    alphabet: Alphabet,
    count: &Arc<AtomicU64>,
) -> Box<dyn PairReader> {
    let look = (alphabet == Alphabet::Protein && name.is_some()).then(NucleotideLook::default);
    let name = name.unwrap_or_default();
    Box::new(WatchedPairs { inner, count: count.clone(), look, name: format!("pair input {name}") })
}

struct WatchedPairs {
    inner: Box<dyn PairReader>,
    count: Arc<AtomicU64>,
    look: Option<NucleotideLook>,
    name: String,
}

impl PairReader for WatchedPairs {
    fn carried(&self) -> Carried {
        self.inner.carried()
    }

    fn fill(&mut self, batch: &mut PairBatch) -> Result<bool> {
        let more = self.inner.fill(batch).inspect_err(|_| self.look = None)?;
        self.count.fetch_add(batch.len() as u64, Ordering::Relaxed);
        if let Some(look) = &mut self.look {
            look.add(&batch.seqs.residues);
            if look.full() || !more {
                warn_once(&mut self.look, &self.name);
            }
        }
        Ok(more)
    }
}

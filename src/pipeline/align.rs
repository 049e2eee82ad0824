//! One-to-one alignment: batches of pairs stream in, one result per pair streams out in
//! input order, with several batches in the engine at once.

use super::{run_ordered, StageTimes};
use crate::engine::{Alignment, Engine, Level};
use crate::error::{Error, Result};
use crate::io::pairs::{BatchLimits, PairReader};
use crate::output::{Need, ResultBatch, ResultRow, ResultWriter, Thresholds};
use crate::progress::Progress;
use crate::scoring::stats::{EvalueModel, KarlinAltschul};
use crate::scoring::Scoring;
use crate::seq::{PairBatch, PairSeqs, SeqPairs};
use std::sync::Arc;

/// Residues per batch, per pair of the engine's batch size: caps memory when sequences are
/// long (64 MiB for the CPU's 65,536-pair batches).
const RESIDUES_PER_BATCH_PAIR: usize = 1024;

#[derive(Debug, Clone)]
pub struct AlignOptions {
    pub stats: Option<KarlinAltschul>,
    /// The engine's scoring: pairs it cannot score exactly in 32 bits are refused.
    pub scoring: Scoring,
    /// Pairs and cells aligned (counted per batch: `Engine::align` has no counter).
    pub progress: Progress,
    /// Override of the batch size (tests use tiny batches to exercise streaming).
    pub batch_pairs: Option<usize>,
    /// Batches computing at once (default: the engine's `align_calls_in_flight`).
    pub in_flight: Option<usize>,
    /// What the output columns need computed (traceback only when a column asks for it).
    pub need: Need,
    pub evalue_model: EvalueModel,
    /// Rows kept: pairs failing one are not written ([`Thresholds`]).
    pub thresholds: Thresholds,
}

impl AlignOptions {
    /// What the columns and the thresholds need computed together.
    pub fn work_need(&self) -> Need {
        self.thresholds.need().map_or(self.need, |t| t.max(self.need))
    }
}

/// How large the readers make batches for `engine`.
pub fn batch_limits(engine: &dyn Engine, opts: &AlignOptions) -> BatchLimits {
    let pairs = opts.batch_pairs.unwrap_or_else(|| engine.align_batch_pairs()).max(1);
    BatchLimits { pairs, residues: engine.align_batch_pairs().max(1) * RESIDUES_PER_BATCH_PAIR }
}

/// Runs the alignment of every pair and finishes the writer on success; says where the
/// time went.
pub fn align(
    engine: Arc<dyn Engine>,
    mut pairs: Box<dyn PairReader>,
    opts: AlignOptions,
    mut writer: Box<dyn ResultWriter>,
) -> Result<StageTimes> {
    let progress = &opts.progress;
    if opts.thresholds.need_statistics() && opts.stats.is_none() {
        return Err(Error::usage("thresholds on bits or E-values need BLAST statistics, which this scoring has not"));
    }
    let read = |batch: &mut PairBatch| {
        batch.clear();
        let more = pairs.fill(batch)?;
        match more {
            true => progress.read(batch.seqs.view().cells()),
            false => progress.input_done(),
        }
        Ok(more)
    };
    let compute = |batch: &mut PairBatch| {
        check_representable(batch, &opts.scoring)?;
        let rows = align_batch(engine.as_ref(), batch, &opts)?;
        progress.work().add(batch.seqs.view().cells());
        progress.items(batch.len() as u64);
        Ok(rows)
    };
    let write = |rows: ResultBatch| progress.suspend(rows.len() as u64, || writer.write(&rows));
    let in_flight = opts.in_flight.unwrap_or_else(|| engine.align_calls_in_flight());
    let mut times = run_ordered(in_flight, read, compute, write)?;
    progress.phase("writing");
    super::finish_writer(writer, &mut times)?;
    Ok(times)
}

/// The rows of one batch: each level of work ([`Need`]) runs only for the pairs that
/// passed the thresholds checked at the levels before it. Without thresholds, one engine
/// call at the level the columns need, and the traceback where they ask for it.
fn align_batch(engine: &dyn Engine, batch: &mut PairBatch, opts: &AlignOptions) -> Result<ResultBatch> {
    let need = opts.work_need();
    let th = &opts.thresholds;
    // A score threshold first: the forward pass alone for every pair, the start pass later
    // for the pairs it keeps.
    let first = if th.at(Need::ScoreEnd) { Level::ScoreEnd } else { need.level() };
    let mut alignments = engine.align(batch.seqs.view(), first)?;
    let mut rows = results(batch, &alignments, opts.stats, opts.evalue_model)?;
    // The pairs still kept, in order: the batch's own until a threshold drops one.
    let mut kept: Option<SeqPairs> = None;
    let all = &batch.seqs;
    fn pick<'a>(all: &'a SeqPairs, kept: &'a Option<SeqPairs>) -> PairSeqs<'a> {
        kept.as_ref().unwrap_or(all).view()
    }
    if let Some(keep) = th.apply(&mut rows, Need::ScoreEnd)? {
        let (sub, al) = super::subset(pick(all, &kept), &alignments, &keep)?;
        (kept, alignments) = (Some(sub), al);
    }
    if need.level() > first && !alignments.is_empty() {
        alignments = engine.starts(pick(all, &kept), &alignments)?;
        rows.set_starts(alignments.iter().map(|a| (a.qstart, a.tstart)))?;
    }
    if let Some(keep) = th.apply(&mut rows, Need::Coordinates)? {
        let (sub, al) = super::subset(pick(all, &kept), &alignments, &keep)?;
        (kept, alignments) = (Some(sub), al);
    }
    super::add_paths(engine, pick(all, &kept), &alignments, need, &mut rows)?;
    th.apply(&mut rows, Need::PathStats)?;
    Ok(rows)
}

/// Refuses a batch holding a pair whose score could leave the 32-bit range.
fn check_representable(batch: &PairBatch, scoring: &Scoring) -> Result<()> {
    // One check at the batch's extremes first (the best possible score grows with a pair's
    // shorter side, the gap drift with the sum of both): a check per pair scans the matrix
    // and cost ~1 us, the limit of a GPU run at 100M pairs. Only a batch that might hold an
    // offender is checked pair by pair, to name the first one.
    let (mut shorter, mut sum) = (0, 0);
    for (q, t) in batch.seqs.view().iter() {
        shorter = shorter.max(q.len().min(t.len()));
        sum = sum.max(q.len() + t.len());
    }
    if scoring.check_lengths(shorter, sum.saturating_sub(shorter).max(shorter)).is_ok() {
        return Ok(());
    }
    for (i, (q, t)) in batch.seqs.view().iter().enumerate() {
        if let Err(why) = scoring.check_lengths(q.len(), t.len()) {
            return Err(Error::Input(format!(
                "pair {} / {}: {}",
                crate::error::shown_id(batch.query_ids.get(i)),
                crate::error::shown_id(batch.target_ids.get(i)),
                why
            )));
        }
    }
    Ok(())
}

/// The rows of one aligned batch; its ids move into them. Statistics use the pair's own
/// search space (query x target).
fn results(
    batch: &mut PairBatch,
    alignments: &[Alignment],
    stats: Option<KarlinAltschul>,
    model: EvalueModel,
) -> Result<ResultBatch> {
    if alignments.len() != batch.len() {
        return Err(Error::Internal(format!(
            "engine returned {} alignments for {} pairs",
            alignments.len(),
            batch.len()
        )));
    }
    let query = batch.query_ids.take_array()?;
    let target = batch.target_ids.take_array()?;
    let mut rows = ResultBatch::with_ids(query, target, std::mem::take(&mut batch.carried));
    if batch.query_headers.len() == batch.len() {
        rows.set_headers(std::mem::take(&mut batch.query_headers), std::mem::take(&mut batch.target_headers));
    }
    let seqs = batch.seqs.view();
    // Statistics on the pool: each pair's E-value solves BLAST's length adjustment for its
    // own lengths (up to 20 iterations with logarithms), ~200 ns a pair on the thread that
    // builds the rows, which bounded pairs by id at ~13M pairs a second.
    let stat: Vec<Option<(f64, f64)>> = {
        use rayon::prelude::*;
        alignments
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(i, a)| {
                let (q, t) = seqs.pair(i);
                // The pair is its own search space: the target is the whole database.
                let (q, t) = (q.len() as u64, t.len() as u64);
                stats.map(|ka| (ka.bits(a.score), ka.evalue_by(model, a.score, q, t, t, 1)))
            })
            .collect()
    };
    for (i, (a, stat)) in alignments.iter().zip(stat).enumerate() {
        let (q, t) = seqs.pair(i);
        let (qlen, tlen) = (q.len(), t.len());
        rows.push_numbers(ResultRow {
            query: "",
            target: "",
            score: a.score,
            bits: stat.map(|s| s.0),
            evalue: stat.map(|s| s.1),
            qstart: a.qstart as i32,
            qend: a.qend as i32,
            tstart: a.tstart as i32,
            tend: a.tend as i32,
            qlen: qlen as i32,
            tlen: tlen as i32,
            recomputed: a.recomputed,
            rank: 0,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::Matrix;

    fn batch(lens: &[(usize, usize)]) -> PairBatch {
        let mut b = PairBatch::default();
        for (i, &(q, t)) in lens.iter().enumerate() {
            b.push(&format!("q{i}"), &vec![0u8; q], &format!("t{i}"), &vec![0u8; t]).unwrap();
        }
        b
    }

    /// The batch-wide check agrees with the per-pair oracle (`Scoring::check_lengths`): a
    /// batch passes exactly when every pair does, and the first offender is named.
    #[test]
    fn batch_check_agrees_with_the_pair_check() {
        // Match 1,000,000: a pair fits while its shorter side is at most 2147.
        let scoring = Scoring::new(Matrix::dna(1_000_000, -1), 5, 2).unwrap();
        let cases: [&[(usize, usize)]; 4] = [
            &[(2000, 10), (10, 2000), (2147, 2147)],
            &[(1, 5000), (2148, 2148)],
            &[(2200, 3), (3, 2200), (2100, 2100)],
            &[(2148, 2148), (2149, 2149)],
        ];
        for lens in cases {
            let first_bad = lens.iter().position(|&(q, t)| scoring.check_lengths(q, t).is_err());
            match (check_representable(&batch(lens), &scoring), first_bad) {
                (Ok(()), None) => {}
                (Err(e), Some(i)) => assert!(e.to_string().contains(&format!("pair q{i} / t{i}")), "{e}"),
                (got, want) => panic!("{lens:?}: {got:?}, first offender {want:?}"),
            }
        }
    }
}

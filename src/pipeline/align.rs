//! One-to-one alignment: pairs stream in, one result per pair streams out in input order.

use super::{run_batched, BatchLimits, Progress};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::output::{ResultBatch, ResultRow, ResultWriter};
use crate::scoring::stats::KarlinAltschul;
use crate::scoring::Scoring;
use crate::seq::Pair;
use std::sync::Arc;

/// Residues per batch, per pair of the engine's batch size: caps memory when sequences are
/// long (64 MiB for the CPU's 65,536-pair batches).
const RESIDUES_PER_BATCH_PAIR: usize = 1024;

#[derive(Debug, Clone)]
pub struct AlignOptions {
    pub stats: Option<KarlinAltschul>,
    /// The engine's scoring: pairs it cannot score exactly in 32 bits are refused.
    pub scoring: Scoring,
    pub quiet: bool,
    /// Override of the batch size (tests use tiny batches to exercise streaming).
    pub batch_pairs: Option<usize>,
}

/// Runs the alignment of every pair and finishes the writer on success.
pub fn align(
    engine: Arc<dyn Engine>,
    pairs: Box<dyn Iterator<Item = Result<Pair>> + Send>,
    opts: AlignOptions,
    writer: Box<dyn ResultWriter>,
) -> Result<()> {
    let items = opts.batch_pairs.unwrap_or_else(|| engine.align_batch_pairs()).max(1);
    let residues = engine.align_batch_pairs().max(1) * RESIDUES_PER_BATCH_PAIR;
    let limits = BatchLimits { items, residues };
    let progress = Progress::new("pairs", opts.quiet);
    let (stats, scoring) = (opts.stats, opts.scoring);
    let compute = move |batch: &[Pair]| {
        check_representable(batch, &scoring)?;
        align_batch(engine.as_ref(), batch, stats)
    };
    let size = |p: &Pair| p.query.seq.len() + p.target.seq.len();
    run_batched(pairs, limits, size, progress, compute, writer)
}

/// Refuses a batch holding a pair whose score could leave the 32-bit range.
fn check_representable(batch: &[Pair], scoring: &Scoring) -> Result<()> {
    for p in batch {
        if let Err(why) = scoring.check_lengths(p.query.seq.len(), p.target.seq.len()) {
            return Err(Error::Input(format!(
                "pair {} / {}: {}",
                crate::error::shown_id(&p.query.id),
                crate::error::shown_id(&p.target.id),
                why
            )));
        }
    }
    Ok(())
}

/// Aligns one batch; statistics use the pair's own search space (query x target).
pub fn align_batch(engine: &dyn Engine, batch: &[Pair], stats: Option<KarlinAltschul>) -> Result<ResultBatch> {
    let seqs: Vec<(&[u8], &[u8])> = batch.iter().map(|p| (p.query.seq.as_slice(), p.target.seq.as_slice())).collect();
    let alignments = engine.align(&seqs)?;
    if alignments.len() != batch.len() {
        return Err(Error::Internal(format!("engine returned {} alignments for {} pairs", alignments.len(), batch.len())));
    }
    let mut rows = ResultBatch::new();
    for (p, a) in batch.iter().zip(&alignments) {
        let (qlen, tlen) = (p.query.seq.len(), p.target.seq.len());
        let stat = stats.map(|ka| (ka.bits(a.score), ka.evalue(a.score, qlen as u64, tlen as u64, 1)));
        rows.push(ResultRow {
            query: &p.query.id,
            target: &p.target.id,
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

//! Database search: stream query batches against a resident database, keep each query's
//! best hits, attach statistics, then align only the reported hits for coordinates.

use super::{run_ordered, StageTimes};
use crate::database::Database;
use crate::engine::{Engine, Hit};
use crate::error::{Error, Result};
use crate::output::{Need, ResultBatch, ResultRow, ResultWriter, Thresholds};
use crate::progress::Progress;
use crate::scoring::stats::{EvalueModel, KarlinAltschul};
use crate::scoring::Scoring;
use crate::seq::{Record, SeqPairs};
use std::sync::Arc;

/// Queries per engine call: large enough that a GPU amortises launches over many short
/// queries, small enough that results stream out.
const BATCH_QUERIES: usize = 512;
const BATCH_RESIDUES: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Hits kept per query.
    pub top: usize,
    /// Hits with a larger E-value are dropped (only where statistics exist).
    pub max_evalue: Option<f64>,
    /// Search space for E-values: residues and sequences of the whole database, which may be
    /// larger than the loaded one when a workflow shards it.
    pub db_residues: u64,
    pub db_seqs: u64,
    pub stats: Option<KarlinAltschul>,
    /// The engine's scoring: queries it cannot score exactly in 32 bits are refused.
    pub scoring: Scoring,
    /// Cells computed, counted by the engine; queries and hits.
    pub progress: Progress,
    /// What the output columns need computed (the traceback of the reported hits only).
    pub need: Need,
    pub evalue_model: EvalueModel,
    /// Hits kept of each query's best `top` ([`Thresholds`]).
    pub thresholds: Thresholds,
}

/// Runs the search and finishes the writer on success; says where the time went.
pub fn search(
    engine: Arc<dyn Engine>,
    db: Arc<Database>,
    queries: Box<dyn Iterator<Item = Result<Record>> + Send>,
    opts: SearchOptions,
    mut writer: Box<dyn ResultWriter>,
) -> Result<StageTimes> {
    let progress = &opts.progress;
    let db_residues = db.total_residues();
    let mut queries = queries;
    let read = |batch: &mut Vec<Record>| -> Result<bool> {
        batch.clear();
        let mut residues = 0;
        while batch.len() < BATCH_QUERIES && residues < BATCH_RESIDUES {
            let Some(query) = queries.next().transpose()? else { break };
            residues += query.seq.len();
            progress.read(query.seq.len() as u64 * db_residues);
            batch.push(query);
        }
        if batch.is_empty() {
            progress.input_done();
        }
        Ok(!batch.is_empty())
    };
    let compute = |batch: &mut Vec<Record>| {
        let rows = search_batch(engine.as_ref(), &db, batch, &opts);
        progress.items(batch.len() as u64);
        rows
    };
    let write = |rows: ResultBatch| progress.suspend(rows.len() as u64, || writer.write(&rows));
    // One batch at a time: a search call already keeps every core (or GPU) busy.
    let mut times = run_ordered(1, read, compute, write)?;
    progress.phase("writing");
    super::finish_writer(writer, &mut times)?;
    Ok(times)
}

/// Scores one batch of queries, filters and ranks the hits, and aligns the survivors.
pub fn search_batch(
    engine: &dyn Engine,
    db: &Database,
    queries: &[Record],
    opts: &SearchOptions,
) -> Result<ResultBatch> {
    // The database is sorted by length: its last sequence is the longest.
    let longest = db.len().checked_sub(1).map_or(0, |i| db.seq_len(i));
    for q in queries {
        if let Err(why) = opts.scoring.check_lengths(q.seq.len(), longest) {
            return Err(Error::Input(format!("query {}: {}", crate::error::shown_id(&q.id), why)));
        }
    }
    let seqs: Vec<&[u8]> = queries.iter().map(|q| q.seq.as_slice()).collect();
    // Per-query structures are sized by the hits that can exist, never by a user's number.
    let top = opts.top.min(db.len());
    let ranked = engine.search(&seqs, db, top, opts.progress.work())?;
    if ranked.len() != queries.len() {
        return Err(Error::Internal(format!(
            "engine returned {} hit lists for {} queries",
            ranked.len(),
            queries.len()
        )));
    }
    // Statistics first, so E-value filtering decides which hits need coordinates.
    let mut kept: Vec<(usize, Hit, Option<(f64, f64)>)> = Vec::new();
    for (qi, hits) in ranked.iter().enumerate() {
        let qlen = queries[qi].seq.len() as u64;
        for hit in hits.iter().take(top) {
            let tlen = db.seq_len(hit.target as usize) as u64;
            let stat = opts.stats.map(|ka| {
                let e = ka.evalue_by(opts.evalue_model, hit.score, qlen, tlen, opts.db_residues, opts.db_seqs);
                (ka.bits(hit.score), e)
            });
            if let (Some(max), Some((_, evalue))) = (opts.max_evalue, stat) {
                if evalue > max {
                    continue;
                }
            }
            kept.push((qi, *hit, stat));
        }
    }
    // Rows of every kept hit first, coordinates from the alignments below: a threshold on
    // the score drops hits before they are aligned.
    let mut rows = ResultBatch::new();
    let mut rank = 0;
    for (k, (qi, hit, stat)) in kept.iter().enumerate() {
        rank = if k > 0 && kept[k - 1].0 == *qi { rank + 1 } else { 1 };
        let t = hit.target as usize;
        rows.push(ResultRow {
            query: &queries[*qi].id,
            target: db.id(t),
            score: hit.score,
            bits: stat.map(|s| s.0),
            evalue: stat.map(|s| s.1),
            qstart: 0,
            qend: 0,
            tstart: 0,
            tend: 0,
            qlen: queries[*qi].seq.len() as i32,
            tlen: db.seq_len(t) as i32,
            recomputed: hit.recomputed,
            rank,
        });
        rows.push_headers(Some(queries[*qi].header.as_str()), db.header(t))?;
    }
    let mut hits = vec![0; queries.len()];
    for (qi, _, _) in &kept {
        hits[*qi] += 1;
    }
    for (query, hits) in queries.iter().zip(hits) {
        let title = if query.header.is_empty() { &query.id } else { &query.header };
        rows.push_query(title, hits);
    }
    let th = &opts.thresholds;
    let need = th.need().map_or(opts.need, |t| t.max(opts.need));
    if let Some(keep) = th.apply(&mut rows, Need::ScoreEnd)? {
        let mut k = keep.iter();
        kept.retain(|_| *k.next().unwrap_or(&false));
    }
    let pairs: Vec<(&[u8], &[u8])> = kept.iter().map(|(qi, h, _)| (seqs[*qi], db.seq(h.target as usize))).collect();
    let mut pairs = SeqPairs::from_slices(&pairs);
    let mut alignments = engine.align(pairs.view(), need.level())?;
    for ((qi, hit, _), aln) in kept.iter().zip(&alignments) {
        if aln.score != hit.score {
            return Err(Error::Internal(format!(
                "query {} target {}: search score {} but alignment score {}",
                crate::error::shown_id(&queries[*qi].id),
                crate::error::shown_id(db.id(hit.target as usize)),
                hit.score,
                aln.score
            )));
        }
    }
    rows.set_coordinates(&alignments)?;
    if let Some(keep) = th.apply(&mut rows, Need::Coordinates)? {
        let (sub, al) = super::subset(pairs.view(), &alignments, &keep)?;
        (pairs, alignments) = (sub, al);
    }
    super::add_paths(engine, pairs.view(), &alignments, need, &mut rows)?;
    th.apply(&mut rows, Need::PathStats)?;
    if !th.is_empty() {
        rows.rerank();
    }
    Ok(rows)
}

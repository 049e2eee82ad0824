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
    // Batches reach the writer in input order: each query's number in the input is known here.
    let mut queries_before = 0;
    let write = |mut rows: ResultBatch| {
        queries_before = rows.number_queries(queries_before)?;
        progress.suspend(rows.len() as u64, || writer.write_owned(rows))
    };
    // One batch at a time: a search call already keeps every core (or GPU) busy.
    let mut times = run_ordered(1, read, compute, write)?;
    progress.phase("writing");
    super::finish_writer(writer, &mut times)?;
    Ok(times)
}

/// Scores one batch of queries, filters and ranks the hits, and aligns the survivors.
///
/// Every threshold applies before `--top` (as BLAST applies `-evalue` before
/// `-max_target_seqs`), so each query reports its best `top` hits among those that pass, and
/// shards of a database merge into the unsharded result whatever the thresholds. Thresholds
/// that only read the score (score, bits, classic E-values) keep a prefix of the ranking: the
/// engine's best `top` hits decide. The others (identity, coverage, Spouge's E-values, which
/// depend on the target's length) may pass a hit below the first `top`: a query left with
/// fewer than `top` hits then asks the engine for 4x as many, again, until it has `top` or
/// the database is exhausted, and the hits chosen so are computed once more for the output.
pub fn search_batch(
    engine: &dyn Engine,
    db: &Database,
    queries: &[Record],
    opts: &SearchOptions,
) -> Result<ResultBatch> {
    // The database is sorted by length: its last sequence is the longest.
    let longest = db.len().checked_sub(1).map_or(0, |i| db.seq_len(i));
    for q in queries {
        if let Err(why) = opts.scoring.check_lengths_in(q.seq.len(), longest, true) {
            return Err(Error::Input(format!("query {}: {}", crate::error::shown_id(&q.id), why)));
        }
    }
    let seqs: Vec<&[u8]> = queries.iter().map(|q| q.seq.as_slice()).collect();
    // Per-query structures are sized by the hits that can exist, never by a user's number.
    let top = opts.top.min(db.len());
    let th = &opts.thresholds;
    let deeper = th.beyond_score() || (opts.evalue_model == EvalueModel::Spouge && opts.stats.is_some());
    // Where hits below the first `top` may pass, the engine is asked for more at once (its
    // top-k costs little more; the GPU's selects at least 4096 anyway): only the first `top`
    // are aligned, the rest wait in case a query needs them.
    let first = if deeper { top.saturating_mul(8).max(64).min(db.len()) } else { top };
    let mut lists = ranked_hits(engine, db, &seqs, first, opts)?;
    let mut asked = vec![first; queries.len()];
    let candidates: Vec<(usize, Hit)> =
        lists.iter().enumerate().flat_map(|(qi, hits)| hits.iter().take(top).map(move |h| (qi, *h))).collect();
    let need = th.need().map_or(opts.need, |t| t.max(opts.need));
    let (rows, passed) = evaluate(engine, db, queries, &candidates, opts, need)?;
    let mut kept = vec![Vec::new(); queries.len()];
    for &c in &passed {
        kept[candidates[c].0].push(candidates[c].1);
    }
    // Queries short of `top` with hits left below the first `depth`: those may pass, unless
    // the last one looked at already fails a cut on the score (then so do all below it).
    let lengths = std::cell::OnceCell::new();
    let more = |qi: usize, hits: &[Hit], asked: usize, depth: usize, kept: usize| {
        let left = hits.len() > depth || (hits.len() >= asked && asked < db.len());
        let Some(last) = hits.get(depth.min(hits.len()).wrapping_sub(1)) else { return false };
        kept < top && left && !score_cut_below(db, &queries[qi], last.score, opts, &lengths)
    };
    let mut open: Vec<usize> =
        (0..queries.len()).filter(|&qi| deeper && more(qi, &lists[qi], asked[qi], top, kept[qi].len())).collect();
    if open.is_empty() {
        return Ok(rows);
    }
    let mut depth = top;
    while !open.is_empty() && depth < db.len() {
        let next = depth.saturating_mul(4).min(db.len());
        // The engine again for the queries whose lists end before `next`.
        let short: Vec<usize> =
            open.iter().copied().filter(|&qi| asked[qi] < next && lists[qi].len() >= asked[qi]).collect();
        if !short.is_empty() {
            let again = next.saturating_mul(2).min(db.len());
            let short_seqs: Vec<&[u8]> = short.iter().map(|&qi| seqs[qi]).collect();
            for (qi, hits) in short.iter().zip(ranked_hits(engine, db, &short_seqs, again, opts)?) {
                (lists[*qi], asked[*qi]) = (hits, again);
            }
        }
        let candidates: Vec<(usize, Hit)> =
            open.iter().flat_map(|&qi| lists[qi].iter().take(next).skip(depth).map(move |h| (qi, *h))).collect();
        // Only what the thresholds read: the output's columns come after the choice.
        let (_, passed) = evaluate(engine, db, queries, &candidates, opts, th.need().unwrap_or(Need::ScoreEnd))?;
        for &c in &passed {
            let (qi, hit) = candidates[c];
            if kept[qi].len() < top {
                kept[qi].push(hit);
            }
        }
        open.retain(|&qi| more(qi, &lists[qi], asked[qi], next, kept[qi].len()));
        depth = next;
    }
    let chosen: Vec<(usize, Hit)> =
        kept.iter().enumerate().flat_map(|(qi, hits)| hits.iter().map(move |h| (qi, *h))).collect();
    let (rows, passed) = evaluate(engine, db, queries, &chosen, opts, need)?;
    if passed.len() != chosen.len() {
        return Err(Error::Internal(format!(
            "{} of {} chosen hits pass their thresholds again",
            passed.len(),
            chosen.len()
        )));
    }
    Ok(rows)
}

/// Whether every hit of `query` scoring `score` or less fails the E-value cut or a threshold
/// on the score, bits or E-value. Spouge's E-value depends on the target's length: the
/// smallest over the database's lengths (`lengths`, gathered once) decides.
fn score_cut_below(
    db: &Database,
    query: &Record,
    score: i32,
    opts: &SearchOptions,
    lengths: &std::cell::OnceCell<Vec<u64>>,
) -> bool {
    let qlen = query.seq.len() as u64;
    let (bits, evalue) = match opts.stats {
        Some(ka) => {
            let evalue = |tlen: u64| ka.evalue_by(opts.evalue_model, score, qlen, tlen, opts.db_residues, opts.db_seqs);
            let smallest = match opts.evalue_model {
                EvalueModel::Classic => evalue(1),
                EvalueModel::Spouge => {
                    let lengths = lengths.get_or_init(|| {
                        let mut l: Vec<u64> = (0..db.len()).map(|i| db.seq_len(i) as u64).collect();
                        l.dedup();
                        l
                    });
                    lengths.iter().map(|&t| evalue(t)).fold(f64::INFINITY, f64::min)
                }
            };
            (Some(ka.bits(score)), Some(smallest))
        }
        None => (None, None),
    };
    opts.max_evalue.zip(evalue).is_some_and(|(max, e)| e > max) || opts.thresholds.fails_by_score(score, bits, evalue)
}

/// The engine's best `top` hits of each of `seqs`, checked to be one list per query.
fn ranked_hits(
    engine: &dyn Engine,
    db: &Database,
    seqs: &[&[u8]],
    top: usize,
    opts: &SearchOptions,
) -> Result<Vec<Vec<Hit>>> {
    let ranked = engine.search(seqs, db, top, opts.progress.work())?;
    if ranked.len() != seqs.len() {
        return Err(Error::Internal(format!("engine returned {} hit lists for {} queries", ranked.len(), seqs.len())));
    }
    Ok(ranked)
}

/// The rows of `candidates` ((query index, hit), each query's in rank order) that pass
/// the E-value cut and the thresholds, computed up to `need`, ranked 1, 2, ... per query;
/// and the indices into `candidates` of those rows.
fn evaluate(
    engine: &dyn Engine,
    db: &Database,
    queries: &[Record],
    candidates: &[(usize, Hit)],
    opts: &SearchOptions,
    need: Need,
) -> Result<(ResultBatch, Vec<usize>)> {
    // Statistics first, so E-value filtering decides which hits need coordinates.
    let mut kept: Vec<(usize, Hit, Option<(f64, f64)>)> = Vec::new();
    let mut index: Vec<usize> = Vec::new();
    for (c, &(qi, hit)) in candidates.iter().enumerate() {
        let qlen = queries[qi].seq.len() as u64;
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
        kept.push((qi, hit, stat));
        index.push(c);
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
    let drop = |index: &mut Vec<usize>, keep: &[bool]| {
        let mut k = keep.iter();
        index.retain(|_| *k.next().unwrap_or(&false));
    };
    if let Some(keep) = th.apply(&mut rows, Need::ScoreEnd)? {
        let mut k = keep.iter();
        kept.retain(|_| *k.next().unwrap_or(&false));
        drop(&mut index, &keep);
    }
    let seqs = |qi: usize| queries[qi].seq.as_slice();
    let pairs: Vec<(&[u8], &[u8])> = kept.iter().map(|(qi, h, _)| (seqs(*qi), db.seq(h.target as usize))).collect();
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
        drop(&mut index, &keep);
    }
    super::add_paths(engine, pairs.view(), &alignments, need, &mut rows)?;
    if let Some(keep) = th.apply(&mut rows, Need::PathStats)? {
        drop(&mut index, &keep);
    }
    if !th.is_empty() {
        rows.rerank();
    }
    Ok((rows, index))
}

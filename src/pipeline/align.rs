//! One-to-one alignment: batches of pairs stream in, one result per pair streams out in
//! input order, with several batches in the engine at once.

use super::orient::{orient, report, StrandRule};
use super::{run_ordered, StageTimes};
use crate::engine::cuda::paired::PairedAligner;
use crate::engine::{Alignment, Engine, Level};
use crate::error::{Error, Result};
use crate::io::pairs::SeqSet;
use crate::io::pairs::{BatchLimits, PairReader};
use crate::output::{Need, ResultBatch, ResultRow, ResultWriter, Rows, Thresholds};
use crate::progress::Progress;
use crate::scoring::stats::{EvalueModel, KarlinAltschul};
use crate::scoring::Scoring;
use crate::seq::{PairBatch, PairSeqs, SeqPairs, Strand};
use arrow::array::RecordBatch;
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
    /// The strands each query is aligned on (DNA).
    pub strand: StrandRule,
    /// A column writes where the query's alignment ends: on the minus strand that is the
    /// start pass's cell, so such rows need coordinates.
    pub query_end_written: bool,
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
    check_statistics(&opts)?;
    let read = read_stage(pairs.as_mut(), progress, |b| b.seqs.view().cells());
    // Rows are encoded by the compute workers where the writer allows it (several batches
    // at once): the write stage then only puts the bytes out.
    let encoder = writer.encoder();
    let compute = |batch: &mut PairBatch| {
        check_representable(batch, &opts.scoring, engine.mode().is_local())?;
        let rows = align_batch(engine.as_ref(), batch, &opts, None)?;
        progress.work().add(batch.seqs.view().cells());
        progress.items(batch.len() as u64);
        Rows::encoded(rows, encoder.as_deref())
    };
    let write = |rows: Rows| progress.suspend(rows.len() as u64, || writer.write_rows(rows));
    let in_flight = opts.in_flight.unwrap_or_else(|| engine.align_calls_in_flight());
    let mut times = run_ordered(in_flight, read, compute, write)?;
    progress.phase("writing");
    super::finish_writer(writer, &mut times)?;
    Ok(times)
}

/// The rows of one batch: each level of work ([`Need`]) runs only for the pairs that
/// passed the thresholds checked at the levels before it. Without thresholds, one engine
/// call at the level the columns need, and the traceback where they ask for it.
///
/// `ends`: the pairs' score and end, computed already (pairs by id on the paired kernel);
/// the batch then holds residues only where a later level needs them, and `lens` gives the
/// pairs' lengths.
fn align_batch(
    engine: &dyn Engine,
    batch: &mut PairBatch,
    opts: &AlignOptions,
    ends: Option<(Vec<Alignment>, &(dyn Fn(usize) -> (usize, usize) + Sync))>,
) -> Result<ResultBatch> {
    let mut need = opts.work_need();
    let th = &opts.thresholds;
    // The residues leave the batch while its ids move into the rows (back at the end, so
    // that the batch's buffer is recycled).
    let batch_seqs = std::mem::take(&mut batch.seqs);
    let frames = std::mem::take(&mut batch.frames);
    let oriented = match ends {
        None => orient(batch_seqs.view(), &frames, opts.strand),
        Some(_) => None,
    };
    if oriented.is_some() && need == Need::ScoreEnd && opts.query_end_written {
        need = Need::Coordinates;
    }
    // A score threshold first: the forward pass alone for every pair, the start pass later
    // for the pairs it keeps.
    let first = if th.at(Need::ScoreEnd) { Level::ScoreEnd } else { need.level() };
    let given_lens = ends.as_ref().map(|e| e.1);
    let (all_seqs, mut alignments, strands) = match (ends, oriented) {
        (None, None) => {
            let al = engine.align(batch_seqs.view(), first)?;
            (None, al, Vec::new())
        }
        (None, Some(o)) => {
            let al = engine.align(o.seqs.view(), first)?;
            let (seqs, al, strands) = o.choose(al, engine.mode())?;
            (Some(seqs), al, strands)
        }
        (Some((ends, _)), _) if first == Level::ScoreEnd => (None, ends, Vec::new()),
        (Some((ends, _)), _) => (None, engine.starts(batch_seqs.view(), &ends)?, Vec::new()),
    };
    let all = all_seqs.as_ref().unwrap_or(&batch_seqs);
    // Where each pair's windows sit on its whole sequences, and its strand: the rows report
    // coordinates and lengths on the whole sequences (as the engine found them where the
    // pairs are whole and on plus).
    let placed_anywhere = !frames.is_empty() || !strands.is_empty();
    let place = |i: usize, a: &Alignment, on: PairSeqs<'_>, k: usize| {
        let (q, t) = on.pair(k);
        report(a, (q.len(), t.len()), frames.get(i), strands.get(i).copied().unwrap_or(Strand::Plus))
    };
    let own_lens = |i: usize| match frames.get(i) {
        Some(f) => (f.query_len, f.target_len),
        None => {
            let (q, t) = all.view().pair(i);
            (q.len(), t.len())
        }
    };
    let lens: &(dyn Fn(usize) -> (usize, usize) + Sync) = given_lens.unwrap_or(&own_lens);
    let mut rows = if placed_anywhere {
        let placed: Vec<Alignment> = alignments.iter().enumerate().map(|(i, a)| place(i, a, all.view(), i)).collect();
        results(batch, &placed, lens, opts.stats, opts.evalue_model)?
    } else {
        results(batch, &alignments, lens, opts.stats, opts.evalue_model)?
    };
    if !strands.is_empty() {
        rows.set_strands(strands.clone());
    }
    // The pairs still kept, in order, with each one's pair number in the batch: the batch's
    // own until a threshold drops one.
    let mut kept: Option<(SeqPairs, Vec<usize>)> = None;
    fn pick<'a>(all: &'a SeqPairs, kept: &'a Option<(SeqPairs, Vec<usize>)>) -> PairSeqs<'a> {
        kept.as_ref().map_or(all, |k| &k.0).view()
    }
    fn pair_of(kept: &Option<(SeqPairs, Vec<usize>)>, k: usize) -> usize {
        kept.as_ref().map_or(k, |x| x.1[k])
    }
    let keep_only = |keep: &[bool], kept: &mut Option<(SeqPairs, Vec<usize>)>, al: &mut Vec<Alignment>| {
        let (sub, sub_al) = super::subset(pick(all, kept), al, keep)?;
        let at: Vec<usize> = (0..keep.len()).filter(|&k| keep[k]).map(|k| pair_of(kept, k)).collect();
        (*kept, *al) = (Some((sub, at)), sub_al);
        Ok::<(), Error>(())
    };
    if let Some(keep) = th.apply(&mut rows, Need::ScoreEnd)? {
        keep_only(&keep, &mut kept, &mut alignments)?;
    }
    if need.level() > first && !alignments.is_empty() {
        alignments = engine.starts(pick(all, &kept), &alignments)?;
        if placed_anywhere {
            let on = pick(all, &kept);
            let placed: Vec<Alignment> =
                alignments.iter().enumerate().map(|(k, a)| place(pair_of(&kept, k), a, on, k)).collect();
            rows.set_coordinates(&placed)?;
        } else {
            rows.set_starts(alignments.iter().map(|a| (a.qstart, a.tstart)))?;
        }
    }
    if let Some(keep) = th.apply(&mut rows, Need::Coordinates)? {
        keep_only(&keep, &mut kept, &mut alignments)?;
    }
    super::add_paths(engine, pick(all, &kept), &alignments, need, &mut rows)?;
    th.apply(&mut rows, Need::PathStats)?;
    drop(kept);
    batch.seqs = batch_seqs;
    Ok(rows)
}

/// Pairs by id whose score and end come from the GPU's paired kernel (pairs grouped by
/// query against the resident sets, [`PairedAligner`]): the reader's batches hold sequence
/// numbers only (`PairBatch::set_pairs`, large batches so that a query meets many of its
/// candidates at once). Each batch runs whole on the kernel; then, a chunk of the engine's
/// batch size at a time, the ids are gathered from the sets, and the residues too where a
/// later level (starts, paths, thresholds on them) or a pair the kernel left needs them, and
/// the rest of the work runs as for any batch.
pub fn align_paired(
    engine: Arc<dyn Engine>,
    paired: &PairedAligner,
    sets: (Arc<SeqSet>, Arc<SeqSet>),
    mut pairs: Box<dyn PairReader>,
    opts: AlignOptions,
    mut writer: Box<dyn ResultWriter>,
) -> Result<StageTimes> {
    let progress = &opts.progress;
    check_statistics(&opts)?;
    let (query, target) = (&*sets.0, &*sets.1);
    let len_of = |p: &[u32; 2]| (query.seq(p[0]).len(), target.seq(p[1]).len());
    let cells = |b: &PairBatch| b.set_pairs.iter().map(|p| len_of(p)).map(|(q, t)| (q * t) as u64).sum::<u64>();
    let read = read_stage(pairs.as_mut(), progress, cells);
    let headers = query.has_headers() || target.has_headers();
    let utf8 = query.is_utf8() && target.is_utf8();
    let residues_needed = opts.work_need() > Need::ScoreEnd;
    // Where compute's time goes, summed over calls and chunks, for `--stats`.
    let steps = Steps::default();
    let encoder = writer.encoder();
    let compute = |batch: &mut PairBatch| {
        let all = &batch.set_pairs;
        check_lengths(
            all.len(),
            |i| len_of(&all[i]),
            &opts.scoring,
            engine.mode().is_local(),
            |i| (query.id(all[i][0]).to_vec(), target.id(all[i][1]).to_vec()),
        )?;
        let ends = steps.time(0, || paired.align_ends(all))?;
        let chunk = engine.align_batch_pairs().max(1);
        let chunks = all.len().div_ceil(chunk);
        // The chunks run side by side, as many as the engine takes calls at once (their
        // starts and paths go to the engine), their rows kept in order.
        let done: Vec<std::sync::Mutex<Option<Result<Rows>>>> =
            (0..chunks).map(|_| std::sync::Mutex::new(None)).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let run_chunk = |c: usize| -> Result<Rows> {
            let start = c * chunk;
            let sp = &all[start..(start + chunk).min(all.len())];
            let ends = &ends[start..start + sp.len()];
            let mut sub = PairBatch { first: batch.first + start as u64, ..PairBatch::default() };
            steps.time(1, || -> Result<()> {
                sub.query_ids.extend_known_par_with(sp.len(), utf8, |i| query.id(sp[i][0]))?;
                sub.target_ids.extend_known_par_with(sp.len(), utf8, |i| target.id(sp[i][1]))?;
                if headers {
                    sub.query_headers.extend_known_par_with(sp.len(), utf8, |i| query.header(sp[i][0]))?;
                    sub.target_headers.extend_known_par_with(sp.len(), utf8, |i| target.header(sp[i][1]))?;
                }
                Ok(())
            })?;
            sub.carried = slice_rows(&batch.carried, start, sp.len());
            let left: Vec<usize> = (0..sp.len()).filter(|&i| ends[i].is_none()).collect();
            if residues_needed || !left.is_empty() {
                steps
                    .time(2, || sub.seqs.extend_par_with(sp.len(), |i| (query.seq(sp[i][0]), target.seq(sp[i][1]))))?;
            }
            let mut first: Vec<Alignment> = ends.iter().map(|e| e.unwrap_or_default()).collect();
            if !left.is_empty() {
                // Pairs the kernel did not take (a long target, a 16-bit overflow): the engine.
                let mut seqs = SeqPairs::default();
                let view = sub.seqs.view();
                seqs.extend_par_with(left.len(), |k| view.pair(left[k]))?;
                for (k, a) in engine.align(seqs.view(), Level::ScoreEnd)?.into_iter().enumerate() {
                    first[left[k]] = a;
                }
            }
            let lens = |i: usize| len_of(&sp[i]);
            let rows = steps.time(3, || align_batch(engine.as_ref(), &mut sub, &opts, Some((first, &lens))))?;
            Rows::encoded(rows, encoder.as_deref())
        };
        let workers = engine.align_calls_in_flight().clamp(1, chunks.max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let c = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if c >= chunks {
                        break;
                    }
                    let r = run_chunk(c);
                    let failed = r.is_err();
                    *done[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                    if failed {
                        next.store(chunks, std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        let mut out = Vec::with_capacity(chunks);
        for d in done {
            match d.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(r) => out.push(r?),
                None => break,
            }
        }
        progress.work().add(cells(batch));
        progress.items(all.len() as u64);
        Ok(out)
    };
    let write =
        |rows: Vec<Rows>| rows.into_iter().try_for_each(|r| progress.suspend(r.len() as u64, || writer.write_rows(r)));
    // Three batches: one's plan and rows on the host while the others' kernels run.
    let in_flight = opts.in_flight.unwrap_or(3);
    let mut times = run_ordered(in_flight, read, compute, write)?;
    progress.phase("writing");
    super::finish_writer(writer, &mut times)?;
    let names = ["kernel calls", "ids gathered", "residues gathered", "starts, paths and rows"];
    for (name, ns) in names.iter().zip(&steps.0) {
        let s = ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
        times.notes.push((format!("paired {name}"), format!("{s:.3} s (summed over calls and chunks)")));
    }
    times.notes.extend(paired.reports().into_iter().map(|r| ("paired call".to_string(), r)));
    Ok(times)
}

/// Nanoseconds spent in each step of the paired pipeline's compute, summed over threads.
#[derive(Default)]
struct Steps([std::sync::atomic::AtomicU64; 4]);

impl Steps {
    fn time<T>(&self, step: usize, f: impl FnOnce() -> T) -> T {
        let t = std::time::Instant::now();
        let out = f();
        self.0[step].fetch_add(t.elapsed().as_nanos() as u64, std::sync::atomic::Ordering::Relaxed);
        out
    }
}

/// Thresholds on bits or E-values need statistics the scoring has.
fn check_statistics(opts: &AlignOptions) -> Result<()> {
    if opts.thresholds.need_statistics() && opts.stats.is_none() {
        let option = opts.thresholds.statistics_option().unwrap_or("--max-evalue");
        return Err(Error::usage(format!("{option} needs BLAST statistics, which this scoring has not")));
    }
    Ok(())
}

/// The read stage of an align pipeline: fills a recycled batch from `pairs`, counting its
/// `cells` as read, and says when the input is done.
fn read_stage<'a>(
    pairs: &'a mut dyn PairReader,
    progress: &'a Progress,
    cells: impl Fn(&PairBatch) -> u64 + Send + 'a,
) -> impl FnMut(&mut PairBatch) -> Result<bool> + Send + 'a {
    move |batch: &mut PairBatch| {
        batch.clear();
        let more = pairs.fill(batch)?;
        match more {
            true => progress.read(cells(batch)),
            false => progress.input_done(),
        }
        Ok(more)
    }
}

/// Rows `start..start + len` of record batches laid end to end.
fn slice_rows(batches: &[RecordBatch], start: usize, len: usize) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    let (mut at, end) = (0usize, start + len);
    for b in batches {
        let (lo, hi) = (at.max(start), (at + b.num_rows()).min(end));
        if lo < hi {
            out.push(b.slice(lo - at, hi - lo));
        }
        at += b.num_rows();
    }
    out
}

/// Refuses a batch holding a pair whose score could leave the 32-bit range.
fn check_representable(batch: &PairBatch, scoring: &Scoring, local: bool) -> Result<()> {
    let seqs = batch.seqs.view();
    check_lengths(
        seqs.len(),
        |i| {
            let (q, t) = seqs.pair(i);
            (q.len(), t.len())
        },
        scoring,
        local,
        |i| (batch.query_ids.get(i).as_bytes().to_vec(), batch.target_ids.get(i).as_bytes().to_vec()),
    )
}

/// Refuses `n` pairs of lengths `lens(i)` when one's score could leave the 32-bit range,
/// naming the first such pair by its ids (`ids(i)`).
fn check_lengths(
    n: usize,
    lens: impl Fn(usize) -> (usize, usize),
    scoring: &Scoring,
    local: bool,
    ids: impl Fn(usize) -> (Vec<u8>, Vec<u8>),
) -> Result<()> {
    // One check at the batch's extremes first (the best possible score grows with a pair's
    // shorter side, the gap drift with the sum of both): a check per pair scans the matrix
    // and cost ~1 us, the limit of a GPU run at 100M pairs. Only a batch that might hold an
    // offender is checked pair by pair, to name the first one.
    let (mut shorter, mut sum) = (0, 0);
    for i in 0..n {
        let (q, t) = lens(i);
        shorter = shorter.max(q.min(t));
        sum = sum.max(q + t);
    }
    if scoring.check_lengths_in(shorter, sum.saturating_sub(shorter).max(shorter), local).is_ok() {
        return Ok(());
    }
    for i in 0..n {
        let (q, t) = lens(i);
        if let Err(why) = scoring.check_lengths_in(q, t, local) {
            let (qi, ti) = ids(i);
            return Err(Error::Input(format!(
                "pair {} / {}: {}",
                crate::error::shown_id(&qi),
                crate::error::shown_id(&ti),
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
    lens: &(dyn Fn(usize) -> (usize, usize) + Sync),
    stats: Option<KarlinAltschul>,
    model: EvalueModel,
) -> Result<ResultBatch> {
    let n = batch.query_ids.len();
    if alignments.len() != n {
        return Err(Error::Internal(format!("engine returned {} alignments for {n} pairs", alignments.len())));
    }
    let query = batch.query_ids.take_array()?;
    let target = batch.target_ids.take_array()?;
    let mut rows = ResultBatch::with_ids(query, target, std::mem::take(&mut batch.carried));
    if batch.query_headers.len() == n {
        rows.set_headers(std::mem::take(&mut batch.query_headers), std::mem::take(&mut batch.target_headers));
    }
    if batch.query_text.len() == n {
        rows.set_query_text(std::mem::take(&mut batch.query_text), std::mem::take(&mut batch.query_quals));
    }
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
                let (q, t) = lens(i);
                // The pair is its own search space: the target is the whole database.
                let (q, t) = (q as u64, t as u64);
                stats.map(|ka| (ka.bits(a.score), ka.evalue_by(model, a.score, q, t, t, 1)))
            })
            .collect()
    };
    for (i, (a, stat)) in alignments.iter().zip(stat).enumerate() {
        let (qlen, tlen) = lens(i);
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
            match (check_representable(&batch(lens), &scoring, false), first_bad) {
                (Ok(()), None) => {}
                (Err(e), Some(i)) => assert!(e.to_string().contains(&format!("pair q{i} / t{i}")), "{e}"),
                (got, want) => panic!("{lens:?}: {got:?}, first offender {want:?}"),
            }
        }
    }
}

//! Pipelines: read -> compute -> write. The reader fills batches on its own thread, up to
//! `in_flight` batches compute at once (so an engine's host work on one batch overlaps its
//! device work on another, and no batch's tail leaves the cores idle), and the writer takes
//! results in input order on the calling thread. Memory stays bounded by the number of
//! batches in flight times the batch size however long the input is; output begins before
//! input ends; batches are recycled, not reallocated.

pub mod align;
pub mod merge;
pub mod search;

use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::{Alignment, Engine};
use crate::error::{Error, Result};
use crate::output::{Need, ResultBatch};
use crate::seq::PairSeqs;

/// Where a pipeline's time went: each stage's busy time (compute summed over the batches in
/// flight, so it can exceed the wall time), for `--stats`.
#[derive(Debug, Clone, Default)]
pub struct StageTimes {
    pub batches: u64,
    /// In the reader (waiting for input included).
    pub read: Duration,
    pub compute: Duration,
    pub write: Duration,
    pub wall: Duration,
}

impl StageTimes {
    pub fn lines(&self) -> Vec<(String, String)> {
        let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
        vec![
            ("pipeline batches".into(), self.batches.to_string()),
            ("pipeline wall".into(), s(self.wall)),
            ("pipeline reading".into(), s(self.read)),
            ("pipeline computing (summed over batches in flight)".into(), s(self.compute)),
            ("pipeline writing".into(), s(self.write)),
        ]
    }
}

/// Runs `read` (fills an empty batch; false at the end of the input), `compute` on up to
/// `in_flight` batches at once, and `write` on the results in input order. Returns the
/// first error in pipeline order (reader, then compute, then writer); a stage whose
/// neighbour has stopped stops quietly.
pub(crate) fn run_ordered<B, R>(
    in_flight: usize,
    mut read: impl FnMut(&mut B) -> Result<bool> + Send,
    compute: impl Fn(&mut B) -> Result<R> + Sync,
    mut write: impl FnMut(R) -> Result<()>,
) -> Result<StageTimes>
where
    B: Default + Send,
    R: Send,
{
    let started = Instant::now();
    let busy = |f: &mut Duration, t: Instant| *f += t.elapsed();
    let compute_time = Mutex::new(Duration::ZERO);
    let compute = |b: &mut B| {
        let t = Instant::now();
        let r = compute(b);
        if let Ok(mut c) = compute_time.lock() {
            *c += t.elapsed();
        }
        r
    };
    let mut times = StageTimes::default();
    let mut read_time = Duration::ZERO;
    let mut read = |b: &mut B| {
        let t = Instant::now();
        let r = read(b);
        busy(&mut read_time, t);
        r
    };
    let mut write = |r: R| {
        let t = Instant::now();
        let out = write(r);
        busy(&mut times.write, t);
        times.batches += 1;
        out
    };
    let in_flight = in_flight.max(1);
    let (work_tx, work_rx) = sync_channel::<(u64, B)>(1);
    let (spare_tx, spare_rx) = sync_channel::<B>(in_flight + 2);
    let (done_tx, done_rx) = sync_channel::<(u64, Result<R>)>(in_flight);
    let work_rx = Arc::new(Mutex::new(work_rx));
    std::thread::scope(|scope| {
        let reader = crate::threads::spawn_scoped(scope, "sw-read", move || -> Result<()> {
            for seq in 0.. {
                let mut batch = spare_rx.try_recv().unwrap_or_default();
                if !read(&mut batch)? || work_tx.send((seq, batch)).is_err() {
                    break;
                }
            }
            Ok(())
        });
        let compute = &compute;
        let workers: Vec<_> = (0..in_flight)
            .map(|_| {
                let (work_rx, spare_tx, done_tx) = (work_rx.clone(), spare_tx.clone(), done_tx.clone());
                crate::threads::spawn_scoped(scope, "sw-compute", move || {
                    worker(&work_rx, &spare_tx, &done_tx, compute)
                })
            })
            .collect();
        drop((work_rx, spare_tx, done_tx));
        let written = write_in_order(done_rx, &mut write);
        let read = reader.join().unwrap_or_else(|_| Err(Error::Internal("pipeline reader panicked".into())));
        for w in workers {
            w.join().map_err(|_| Error::Internal("pipeline worker panicked".into()))?;
        }
        read?;
        written
    })?;
    times.read = read_time;
    times.compute = compute_time.into_inner().unwrap_or_default();
    times.wall = started.elapsed();
    Ok(times)
}

/// One compute worker: batches in, results out, emptied batches back to the reader.
fn worker<B, R>(
    work: &Mutex<Receiver<(u64, B)>>,
    spare: &SyncSender<B>,
    done: &SyncSender<(u64, Result<R>)>,
    compute: &(impl Fn(&mut B) -> Result<R> + Sync),
) {
    loop {
        let job = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, mut batch)) = job else { return };
        let result = compute(&mut batch);
        let failed = result.is_err();
        let _ = spare.try_send(batch);
        if done.send((seq, result)).is_err() || failed {
            return;
        }
    }
}

/// Writes results in sequence order as they come; stops at the first failure (the
/// compute error of the next batch in order, or the writer's own).
fn write_in_order<R>(done: Receiver<(u64, Result<R>)>, write: &mut impl FnMut(R) -> Result<()>) -> Result<()> {
    let mut waiting = BTreeMap::new();
    let mut next = 0u64;
    for (seq, result) in done {
        waiting.insert(seq, result);
        while let Some(result) = waiting.remove(&next) {
            write(result?)?;
            next += 1;
        }
    }
    Ok(())
}

/// Adds the traceback columns `need` asks for to `rows` (one row per pair, in order): the
/// path statistics, and for [`Need::Path`] the CIGAR and aligned strings too.
pub(crate) fn add_paths(
    engine: &dyn Engine,
    pairs: PairSeqs<'_>,
    alignments: &[Alignment],
    need: Need,
    rows: &mut ResultBatch,
) -> Result<()> {
    if need < Need::PathStats {
        return Ok(());
    }
    let path = need == Need::Path;
    let traced = engine.traceback(pairs, alignments, path)?;
    if traced.len() != pairs.len() {
        return Err(Error::Internal(format!("engine traced {} of {} alignments", traced.len(), pairs.len())));
    }
    let alphabet = engine.scoring().alphabet();
    if !path {
        for tb in &traced {
            rows.push_stats(tb.stats);
        }
        return Ok(());
    }
    // The strings of a batch are built on every core (one CIGAR and two aligned strings
    // per pair: on long alignments as much work as tracing them on the GPU).
    use rayon::prelude::*;
    let texts: Vec<(String, String, String)> = traced
        .par_iter()
        .zip(alignments)
        .enumerate()
        .with_min_len(256)
        .map(|(i, (tb, a))| {
            let mut cigar = String::new();
            let (mut qaln, mut taln) = (Vec::new(), Vec::new());
            tb.write_cigar(&mut cigar);
            let (q, t) = pairs.pair(i);
            tb.write_aligned(q, t, a, |c| alphabet.letter(c), &mut qaln, &mut taln);
            // Letters of the alphabet and '-': ASCII.
            let text = |v: Vec<u8>| {
                String::from_utf8(v).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            };
            (cigar, text(qaln), text(taln))
        })
        .collect();
    for (tb, (cigar, qaln, taln)) in traced.iter().zip(&texts) {
        rows.push_stats(tb.stats);
        rows.push_path(cigar, qaln, taln)?;
    }
    Ok(())
}

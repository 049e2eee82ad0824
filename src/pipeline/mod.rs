//! Pipelines: read -> compute -> write. The reader fills batches on its own thread, up to
//! `in_flight` batches compute at once (so an engine's host work on one batch overlaps its
//! device work on another, and no batch's tail leaves the cores idle), and the writer takes
//! results in input order on the calling thread. Memory stays bounded by the number of
//! batches in flight times the batch size however long the input is; output begins before
//! input ends; batches are recycled, not reallocated.

pub mod align;
pub mod merge;
pub mod orient;
pub mod search;

use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::engine::{Alignment, Engine};
use crate::error::{Error, Result};
use crate::output::{Need, ResultBatch, ResultWriter};
use crate::seq::{PairSeqs, SeqPairs};

/// Where a pipeline's time went, for `--stats`: each stage's busy time and the time it
/// waited on its neighbours. A stage busy for most of the wall bounds the run; one that mostly
/// waits for input is fed too slowly, one blocked handing on is held up by the next.
#[derive(Debug, Clone, Default)]
pub struct StageTimes {
    pub batches: u64,
    /// Compute workers (batches computing at once at most).
    pub workers: usize,
    pub wall: Duration,
    /// Reader thread: filling batches (reading, parsing, looking up and gathering), and
    /// blocked while the engine had no room for the next batch.
    pub read: Duration,
    pub read_blocked: Duration,
    /// Compute, summed over the workers: computing (engine, traceback, building the rows),
    /// waiting for a batch from the reader, blocked while the writer had no room.
    pub compute: Duration,
    pub compute_starved: Duration,
    pub compute_blocked: Duration,
    /// Writer (the calling thread): writing results (encoding them and putting the bytes
    /// out), and waiting for the next batch in input order.
    pub write: Duration,
    pub write_starved: Duration,
    /// Of `write`, the time spent putting bytes into the output (file, pipe), where known.
    pub write_out: Option<Duration>,
    /// A pipeline's own `--stats` lines (its steps within compute).
    pub notes: Vec<(String, String)>,
    /// From the start of the run ([`mark_start`]; else of the pipeline) to the first batch
    /// computing: loading sets, starting the engine, reading the first batch.
    pub before_first: Option<Duration>,
}

/// When the run started (the command line's entry), for [`StageTimes::before_first`].
static STARTED: OnceLock<Instant> = OnceLock::new();

/// Notes the start of the run (once; later calls keep the first).
pub fn mark_start() {
    STARTED.get_or_init(Instant::now);
}

impl StageTimes {
    /// `--stats` lines: the stages, the one that bounds the run, and the CPU time of
    /// swarrow's threads by stage name ([`crate::threads::cpu_by_stage`]).
    pub fn lines(&self) -> Vec<(String, String)> {
        let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
        let encoding = match self.write_out {
            Some(out) => format!(" (encoding {}, output {})", s(self.write.saturating_sub(out)), s(out)),
            None => String::new(),
        };
        let mut lines = vec![
            ("pipeline wall".into(), s(self.wall)),
            ("pipeline batches".into(), format!("{} ({} computing at once at most)", self.batches, self.workers)),
            (
                "before the first pair".into(),
                match self.before_first {
                    Some(d) => format!("{} (start to the first batch computing: sets, engine start, first read)", s(d)),
                    None => "no pairs".into(),
                },
            ),
            (
                "stage read".into(),
                format!("busy {}, blocked on compute {} (reading, parsing, id lookup and gathering)", s(self.read), s(self.read_blocked)),
            ),
            (
                "stage compute".into(),
                format!(
                    "busy {}, waiting for input {}, blocked on the writer {} (summed over {} workers; engine, traceback, rows)",
                    s(self.compute),
                    s(self.compute_starved),
                    s(self.compute_blocked),
                    self.workers
                ),
            ),
            ("stage write".into(), format!("busy {}{encoding}, waiting for results {}", s(self.write), s(self.write_starved))),
            ("bound by".into(), self.bound_by().into()),
        ];
        lines.extend(self.notes.iter().cloned());
        for (stage, use_) in crate::threads::cpu_by_stage() {
            let threads = if use_.threads == 1 { "thread" } else { "threads" };
            lines.push((format!("cpu {stage}"), format!("{} in {} {threads}", s(use_.cpu), use_.threads)));
        }
        lines
    }

    /// The stage busy for the largest share of the wall (compute per worker).
    pub fn bound_by(&self) -> &'static str {
        let per_worker = self.compute.as_secs_f64() / self.workers.max(1) as f64;
        let shares = [("read", self.read.as_secs_f64()), ("compute", per_worker), ("write", self.write.as_secs_f64())];
        shares.iter().fold(("read", f64::MIN), |best, &(n, t)| if t > best.1 { (n, t) } else { best }).0
    }
}

/// Finishes `writer` after a run (footer, rename), counted as writing in `times`, which
/// then also get the output's own time.
pub(crate) fn finish_writer(writer: Box<dyn ResultWriter>, times: &mut StageTimes) -> Result<()> {
    let output = writer.output_time();
    let started = Instant::now();
    writer.finish()?;
    times.write += started.elapsed();
    times.wall += started.elapsed();
    times.write_out = output.map(|o| o.get());
    Ok(())
}

/// What one compute worker did: busy, waiting for a batch, blocked handing a result on.
#[derive(Default)]
struct WorkerTimes {
    busy: Duration,
    starved: Duration,
    blocked: Duration,
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
    let mut times = StageTimes::default();
    let mut write = |r: R| {
        let t = Instant::now();
        let out = write(r);
        times.write += t.elapsed();
        times.batches += 1;
        out
    };
    let in_flight = in_flight.max(1);
    let (work_tx, work_rx) = sync_channel::<(u64, B)>(1);
    let (spare_tx, spare_rx) = sync_channel::<B>(in_flight + 2);
    let (done_tx, done_rx) = sync_channel::<(u64, Result<R>)>(in_flight);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let first = OnceLock::new();
    let (read_times, worker_times, write_starved) = std::thread::scope(|scope| {
        let reader = crate::threads::spawn_scoped(scope, "sw-read", move || -> Result<(Duration, Duration)> {
            let (mut busy, mut blocked) = (Duration::ZERO, Duration::ZERO);
            for seq in 0.. {
                let mut batch = spare_rx.try_recv().unwrap_or_default();
                let t = Instant::now();
                let more = read(&mut batch)?;
                busy += t.elapsed();
                let t = Instant::now();
                if !more || work_tx.send((seq, batch)).is_err() {
                    break;
                }
                blocked += t.elapsed();
            }
            Ok((busy, blocked))
        });
        let (compute, first) = (&compute, &first);
        let workers: Vec<_> = (0..in_flight)
            .map(|_| {
                let (work_rx, spare_tx, done_tx) = (work_rx.clone(), spare_tx.clone(), done_tx.clone());
                crate::threads::spawn_scoped(scope, "sw-compute", move || {
                    worker(&work_rx, &spare_tx, &done_tx, compute, first)
                })
            })
            .collect();
        drop((work_rx, spare_tx, done_tx));
        let mut write_starved = Duration::ZERO;
        let written = write_in_order(done_rx, &mut write, &mut write_starved);
        let read = reader.join().unwrap_or_else(|_| Err(Error::Internal("pipeline reader panicked".into())));
        let mut worker_times = Vec::new();
        for w in workers {
            worker_times.push(w.join().map_err(|_| Error::Internal("pipeline worker panicked".into()))?);
        }
        let read_times = read?;
        written?;
        Ok::<_, Error>((read_times, worker_times, write_starved))
    })?;
    (times.read, times.read_blocked) = read_times;
    times.workers = in_flight;
    for w in worker_times {
        times.compute += w.busy;
        times.compute_starved += w.starved;
        times.compute_blocked += w.blocked;
    }
    times.write_starved = write_starved;
    times.wall = started.elapsed();
    times.before_first = first.get().map(|&t: &Instant| t.duration_since(*STARTED.get().unwrap_or(&started)));
    Ok(times)
}

/// One compute worker: batches in, results out, emptied batches back to the reader.
fn worker<B, R>(
    work: &Mutex<Receiver<(u64, B)>>,
    spare: &SyncSender<B>,
    done: &SyncSender<(u64, Result<R>)>,
    compute: &(impl Fn(&mut B) -> Result<R> + Sync),
    first: &OnceLock<Instant>,
) -> WorkerTimes {
    let mut times = WorkerTimes::default();
    loop {
        let t = Instant::now();
        let job = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return times,
        };
        times.starved += t.elapsed();
        let Ok((seq, mut batch)) = job else { return times };
        let t = Instant::now();
        first.get_or_init(|| t);
        let result = compute(&mut batch);
        times.busy += t.elapsed();
        let failed = result.is_err();
        let _ = spare.try_send(batch);
        let t = Instant::now();
        if done.send((seq, result)).is_err() || failed {
            return times;
        }
        times.blocked += t.elapsed();
    }
}

/// Writes results in sequence order as they come; stops at the first failure (the
/// compute error of the next batch in order, or the writer's own). Adds the time spent
/// waiting for results to `starved`.
fn write_in_order<R>(
    done: Receiver<(u64, Result<R>)>,
    write: &mut impl FnMut(R) -> Result<()>,
    starved: &mut Duration,
) -> Result<()> {
    let mut waiting = BTreeMap::new();
    let mut next = 0u64;
    loop {
        let t = Instant::now();
        let Ok((seq, result)) = done.recv() else { return Ok(()) };
        *starved += t.elapsed();
        waiting.insert(seq, result);
        while let Some(result) = waiting.remove(&next) {
            write(result?)?;
            next += 1;
        }
    }
}

/// The pairs and alignments of `pairs` whose `keep` is true, in order (copied together):
/// what the next level of work runs on after a threshold dropped rows.
pub(crate) fn subset(
    pairs: PairSeqs<'_>,
    alignments: &[Alignment],
    keep: &[bool],
) -> Result<(SeqPairs, Vec<Alignment>)> {
    let at: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
    let mut seqs = SeqPairs::default();
    seqs.extend_par_with(at.len(), |k| pairs.pair(at[k]))?;
    Ok((seqs, at.iter().map(|&i| alignments[i]).collect()))
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

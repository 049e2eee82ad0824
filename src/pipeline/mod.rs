//! Pipelines: reader -> batcher -> engine -> writer, each stage on its own blocking thread,
//! joined by bounded channels. Memory stays bounded by the channel depth times the batch
//! size however long the input is; output begins before input ends and keeps input order
//! (one engine stage consumes batches in order).

pub mod align;
pub mod merge;
pub mod search;

use crate::error::{Error, Result};
use crate::output::{ResultBatch, ResultWriter};
use crate::progress::Progress;
use tokio::sync::mpsc;

/// Batches in flight between two stages: enough to overlap the stages, few enough to keep
/// memory flat.
pub const CHANNEL_DEPTH: usize = 2;

/// Runs the three stages of a pipeline on a small tokio runtime and returns the first
/// error in pipeline order. The write stage hands its writer back unfinished: the caller
/// finishes it (renaming the output into place) only when every stage succeeded, so a
/// failed run never leaves a truncated file under the output name.
fn run_stages<B, R, W>(
    read: impl FnOnce(mpsc::Sender<B>) -> Result<()> + Send + 'static,
    compute: impl FnOnce(mpsc::Receiver<B>, mpsc::Sender<R>) -> Result<()> + Send + 'static,
    write: impl FnOnce(mpsc::Receiver<R>) -> Result<W> + Send + 'static,
) -> Result<W>
where
    B: Send + 'static,
    R: Send + 'static,
    W: Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(3)
        .build()
        .map_err(|e| Error::io("cannot start the pipeline runtime", e))?;
    runtime.block_on(async move {
        let (batch_tx, batch_rx) = mpsc::channel::<B>(CHANNEL_DEPTH);
        let (result_tx, result_rx) = mpsc::channel::<R>(CHANNEL_DEPTH);
        let reader = tokio::task::spawn_blocking(move || read(batch_tx));
        let engine = tokio::task::spawn_blocking(move || compute(batch_rx, result_tx));
        let writer = tokio::task::spawn_blocking(move || write(result_rx));
        let (r, e, w) = tokio::join!(reader, engine, writer);
        let panicked = |e: tokio::task::JoinError| Error::Internal(format!("pipeline stage panicked: {}", e));
        r.map_err(panicked)??;
        e.map_err(panicked)??;
        w.map_err(panicked)?
    })
}

/// How large a batch may grow before it goes to the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BatchLimits {
    pub items: usize,
    pub residues: usize,
}

/// The pipeline both modes share: `items` are grouped into batches within `limits`
/// (`residues` counts an item's size), each batch becomes rows through `compute`, and the
/// rows go to `writer`, which is finished only when every stage succeeded. `progress` learns
/// the `cells` of each item read, the items computed and the rows written.
pub(crate) fn run_batched<T: Send + 'static>(
    items: Box<dyn Iterator<Item = Result<T>> + Send>,
    limits: BatchLimits,
    residues: fn(&T) -> usize,
    cells: impl Fn(&T) -> u64 + Send + 'static,
    progress: Progress,
    mut compute: impl FnMut(&[T]) -> Result<ResultBatch> + Send + 'static,
    writer: Box<dyn ResultWriter>,
) -> Result<()> {
    let (bar, reading, writing) = (progress.clone(), progress.clone(), progress.clone());
    let read = move |tx: mpsc::Sender<Vec<T>>| {
        let mut batch = Vec::new();
        let mut size = 0;
        for item in items {
            let item = item?;
            size += residues(&item);
            reading.read(cells(&item));
            batch.push(item);
            if batch.len() >= limits.items || size >= limits.residues {
                if send(&tx, std::mem::take(&mut batch)).is_err() {
                    return Ok(());
                }
                size = 0;
            }
        }
        reading.input_done();
        if !batch.is_empty() {
            let _ = send(&tx, batch);
        }
        Ok(())
    };
    let engine = move |mut rx: mpsc::Receiver<Vec<T>>, tx: mpsc::Sender<ResultBatch>| {
        while let Some(batch) = rx.blocking_recv() {
            let rows = compute(&batch)?;
            bar.items(batch.len() as u64);
            if send(&tx, rows).is_err() {
                break;
            }
        }
        Ok(())
    };
    let write = move |mut rx: mpsc::Receiver<ResultBatch>| {
        let mut writer = writer;
        while let Some(rows) = rx.blocking_recv() {
            writing.suspend(rows.len() as u64, || writer.write(&rows))?;
        }
        Ok(writer)
    };
    let writer = run_stages(read, engine, write)?;
    progress.phase("writing");
    writer.finish()
}

/// Sends into a bounded channel from a blocking stage; Err means the receiver has gone
/// (a later stage failed), and the stage should stop quietly so that error is reported.
fn send<T>(tx: &mpsc::Sender<T>, item: T) -> std::result::Result<(), Stopped> {
    tx.blocking_send(item).map_err(|_| Stopped)
}

/// A later stage has stopped; this stage's own result is irrelevant.
struct Stopped;

//! Pipelines: reader -> batcher -> engine -> writer, each stage on its own blocking thread,
//! joined by bounded channels. Memory stays bounded by the channel depth times the batch
//! size however long the input is; output begins before input ends and keeps input order
//! (one engine stage consumes batches in order).

pub mod align;
pub mod merge;
pub mod search;

use crate::error::{Error, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use tokio::sync::mpsc;

/// Batches in flight between two stages: enough to overlap the stages, few enough to keep
/// memory flat.
pub const CHANNEL_DEPTH: usize = 2;

/// Runs the three stages of a pipeline on a small tokio runtime and returns the first
/// error in pipeline order. The write stage hands its writer back unfinished: the caller
/// finishes it (renaming the output into place) only when every stage succeeded, so a
/// failed run never leaves a truncated file under the output name.
pub(crate) fn run_stages<B, R, W>(
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

/// Sends into a bounded channel from a blocking stage; Err means the receiver has gone
/// (a later stage failed), and the stage should stop quietly so that error is reported.
pub(crate) fn send<T>(tx: &mpsc::Sender<T>, item: T) -> std::result::Result<(), Stopped> {
    tx.blocking_send(item).map_err(|_| Stopped)
}

/// A later stage has stopped; this stage's own result is irrelevant.
pub(crate) struct Stopped;

/// Progress on stderr, only when stderr is a terminal and the user did not ask for quiet.
pub struct Progress(ProgressBar);

impl Progress {
    pub fn new(what: &'static str, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress(ProgressBar::hidden());
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = format!("{{spinner}} {{human_pos}} {} ({{per_sec}}, {{elapsed}}) {{msg}}", what);
        if let Ok(style) = ProgressStyle::with_template(&style) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Progress(bar)
    }

    pub fn add(&self, n: u64) {
        self.0.inc(n);
    }

    pub fn message(&self, msg: String) {
        self.0.set_message(msg);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Clone for Progress {
    fn clone(&self) -> Self {
        Progress(self.0.clone())
    }
}

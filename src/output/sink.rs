//! Where output bytes go: standard output, or a temporary file renamed onto the target when
//! the output is complete. The sink remembers the first I/O error it saw, so a writer can
//! report it (disk full, broken pipe) even after arrow or parquet wrapped it in their own error.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::atomic::AtomicFile;
use crate::error::{Error, Result};

/// Buffer between the encoders and the sink; large so a pipe sees few, big writes.
const BUFFER_BYTES: usize = 1 << 20;

/// A sink whose first I/O error can still be read after the sink moved into an encoder.
pub(super) struct Sink {
    target: Target,
    status: Status,
}

enum Target {
    Stdout(io::Stdout),
    File(AtomicFile),
    /// Any writer standing in for standard output in unit tests (e.g. one that fails).
    #[cfg(test)]
    Test(Box<dyn Write + Send>),
}

/// The time an output spent taking bytes (writes and flushes into the file or pipe, not
/// encoding them), readable while and after the writer runs; for `--stats`.
#[derive(Debug, Clone, Default)]
pub struct OutputTime(Arc<AtomicU64>);

impl OutputTime {
    pub fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }

    fn add(&self, since: Instant) {
        self.0.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// Shared view of a sink: its name for messages, its first I/O error and its output time.
#[derive(Clone)]
pub(super) struct Status {
    name: Arc<str>,
    is_stdout: bool,
    first_error: Arc<Mutex<Option<io::Error>>>,
    pub(super) output_time: OutputTime,
}

impl Status {
    pub(super) fn is_stdout(&self) -> bool {
        self.is_stdout
    }

    /// The error to report for a failed write: the sink's own I/O error when there was one
    /// (it keeps its kind, e.g. `BrokenPipe`), else the encoder's message as an internal error.
    pub(super) fn fail(&self, encoder_error: impl fmt::Display) -> Error {
        let io_error = self.first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
        match io_error {
            Some(source) => Error::io(format!("writing {}", self.name), source),
            None => Error::Internal(format!("writing {}: {encoder_error}", self.name)),
        }
    }

    /// True once the sink met an I/O error (kept for [`Status::fail`]).
    pub(super) fn has_failed(&self) -> bool {
        self.first_error.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// An I/O error met directly (text writers): record-free conversion with the same context.
    pub(super) fn io_fail(&self, source: io::Error) -> Error {
        Error::io(format!("writing {}", self.name), source)
    }

    fn record(&self, e: &io::Error) {
        let mut slot = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(io::Error::new(e.kind(), e.to_string()));
        }
    }
}

impl Sink {
    /// Standard output for `None` or `-`, else a temporary file beside `path`.
    pub(super) fn open(output: Option<&Path>) -> Result<Sink> {
        let (target, name, is_stdout) = match output {
            Some(path) if path.as_os_str() != "-" => {
                (Target::File(AtomicFile::create(path)?), path.display().to_string(), false)
            }
            _ => {
                crate::stdio::check_stdout()?;
                (Target::Stdout(io::stdout()), "standard output".to_string(), true)
            }
        };
        let status =
            Status { name: name.into(), is_stdout, first_error: Default::default(), output_time: Default::default() };
        Ok(Sink { target, status })
    }

    /// A sink over `writer`, behaving as standard output does.
    #[cfg(test)]
    pub(super) fn test(writer: Box<dyn Write + Send>) -> Sink {
        let status = Status {
            name: "standard output".into(),
            is_stdout: true,
            first_error: Default::default(),
            output_time: Default::default(),
        };
        Sink { target: Target::Test(writer), status }
    }

    pub(super) fn status(&self) -> Status {
        self.status.clone()
    }

    pub(super) fn buffered(self) -> BufWriter<Sink> {
        BufWriter::with_capacity(BUFFER_BYTES, self)
    }

    /// Flushes; a file is synced and renamed onto its target.
    pub(super) fn commit(mut self) -> Result<()> {
        let status = self.status.clone();
        self.flush().map_err(|e| status.io_fail(e))?;
        match self.target {
            Target::File(file) => file.commit(),
            _ => Ok(()),
        }
    }

    /// Unwraps the buffer and commits.
    pub(super) fn commit_buffered(out: BufWriter<Sink>, status: &Status) -> Result<()> {
        let sink = out.into_inner().map_err(|e| status.io_fail(e.into_error()))?;
        sink.commit()
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let started = Instant::now();
        let result = match &mut self.target {
            Target::Stdout(out) => out.write(buf),
            Target::File(file) => file.file()?.write(buf),
            #[cfg(test)]
            Target::Test(w) => w.write(buf),
        };
        self.status.output_time.add(started);
        result.inspect_err(|e| self.status.record(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let started = Instant::now();
        let result = match &mut self.target {
            Target::Stdout(out) => out.flush(),
            Target::File(file) => file.file()?.flush(),
            #[cfg(test)]
            Target::Test(w) => w.flush(),
        };
        self.status.output_time.add(started);
        result.inspect_err(|e| self.status.record(e))
    }
}

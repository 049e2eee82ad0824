//! Parquet input decoded in parallel, one row group per thread, handed out in input order.
//!
//! Row groups are independent (their column chunks are compressed and encoded on their own),
//! so a few decode at once, each on its own thread: thread k decodes row groups k, k + n,
//! k + 2n... and hands its record batches over a channel one deep, so memory stays bounded
//! by a few batches per thread. Only the projected columns are read. The file is read with
//! positioned reads (`pread`): parquet's own `File` reader clones the descriptor, whose
//! shared offset threads would race on.
//!
//! The decoder cannot be checked beforehand: a panic of its on corrupt data becomes an input
//! error (`FILE: bad Parquet data: ...`).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use crate::error::{Error, Result, Where};
use crate::io::ipc::guard_quiet;

/// Rows per record batch asked of the decoder.
const BATCH_ROWS: usize = 65_536;

/// Row groups decoded at once at most (one thread each).
const MAX_THREADS: usize = 8;

/// Where the Parquet bytes are: a regular file (read in place) or a buffer (stdin, gzip).
#[derive(Clone)]
pub enum Source {
    File(Arc<File>),
    Bytes(Bytes),
}

impl Length for Source {
    fn len(&self) -> u64 {
        match self {
            Source::File(f) => f.metadata().map(|m| m.len()).unwrap_or(0),
            Source::Bytes(b) => b.len() as u64,
        }
    }
}

/// A reader at a position of a file, by positioned reads (no shared offset).
pub struct At {
    file: Arc<File>,
    pos: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl ChunkReader for Source {
    type T = Box<dyn Read + Send>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        match self {
            Source::File(file) => Ok(Box::new(At { file: Arc::clone(file), pos: start })),
            Source::Bytes(b) => {
                let start = usize::try_from(start).ok().filter(|&s| s <= b.len());
                let start = start.ok_or_else(|| ParquetError::EOF("read past the end of the data".into()))?;
                Ok(Box::new(std::io::Cursor::new(b.slice(start..))))
            }
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            Source::File(file) => {
                if start.saturating_add(length as u64) > self.len() {
                    return Err(ParquetError::EOF(format!("{length} bytes at {start} run past the end of the file")));
                }
                let mut buf = vec![0; length];
                file.read_exact_at(&mut buf, start)?;
                Ok(buf.into())
            }
            Source::Bytes(b) => {
                let end = usize::try_from(start).ok().and_then(|s| s.checked_add(length).map(|e| (s, e)));
                match end {
                    Some((s, e)) if e <= b.len() => Ok(b.slice(s..e)),
                    _ => Err(ParquetError::EOF(format!("{length} bytes at {start} run past the end of the data"))),
                }
            }
        }
    }
}

/// Which top-level columns to decode, given the file's Arrow schema.
pub type Projection<'a> = &'a dyn Fn(&arrow::datatypes::Schema) -> Result<Vec<usize>>;

/// The record batches of the Parquet data in `source`, in order, of the columns `project`
/// picks; the schema is that of the batches.
pub fn batches(
    place: &Where,
    source: Source,
    project: Projection<'_>,
) -> Result<(SchemaRef, Box<dyn Iterator<Item = Result<RecordBatch>> + Send>)> {
    let bad = |e: String| Error::file(place, format!("bad Parquet data: {e}"));
    let metadata = guard_quiet(|| ArrowReaderMetadata::load(&source, ArrowReaderOptions::new()))
        .map_err(|p| bad(format!("the decoder failed ({p})")))?
        .map_err(|e| bad(e.to_string()))?;
    let wanted = project(metadata.schema())?;
    let mask = ProjectionMask::roots(metadata.parquet_schema(), wanted);
    let plan = Plan { source, metadata, mask };
    // The schema of the projected batches, from a reader of no row group.
    let empty = guard_quiet(|| plan.reader(Vec::new()))
        .map_err(|p| bad(format!("the decoder failed ({p})")))?
        .map_err(|e| bad(e.to_string()))?;
    let schema = arrow::record_batch::RecordBatchReader::schema(&empty);
    let groups = plan.metadata.metadata().num_row_groups();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = groups.min(cores).clamp(1, MAX_THREADS);
    let mut parts = Vec::with_capacity(threads);
    for k in 0..threads {
        let (tx, rx) = sync_channel(1);
        parts.push(rx);
        let (place, plan, mine) = (place.clone(), plan.clone(), (k..groups).step_by(threads).collect());
        std::thread::spawn(move || plan.decode(place, mine, tx));
    }
    let ordered = Ordered { parts, group: 0, groups, done: false };
    Ok((schema, Box::new(ordered)))
}

/// What every decoding thread shares: the data, its metadata (read once), the projection.
#[derive(Clone)]
struct Plan {
    source: Source,
    metadata: ArrowReaderMetadata,
    mask: ProjectionMask,
}

/// What a decoding thread sends: a batch of the row group under way, or its end.
enum Part {
    Batch(Result<RecordBatch>),
    GroupEnd,
}

impl Plan {
    fn reader(&self, groups: Vec<usize>) -> parquet::errors::Result<ParquetRecordBatchReader> {
        ParquetRecordBatchReaderBuilder::new_with_metadata(self.source.clone(), self.metadata.clone())
            .with_projection(self.mask.clone())
            .with_batch_size(BATCH_ROWS)
            .with_row_groups(groups)
            .build()
    }

    /// One thread's row groups, decoded one after the other; stops at the first error or
    /// when the reader has gone.
    fn decode(self, place: Where, groups: Vec<usize>, tx: SyncSender<Part>) {
        let bad = |e: String| Error::file(&place, format!("bad Parquet data: {e}"));
        for g in groups {
            let reader = match guard_quiet(|| self.reader(vec![g])) {
                Ok(Ok(r)) => Ok(r),
                Ok(Err(e)) => Err(bad(e.to_string())),
                Err(p) => Err(bad(format!("the decoder failed ({p})"))),
            };
            let mut reader = match reader {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Part::Batch(Err(e)));
                    return;
                }
            };
            loop {
                let next = match guard_quiet(|| reader.next()) {
                    Ok(None) => break,
                    Ok(Some(Ok(batch))) => Ok(batch),
                    Ok(Some(Err(e))) => Err(bad(e.to_string())),
                    Err(p) => Err(bad(format!("the decoder failed ({p})"))),
                };
                let failed = next.is_err();
                if tx.send(Part::Batch(next)).is_err() || failed {
                    return;
                }
            }
            if tx.send(Part::GroupEnd).is_err() {
                return;
            }
        }
    }
}

/// The threads' batches in row group order.
struct Ordered {
    parts: Vec<Receiver<Part>>,
    /// The row group being handed out.
    group: usize,
    groups: usize,
    done: bool,
}

impl Iterator for Ordered {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        while !self.done && self.group < self.groups {
            match self.parts[self.group % self.parts.len()].recv() {
                Ok(Part::Batch(Ok(batch))) => return Some(Ok(batch)),
                Ok(Part::Batch(Err(e))) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Part::GroupEnd) => self.group += 1,
                Err(_) => {
                    self.done = true;
                    return Some(Err(Error::Internal("a Parquet decoding thread stopped".into())));
                }
            }
        }
        None
    }
}

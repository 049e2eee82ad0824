//! Parquet input decoded in parallel, a few pieces at once, handed out in input order.
//!
//! The pieces are row groups cut into runs of rows, so that one big row group (writers make
//! them of a million rows) decodes on every thread instead of one. A piece reads only its own
//! pages: it finds them with the file's offset index (where every page starts, and its first
//! row) or, without one, by walking the page headers before it, skipping page after page
//! unread (each names its row count where a column is flat, not repeated). Row groups with
//! repeated columns and no offset index stay whole: skipping into them means decoding. Thread k decodes pieces k, k + n, k + 2n... and hands its record batches over a
//! channel one deep, so memory stays bounded by a few pieces per thread. Only the projected
//! columns are read. The file is read with positioned reads (`pread`): parquet's own `File`
//! reader clones the descriptor, whose shared offset threads would race on.
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
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;
use parquet::errors::ParquetError;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::reader::{ChunkReader, Length};

use crate::error::{Error, Result, Where};
use crate::io::ipc::guard_quiet;

/// Rows per record batch asked of the decoder.
const BATCH_ROWS: usize = 65_536;

/// Bytes of a piece of a row group (uncompressed, projected columns): a few pages' worth
/// per column at least, so the pages a piece shares with the next (decoded by both) are
/// few, and small enough that every thread has some and a few in flight use little memory.
const PIECE_BYTES: u64 = 32 << 20;

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

/// Record batches in order, with errors that already name the file and say what is wrong.
pub type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// Which top-level columns to decode, given the file's Arrow schema, and of those the
/// string and binary columns the caller reads as bytes only, which are decoded as views
/// (`Utf8View`, `BinaryView`) into the pages read: no copy of their values.
pub type Projection<'a> = &'a dyn Fn(&arrow::datatypes::Schema) -> Result<(Vec<usize>, Vec<usize>)>;

/// The record batches of the Parquet data in `source`, in order, of the columns `project`
/// picks; the schema is that of the batches.
pub fn batches(place: &Where, source: Source, project: Projection<'_>) -> Result<(SchemaRef, Batches)> {
    batches_in_pieces(place, source, project, PIECE_BYTES)
}

/// [`batches`], with row groups cut into pieces of about `piece_bytes` where they can be.
fn batches_in_pieces(
    place: &Where,
    source: Source,
    project: Projection<'_>,
    piece_bytes: u64,
) -> Result<(SchemaRef, Batches)> {
    let bad = |e: String| Error::file(place, format!("bad Parquet data: {e}"));
    // The offset index where the file has one: it lets a piece of a row group skip the
    // pages before it unread.
    let options = ArrowReaderOptions::new().with_offset_index_policy(PageIndexPolicy::Optional);
    let metadata = guard_quiet(|| ArrowReaderMetadata::load(&source, options.clone()))
        .map_err(|p| bad(format!("the decoder failed ({p})")))?
        .map_err(|e| bad(e.to_string()))?;
    let (wanted, views) = project(metadata.schema())?;
    let metadata = as_views(metadata, &views, options);
    let mask = ProjectionMask::roots(metadata.parquet_schema(), wanted);
    let plan = Plan { source, metadata, mask, piece_bytes };
    // The schema of the projected batches, from a reader of no row group.
    let empty = guard_quiet(|| plan.reader(&Piece { group: None, rows: None }))
        .map_err(|p| bad(format!("the decoder failed ({p})")))?
        .map_err(|e| bad(e.to_string()))?;
    let schema = arrow::record_batch::RecordBatchReader::schema(&empty);
    let pieces = plan.pieces();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = pieces.len().min(cores).clamp(1, MAX_THREADS);
    let mut parts = Vec::with_capacity(threads);
    for k in 0..threads {
        let (tx, rx) = sync_channel(1);
        parts.push(rx);
        let mine = pieces.iter().skip(k).step_by(threads).cloned().collect();
        let (place, plan) = (place.clone(), plan.clone());
        crate::threads::spawn("sw-parquet", move || plan.decode(place, mine, tx));
    }
    let ordered = Ordered { parts, piece: 0, pieces: pieces.len(), done: false };
    Ok((schema, Box::new(ordered)))
}

/// `metadata` with the string and binary columns `views` read as views: a plain-encoded
/// page's values are then used where they lie in the page instead of being copied into an
/// offsets-and-values array (a pass over every residue, into fresh pages per batch; the
/// UTF-8 check of string columns stays). Where the file's types do not allow it, as it was.
fn as_views(metadata: ArrowReaderMetadata, views: &[usize], options: ArrowReaderOptions) -> ArrowReaderMetadata {
    use arrow::datatypes::{DataType, Schema};
    let schema = metadata.schema();
    let mut changed = false;
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let view = match f.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 => Some(DataType::Utf8View),
                DataType::Binary | DataType::LargeBinary => Some(DataType::BinaryView),
                _ => None,
            };
            match view.filter(|_| views.contains(&i)) {
                Some(ty) => {
                    changed = true;
                    Arc::new(f.as_ref().clone().with_data_type(ty))
                }
                None => Arc::clone(f),
            }
        })
        .collect();
    if !changed {
        return metadata;
    }
    let supplied = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let hinted =
        guard_quiet(|| ArrowReaderMetadata::try_new(Arc::clone(metadata.metadata()), options.with_schema(supplied)));
    match hinted {
        Ok(Ok(hinted)) => hinted,
        _ => metadata,
    }
}

/// A row group (`None`: none, for the schema), or the run of its rows `rows`.
#[derive(Clone)]
struct Piece {
    group: Option<usize>,
    rows: Option<std::ops::Range<usize>>,
}

/// What every decoding thread shares: the data, its metadata (read once), the projection.
#[derive(Clone)]
struct Plan {
    source: Source,
    metadata: ArrowReaderMetadata,
    mask: ProjectionMask,
    piece_bytes: u64,
}

/// What a decoding thread sends: a batch of the piece under way, or its end.
enum Part {
    Batch(Result<RecordBatch>),
    PieceEnd,
}

impl Plan {
    /// The pieces to decode, in order: row groups, cut into runs of rows where the offset
    /// index of every projected column chunk says where their pages start, or where every
    /// projected column is flat.
    fn pieces(&self) -> Vec<Piece> {
        let file = self.metadata.metadata();
        let mut pieces = Vec::new();
        for g in 0..file.num_row_groups() {
            let group = file.row_group(g);
            let rows = usize::try_from(group.num_rows()).unwrap_or(0);
            let columns: Vec<usize> = (0..group.num_columns()).filter(|&c| self.mask.leaf_included(c)).collect();
            let index = file.page_index_for_row_group(g);
            let indexed = columns.iter().all(|&c| index.page_locations(c).is_some_and(|pages| !pages.is_empty()));
            let flat = columns.iter().all(|&c| file.file_metadata().schema_descr().column(c).max_rep_level() == 0);
            let bytes: u64 = columns.iter().map(|&c| group.column(c).uncompressed_size().max(0) as u64).sum();
            let n = if indexed || flat {
                bytes.div_ceil(self.piece_bytes).clamp(1, rows.max(1) as u64) as usize
            } else {
                1
            };
            if n == 1 {
                pieces.push(Piece { group: Some(g), rows: None });
                continue;
            }
            let per = rows.div_ceil(n);
            pieces.extend(
                (0..rows)
                    .step_by(per)
                    .map(|start| Piece { group: Some(g), rows: Some(start..(start + per).min(rows)) }),
            );
        }
        pieces
    }

    fn reader(&self, piece: &Piece) -> parquet::errors::Result<ParquetRecordBatchReader> {
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(self.source.clone(), self.metadata.clone())
                .with_projection(self.mask.clone())
                .with_batch_size(BATCH_ROWS)
                .with_row_groups(piece.group.into_iter().collect());
        if let Some(rows) = &piece.rows {
            let runs = vec![RowSelector::skip(rows.start), RowSelector::select(rows.len())];
            builder = builder.with_row_selection(RowSelection::from(runs));
        }
        builder.build()
    }

    /// One thread's pieces, decoded one after the other; stops at the first error or when
    /// the reader has gone.
    fn decode(self, place: Where, pieces: Vec<Piece>, tx: SyncSender<Part>) {
        let bad = |e: String| Error::file(&place, format!("bad Parquet data: {e}"));
        for piece in pieces {
            let reader = match guard_quiet(|| self.reader(&piece)) {
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
            if tx.send(Part::PieceEnd).is_err() {
                return;
            }
        }
    }
}

/// The threads' batches in piece order.
struct Ordered {
    parts: Vec<Receiver<Part>>,
    /// The piece being handed out.
    piece: usize,
    pieces: usize,
    done: bool,
}

impl Iterator for Ordered {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        while !self.done && self.piece < self.pieces {
            match self.parts[self.piece % self.parts.len()].recv() {
                Ok(Part::Batch(Ok(batch))) => return Some(Ok(batch)),
                Ok(Part::Batch(Err(e))) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Part::PieceEnd) => self.piece += 1,
                Err(_) => {
                    self.done = true;
                    return Some(Err(Error::Internal("a Parquet decoding thread stopped".into())));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    /// Two row groups of 3,000 and 1,000 rows in pages of 100 rows, with nulls; with an
    /// offset index or without one.
    fn file(indexed: bool) -> (Vec<u8>, RecordBatch) {
        let n = 4000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("skipped", DataType::Utf8, false),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(StringArray::from_iter((0..n).map(|i| (i % 7 != 3).then(|| "x".repeat(1 + (i % 13) as usize))))),
            Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("row {i}")))),
        ];
        let table = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(3000))
            .set_data_page_row_count_limit(100)
            .set_write_batch_size(100)
            .set_offset_index_disabled(!indexed)
            .set_statistics_enabled(if indexed { EnabledStatistics::Page } else { EnabledStatistics::Chunk })
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
        w.write(&table).unwrap();
        w.close().unwrap();
        (out, table)
    }

    #[test]
    fn pieces_of_row_groups_read_every_row_once_in_order() {
        for indexed in [true, false] {
            let (data, table) = file(indexed);
            let metadata = ArrowReaderMetadata::load(
                &Source::Bytes(data.clone().into()),
                ArrowReaderOptions::new().with_offset_index_policy(PageIndexPolicy::Optional),
            )
            .unwrap();
            assert_eq!(metadata.metadata().page_index_for_row_group(0).page_locations(1).is_some(), indexed);
            read_in_pieces(&data, &table);
        }
    }

    fn read_in_pieces(data: &[u8], table: &RecordBatch) {
        let want = table.project(&[0, 1]).unwrap();
        let place = Where::Named("t".into());
        // Whole row groups, then pieces of a few pages, of single pages, of less than a page.
        for piece_bytes in [u64::MAX, 4000, 700, 100] {
            let source = Source::Bytes(data.to_vec().into());
            let (schema, batches) =
                batches_in_pieces(&place, source, &|_| Ok((vec![0, 1], vec![])), piece_bytes).unwrap();
            let got: Vec<RecordBatch> = batches.collect::<Result<_>>().unwrap();
            assert!(piece_bytes == u64::MAX || got.len() > 2, "{piece_bytes}: {} batches", got.len());
            let got = arrow::compute::concat_batches(&schema, &got).unwrap();
            assert_eq!(got.columns(), want.columns(), "pieces of {piece_bytes} bytes");
        }
    }
}

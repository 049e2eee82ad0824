//! Parquet writer: zstd, row groups cut by rows and by bytes, page and chunk statistics, the
//! Arrow schema embedded (so readers get exactly our types back) and the run metadata as
//! key-value metadata. Parquet cannot be read before its footer is written: on standard output
//! the reader sees the rows when swarrow finishes.
//!
//! A column's pages are one sequential stream, and the CIGAR and aligned strings are most of an
//! alignment table's bytes, so encoding the columns of one row group in parallel leaves all but
//! three threads idle. Row groups are therefore encoded in parallel too: a full row group is
//! handed to the rayon pool (its columns each a task) while the next one is gathered, and the
//! encoded row groups are appended to the file in order. Row groups are cut where the rows say
//! (at most [`ROW_GROUP_ROWS`] rows and about [`ROW_GROUP_BYTES`] of values), never where the
//! batches or the threads fall, so the bytes are those of the parquet crate's one-thread
//! `ArrowWriter` flushed at the same rows, whatever the thread count. At most
//! [`ParquetEncoder`]'s `in_flight` row groups wait to be appended: memory stays a few row
//! groups' worth.

use std::collections::VecDeque;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, TryRecvError};
use std::time::Duration;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::{ParquetError, Result as PqResult};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use rayon::prelude::*;

use super::columns::{Column, Columns, Kind, Need};
use super::sink::{Sink, Status};
use super::{ResultBatch, ResultWriter, RunMetadata};
use crate::error::Result;

/// Most rows in a row group: large enough for good compression and few footer entries (tables
/// of short rows reach it first).
pub(super) const ROW_GROUP_ROWS: usize = 1 << 20;

/// About the most value bytes in a row group (see [`row_bytes`]): rows of aligned strings reach
/// it first (at 2 KB a row, 32 Ki rows), so a row group buffered, and each of the few in flight,
/// stays this size however long the rows, and a table of long rows still has many row groups
/// to encode in parallel. 64 MiB compresses as well as 1 Mi rows did (within 1%).
pub(super) const ROW_GROUP_BYTES: usize = 64 << 20;

/// zstd level 3 is zstd's own default: most of the ratio at a fraction of the time of higher
/// levels.
const ZSTD_LEVEL: i32 = 3;

/// The traceback's strings (CIGAR, aligned query and target) are nearly all of an alignment
/// table's bytes and nearly unique per row: level 1 compresses them 1.7 times as fast as level
/// 3 for a file 7% larger, and a dictionary would only be tried and dropped. (Their
/// statistics, truncated to 64 bytes, cost nothing measurable: kept, as every column's.)
const PATH_TEXT_ZSTD_LEVEL: i32 = 1;

/// The writer properties every Parquet output of `schema` uses, with `metadata` as key-value
/// metadata.
pub(super) fn properties(metadata: &RunMetadata, schema: &Schema) -> PqResult<WriterProperties> {
    let key_values: Vec<KeyValue> = metadata.iter().map(|(k, v)| KeyValue::new(k.to_string(), v.to_string())).collect();
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_key_value_metadata(if key_values.is_empty() { None } else { Some(key_values) });
    let path_text = Compression::ZSTD(ZstdLevel::try_new(PATH_TEXT_ZSTD_LEVEL)?);
    for field in schema.fields() {
        // Our own columns only, by canonical name (a carried column is taken as it comes).
        let ours = Column::parse(field.name()).filter(|c| c.name() == field.name());
        if ours.is_some_and(|c| c.need() == Need::Path && c.kind() == Kind::Text) {
            let path = ColumnPath::from(field.name().as_str());
            props = props.set_column_compression(path.clone(), path_text).set_column_dictionary_enabled(path, false);
        }
    }
    Ok(props.build())
}

/// The value bytes of each row of `batch`, by which row groups are cut: the length of each
/// string or binary value, and 8 bytes for every other value (nested ones included, which
/// the row limit bounds). A function of the row alone, so the cuts do not move with batches.
fn row_bytes(batch: &RecordBatch) -> Vec<usize> {
    let mut bytes = vec![0; batch.num_rows()];
    for column in batch.columns() {
        let mut add =
            |lengths: &mut dyn Iterator<Item = usize>| bytes.iter_mut().zip(lengths).for_each(|(b, n)| *b += n);
        match column.data_type() {
            DataType::Utf8 => add(&mut column.as_string::<i32>().offsets().lengths()),
            DataType::LargeUtf8 => add(&mut column.as_string::<i64>().offsets().lengths()),
            DataType::Binary => add(&mut column.as_binary::<i32>().offsets().lengths()),
            DataType::LargeBinary => add(&mut column.as_binary::<i64>().offsets().lengths()),
            // A view's low 32 bits are its value's length.
            DataType::Utf8View => add(&mut column.as_string_view().views().iter().map(|&v| v as u32 as usize)),
            DataType::BinaryView => add(&mut column.as_binary_view().views().iter().map(|&v| v as u32 as usize)),
            _ => add(&mut std::iter::repeat(8)),
        }
    }
    bytes
}

/// A row group's column chunks, in leaf order, once encoded.
type Encoded = PqResult<Vec<ArrowColumnChunk>>;

/// A Parquet file of record batches of one schema, its row groups, and their columns, encoded
/// in parallel on the rayon pool.
pub(super) struct ParquetEncoder<W: Write + Send> {
    file: SerializedFileWriter<W>,
    columns: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// How many leaf columns (column writers) each field has, in schema order.
    leaves: Vec<usize>,
    group_rows: usize,
    group_bytes: usize,
    /// The row group being gathered: slices of the batches written, its rows and value bytes.
    gathered: Vec<RecordBatch>,
    rows: usize,
    bytes: usize,
    /// Row groups handed to the pool so far.
    started: usize,
    /// Row groups being encoded, oldest first; at most `in_flight` of them.
    encoding: VecDeque<Receiver<Encoded>>,
    in_flight: usize,
}

impl<W: Write + Send> ParquetEncoder<W> {
    /// Writes the magic bytes into `out`; the footer comes with [`ParquetEncoder::finish`].
    pub(super) fn new(out: W, schema: SchemaRef, props: WriterProperties) -> PqResult<Self> {
        let group_rows = props.max_row_group_row_count().unwrap_or(ROW_GROUP_ROWS).max(1);
        // ArrowWriter sets the file up (Parquet schema, embedded Arrow schema); its pieces
        // are then driven column by column.
        let (file, columns) = ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        let descr = file.schema_descr();
        let mut leaves = vec![0; schema.fields().len()];
        for leaf in 0..descr.num_columns() {
            leaves[descr.get_column_root_idx(leaf)] += 1;
        }
        // Enough row groups that their big columns keep every thread busy (an alignment
        // table has three), few enough that memory stays a few row groups.
        let in_flight = rayon::current_num_threads() / 2 + 1;
        Ok(ParquetEncoder {
            file,
            columns,
            schema,
            leaves,
            group_rows,
            group_bytes: ROW_GROUP_BYTES,
            gathered: Vec::new(),
            rows: 0,
            bytes: 0,
            started: 0,
            encoding: VecDeque::new(),
            in_flight,
        })
    }

    /// Row groups of about `bytes` value bytes at most (instead of [`ROW_GROUP_BYTES`]).
    #[cfg(test)]
    fn group_bytes(mut self, bytes: usize) -> Self {
        self.group_bytes = bytes.max(1);
        self
    }

    pub(super) fn write(&mut self, batch: &RecordBatch) -> PqResult<()> {
        // Checked here, not where the row group is encoded, long after.
        let types = batch.columns().iter().map(|c| c.data_type());
        if batch.num_columns() != self.schema.fields().len()
            || types.zip(self.schema.fields()).any(|(t, f)| t != f.data_type())
        {
            return Err(ParquetError::General(format!(
                "a batch of {} columns does not match the output's schema: {}",
                batch.num_columns(),
                self.schema
            )));
        }
        let mut from = 0;
        for (row, bytes) in row_bytes(batch).into_iter().enumerate() {
            self.rows += 1;
            self.bytes += bytes;
            if self.rows == self.group_rows || self.bytes >= self.group_bytes {
                self.gathered.push(batch.slice(from, row + 1 - from));
                from = row + 1;
                self.start_group()?;
            }
        }
        if from < batch.num_rows() {
            self.gathered.push(batch.slice(from, batch.num_rows() - from));
        }
        Ok(())
    }

    /// Hands the gathered rows to the pool as a row group; first appends the oldest row groups
    /// (waiting for them) while too many are in flight, and any already encoded.
    fn start_group(&mut self) -> PqResult<()> {
        let parts = std::mem::take(&mut self.gathered);
        (self.rows, self.bytes) = (0, 0);
        if parts.is_empty() {
            return Ok(());
        }
        while self.encoding.len() >= self.in_flight {
            self.append_oldest()?;
        }
        let mut writers = self.columns.create_column_writers(self.started)?.into_iter();
        let fields: Vec<Vec<ArrowColumnWriter>> =
            self.leaves.iter().map(|&n| writers.by_ref().take(n).collect()).collect();
        self.started += 1;
        let schema = self.schema.clone();
        let (done, encoded) = sync_channel(1);
        rayon::spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| encode(&schema, fields, &parts)))
                .unwrap_or_else(|_| Err(ParquetError::General("encoding a row group panicked".into())));
            // The encoder may be gone (it failed elsewhere): nobody wants the result then.
            let _ = done.send(result);
        });
        self.encoding.push_back(encoded);
        self.append_ready()
    }

    /// Appends the oldest row groups that are already encoded, in order.
    fn append_ready(&mut self) -> PqResult<()> {
        while let Some(encoded) = self.encoding.front() {
            let chunks = match encoded.try_recv() {
                Ok(chunks) => chunks,
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => Err(lost()),
            };
            self.encoding.pop_front();
            self.append(chunks?)?;
        }
        Ok(())
    }

    /// Waits for the oldest row group being encoded and appends it.
    fn append_oldest(&mut self) -> PqResult<()> {
        let Some(encoded) = self.encoding.pop_front() else { return Ok(()) };
        let chunks = if rayon::current_thread_index().is_some() {
            // On a thread of the pool (perhaps its only one), the encoding may be queued
            // behind this very thread: run pool work while waiting, and block only briefly
            // when there is none (the encoding is on another thread).
            loop {
                if rayon::yield_now() == Some(rayon::Yield::Executed) {
                    match encoded.try_recv() {
                        Ok(chunks) => break chunks,
                        Err(TryRecvError::Empty) => continue,
                        Err(TryRecvError::Disconnected) => break Err(lost()),
                    }
                }
                match encoded.recv_timeout(Duration::from_millis(1)) {
                    Ok(chunks) => break chunks,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break Err(lost()),
                }
            }
        } else {
            encoded.recv().unwrap_or_else(|_| Err(lost()))
        };
        self.append(chunks?)
    }

    /// Appends a row group's column chunks to the file, in schema order.
    fn append(&mut self, chunks: Vec<ArrowColumnChunk>) -> PqResult<()> {
        let mut group = self.file.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        Ok(())
    }

    /// The last row group and the footer; returns the output.
    pub(super) fn finish(mut self) -> PqResult<W> {
        self.start_group()?;
        while !self.encoding.is_empty() {
            self.append_oldest()?;
        }
        self.file.into_inner()
    }
}

/// A row group that ended without a result (its task was lost).
fn lost() -> ParquetError {
    ParquetError::General("a row group's encoding ended without a result".into())
}

/// Encodes the rows `parts` (batches of `schema`) as one row group: each field's column
/// writers (`fields`, in schema order) fed and closed by one task, the fields in parallel.
fn encode(schema: &Schema, fields: Vec<Vec<ArrowColumnWriter>>, parts: &[RecordBatch]) -> Encoded {
    let chunks: Vec<Vec<ArrowColumnChunk>> = fields
        .into_par_iter()
        .enumerate()
        .with_max_len(1)
        .map(|(f, mut writers)| {
            for part in parts {
                for (writer, leaf) in writers.iter_mut().zip(compute_leaves(schema.field(f), part.column(f))?) {
                    writer.write(&leaf)?;
                }
            }
            writers.into_iter().map(ArrowColumnWriter::close).collect()
        })
        .collect::<PqResult<_>>()?;
    Ok(chunks.into_iter().flatten().collect())
}

/// Refuses, before anything is written, a carried column Parquet cannot hold (an Arrow
/// interval of months, days and nanoseconds, an empty struct, ...: the parquet crate finds
/// out only when it writes the column, after the file's magic). Each column is tried on a
/// dry run: one null row, written into memory.
pub(super) fn check_carried_parquet(carried: &arrow::datatypes::Schema) -> Result<()> {
    for field in carried.fields() {
        let field = field.as_ref().clone().with_nullable(true);
        let ty = field.data_type().clone();
        let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![field.clone()]));
        let Ok(batch) = RecordBatch::try_new(schema.clone(), vec![arrow::array::new_null_array(&ty, 1)]) else {
            continue;
        };
        let tried = crate::io::ipc::guard_quiet(|| {
            let mut writer = ArrowWriter::try_new(Vec::new(), schema, None)?;
            writer.write(&batch)?;
            writer.close().map(|_| ())
        });
        let problem = match tried {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e.to_string(),
            Err(panic) => panic.to_string(),
        };
        return Err(crate::error::Error::usage(format!(
            "carried column {} has type {}, which Parquet cannot hold ({problem}): write Arrow IPC (--format arrow), \
             or leave the column out with --carry",
            field.name(),
            ty
        )));
    }
    Ok(())
}

pub(super) struct ParquetWriter {
    encoder: ParquetEncoder<Sink>,
    schema: SchemaRef,
    columns: Columns,
    status: Status,
}

impl ParquetWriter {
    pub(super) fn new(sink: Sink, columns: Columns, schema: SchemaRef, metadata: &RunMetadata) -> Result<Self> {
        let status = sink.status();
        let props = properties(metadata, &schema).map_err(|e| status.fail(e))?;
        // The parquet writer buffers internally: no BufWriter of our own.
        let encoder = ParquetEncoder::new(sink, schema.clone(), props).map_err(|e| status.fail(e))?;
        Ok(ParquetWriter { encoder, schema, columns, status })
    }
}

impl ResultWriter for ParquetWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let record_batch = batch.to_record_batch(&self.columns, &self.schema)?;
        self.encoder.write(&record_batch).map_err(|e| self.status.fail(e))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let status = self.status;
        let out = self.encoder.finish().map_err(|e| status.fail(e))?;
        out.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int32Array, ListArray, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field, Fields, Int32Type, Schema};
    use bytes::Bytes;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    /// Every kind of column an output holds (int32, float64 with nulls, bool, utf8 long and
    /// short) and carried ones of several leaves (a list, a struct).
    fn schema() -> SchemaRef {
        let inner = Fields::from(vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true)]);
        Arc::new(Schema::new(vec![
            Field::new("query", DataType::Utf8, false),
            Field::new("score", DataType::Int32, false),
            Field::new("evalue", DataType::Float64, true),
            Field::new("recomputed", DataType::Boolean, false),
            Field::new("qaln", DataType::Utf8, false),
            Field::new("list", DataType::new_list(DataType::Int32, true), true),
            Field::new("pair", DataType::Struct(inner), true),
        ]))
    }

    fn query(i: usize) -> String {
        format!("q{i}")
    }

    /// Aligned strings of 14 to 273 characters.
    fn text(i: usize) -> String {
        "ACDEFGHIKLMNPQRSTVWY-".repeat(1 + i % 13)[i % 7..].to_string()
    }

    /// Rows `from..from + n`, each value a function of its row number.
    fn batch(schema: &SchemaRef, from: usize, n: usize) -> RecordBatch {
        let rows = from..from + n;
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(
            rows.clone().map(|i| (i % 5 != 0).then(|| (0..i % 4).map(|k| Some((i + k) as i32)).collect::<Vec<_>>())),
        );
        let a: ArrayRef = Arc::new(Int32Array::from_iter(rows.clone().map(|i| (i % 3 != 0).then_some(i as i32))));
        let b: ArrayRef = Arc::new(StringArray::from_iter(rows.clone().map(|i| (i % 4 != 0).then(|| format!("b{i}")))));
        let DataType::Struct(inner) = schema.field(6).data_type().clone() else { unreachable!() };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(rows.clone().map(query))),
            Arc::new(Int32Array::from_iter_values(rows.clone().map(|i| (i * 7 % 101) as i32))),
            Arc::new(Float64Array::from_iter(rows.clone().map(|i| (i % 6 != 0).then_some(i as f64 * 1e-3)))),
            Arc::new(BooleanArray::from_iter(rows.clone().map(|i| Some(i % 11 == 0)))),
            Arc::new(StringArray::from_iter_values(rows.clone().map(text))),
            Arc::new(list),
            Arc::new(StructArray::new(inner, vec![a, b], None)),
        ];
        RecordBatch::try_new(schema.clone(), columns).unwrap()
    }

    fn props(group_rows: usize) -> WriterProperties {
        let mut meta = RunMetadata::new();
        meta.push("mode", "align");
        let props = properties(&meta, &schema()).unwrap();
        props.into_builder().set_max_row_group_row_count(Some(group_rows)).build()
    }

    /// Batches of `sizes` rows, in order from row 0, and their rows in all.
    fn batches(schema: &SchemaRef, sizes: &[usize]) -> (Vec<RecordBatch>, usize) {
        let mut batches = Vec::new();
        let mut from = 0;
        for &n in sizes {
            batches.push(batch(schema, from, n));
            from += n;
        }
        (batches, from)
    }

    // The oracle is the parquet crate's own one-thread ArrowWriter: the same row groups, the
    // same bytes, for batches that end inside, on and across row-group boundaries, and for
    // no batch at all; the rows read back are the rows written, in order.
    #[test]
    fn parallel_columns_write_the_bytes_of_the_one_thread_writer() {
        let schema = schema();
        let cases: [(usize, &[usize]); 5] = [
            (1000, &[]),
            (1000, &[1]),
            (1000, &[999, 1, 1000, 2500, 3, 0, 1497]),
            (64, &[700, 5, 59, 64, 128]),
            (1 << 20, &[4000, 1]),
        ];
        for (group_rows, sizes) in cases {
            let (batches, from) = batches(&schema, sizes);
            let mut serial = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props(group_rows))).unwrap();
            let mut parallel = ParquetEncoder::new(Vec::new(), schema.clone(), props(group_rows)).unwrap();
            for b in &batches {
                serial.write(b).unwrap();
                parallel.write(b).unwrap();
            }
            let want = serial.into_inner().unwrap();
            let got = parallel.finish().unwrap();
            assert!(got == want, "row groups of {group_rows}, batches {sizes:?}: bytes differ");

            let reader = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(got)).unwrap();
            let groups = reader.metadata().num_row_groups();
            assert_eq!(groups, from.div_ceil(group_rows), "{sizes:?}");
            assert_eq!(reader.schema().fields(), schema.fields());
            let read: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
            let read = arrow::compute::concat_batches(&schema, &read).unwrap();
            let written = arrow::compute::concat_batches(&schema, &batches).unwrap();
            assert_eq!(read, written, "{sizes:?}");
        }
    }

    #[test]
    fn a_batch_of_another_schema_is_an_error() {
        let schema = schema();
        let mut encoder = ParquetEncoder::new(Vec::new(), schema.clone(), props(100)).unwrap();
        let fewer = batch(&schema, 0, 10).project(&[0, 1]).unwrap();
        let other = Arc::new(Schema::new(vec![Field::new("query", DataType::Int32, false)]));
        let retyped = RecordBatch::try_new(other, vec![Arc::new(Int32Array::from(vec![1]))]).unwrap();
        for bad in [fewer, retyped] {
            let e = encoder.write(&bad).unwrap_err().to_string();
            assert!(e.contains("does not match the output's schema"), "{e}");
        }
        encoder.write(&batch(&schema, 0, 10)).unwrap();
        assert!(encoder.finish().is_ok());
    }

    // Row groups end after the row that fills them: the `group_rows`th, or the first to reach
    // `group_bytes` value bytes (a string counts its length, any other value 8 bytes; the
    // generator's lengths are known). The oracle, the one-thread ArrowWriter flushed after
    // those rows, gives the bytes for every batch split and every pool, of 1 to 8 threads (1
    // to 5 row groups in flight; the writer itself runs on the pool, as the only thread too).
    #[test]
    fn row_groups_cut_by_rows_and_bytes_give_the_same_bytes_whatever_the_threads_and_batches() {
        let schema = schema();
        let (total, group_rows, group_bytes) = (3000, 100, 18_500);
        let other_columns = schema.fields().len() - 2;
        let (mut ends, mut rows, mut bytes, mut by_rows) = (Vec::new(), 0, 0, 0);
        for i in 0..total {
            rows += 1;
            bytes += query(i).len() + text(i).len() + 8 * other_columns;
            if rows == group_rows || bytes >= group_bytes {
                by_rows += usize::from(rows == group_rows);
                ends.push(i + 1);
                (rows, bytes) = (0, 0);
            }
        }
        assert!(by_rows > 0 && by_rows < ends.len(), "both limits cut: {by_rows} of {}", ends.len());
        if ends.last() != Some(&total) {
            ends.push(total);
        }

        let all = batch(&schema, 0, total);
        let mut serial = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props(group_rows))).unwrap();
        let mut start = 0;
        for &end in &ends {
            serial.write(&all.slice(start, end - start)).unwrap();
            serial.flush().unwrap();
            start = end;
        }
        let want = serial.into_inner().unwrap();

        let splits: [Vec<usize>; 4] = [vec![total], vec![1, 999, 1000, 1000], vec![47; 63], vec![7; 428]];
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for split in &splits {
                let mut split = split.clone();
                split.push(total - split.iter().sum::<usize>());
                let (batches, _) = batches(&schema, &split);
                let got = pool.install(|| {
                    let mut parallel = ParquetEncoder::new(Vec::new(), schema.clone(), props(group_rows))
                        .unwrap()
                        .group_bytes(group_bytes);
                    for b in &batches {
                        parallel.write(b).unwrap();
                    }
                    parallel.finish().unwrap()
                });
                assert!(got == want, "{threads} threads, batches of {:?}: bytes differ", &split[..2]);
            }
        }

        let reader = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(want)).unwrap();
        let sizes: Vec<i64> = reader.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        let want_sizes: Vec<i64> = std::iter::once(0)
            .chain(ends.iter().copied())
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| (w[1] - w[0]) as i64)
            .collect();
        assert_eq!(sizes, want_sizes);
        let read: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(arrow::compute::concat_batches(&schema, &read).unwrap(), all);
    }
}

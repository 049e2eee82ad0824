//! Parquet writer: zstd, row groups of up to 1 Mi rows, page and chunk statistics, the Arrow
//! schema embedded (so readers get exactly our types back) and the run metadata as key-value
//! metadata. Parquet cannot be read before its footer is written: on standard output the
//! reader sees the rows when swarrow finishes.
//!
//! The columns of a batch are encoded on the rayon pool, one task per column (a column's
//! pages are one sequential stream, so a column is the finest unit of work), and spliced
//! into the row group in schema order: the same bytes as the parquet crate's one-thread
//! `ArrowWriter`, which encodes every column of an alignment table (with its CIGAR and aligned
//! strings) at a third of the rate the Arrow stream is written.

use std::io::Write;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowLeafColumn, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::Result as PqResult;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

use super::columns::Columns;
use super::sink::{Sink, Status};
use super::{ResultBatch, ResultWriter, RunMetadata};
use crate::error::Result;

/// Rows per row group: large enough for good compression and few footers entries, small enough
/// that a row group (buffered in memory, encoded, until full) stays around 100 MB.
pub(super) const ROW_GROUP_ROWS: usize = 1 << 20;

/// zstd level 3 is zstd's own default: most of the ratio at a fraction of the time of higher
/// levels.
const ZSTD_LEVEL: i32 = 3;

/// The writer properties every Parquet output uses, with `metadata` as key-value metadata.
pub(super) fn properties(metadata: &RunMetadata) -> PqResult<WriterProperties> {
    let zstd = ZstdLevel::try_new(ZSTD_LEVEL)?;
    let key_values: Vec<KeyValue> = metadata.iter().map(|(k, v)| KeyValue::new(k.to_string(), v.to_string())).collect();
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(zstd))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_key_value_metadata(if key_values.is_empty() { None } else { Some(key_values) })
        .build())
}

/// A Parquet file of record batches of one schema, its columns encoded in parallel. Row
/// groups of [`ROW_GROUP_ROWS`] rows (the last one shorter), as `ArrowWriter` cuts them.
pub(super) struct ParquetEncoder<W: Write + Send> {
    file: SerializedFileWriter<W>,
    columns: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The row group being filled: one writer per leaf column, and its rows so far.
    group: Option<(Vec<ArrowColumnWriter>, usize)>,
    group_rows: usize,
}

impl<W: Write + Send> ParquetEncoder<W> {
    /// Writes the magic bytes into `out`; the footer comes with [`ParquetEncoder::finish`].
    pub(super) fn new(out: W, schema: SchemaRef, props: WriterProperties) -> PqResult<Self> {
        let group_rows = props.max_row_group_row_count().unwrap_or(ROW_GROUP_ROWS).max(1);
        // ArrowWriter sets the file up (Parquet schema, embedded Arrow schema); its pieces
        // are then driven column by column.
        let (file, columns) = ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        Ok(ParquetEncoder { file, columns, schema, group: None, group_rows })
    }

    pub(super) fn write(&mut self, batch: &RecordBatch) -> PqResult<()> {
        let mut done = 0;
        while done < batch.num_rows() {
            let (writers, rows) = match &mut self.group {
                Some(group) => group,
                none => none.insert((self.columns.create_column_writers(self.file.flushed_row_groups().len())?, 0)),
            };
            let take = (self.group_rows - *rows).min(batch.num_rows() - done);
            let part = batch.slice(done, take);
            let mut leaves: Vec<ArrowLeafColumn> = Vec::with_capacity(writers.len());
            for (field, column) in self.schema.fields().iter().zip(part.columns()) {
                leaves.extend(compute_leaves(field, column)?);
            }
            writers.par_iter_mut().zip(&leaves).with_max_len(1).try_for_each(|(w, leaf)| w.write(leaf))?;
            *rows += take;
            done += take;
            if *rows == self.group_rows {
                self.close_group()?;
            }
        }
        Ok(())
    }

    /// Closes the row group being filled (each column's last page compressed on the pool)
    /// and appends its column chunks to the file in schema order.
    fn close_group(&mut self) -> PqResult<()> {
        let Some((writers, _)) = self.group.take() else { return Ok(()) };
        let chunks: Vec<_> =
            writers.into_par_iter().with_max_len(1).map(ArrowColumnWriter::close).collect::<PqResult<_>>()?;
        let mut group = self.file.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        Ok(())
    }

    /// The last row group and the footer; returns the output.
    pub(super) fn finish(mut self) -> PqResult<W> {
        self.close_group()?;
        self.file.into_inner()
    }
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
        let props = properties(metadata).map_err(|e| status.fail(e))?;
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

    /// Rows `from..from + n`, each value a function of its row number.
    fn batch(schema: &SchemaRef, from: usize, n: usize) -> RecordBatch {
        let rows = from..from + n;
        let text = |i: usize| "ACDEFGHIKLMNPQRSTVWY-".repeat(1 + i % 13)[i % 7..].to_string();
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(
            rows.clone().map(|i| (i % 5 != 0).then(|| (0..i % 4).map(|k| Some((i + k) as i32)).collect::<Vec<_>>())),
        );
        let a: ArrayRef = Arc::new(Int32Array::from_iter(rows.clone().map(|i| (i % 3 != 0).then_some(i as i32))));
        let b: ArrayRef = Arc::new(StringArray::from_iter(rows.clone().map(|i| (i % 4 != 0).then(|| format!("b{i}")))));
        let DataType::Struct(inner) = schema.field(6).data_type().clone() else { unreachable!() };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(rows.clone().map(|i| format!("q{i}")))),
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
        let props = properties(&meta).unwrap();
        props.into_builder().set_max_row_group_row_count(Some(group_rows)).build()
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
            let mut batches = Vec::new();
            let mut from = 0;
            for &n in sizes {
                batches.push(batch(&schema, from, n));
                from += n;
            }
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
}

//! Parquet writer: zstd, row groups of up to 1 Mi rows, page and chunk statistics, the Arrow
//! schema embedded (so readers get exactly our types back) and the run metadata as key-value
//! metadata. Parquet cannot be read before its footer is written: on standard output the
//! reader sees the rows when swarrow finishes.

use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::columns::Columns;
use super::sink::{Sink, Status};
use super::{ResultBatch, ResultWriter, RunMetadata};
use crate::error::Result;

/// Rows per row group: large enough for good compression and few footers entries, small enough
/// that a row group (buffered in memory until full) stays around 100 MB.
pub(super) const ROW_GROUP_ROWS: usize = 1 << 20;

/// zstd level 3 is zstd's own default: most of the ratio at a fraction of the time of higher
/// levels.
const ZSTD_LEVEL: i32 = 3;

/// The writer properties every Parquet output uses, with `metadata` as key-value metadata.
pub(super) fn properties(metadata: &RunMetadata) -> parquet::errors::Result<WriterProperties> {
    let zstd = ZstdLevel::try_new(ZSTD_LEVEL)?;
    let key_values: Vec<KeyValue> = metadata.iter().map(|(k, v)| KeyValue::new(k.to_string(), v.to_string())).collect();
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(zstd))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_key_value_metadata(if key_values.is_empty() { None } else { Some(key_values) })
        .build())
}

pub(super) struct ParquetWriter {
    writer: ArrowWriter<Sink>,
    schema: SchemaRef,
    columns: Columns,
    status: Status,
}

impl ParquetWriter {
    pub(super) fn new(sink: Sink, columns: Columns, schema: SchemaRef, metadata: &RunMetadata) -> Result<Self> {
        let status = sink.status();
        let props = properties(metadata).map_err(|e| status.fail(e))?;
        // The parquet writer buffers internally: no BufWriter of our own.
        let writer = ArrowWriter::try_new(sink, schema.clone(), Some(props)).map_err(|e| status.fail(e))?;
        Ok(ParquetWriter { writer, schema, columns, status })
    }
}

impl ResultWriter for ParquetWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let record_batch = batch.to_record_batch(&self.columns, &self.schema)?;
        self.writer.write(&record_batch).map_err(|e| self.status.fail(e))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let status = self.status;
        let out = self.writer.into_inner().map_err(|e| status.fail(e))?;
        out.commit()
    }
}

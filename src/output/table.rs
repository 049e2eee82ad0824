//! Writers for record batches of any schema (used by `swarrow pairhmm`, whose rows are not
//! alignments), through the same sinks, atomic files and encoder settings as the alignment
//! writers: Arrow IPC stream and file, Parquet, TSV. BLAST tabular has no such columns and
//! is refused.
//!
//! TSV: one header line of column names; strings with tabs and newlines as spaces; float64 in
//! the shortest text that reads back to the same value; booleans `true`/`false`.

use std::io::{BufWriter, Write};

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type, SchemaRef};
use arrow::ipc::writer::{FileWriter, StreamWriter};

use super::sink::{Sink, Status};
use super::{Format, RunMetadata};
use crate::error::{Error, Result};

/// A table output, written batch by batch; `finish` completes it (footer, rename).
pub trait TableWriter: Send {
    fn write(&mut self, batch: &RecordBatch) -> Result<()>;
    fn finish(self: Box<Self>) -> Result<()>;
}

/// The writer for `format` of batches of `schema` (with `metadata` attached) to `output`
/// (`None` or `-` = standard output).
pub fn create_table_writer(
    format: Format,
    schema: SchemaRef,
    metadata: &RunMetadata,
    output: Option<&std::path::Path>,
) -> Result<Box<dyn TableWriter>> {
    if format.is_blast_tabular() || format.is_alignment_format() {
        return Err(Error::usage(format!(
            "--format {format} has no columns for these results: use arrow, arrow-file, parquet or tsv"
        )));
    }
    let map: arrow::datatypes::Metadata = metadata.iter().collect();
    let schema = std::sync::Arc::new(schema.as_ref().clone().with_metadata(map));
    let sink = Sink::open(output)?;
    let status = sink.status();
    // Nothing is written before the first rows (or `finish`, for an empty table): a run that
    // fails before them leaves standard output untouched.
    Ok(Box::new(Table { pending: Some((format, schema, metadata.clone(), sink)), encoder: None, status }))
}

/// A table output that is no file: the batches, with `metadata` on their schema, go to
/// `deliver`; returns that schema.
pub fn table_batches(
    schema: SchemaRef,
    metadata: &RunMetadata,
    deliver: super::Deliver,
) -> (SchemaRef, Box<dyn TableWriter>) {
    let map: arrow::datatypes::Metadata = metadata.iter().collect();
    let schema = std::sync::Arc::new(schema.as_ref().clone().with_metadata(map));
    (schema.clone(), Box::new(Delivered { schema, deliver }))
}

struct Delivered {
    schema: SchemaRef,
    deliver: super::Deliver,
}

impl TableWriter for Delivered {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = batch.clone().with_schema(self.schema.clone()).map_err(|e| Error::Internal(e.to_string()))?;
        (self.deliver)(batch)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

/// The encoder of `format`; writes its header (schema, magic, column names) into `sink`.
fn start(format: Format, schema: SchemaRef, metadata: &RunMetadata, sink: Sink) -> Result<Encoder> {
    let status = sink.status();
    Ok(match format {
        Format::ArrowStream => {
            Encoder::Stream(StreamWriter::try_new(sink.buffered(), &schema).map_err(|e| status.fail(e))?)
        }
        Format::ArrowFile => Encoder::File(FileWriter::try_new(sink.buffered(), &schema).map_err(|e| status.fail(e))?),
        Format::Parquet => {
            let props = super::pq::properties(metadata, &schema).map_err(|e| status.fail(e))?;
            Encoder::Parquet(super::pq::ParquetEncoder::new(sink, schema, props).map_err(|e| status.fail(e))?)
        }
        _ => {
            let mut out = sink.buffered();
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            writeln!(out, "{}", names.join("\t")).map_err(|e| status.io_fail(e))?;
            Encoder::Tsv(out, String::new())
        }
    })
}

enum Encoder {
    Stream(StreamWriter<BufWriter<Sink>>),
    File(FileWriter<BufWriter<Sink>>),
    Parquet(super::pq::ParquetEncoder<Sink>),
    Tsv(BufWriter<Sink>, String),
}

/// What a table writer needs to start: format, schema, run metadata and the sink.
type Pending = (Format, SchemaRef, RunMetadata, Sink);

struct Table {
    /// Until the first rows: what starting the encoder takes.
    pending: Option<Pending>,
    encoder: Option<Encoder>,
    status: Status,
}

impl Table {
    fn started(&mut self) -> Result<&mut Encoder> {
        if let Some((format, schema, metadata, sink)) = self.pending.take() {
            self.encoder = Some(start(format, schema, &metadata, sink)?);
        }
        self.encoder.as_mut().ok_or_else(|| Error::Internal("table writer used after it failed to start".into()))
    }
}

impl TableWriter for Table {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let status = self.status.clone();
        let status = &status;
        match self.started()? {
            Encoder::Stream(w) => {
                w.write(batch).map_err(|e| status.fail(e))?;
                w.get_mut().flush().map_err(|e| status.fail(e))
            }
            Encoder::File(w) => w.write(batch).map_err(|e| status.fail(e)),
            Encoder::Parquet(w) => w.write(batch).map_err(|e| status.fail(e)),
            Encoder::Tsv(out, line) => {
                for row in 0..batch.num_rows() {
                    line.clear();
                    for (c, column) in batch.columns().iter().enumerate() {
                        if c > 0 {
                            line.push('\t');
                        }
                        tsv_cell(line, column.as_ref(), row)?;
                    }
                    line.push('\n');
                    out.write_all(line.as_bytes()).map_err(|e| status.io_fail(e))?;
                }
                if status.is_stdout() {
                    out.flush().map_err(|e| status.io_fail(e))?;
                }
                Ok(())
            }
        }
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.started()?;
        let status = self.status;
        let Some(encoder) = self.encoder else { return Err(Error::Internal("table writer not started".into())) };
        match encoder {
            Encoder::Stream(w) => Sink::commit_buffered(w.into_inner().map_err(|e| status.fail(e))?, &status),
            Encoder::File(w) => Sink::commit_buffered(w.into_inner().map_err(|e| status.fail(e))?, &status),
            Encoder::Parquet(w) => w.finish().map_err(|e| status.fail(e))?.commit(),
            Encoder::Tsv(out, _) => Sink::commit_buffered(out, &status),
        }
    }
}

fn tsv_cell(line: &mut String, column: &dyn Array, row: usize) -> Result<()> {
    use std::fmt::Write as _;
    if column.is_null(row) {
        return Ok(());
    }
    match column.data_type() {
        DataType::Utf8 => {
            let s = column.as_string::<i32>().value(row);
            line.extend(s.chars().map(|c| if matches!(c, '\t' | '\n' | '\r') { ' ' } else { c }));
        }
        DataType::Float64 => {
            let _ = write!(line, "{}", column.as_primitive::<Float64Type>().value(row));
        }
        DataType::Int32 => {
            let _ = write!(line, "{}", column.as_primitive::<Int32Type>().value(row));
        }
        DataType::Boolean => {
            let _ = write!(line, "{}", column.as_boolean().value(row));
        }
        other => return Err(Error::Internal(format!("TSV writer: no text form for {other}"))),
    }
    Ok(())
}

//! Arrow IPC writers: the stream format (flushed after every batch so a reader at the other
//! end of a pipe sees rows as they come) and the file format. Both uncompressed, for the
//! widest reader support; the run metadata travels as schema metadata.

use std::io::{BufWriter, Write};

use arrow::datatypes::SchemaRef;
use arrow::ipc::writer::{FileWriter, StreamWriter};

use super::columns::Columns;
use super::sink::{Sink, Status};
use super::{ResultBatch, ResultWriter};
use crate::error::Result;

pub(super) struct ArrowStreamWriter {
    writer: StreamWriter<BufWriter<Sink>>,
    schema: SchemaRef,
    columns: Columns,
    status: Status,
}

impl ArrowStreamWriter {
    pub(super) fn new(sink: Sink, columns: Columns, schema: SchemaRef) -> Result<Self> {
        let status = sink.status();
        let writer = StreamWriter::try_new(sink.buffered(), &schema).map_err(|e| status.fail(e))?;
        Ok(ArrowStreamWriter { writer, schema, columns, status })
    }
}

impl ResultWriter for ArrowStreamWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let record_batch = batch.to_record_batch(&self.columns, &self.schema)?;
        self.writer.write(&record_batch).map_err(|e| self.status.fail(e))?;
        self.writer.get_mut().flush().map_err(|e| self.status.fail(e))
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let status = self.status;
        let out = self.writer.into_inner().map_err(|e| status.fail(e))?;
        Sink::commit_buffered(out, &status)
    }
}

pub(super) struct ArrowFileWriter {
    writer: FileWriter<BufWriter<Sink>>,
    schema: SchemaRef,
    columns: Columns,
    status: Status,
}

impl ArrowFileWriter {
    pub(super) fn new(sink: Sink, columns: Columns, schema: SchemaRef) -> Result<Self> {
        let status = sink.status();
        let writer = FileWriter::try_new(sink.buffered(), &schema).map_err(|e| status.fail(e))?;
        Ok(ArrowFileWriter { writer, schema, columns, status })
    }
}

impl ResultWriter for ArrowFileWriter {
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
        Sink::commit_buffered(out, &status)
    }
}

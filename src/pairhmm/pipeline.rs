//! The pairhmm stream: a reader thread fills batches, the engine computes them in order, a
//! writer thread writes their rows. Bounded channels keep at most a few batches in memory;
//! used batches go back to the reader for reuse. Output rows keep input order.

use super::batch::PairBatch;
use super::input::BatchReader;
use super::{Engine, Likelihood};
use crate::error::{Error, Result};
use crate::output::TableWriter;
use arrow::array::{ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

/// The output columns.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("read", DataType::Utf8, false),
        Field::new("haplotype", DataType::Utf8, false),
        Field::new("group", DataType::Utf8, false),
        Field::new("log10_likelihood", DataType::Float64, false),
        Field::new("recomputed", DataType::Boolean, false),
    ]))
}

/// The rows of one computed batch.
pub fn rows(batch: &PairBatch, likelihoods: &[Likelihood], schema: &SchemaRef) -> Result<RecordBatch> {
    let read = StringArray::from_iter_values(batch.pairs.iter().map(|p| batch.read_ids.get(p.read as usize)));
    let hap = StringArray::from_iter_values(batch.pairs.iter().map(|p| batch.hap_ids.get(p.hap as usize)));
    let group = StringArray::from_iter_values(batch.pairs.iter().map(|p| batch.groups.get(p.group as usize)));
    let like = Float64Array::from_iter_values(likelihoods.iter().map(|l| l.log10));
    let flag = BooleanArray::from_iter(likelihoods.iter().map(|l| Some(l.recomputed)));
    let columns: Vec<ArrayRef> = vec![Arc::new(read), Arc::new(hap), Arc::new(group), Arc::new(like), Arc::new(flag)];
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::Internal(format!("pairhmm output batch: {e}")))
}

/// Batches between stages.
const DEPTH: usize = 2;

/// Streams every batch of `reader` through `engine` into `writer`, then finishes it; returns
/// the rows written.
pub fn run(engine: Arc<dyn Engine>, mut reader: BatchReader, writer: Box<dyn TableWriter>) -> Result<u64> {
    let (full_tx, full_rx): (SyncSender<PairBatch>, Receiver<PairBatch>) = sync_channel(DEPTH);
    let (free_tx, free_rx) = sync_channel::<PairBatch>(DEPTH + 2);
    let (rows_tx, rows_rx) = sync_channel::<RecordBatch>(DEPTH);
    for _ in 0..DEPTH + 1 {
        let _ = free_tx.send(PairBatch::new());
    }
    let read_stage = crate::threads::spawn("sw-hmm-read", move || -> Result<()> {
        while let Ok(mut batch) = free_rx.recv() {
            if !reader.next_batch(&mut batch)? {
                return Ok(());
            }
            if full_tx.send(batch).is_err() {
                return Ok(()); // a later stage failed; its error is reported
            }
        }
        Ok(())
    });
    let write_stage = crate::threads::spawn("sw-hmm-write", move || -> Result<(Box<dyn TableWriter>, u64)> {
        let mut writer = writer;
        let mut written = 0;
        for rows in rows_rx {
            writer.write(&rows)?;
            written += rows.num_rows() as u64;
        }
        Ok((writer, written))
    });
    let schema = schema();
    let mut likelihoods = Vec::new();
    let compute = (|| -> Result<()> {
        for batch in full_rx {
            engine.compute(&batch, &mut likelihoods)?;
            if likelihoods.len() != batch.pairs.len() {
                return Err(Error::Internal(format!(
                    "engine gave {} results for {} pairs",
                    likelihoods.len(),
                    batch.pairs.len()
                )));
            }
            let out = rows(&batch, &likelihoods, &schema)?;
            if rows_tx.send(out).is_err() {
                return Ok(()); // the writer failed; its error is reported
            }
            let _ = free_tx.send(batch);
        }
        Ok(())
    })();
    drop(rows_tx);
    drop(free_tx);
    let panicked = |stage: &str| Error::Internal(format!("pairhmm {stage} stage panicked"));
    let read = read_stage.join().map_err(|_| panicked("reader"))?;
    let written = write_stage.join().map_err(|_| panicked("writer"))?;
    read?;
    compute?;
    let (writer, rows) = written?;
    writer.finish()?;
    Ok(rows)
}

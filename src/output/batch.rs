//! The one result schema and the row buffer the pipelines fill.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, Metadata, Schema, SchemaRef};

use super::{Mode, RunMetadata};
use crate::error::{Error, Result};

/// The schema of `mode`'s results, without run metadata.
pub fn schema(mode: Mode) -> SchemaRef {
    Arc::new(Schema::new(fields(mode)))
}

/// The schema of `mode`'s results carrying `metadata` as Arrow schema metadata.
pub fn schema_with_metadata(mode: Mode, metadata: &RunMetadata) -> SchemaRef {
    let map: Metadata = metadata.iter().collect();
    Arc::new(Schema::new_with_metadata(fields(mode), map))
}

fn fields(mode: Mode) -> Vec<Field> {
    let int = |name: &str| Field::new(name, DataType::Int32, false);
    let mut fields = vec![
        Field::new("query", DataType::Utf8, false),
        Field::new("target", DataType::Utf8, false),
        int("score"),
        Field::new("bits", DataType::Float64, true),
        Field::new("evalue", DataType::Float64, true),
        int("qstart"),
        int("qend"),
        int("tstart"),
        int("tend"),
        int("qlen"),
        int("tlen"),
        Field::new("recomputed", DataType::Boolean, false),
    ];
    if mode == Mode::Search {
        fields.push(int("rank"));
    }
    fields
}

/// One result row, for pushing into and reading out of a [`ResultBatch`]. `rank` is ignored
/// in align mode (pass 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResultRow<'a> {
    pub query: &'a str,
    pub target: &'a str,
    pub score: i32,
    pub bits: Option<f64>,
    pub evalue: Option<f64>,
    pub qstart: i32,
    pub qend: i32,
    pub tstart: i32,
    pub tend: i32,
    pub qlen: i32,
    pub tlen: i32,
    pub recomputed: bool,
    pub rank: i32,
}

/// Strings stored as Arrow stores them: one byte buffer plus offsets.
#[derive(Debug, Clone)]
struct StrColumn {
    data: String,
    ends: Vec<usize>,
}

impl StrColumn {
    fn new() -> Self {
        StrColumn { data: String::new(), ends: Vec::new() }
    }

    fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.ends.push(self.data.len());
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    fn to_array(&self, name: &str) -> Result<ArrayRef> {
        let too_big = || {
            Error::Internal(format!("output batch: column {name} holds more than 2 GiB of text"))
        };
        let mut offsets = Vec::with_capacity(self.ends.len() + 1);
        offsets.push(0i32);
        for &end in &self.ends {
            offsets.push(i32::try_from(end).map_err(|_| too_big())?);
        }
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        let values = Buffer::from(self.data.as_bytes());
        let array = StringArray::try_new(offsets, values, None)
            .map_err(|e| Error::Internal(format!("output batch: column {name}: {e}")))?;
        Ok(Arc::new(array))
    }
}

/// A batch of result rows held column by column, as the writers consume them.
#[derive(Debug, Clone)]
pub struct ResultBatch {
    query: StrColumn,
    target: StrColumn,
    score: Vec<i32>,
    bits: Vec<Option<f64>>,
    evalue: Vec<Option<f64>>,
    qstart: Vec<i32>,
    qend: Vec<i32>,
    tstart: Vec<i32>,
    tend: Vec<i32>,
    qlen: Vec<i32>,
    tlen: Vec<i32>,
    recomputed: Vec<bool>,
    rank: Vec<i32>,
}

impl Default for ResultBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ResultBatch {
    pub fn new() -> Self {
        ResultBatch {
            query: StrColumn::new(),
            target: StrColumn::new(),
            score: Vec::new(),
            bits: Vec::new(),
            evalue: Vec::new(),
            qstart: Vec::new(),
            qend: Vec::new(),
            tstart: Vec::new(),
            tend: Vec::new(),
            qlen: Vec::new(),
            tlen: Vec::new(),
            recomputed: Vec::new(),
            rank: Vec::new(),
        }
    }

    pub fn push(&mut self, row: ResultRow<'_>) {
        self.query.push(row.query);
        self.target.push(row.target);
        self.score.push(row.score);
        self.bits.push(row.bits);
        self.evalue.push(row.evalue);
        self.qstart.push(row.qstart);
        self.qend.push(row.qend);
        self.tstart.push(row.tstart);
        self.tend.push(row.tend);
        self.qlen.push(row.qlen);
        self.tlen.push(row.tlen);
        self.recomputed.push(row.recomputed);
        self.rank.push(row.rank);
    }

    pub fn len(&self) -> usize {
        self.score.len()
    }

    pub fn is_empty(&self) -> bool {
        self.score.is_empty()
    }

    /// Row `i` (panics when `i >= len()`, like slice indexing).
    pub fn row(&self, i: usize) -> ResultRow<'_> {
        ResultRow {
            query: self.query.get(i),
            target: self.target.get(i),
            score: self.score[i],
            bits: self.bits[i],
            evalue: self.evalue[i],
            qstart: self.qstart[i],
            qend: self.qend[i],
            tstart: self.tstart[i],
            tend: self.tend[i],
            qlen: self.qlen[i],
            tlen: self.tlen[i],
            recomputed: self.recomputed[i],
            rank: self.rank[i],
        }
    }

    pub fn rows(&self) -> impl Iterator<Item = ResultRow<'_>> + '_ {
        (0..self.len()).map(move |i| self.row(i))
    }

    /// Empties the batch, keeping its allocations for reuse.
    pub fn clear(&mut self) {
        self.query.clear();
        self.target.clear();
        self.score.clear();
        self.bits.clear();
        self.evalue.clear();
        self.qstart.clear();
        self.qend.clear();
        self.tstart.clear();
        self.tend.clear();
        self.qlen.clear();
        self.tlen.clear();
        self.recomputed.clear();
        self.rank.clear();
    }

    /// The batch as an Arrow record batch of `schema` (from [`schema`] or
    /// [`schema_with_metadata`] for the same `mode`); align mode drops `rank`.
    pub fn to_record_batch(&self, mode: Mode, schema: &SchemaRef) -> Result<RecordBatch> {
        let int = |v: &Vec<i32>| -> ArrayRef { Arc::new(Int32Array::from(v.clone())) };
        let float = |v: &Vec<Option<f64>>| -> ArrayRef { Arc::new(Float64Array::from(v.clone())) };
        let mut columns: Vec<ArrayRef> = vec![
            self.query.to_array("query")?,
            self.target.to_array("target")?,
            int(&self.score),
            float(&self.bits),
            float(&self.evalue),
            int(&self.qstart),
            int(&self.qend),
            int(&self.tstart),
            int(&self.tend),
            int(&self.qlen),
            int(&self.tlen),
            Arc::new(BooleanArray::from(self.recomputed.clone())),
        ];
        if mode == Mode::Search {
            columns.push(int(&self.rank));
        }
        RecordBatch::try_new(schema.clone(), columns)
            .map_err(|e| Error::Internal(format!("building the {mode} output batch: {e}")))
    }
}

//! The one result schema and the row buffer the pipelines fill.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Metadata, Schema, SchemaRef};

use super::{Mode, RunMetadata};
use crate::error::{Error, Result};
use crate::seq::Ids;

/// The schema of `mode`'s results, without run metadata.
pub fn schema(mode: Mode) -> SchemaRef {
    Arc::new(Schema::new(fields(mode)))
}

/// The schema of `mode`'s results, then the input columns `carried` through (align from a
/// pair table), carrying `metadata` as Arrow schema metadata.
pub fn schema_with_metadata(mode: Mode, carried: &Schema, metadata: &RunMetadata) -> SchemaRef {
    let map: Metadata = metadata.iter().collect();
    let mut fields = fields(mode);
    fields.extend(carried.fields().iter().map(|f| f.as_ref().clone()));
    Arc::new(Schema::new_with_metadata(fields, map))
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

/// An id column: built row by row (search, merge), or taken over whole from a pair batch
/// (align), whose id buffers become the Arrow array without a copy.
#[derive(Debug, Clone)]
enum IdColumn {
    Rows(Ids),
    Array(StringArray),
}

impl IdColumn {
    fn push(&mut self, id: &str) {
        if let IdColumn::Array(a) = self {
            // Rows after a taken-over column: continue as rows (tests only; never on a hot path).
            let mut ids = Ids::default();
            for s in a.iter() {
                let _ = ids.push(s.unwrap_or_default());
            }
            *self = IdColumn::Rows(ids);
        }
        if let IdColumn::Rows(ids) = self {
            // Over 2 GiB of ids in one batch cannot happen: batches hold at most ~1M rows.
            let _ = ids.push(id);
        }
    }

    fn get(&self, i: usize) -> &str {
        match self {
            IdColumn::Rows(ids) => ids.get(i),
            IdColumn::Array(a) => a.value(i),
        }
    }

    fn to_array(&self) -> Result<ArrayRef> {
        Ok(match self {
            IdColumn::Rows(ids) => Arc::new(ids.clone().take_array()?),
            IdColumn::Array(a) => Arc::new(a.clone()),
        })
    }
}

/// A batch of result rows held column by column, as the writers consume them.
#[derive(Debug, Clone)]
pub struct ResultBatch {
    query: IdColumn,
    target: IdColumn,
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
    /// Input columns carried through (align from a pair table), row for row.
    carried: Vec<RecordBatch>,
}

impl Default for ResultBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl ResultBatch {
    pub fn new() -> Self {
        ResultBatch {
            query: IdColumn::Rows(Ids::default()),
            target: IdColumn::Rows(Ids::default()),
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
            carried: Vec::new(),
        }
    }

    /// Align's rows: the pair batch's ids taken over as they are (no copy), its carried
    /// columns alongside; push the other columns with [`ResultBatch::push_numbers`].
    pub fn with_ids(query: StringArray, target: StringArray, carried: Vec<RecordBatch>) -> Self {
        let mut batch = ResultBatch::new();
        let rows = query.len();
        batch.query = IdColumn::Array(query);
        batch.target = IdColumn::Array(target);
        batch.carried = carried;
        for v in [&mut batch.score, &mut batch.qstart, &mut batch.qend, &mut batch.tstart, &mut batch.tend] {
            v.reserve(rows);
        }
        batch
    }

    /// Every column of a row but the ids, for batches made [`ResultBatch::with_ids`].
    pub fn push_numbers(&mut self, row: ResultRow<'_>) {
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

    /// The carried input columns of this batch's rows (empty when none).
    pub fn carried(&self) -> &[RecordBatch] {
        &self.carried
    }

    pub fn push(&mut self, row: ResultRow<'_>) {
        self.query.push(row.query);
        self.target.push(row.target);
        self.push_numbers(row);
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
        self.query = IdColumn::Rows(Ids::default());
        self.target = IdColumn::Rows(Ids::default());
        self.carried.clear();
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
    /// [`schema_with_metadata`] for the same `mode` and carried columns); align mode drops
    /// `rank`.
    pub fn to_record_batch(&self, mode: Mode, schema: &SchemaRef) -> Result<RecordBatch> {
        let int = |v: &Vec<i32>| -> ArrayRef { Arc::new(Int32Array::from(v.clone())) };
        let float = |v: &Vec<Option<f64>>| -> ArrayRef { Arc::new(Float64Array::from(v.clone())) };
        let mut columns: Vec<ArrayRef> = vec![
            self.query.to_array()?,
            self.target.to_array()?,
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
        if !self.carried.is_empty() {
            let carried = arrow::compute::concat_batches(&self.carried[0].schema(), &self.carried)
                .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
            columns.extend(carried.columns().iter().cloned());
        }
        RecordBatch::try_new(schema.clone(), columns)
            .map_err(|e| Error::Internal(format!("building the {mode} output batch: {e}")))
    }
}

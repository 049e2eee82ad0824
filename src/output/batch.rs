//! The one result schema and the row buffer the pipelines fill.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{Metadata, Schema, SchemaRef};

use super::columns::{Column, Columns};
use super::mapping::Decision;
use super::{Format, Mode, RunMetadata};
use crate::engine::traceback::PathStats;
use crate::error::{Error, Result};
use crate::seq::Ids;

/// The schema of `mode`'s default results (TSV, Arrow, Parquet), without run metadata.
pub fn schema(mode: Mode) -> SchemaRef {
    Arc::new(Schema::new(Columns::default_for(mode, Format::Tsv).fields()))
}

/// The schema of `columns`, then the input columns `carried` through (align from a pair
/// table), carrying `metadata` as Arrow schema metadata.
pub fn schema_with_metadata(columns: &Columns, carried: &Schema, metadata: &RunMetadata) -> SchemaRef {
    let map: Metadata = metadata.iter().collect();
    let mut fields = columns.fields();
    fields.extend(carried.fields().iter().map(|f| f.as_ref().clone()));
    Arc::new(Schema::new_with_metadata(fields, map))
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

/// A float64 column that may hold nulls (bits and E-values: null where no statistics are
/// known, which is all rows or none of a run): values (0 where null) and, from the first
/// null on, every row's validity, so that the Arrow array is a copy of the values and no
/// step per row.
#[derive(Debug, Clone, Default)]
struct Floats {
    values: Vec<f64>,
    valid: Option<Vec<bool>>,
}

impl Floats {
    fn push(&mut self, value: Option<f64>) {
        match (value, &mut self.valid) {
            (Some(v), valid) => {
                self.values.push(v);
                if let Some(valid) = valid {
                    valid.push(true);
                }
            }
            (None, valid) => {
                valid.get_or_insert_with(|| vec![true; self.values.len()]).push(false);
                self.values.push(0.0);
            }
        }
    }

    fn get(&self, i: usize) -> Option<f64> {
        let valid = self.valid.as_ref().is_none_or(|v| v[i]);
        valid.then(|| self.values[i])
    }

    fn clear(&mut self) {
        self.values.clear();
        self.valid = None;
    }

    fn to_array(&self) -> ArrayRef {
        let nulls = self.valid.as_ref().map(|v| NullBuffer::from(v.as_slice()));
        Arc::new(Float64Array::new(self.values.clone().into(), nulls))
    }
}

/// A batch of result rows held column by column, as the writers consume them.
#[derive(Debug, Clone)]
pub struct ResultBatch {
    query: IdColumn,
    target: IdColumn,
    score: Vec<i32>,
    bits: Floats,
    evalue: Floats,
    qstart: Vec<i32>,
    qend: Vec<i32>,
    tstart: Vec<i32>,
    tend: Vec<i32>,
    qlen: Vec<i32>,
    tlen: Vec<i32>,
    recomputed: Vec<bool>,
    rank: Vec<i32>,
    /// Search: each row's query number in the query input, 1-based, row for row, set once
    /// the batch's place in the input is known ([`ResultBatch::number_queries`]).
    qnum: Vec<i32>,
    /// Traceback statistics, row for row, where computed (else empty).
    stats: Vec<PathStats>,
    /// CIGAR and aligned strings, row for row, where computed.
    cigar: Ids,
    qaln: Ids,
    taln: Ids,
    /// FASTA headers, row for row, where the input has them ("" for none).
    qheader: Ids,
    theader: Ids,
    /// Input columns carried through (align from a pair table), row for row.
    carried: Vec<RecordBatch>,
    /// The strand each row's query was aligned on, row for row; empty: every row plus.
    strand: Vec<crate::seq::Strand>,
    /// Each row's whole query (letters, forward strand) and FASTQ qualities, where the
    /// output writes them (SAM/BAM: `PairBatch::query_text`); empty otherwise.
    query_text: Ids,
    query_quals: Ids,
    /// Search: every query of the batch with its number of rows, in row order (queries
    /// without hits too), for outputs that list queries (`-outfmt 7`); empty for align.
    queries: Vec<QueryRows>,
    /// Each row's record decisions (primary, MAPQ, ...: [`super::mapping`]), set by the
    /// writers that need them, after the rows are final; empty otherwise.
    decisions: Vec<Decision>,
}

/// A query of a search batch: its FASTA header (its id where it has none) and its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryRows {
    pub title: String,
    pub hits: usize,
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
            bits: Floats::default(),
            evalue: Floats::default(),
            qstart: Vec::new(),
            qend: Vec::new(),
            tstart: Vec::new(),
            tend: Vec::new(),
            qlen: Vec::new(),
            tlen: Vec::new(),
            recomputed: Vec::new(),
            rank: Vec::new(),
            qnum: Vec::new(),
            stats: Vec::new(),
            cigar: Ids::default(),
            qaln: Ids::default(),
            taln: Ids::default(),
            qheader: Ids::default(),
            theader: Ids::default(),
            carried: Vec::new(),
            strand: Vec::new(),
            query_text: Ids::default(),
            query_quals: Ids::default(),
            queries: Vec::new(),
            decisions: Vec::new(),
        }
    }

    /// Row `i`'s record decision, where decided.
    pub(crate) fn decision(&self, i: usize) -> Option<&Decision> {
        self.decisions.get(i)
    }

    /// The decisions, row for row ([`super::mapping::Grouped`] fills them).
    pub(crate) fn decisions_mut(&mut self) -> &mut Vec<Decision> {
        &mut self.decisions
    }

    fn decided(&self, i: usize, column: Column) -> Result<&Decision> {
        self.decisions.get(i).ok_or_else(|| {
            Error::Internal(format!("column {} asked, the reads' records were not decided", column.name()))
        })
    }

    /// The strand of each row's query, row for row (empty: every row plus).
    pub fn set_strands(&mut self, strands: Vec<crate::seq::Strand>) {
        self.strand = strands;
    }

    /// The strand row `i`'s query was aligned on.
    pub fn strand(&self, i: usize) -> crate::seq::Strand {
        self.strand.get(i).copied().unwrap_or_default()
    }

    /// Align's whole queries and their qualities, taken over from the pair batch.
    pub fn set_query_text(&mut self, text: Ids, quals: Ids) {
        self.query_text = text;
        self.query_quals = quals;
    }

    /// Row `i`'s whole query as letters on its forward strand, where the batch has them.
    pub fn query_text(&self, i: usize) -> Option<&str> {
        (i < self.query_text.len()).then(|| self.query_text.get(i))
    }

    /// Row `i`'s FASTQ qualities, where the batch has them and the input gave any.
    pub fn query_qual(&self, i: usize) -> Option<&str> {
        (i < self.query_quals.len()).then(|| self.query_quals.get(i)).filter(|q| !q.is_empty())
    }

    /// The next query of a search batch, after its rows were pushed.
    pub fn push_query(&mut self, title: &str, hits: usize) {
        self.queries.push(QueryRows { title: title.to_string(), hits });
    }

    /// The queries of a search batch, in row order (empty for other batches).
    pub fn queries(&self) -> &[QueryRows] {
        &self.queries
    }

    /// The FASTA headers of the next row (None or "" where there is none).
    pub fn push_headers(&mut self, query: Option<&str>, target: Option<&str>) -> Result<()> {
        self.qheader.push(query.unwrap_or(""))?;
        self.theader.push(target.unwrap_or(""))
    }

    /// Align's headers: the pair batch's header columns taken over whole (empty when the
    /// input had none).
    pub fn set_headers(&mut self, query: Ids, target: Ids) {
        self.qheader = query;
        self.theader = target;
    }

    fn header(&self, column: Column, i: usize) -> Option<&str> {
        let ids = if column == Column::Qheader { &self.qheader } else { &self.theader };
        (i < ids.len()).then(|| ids.get(i)).filter(|h| !h.is_empty())
    }

    /// The traceback statistics of the next row (after its other columns).
    pub fn push_stats(&mut self, stats: PathStats) {
        self.stats.push(stats);
    }

    /// The CIGAR and aligned strings of the next row.
    pub fn push_path(&mut self, cigar: &str, qaln: &str, taln: &str) -> Result<()> {
        self.cigar.push(cigar)?;
        self.qaln.push(qaln)?;
        self.taln.push(taln)
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

    /// Row `i`'s query id.
    pub fn query(&self, i: usize) -> &str {
        self.query.get(i)
    }

    /// Row `i` (panics when `i >= len()`, like slice indexing).
    pub fn row(&self, i: usize) -> ResultRow<'_> {
        ResultRow {
            query: self.query.get(i),
            target: self.target.get(i),
            score: self.score[i],
            bits: self.bits.get(i),
            evalue: self.evalue.get(i),
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
        self.strand.clear();
        self.query_text = Ids::default();
        self.query_quals = Ids::default();
        self.queries.clear();
        self.decisions.clear();
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
        self.qnum.clear();
        self.stats.clear();
        self.cigar = Ids::default();
        self.qaln = Ids::default();
        self.taln = Ids::default();
        self.qheader = Ids::default();
        self.theader = Ids::default();
    }

    /// Keeps the rows whose `keep` is true, in order (every column, carried ones too);
    /// a search batch's per-query row counts follow.
    pub fn retain(&mut self, keep: &[bool]) -> Result<()> {
        if keep.len() != self.len() {
            return Err(Error::Internal(format!("{} marks for {} rows", keep.len(), self.len())));
        }
        if keep.iter().all(|&k| k) {
            return Ok(());
        }
        // Decided after the rows are final.
        self.decisions.clear();
        fn vec<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
            if v.len() == keep.len() {
                let mut k = keep.iter();
                v.retain(|_| *k.next().unwrap_or(&false));
            }
        }
        fn ids(v: &mut Ids, keep: &[bool]) -> Result<()> {
            if v.len() == keep.len() {
                let mut out = Ids::default();
                for i in (0..keep.len()).filter(|&i| keep[i]) {
                    out.push(v.get(i))?;
                }
                *v = out;
            }
            Ok(())
        }
        let mask = arrow::array::BooleanArray::from(keep.to_vec());
        for column in [&mut self.query, &mut self.target] {
            match column {
                IdColumn::Rows(v) => ids(v, keep)?,
                IdColumn::Array(a) => {
                    let kept = arrow::compute::filter(a, &mask).map_err(|e| Error::Internal(format!("ids: {e}")))?;
                    *a = kept
                        .as_any()
                        .downcast_ref::<StringArray>()
                        .cloned()
                        .ok_or_else(|| Error::Internal("ids: not strings after filtering".into()))?;
                }
            }
        }
        let mut at = 0;
        for rb in &mut self.carried {
            let part = mask.slice(at, rb.num_rows());
            at += rb.num_rows();
            *rb = arrow::compute::filter_record_batch(rb, &part)
                .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
        }
        if !self.queries.is_empty() {
            let mut row = 0;
            for q in &mut self.queries {
                let kept = keep[row..row + q.hits].iter().filter(|&&k| k).count();
                row += q.hits;
                q.hits = kept;
            }
        }
        for f in [&mut self.bits, &mut self.evalue] {
            vec(&mut f.values, keep);
            if let Some(v) = f.valid.as_mut() {
                vec(v, keep);
            }
        }
        for v in [
            &mut self.score,
            &mut self.qstart,
            &mut self.qend,
            &mut self.tstart,
            &mut self.tend,
            &mut self.qlen,
            &mut self.tlen,
            &mut self.rank,
            &mut self.qnum,
        ] {
            vec(v, keep);
        }
        vec(&mut self.recomputed, keep);
        vec(&mut self.stats, keep);
        vec(&mut self.strand, keep);
        for v in [
            &mut self.cigar,
            &mut self.qaln,
            &mut self.taln,
            &mut self.qheader,
            &mut self.theader,
            &mut self.query_text,
            &mut self.query_quals,
        ] {
            ids(v, keep)?;
        }
        Ok(())
    }

    /// The start coordinates of every row, from alignments computed after the rows (the
    /// start pass of the rows that passed the score thresholds).
    pub fn set_starts(&mut self, starts: impl ExactSizeIterator<Item = (u32, u32)>) -> Result<()> {
        if starts.len() != self.len() {
            return Err(Error::Internal(format!("{} starts for {} rows", starts.len(), self.len())));
        }
        for (i, (q, t)) in starts.enumerate() {
            self.qstart[i] = q as i32;
            self.tstart[i] = t as i32;
        }
        Ok(())
    }

    /// Every row's coordinates from its alignment (search: the hits' rows come first).
    pub fn set_coordinates(&mut self, alignments: &[crate::engine::Alignment]) -> Result<()> {
        if alignments.len() != self.len() {
            return Err(Error::Internal(format!("{} alignments for {} rows", alignments.len(), self.len())));
        }
        for (i, a) in alignments.iter().enumerate() {
            (self.qstart[i], self.qend[i]) = (a.qstart as i32, a.qend as i32);
            (self.tstart[i], self.tend[i]) = (a.tstart as i32, a.tend as i32);
            self.recomputed[i] |= a.recomputed;
        }
        Ok(())
    }

    /// Search: every row's rank again, 1, 2, ... within its query (after rows were dropped).
    pub fn rerank(&mut self) {
        let mut row = 0;
        for q in &self.queries {
            for (k, r) in self.rank[row..row + q.hits].iter_mut().enumerate() {
                *r = k as i32 + 1;
            }
            row += q.hits;
        }
    }

    /// Search: numbers the batch's queries from `first` + 1 (`first` queries of the input
    /// came before this batch) and gives each row its query's number; returns the number
    /// after the batch's last query.
    pub fn number_queries(&mut self, first: u64) -> Result<u64> {
        self.qnum.clear();
        for (k, q) in self.queries.iter().enumerate() {
            let n = i32::try_from(first + k as u64 + 1)
                .map_err(|_| Error::Input(format!("more than {} queries: qnum is a 32-bit integer", i32::MAX)))?;
            self.qnum.extend(std::iter::repeat_n(n, q.hits));
        }
        if self.qnum.len() != self.len() {
            return Err(Error::Internal(format!("{} query rows for {} rows", self.qnum.len(), self.len())));
        }
        Ok(first + self.queries.len() as u64)
    }

    /// Every row's query number (merge: the shards' own).
    pub fn set_query_numbers(&mut self, qnum: Vec<i32>) -> Result<()> {
        if qnum.len() != self.len() {
            return Err(Error::Internal(format!("{} query numbers for {} rows", qnum.len(), self.len())));
        }
        self.qnum = qnum;
        Ok(())
    }

    fn qnum(&self, i: usize) -> Result<i32> {
        self.qnum.get(i).copied().ok_or_else(|| Error::Internal("column qnum asked, queries not numbered".into()))
    }

    /// Row `i`'s traceback statistics, where computed.
    pub fn stats_of(&self, i: usize) -> Option<&PathStats> {
        self.stats.get(i)
    }

    /// Row `i`'s extended CIGAR and aligned query and target, where computed.
    pub fn path_of(&self, i: usize) -> Option<(&str, &str, &str)> {
        (i < self.cigar.len() && i < self.qaln.len() && i < self.taln.len())
            .then(|| (self.cigar.get(i), self.qaln.get(i), self.taln.get(i)))
    }

    fn path_stats(&self, i: usize, column: Column) -> Result<&PathStats> {
        self.stats
            .get(i)
            .ok_or_else(|| Error::Internal(format!("column {} asked, traceback not computed", column.name())))
    }

    fn path_text(&self, i: usize, column: Column) -> Result<&str> {
        let ids = match column {
            Column::Cigar => &self.cigar,
            Column::Qaln => &self.qaln,
            _ => &self.taln,
        };
        if i >= ids.len() {
            return Err(Error::Internal(format!("column {} asked, traceback not computed", column.name())));
        }
        Ok(ids.get(i))
    }

    /// Row `i`'s ratio column (`pident`, `qcov`, `tcov`) as the integers it is made of:
    /// (numerator, denominator), the written value being numerator / denominator rounded
    /// once ((0, 1) where the denominator is 0, the written 0).
    pub fn ratio(&self, column: Column, i: usize) -> Result<(f64, f64)> {
        let span = |s: i32, e: i32| if s > 0 { (e - s + 1) as f64 } else { 0.0 };
        let (num, den) = match column {
            Column::Pident => {
                let s = self.path_stats(i, column)?;
                (100.0 * s.nident as f64, s.length as f64)
            }
            Column::Qcov => (span(self.qstart[i], self.qend[i]), self.qlen[i] as f64),
            Column::Tcov => (span(self.tstart[i], self.tend[i]), self.tlen[i] as f64),
            _ => return Err(Error::Internal(format!("column {} is no ratio", column.name()))),
        };
        Ok(if den > 0.0 { (num, den) } else { (0.0, 1.0) })
    }

    /// Row `i`'s value in `column`.
    pub fn value(&self, column: Column, i: usize) -> Result<Value<'_>> {
        use Column::*;
        let span = |s: i32, e: i32| if s > 0 { (e - s + 1) as f64 } else { 0.0 };
        let fraction = |num: f64, den: i32| if den > 0 { num / den as f64 } else { 0.0 };
        Ok(match column {
            Query => Value::Text(self.query.get(i)),
            Target => Value::Text(self.target.get(i)),
            Score => Value::Int(self.score[i]),
            Bits => Value::Float(self.bits.get(i)),
            Evalue => Value::Float(self.evalue.get(i)),
            Qstart => Value::Int(self.qstart[i]),
            Qend => Value::Int(self.qend[i]),
            Tstart => Value::Int(self.tstart[i]),
            Tend => Value::Int(self.tend[i]),
            Qlen => Value::Int(self.qlen[i]),
            Tlen => Value::Int(self.tlen[i]),
            Recomputed => Value::Bool(self.recomputed[i]),
            Rank => Value::Int(self.rank[i]),
            Qnum => Value::Int(self.qnum(i)?),
            Pident => Value::Float(Some(self.path_stats(i, column)?.pident())),
            Nident => Value::Int(self.path_stats(i, column)?.nident as i32),
            Length => Value::Int(self.path_stats(i, column)?.length as i32),
            Mismatch => Value::Int(self.path_stats(i, column)?.mismatch as i32),
            Gapopen => Value::Int(self.path_stats(i, column)?.gapopen as i32),
            Gaps => Value::Int(self.path_stats(i, column)?.gaps as i32),
            Qcov => Value::Float(Some(fraction(span(self.qstart[i], self.qend[i]), self.qlen[i]))),
            Tcov => Value::Float(Some(fraction(span(self.tstart[i], self.tend[i]), self.tlen[i]))),
            Cigar | Qaln | Taln => Value::Text(self.path_text(i, column)?),
            Qheader | Theader => Value::Text(self.header(column, i).unwrap_or("")),
            Qcovhsp => Value::Int(Column::qcovhsp_of(self.qstart[i], self.qend[i], self.qlen[i])),
            Mapq => Value::Int(i32::from(self.decided(i, column)?.mapq)),
            Flag => Value::Int(i32::from(self.decided(i, column)?.flag(self.strand(i) == crate::seq::Strand::Minus))),
            Strand => Value::Text(match self.strand(i) {
                crate::seq::Strand::Plus => "+",
                crate::seq::Strand::Minus => "-",
            }),
            Overlap => Value::Text(self.overlap(i)),
        })
    }

    /// Row `i`'s `overlap` column ([`Column::overlap_of`]).
    fn overlap(&self, i: usize) -> &'static str {
        Column::overlap_of(
            (self.qstart[i], self.qend[i], self.qlen[i]),
            (self.tstart[i], self.tend[i], self.tlen[i]),
            self.strand(i),
        )
    }

    /// The batch as an Arrow record batch of `schema` (from [`schema_with_metadata`] for
    /// the same `columns` and carried columns).
    pub fn to_record_batch(&self, columns: &Columns, schema: &SchemaRef) -> Result<RecordBatch> {
        let int = |v: &Vec<i32>| -> ArrayRef { Arc::new(Int32Array::from(v.clone())) };
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        for &c in &columns.0 {
            arrays.push(match c {
                Column::Query => self.query.to_array()?,
                Column::Target => self.target.to_array()?,
                Column::Score => int(&self.score),
                Column::Bits => self.bits.to_array(),
                Column::Evalue => self.evalue.to_array(),
                Column::Qstart => int(&self.qstart),
                Column::Qend => int(&self.qend),
                Column::Tstart => int(&self.tstart),
                Column::Tend => int(&self.tend),
                Column::Qlen => int(&self.qlen),
                Column::Tlen => int(&self.tlen),
                Column::Recomputed => Arc::new(BooleanArray::from(self.recomputed.clone())),
                Column::Rank => int(&self.rank),
                Column::Qnum if self.qnum.len() != self.len() => {
                    return Err(Error::Internal("column qnum asked, queries not numbered".into()))
                }
                Column::Qnum => int(&self.qnum),
                Column::Qheader | Column::Theader => {
                    Arc::new((0..self.len()).map(|i| self.header(c, i)).collect::<StringArray>())
                }
                Column::Strand => Arc::new(
                    (0..self.len())
                        .map(|i| Some(if self.strand(i) == crate::seq::Strand::Minus { "-" } else { "+" }))
                        .collect::<StringArray>(),
                ),
                Column::Overlap => Arc::new((0..self.len()).map(|i| Some(self.overlap(i))).collect::<StringArray>()),
                Column::Cigar | Column::Qaln | Column::Taln => {
                    let ids = match c {
                        Column::Cigar => &self.cigar,
                        Column::Qaln => &self.qaln,
                        _ => &self.taln,
                    };
                    if ids.len() != self.len() {
                        return Err(Error::Internal(format!("column {} asked, traceback not computed", c.name())));
                    }
                    Arc::new(ids.clone().take_array()?)
                }
                _ => match c.kind() {
                    super::columns::Kind::Float => {
                        let v: Result<Vec<Option<f64>>> = (0..self.len())
                            .map(|i| self.value(c, i).map(|v| if let Value::Float(f) = v { f } else { None }))
                            .collect();
                        Arc::new(Float64Array::from(v?))
                    }
                    _ => {
                        let v: Result<Vec<i32>> = (0..self.len())
                            .map(|i| self.value(c, i).map(|v| if let Value::Int(x) = v { x } else { 0 }))
                            .collect();
                        Arc::new(Int32Array::from(v?))
                    }
                },
            });
        }
        if !self.carried.is_empty() {
            let carried = arrow::compute::concat_batches(&self.carried[0].schema(), &self.carried)
                .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
            arrays.extend(carried.columns().iter().cloned());
        }
        RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| Error::Internal(format!("building an output batch: {e}")))
    }
}

/// One value of a row, as the writers format it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    Int(i32),
    Float(Option<f64>),
    Bool(bool),
}

#[cfg(test)]
mod tests {
    use super::*;

    // Nulls before, between and after values, none at all, and all of them: the column is
    // the array arrow builds from the same options, and rows read back the same.
    #[test]
    fn float_columns_keep_their_nulls() {
        let cases: [&[Option<f64>]; 4] = [
            &[Some(1.5), None, Some(2.0), None, None, Some(-3.0)],
            &[None, Some(1.0)],
            &[Some(4.0), Some(5.0)],
            &[None, None, None],
        ];
        for values in cases {
            let mut floats = Floats::default();
            for &v in values {
                floats.push(v);
            }
            let want: ArrayRef = Arc::new(Float64Array::from(values.to_vec()));
            assert_eq!(&floats.to_array(), &want, "{values:?}");
            assert_eq!((0..values.len()).map(|i| floats.get(i)).collect::<Vec<_>>(), values);
            floats.clear();
            floats.push(Some(7.0));
            assert_eq!(floats.to_array().null_count(), 0);
        }
    }
}

//! `swarrow merge`: combines the outputs of sharded runs into the output one unsharded run
//! would have written.
//!
//! - Search results (a `rank` column): the global top N per query. A database split in order
//!   into shards, each searched with `--db-size`/`--db-seqs` of the whole database, gives the
//!   same scores and E-values as the whole; the unsharded ranking (score descending, then the
//!   target's position in the database) is then score descending, then shard order (the order
//!   of the inputs), then the shard's own rank. Ranks are renumbered 1..N.
//! - Align results (no `rank`): the shards concatenated in input order, streamed.
//!
//! Inputs are any output of `swarrow search`/`align` except BLAST tabular: Parquet, Arrow IPC
//! file, Arrow IPC stream (also on stdin) or TSV, detected by content. Shards must agree on
//! the run facts that make their scores and E-values comparable (mode, scoring, gap costs,
//! search space); the merged output carries their run metadata.

use crate::error::{Error, Result, Where};
use crate::output::{self, Format, Mode, ResultBatch, ResultRow, RunMetadata};
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Run facts every shard must share: without them scores or E-values are not comparable.
const MUST_AGREE: [&str; 5] = ["mode", "scoring", "gap_open", "gap_extend", "search_space"];

/// Rows per batch handed to the writer.
const WRITE_BATCH_ROWS: usize = 65_536;

/// Merges `inputs` (in shard order) into `output` (`None` = stdout) in `format`. `top` is
/// required for search results and refused for align results.
pub fn merge(inputs: &[PathBuf], top: Option<usize>, format: Format, output: Option<&Path>) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::usage("merge: give at least one input"));
    }
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Error::usage("merge: only one input can be read from stdin"));
    }
    let mut shards = inputs.iter().map(|p| Shard::open(p)).collect::<Result<Vec<_>>>()?;
    let mode = common_mode(&shards)?;
    let mut meta = merged_metadata(&shards)?;
    match (mode, top) {
        (Mode::Search, None) => {
            return Err(Error::usage("merge: search results need --top N (normally the --top of the shard runs)"))
        }
        (Mode::Search, Some(0)) => return Err(Error::usage("merge: --top must be at least 1")),
        (Mode::Align, Some(_)) => {
            return Err(Error::usage("merge: --top applies to search results; align results have no ranking"))
        }
        _ => {}
    }
    meta.push(
        "merge",
        match top {
            Some(n) => format!(
                "swarrow merge of {} shards: top {} per query by score, then shard order, then shard rank",
                shards.len(),
                n
            ),
            None => format!("swarrow merge of {} shards: concatenated in shard order", shards.len()),
        },
    );
    let mut writer = output::create_writer(format, mode, &meta, output)?;
    match top {
        Some(top) => {
            let mut merger = TopMerger::new(top);
            for (i, shard) in shards.iter_mut().enumerate() {
                while let Some(rows) = shard.next_rows()? {
                    merger.add(i, rows);
                }
            }
            for batch in merger.finish() {
                writer.write(&batch)?;
            }
        }
        None => {
            for shard in shards.iter_mut() {
                while let Some(rows) = shard.next_rows()? {
                    for chunk in rows.chunks(WRITE_BATCH_ROWS) {
                        writer.write(&to_batch(chunk.iter().map(|r| (r, 0))))?;
                    }
                }
            }
        }
    }
    writer.finish()
}

/// One result row as read from a shard; `order` is the shard's rank (search) or the row's
/// position in the shard (align), for the tie-break.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    query: String,
    target: String,
    score: i32,
    bits: Option<f64>,
    evalue: Option<f64>,
    qstart: i32,
    qend: i32,
    tstart: i32,
    tend: i32,
    qlen: i32,
    tlen: i32,
    recomputed: bool,
    order: i64,
}

/// Rows with their rank (ignored by align writers) as a writer batch.
fn to_batch<'a>(rows: impl Iterator<Item = (&'a Row, i32)>) -> ResultBatch {
    let mut batch = ResultBatch::new();
    for (r, rank) in rows {
        batch.push(ResultRow {
            query: &r.query,
            target: &r.target,
            score: r.score,
            bits: r.bits,
            evalue: r.evalue,
            qstart: r.qstart,
            qend: r.qend,
            tstart: r.tstart,
            tend: r.tend,
            qlen: r.qlen,
            tlen: r.tlen,
            recomputed: r.recomputed,
            rank,
        });
    }
    batch
}

/// A candidate hit: the row and the shard it came from.
struct Candidate {
    shard: usize,
    row: Row,
}

impl Candidate {
    /// Unsharded ranking: score descending, then database position, which for a database
    /// split in order is shard order, then the shard's own rank.
    fn key(&self) -> (Reverse<i32>, usize, i64) {
        (Reverse(self.row.score), self.shard, self.row.order)
    }
}

/// Hits grouped by query, each group trimmed to the best `top` as it grows so memory stays
/// proportional to queries x top, not to the number of shards.
struct TopMerger {
    top: usize,
    index: HashMap<String, usize>,
    groups: Vec<Vec<Candidate>>,
    /// Query order seen in each shard (group indices, consecutive repeats removed).
    sequences: Vec<Vec<usize>>,
}

impl TopMerger {
    fn new(top: usize) -> TopMerger {
        TopMerger { top, index: HashMap::new(), groups: Vec::new(), sequences: Vec::new() }
    }

    fn add(&mut self, shard: usize, rows: Vec<Row>) {
        while self.sequences.len() <= shard {
            self.sequences.push(Vec::new());
        }
        for row in rows {
            let g = match self.index.get(&row.query) {
                Some(&g) => g,
                None => {
                    self.index.insert(row.query.clone(), self.groups.len());
                    self.groups.push(Vec::new());
                    self.groups.len() - 1
                }
            };
            let seq = &mut self.sequences[shard];
            if seq.last() != Some(&g) {
                seq.push(g);
            }
            let group = &mut self.groups[g];
            group.push(Candidate { shard, row });
            if group.len() >= 2 * self.top.max(1024) {
                trim(group, self.top);
            }
        }
    }

    /// The merged rows in query order, top N per query, ranked 1..N, in writer batches.
    fn finish(mut self) -> Vec<ResultBatch> {
        let order = query_order(self.groups.len(), &self.sequences);
        let mut batches = Vec::new();
        let mut pending: Vec<(Row, i32)> = Vec::new();
        for g in order {
            let mut group = std::mem::take(&mut self.groups[g]);
            trim(&mut group, self.top);
            for (i, c) in group.into_iter().enumerate() {
                pending.push((c.row, i as i32 + 1));
            }
            if pending.len() >= WRITE_BATCH_ROWS {
                batches.push(to_batch(pending.iter().map(|(r, k)| (r, *k))));
                pending.clear();
            }
        }
        if !pending.is_empty() || batches.is_empty() {
            batches.push(to_batch(pending.iter().map(|(r, k)| (r, *k))));
        }
        batches
    }
}

/// Sorts a query's candidates into the unsharded ranking and keeps the best `top`.
fn trim(group: &mut Vec<Candidate>, top: usize) {
    group.sort_by_key(|c| c.key());
    group.truncate(top);
}

/// An order of the queries that respects the order of every shard (each shard lists its
/// queries in query-input order, some possibly missing): a topological sort of "comes after"
/// in any shard, taking the query seen first whenever several are free. Shards that disagree
/// (a cycle) fall back to first appearance for the queries involved.
fn query_order(n: usize, sequences: &[Vec<usize>]) -> Vec<usize> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    for seq in sequences {
        for w in seq.windows(2) {
            next[w[0]].push(w[1]);
            indegree[w[1]] += 1;
        }
    }
    // Group indices are numbered in order of first appearance: the smallest free one first.
    let mut free: BinaryHeap<Reverse<usize>> = (0..n).filter(|&g| indegree[g] == 0).map(Reverse).collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut lowest_pending = 0;
    while order.len() < n {
        let g = match free.pop() {
            Some(Reverse(g)) if !done[g] => g,
            Some(_) => continue,
            None => {
                // A cycle: take the first query not yet placed.
                while done[lowest_pending] {
                    lowest_pending += 1;
                }
                lowest_pending
            }
        };
        done[g] = true;
        order.push(g);
        for &h in &next[g] {
            indegree[h] = indegree[h].saturating_sub(1);
            if indegree[h] == 0 && !done[h] {
                free.push(Reverse(h));
            }
        }
    }
    order
}

/// The mode all shards share: search results carry `rank`, align results do not.
fn common_mode(shards: &[Shard]) -> Result<Mode> {
    let first = shards[0].mode;
    if let Some(other) = shards.iter().find(|s| s.mode != first) {
        return Err(Error::usage(format!(
            "merge: {} holds {} results but {} holds {} results; merge shards of one kind of run",
            shards[0].source,
            first,
            other.source,
            other.mode
        )));
    }
    Ok(first)
}

/// The run metadata of the merged output: each key in first-seen order with the shards'
/// common value, or their distinct values joined by ", " where they differ (database name,
/// size, engine). Keys in [`MUST_AGREE`] that differ are an error.
fn merged_metadata(shards: &[Shard]) -> Result<RunMetadata> {
    let mut keys: Vec<&str> = Vec::new();
    for s in shards {
        for (k, _) in &s.metadata {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut meta = RunMetadata::new();
    for key in keys {
        let mut values: Vec<(&str, &Where)> = Vec::new();
        for s in shards {
            if let Some((_, v)) = s.metadata.iter().find(|(k, _)| k == key) {
                if !values.iter().any(|(seen, _)| *seen == v) {
                    values.push((v, &s.source));
                }
            }
        }
        if values.len() > 1 && MUST_AGREE.contains(&key) {
            return Err(Error::usage(format!(
                "merge: shards disagree on {}: '{}' in {} but '{}' in {}; their scores or E-values are not comparable{}",
                key,
                values[0].0,
                values[0].1,
                values[1].0,
                values[1].1,
                if key == "search_space" { " (run every shard with the same --db-size and --db-seqs)" } else { "" }
            )));
        }
        let joined: Vec<&str> = values.iter().map(|(v, _)| *v).collect();
        meta.push(key, joined.join(", "));
    }
    Ok(meta)
}

/// One input: its detected format, mode, run metadata, and a reader of its rows.
struct Shard {
    source: Where,
    mode: Mode,
    metadata: Vec<(String, String)>,
    reader: ShardReader,
    /// Rows read so far (the tie-break order of align rows, and line numbers for TSV).
    rows_read: i64,
}

enum ShardReader {
    Parquet(parquet::arrow::arrow_reader::ParquetRecordBatchReader),
    ArrowFile(arrow::ipc::reader::FileReader<File>),
    ArrowStream(arrow::ipc::reader::StreamReader<BufReader<Box<dyn Read + Send>>>),
    Tsv(TsvReader),
}

const PARQUET_MAGIC: &[u8] = b"PAR1";
const ARROW_FILE_MAGIC: &[u8] = b"ARROW1";
const IPC_CONTINUATION: &[u8] = &[0xff, 0xff, 0xff, 0xff];

impl Shard {
    fn open(path: &Path) -> Result<Shard> {
        let source = Where::from_arg(path);
        let input: Box<dyn Read + Send> = if path.as_os_str() == "-" {
            Box::new(std::io::stdin())
        } else {
            Box::new(File::open(path).map_err(|e| Error::file(&source, format!("cannot open: {}", e)))?)
        };
        let mut buffered = BufReader::with_capacity(1 << 16, input);
        let head = buffered.fill_buf().map_err(|e| Error::file(&source, format!("cannot read: {}", e)))?.to_vec();
        let seekable = || -> Result<File> {
            if path.as_os_str() == "-" {
                return Err(Error::file(&source, "Parquet and Arrow IPC files need seeking: give a file, not stdin (an Arrow IPC stream or TSV can come from stdin)"));
            }
            File::open(path).map_err(|e| Error::file(&source, format!("cannot open: {}", e)))
        };
        let bad = |e: &dyn std::fmt::Display| Error::file(&source, format!("not a readable swarrow output: {}", e));
        let (reader, schema_meta, kv): (ShardReader, Option<arrow::datatypes::SchemaRef>, Vec<(String, String)>) =
            if head.starts_with(PARQUET_MAGIC) {
                let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(seekable()?)
                    .map_err(|e| bad(&e))?;
                let kv = builder
                    .metadata()
                    .file_metadata()
                    .key_value_metadata()
                    .map(|kvs| kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default())).collect())
                    .unwrap_or_default();
                let schema = builder.schema().clone();
                (ShardReader::Parquet(builder.build().map_err(|e| bad(&e))?), Some(schema), kv)
            } else if head.starts_with(ARROW_FILE_MAGIC) {
                let r = arrow::ipc::reader::FileReader::try_new(seekable()?, None).map_err(|e| bad(&e))?;
                let schema = r.schema();
                (ShardReader::ArrowFile(r), Some(schema), Vec::new())
            } else if head.starts_with(IPC_CONTINUATION) {
                let r = arrow::ipc::reader::StreamReader::try_new(buffered, None).map_err(|e| bad(&e))?;
                let schema = r.schema();
                (ShardReader::ArrowStream(r), Some(schema), Vec::new())
            } else {
                let r = TsvReader::open(buffered, &source)?;
                (ShardReader::Tsv(r), None, Vec::new())
            };
        let mode = match (&reader, &schema_meta) {
            (ShardReader::Tsv(t), _) => t.mode(),
            (_, Some(schema)) if schema.column_with_name("rank").is_some() => Mode::Search,
            _ => Mode::Align,
        };
        // Parquet key-value metadata keeps the writer's order; Arrow schema metadata is a map,
        // so its keys are sorted for a stable output. Arrow's own keys are not run facts.
        let mut metadata = kv;
        if metadata.is_empty() {
            if let Some(schema) = &schema_meta {
                let mut m: Vec<(String, String)> =
                    schema.metadata().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                m.sort();
                metadata = m;
            }
        }
        metadata.retain(|(k, _)| !k.starts_with("ARROW:"));
        if let Some((_, m)) = metadata.iter().find(|(k, _)| k == "mode") {
            if m != mode.as_str() {
                return Err(Error::file(&source, format!("metadata says mode {} but the columns are those of {} results", m, mode)));
            }
        }
        Ok(Shard { source, mode, metadata, reader, rows_read: 0 })
    }

    /// The next rows of this shard, `None` at its end.
    fn next_rows(&mut self) -> Result<Option<Vec<Row>>> {
        let batch = match &mut self.reader {
            ShardReader::Parquet(r) => r.next().map(|b| b.map_err(|e| e.to_string())),
            ShardReader::ArrowFile(r) => r.next().map(|b| b.map_err(|e| e.to_string())),
            ShardReader::ArrowStream(r) => r.next().map(|b| b.map_err(|e| e.to_string())),
            ShardReader::Tsv(r) => {
                let rows = r.next_rows(self.mode, &self.source, &mut self.rows_read)?;
                return Ok(rows);
            }
        };
        match batch {
            None => Ok(None),
            Some(Err(e)) => Err(Error::file(&self.source, format!("cannot read: {}", e))),
            Some(Ok(b)) => rows_of_batch(&b, self.mode, &self.source, &mut self.rows_read).map(Some),
        }
    }
}

/// A column of `batch` cast to `to` (other writers may use LargeUtf8, Utf8View or Int64).
fn column(batch: &RecordBatch, name: &str, to: &DataType, source: &Where, nullable: bool) -> Result<ArrayRef> {
    let idx = batch.schema().index_of(name).map_err(|_| {
        Error::file(source, format!("no column '{}': not an output of swarrow search or align", name))
    })?;
    let array = arrow::compute::cast(batch.column(idx), to)
        .map_err(|e| Error::file(source, format!("column '{}' cannot be read as {}: {}", name, to, e)))?;
    if !nullable && array.null_count() > 0 {
        return Err(Error::file(source, format!("column '{}' has nulls", name)));
    }
    Ok(array)
}

fn rows_of_batch(batch: &RecordBatch, mode: Mode, source: &Where, rows_read: &mut i64) -> Result<Vec<Row>> {
    let s = |name| column(batch, name, &DataType::Utf8, source, false);
    let i = |name| column(batch, name, &DataType::Int32, source, false);
    let f = |name| column(batch, name, &DataType::Float64, source, true);
    let (query, target) = (s("query")?, s("target")?);
    let (query, target) = (query.as_string::<i32>(), target.as_string::<i32>());
    let ints: Vec<ArrayRef> = ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"]
        .iter()
        .map(|n| i(n))
        .collect::<Result<_>>()?;
    let ints: Vec<&arrow::array::Int32Array> = ints.iter().map(|a| a.as_primitive::<Int32Type>()).collect();
    let (bits, evalue) = (f("bits")?, f("evalue")?);
    let (bits, evalue) = (bits.as_primitive::<Float64Type>(), evalue.as_primitive::<Float64Type>());
    let recomputed = column(batch, "recomputed", &DataType::Boolean, source, false)?;
    let recomputed = recomputed.as_boolean();
    let rank = match mode {
        Mode::Search => Some(i("rank")?),
        Mode::Align => None,
    };
    let opt = |a: &arrow::array::Float64Array, r: usize| if a.is_null(r) { None } else { Some(a.value(r)) };
    let mut rows = Vec::with_capacity(batch.num_rows());
    for r in 0..batch.num_rows() {
        let order = match &rank {
            Some(rank) => rank.as_primitive::<Int32Type>().value(r) as i64,
            None => *rows_read,
        };
        *rows_read += 1;
        rows.push(Row {
            query: query.value(r).to_string(),
            target: target.value(r).to_string(),
            score: ints[0].value(r),
            bits: opt(bits, r),
            evalue: opt(evalue, r),
            qstart: ints[1].value(r),
            qend: ints[2].value(r),
            tstart: ints[3].value(r),
            tend: ints[4].value(r),
            qlen: ints[5].value(r),
            tlen: ints[6].value(r),
            recomputed: recomputed.value(r),
            order,
        });
    }
    Ok(rows)
}

/// TSV as `swarrow --format tsv` writes it: one header line naming the columns, empty
/// fields for null bits/evalue. (TSV bits carry one decimal; the binary formats keep them
/// exact.)
struct TsvReader {
    lines: std::io::Lines<BufReader<Box<dyn Read + Send>>>,
    /// Position of each schema column in the file's header.
    columns: HashMap<String, usize>,
    has_rank: bool,
}

const TSV_COLUMNS: [&str; 12] =
    ["query", "target", "score", "bits", "evalue", "qstart", "qend", "tstart", "tend", "qlen", "tlen", "recomputed"];
const TSV_LINES_PER_BATCH: usize = 65_536;

impl TsvReader {
    fn open(input: BufReader<Box<dyn Read + Send>>, source: &Where) -> Result<TsvReader> {
        let mut lines = input.lines();
        let header = match lines.next() {
            Some(Ok(h)) => h,
            Some(Err(e)) => return Err(Error::file(source, format!("cannot read: {}", e))),
            None => return Err(Error::file(source, "empty input: expected a swarrow output with its header")),
        };
        let columns: HashMap<String, usize> =
            header.trim_end_matches('\r').split('\t').enumerate().map(|(i, n)| (n.to_string(), i)).collect();
        if let Some(missing) = TSV_COLUMNS.iter().find(|c| !columns.contains_key(**c)) {
            return Err(Error::file(
                source,
                format!(
                    "not Parquet, Arrow IPC or a swarrow TSV (header line without column '{}'); BLAST tabular output cannot be merged",
                    missing
                ),
            ));
        }
        let has_rank = columns.contains_key("rank");
        Ok(TsvReader { lines, columns, has_rank })
    }

    fn mode(&self) -> Mode {
        if self.has_rank {
            Mode::Search
        } else {
            Mode::Align
        }
    }

    fn next_rows(&mut self, mode: Mode, source: &Where, rows_read: &mut i64) -> Result<Option<Vec<Row>>> {
        let mut rows = Vec::new();
        while rows.len() < TSV_LINES_PER_BATCH {
            let line = match self.lines.next() {
                None => break,
                Some(l) => l.map_err(|e| Error::file(source, format!("cannot read: {}", e)))?,
            };
            *rows_read += 1;
            let line_no = *rows_read + 1; // the header is line 1
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let err = |problem: String| Error::file(source, format!("line {}: {}", line_no, problem));
            let field = |name: &str| -> Result<&str> {
                let i = self.columns[name];
                fields.get(i).copied().ok_or_else(|| err(format!("no field for column '{}'", name)))
            };
            let int = |name: &str| -> Result<i32> {
                let v = field(name)?;
                v.parse().map_err(|_| err(format!("column '{}': '{}' is not an integer", name, v)))
            };
            let float = |name: &str| -> Result<Option<f64>> {
                let v = field(name)?;
                if v.is_empty() {
                    return Ok(None);
                }
                v.parse().map(Some).map_err(|_| err(format!("column '{}': '{}' is not a number", name, v)))
            };
            let recomputed = match field("recomputed")? {
                "true" => true,
                "false" => false,
                v => return Err(err(format!("column 'recomputed': '{}' is not true or false", v))),
            };
            let order = match mode {
                Mode::Search => int("rank")? as i64,
                Mode::Align => *rows_read,
            };
            rows.push(Row {
                query: field("query")?.to_string(),
                target: field("target")?.to_string(),
                score: int("score")?,
                bits: float("bits")?,
                evalue: float("evalue")?,
                qstart: int("qstart")?,
                qend: int("qend")?,
                tstart: int("tstart")?,
                tend: int("tend")?,
                qlen: int("qlen")?,
                tlen: int("tlen")?,
                recomputed,
                order,
            });
        }
        Ok(if rows.is_empty() { None } else { Some(rows) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(query: &str, target: &str, score: i32, order: i64) -> Row {
        Row {
            query: query.into(),
            target: target.into(),
            score,
            bits: None,
            evalue: None,
            qstart: 1,
            qend: 1,
            tstart: 1,
            tend: 1,
            qlen: 1,
            tlen: 1,
            recomputed: false,
            order,
        }
    }

    /// (query, target, rank) of the merged output.
    fn merged(top: usize, shards: Vec<Vec<Row>>) -> Vec<(String, String, i32)> {
        let mut m = TopMerger::new(top);
        for (i, rows) in shards.into_iter().enumerate() {
            m.add(i, rows);
        }
        m.finish()
            .iter()
            .flat_map(|b| b.rows().map(|r| (r.query.to_string(), r.target.to_string(), r.rank)).collect::<Vec<_>>())
            .collect()
    }

    fn names(v: &[(String, String, i32)]) -> Vec<String> {
        v.iter().map(|(q, t, k)| format!("{q}:{t}:{k}")).collect()
    }

    // Hand-built case: database t1..t6 split in order into shards {t1,t2,t3} and {t4,t5,t6};
    // the unsharded top 3 by (score desc, database position) is worked out by hand.
    #[test]
    fn global_top_k_breaks_ties_by_shard_order_then_shard_rank() {
        let shard0 = vec![row("q", "t2", 50, 1), row("q", "t1", 40, 2), row("q", "t3", 40, 3)];
        let shard1 = vec![row("q", "t5", 50, 1), row("q", "t4", 45, 2), row("q", "t6", 40, 3)];
        let got = merged(3, vec![shard0, shard1]);
        assert_eq!(names(&got), ["q:t2:1", "q:t5:2", "q:t4:3"]);
    }

    #[test]
    fn ties_at_the_cut_keep_the_earlier_shard() {
        let shard0 = vec![row("q", "a", 10, 1)];
        let shard1 = vec![row("q", "b", 10, 1)];
        assert_eq!(names(&merged(1, vec![shard1.clone(), shard0.clone()])), ["q:b:1"]);
        assert_eq!(names(&merged(1, vec![shard0, shard1])), ["q:a:1"]);
    }

    // Queries come out in input order even when some shard has no hit for some query.
    #[test]
    fn query_order_respects_every_shard() {
        let shard0 = vec![row("A", "x", 5, 1), row("C", "x", 5, 1)];
        let shard1 = vec![row("B", "y", 5, 1), row("C", "y", 4, 1)];
        let got = merged(5, vec![shard0, shard1]);
        assert_eq!(names(&got), ["A:x:1", "B:y:1", "C:x:1", "C:y:2"]);
    }

    #[test]
    fn query_order_survives_disagreeing_shards() {
        // Shard 0 says A before B, shard 1 says B before A: every query still comes out once.
        let order = query_order(2, &[vec![0, 1], vec![1, 0]]);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1]);
    }

    #[test]
    fn large_groups_are_trimmed_without_changing_the_result() {
        // 5000 hits for one query across two shards, scores cycling; the best 3 by hand:
        // score 99 first appears at i=99 (shard 0, rank 100), then i=199 and i=299.
        let rows = |shard: usize| -> Vec<Row> {
            (0..2500).map(|i| row("q", &format!("s{shard}_{i}"), (i % 100) as i32, i as i64 + 1)).collect()
        };
        let got = merged(3, vec![rows(0), rows(1)]);
        assert_eq!(names(&got), ["q:s0_99:1", "q:s0_199:2", "q:s0_299:3"]);
    }
}

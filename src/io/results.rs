//! Reading swarrow's own outputs back (the inputs of `swarrow merge`): Parquet, Arrow IPC
//! file or stream, or TSV, told apart by content; TSV and Arrow streams may be gzip-compressed
//! and come from stdin or a pipe. Each input yields its mode (search or align), its run
//! metadata, and its rows in batches.
//!
//! Run metadata (scoring, gap costs, search space, ...) travels in Arrow schema metadata and
//! Parquet key-value metadata. TSV carries none: a TSV input has an empty metadata list, and
//! it is the merge's business to refuse or accept that.

use std::collections::HashMap;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type, SchemaRef};

use crate::error::{shown_id, Error, Result, Where};
use crate::io::input::{
    peek, read_error, read_line_bounded, Head, Input, Line, ARROW_CONTINUATION, ARROW_FILE_MAGIC, MAX_LINE,
    PARQUET_MAGIC,
};
use crate::io::ipc::{guard_quiet, IpcReader};
use crate::output::Mode;

/// Rows per batch read from a TSV input.
const TSV_LINES_PER_BATCH: usize = 65_536;

/// The columns every swarrow output has (search adds `rank`).
const COLUMNS: [&str; 12] =
    ["query", "target", "score", "bits", "evalue", "qstart", "qend", "tstart", "tend", "qlen", "tlen", "recomputed"];

/// One result row as read back; `order` is the row's rank (search) or its position in the
/// input (align); `qnum` the query's number in the query input (search outputs that carry
/// it).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub query: String,
    pub target: String,
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
    pub order: i64,
    pub qnum: Option<i32>,
}

/// One swarrow output opened for reading.
pub struct ResultInput {
    pub source: Where,
    pub mode: Mode,
    /// Run metadata in the writer's order (Parquet) or sorted by key (Arrow); empty for TSV.
    pub metadata: Vec<(String, String)>,
    /// Search results carry each query's number in the query input (`qnum`; outputs of
    /// versions before it do not).
    pub numbered: bool,
    reader: Reader,
    /// Rows read so far (the order of align rows, and line numbers for TSV).
    rows_read: i64,
}

enum Reader {
    Parquet(parquet::arrow::arrow_reader::ParquetRecordBatchReader),
    Ipc(IpcReader),
    Tsv(TsvReader),
}

impl ResultInput {
    /// Opens `path` (`-` = stdin) once and detects its format from its first bytes.
    pub fn open(path: &std::path::Path) -> Result<ResultInput> {
        let raw = Head::open(path, 8)?;
        let source = raw.place.clone();
        let bad = |e: &dyn std::fmt::Display| Error::file(&source, format!("not a readable swarrow output: {}", e));
        let seekable = || {
            Error::file(
                &source,
                "Parquet and Arrow IPC files need a regular, uncompressed file, not stdin, a pipe or gzip \
                 (an Arrow IPC stream or TSV can come from anywhere)",
            )
        };
        let (reader, schema, kv): (Reader, Option<SchemaRef>, Vec<(String, String)>) = if raw
            .bytes
            .starts_with(PARQUET_MAGIC)
        {
            let file = raw.into_regular_file()?.ok_or_else(seekable)?;
            let opened = guard_quiet(|| {
                let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?;
                let kv = builder
                    .metadata()
                    .file_metadata()
                    .key_value_metadata()
                    .map(|kvs| kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default())).collect())
                    .unwrap_or_default();
                let schema = builder.schema().clone();
                Ok::<_, parquet::errors::ParquetError>((builder.build()?, schema, kv))
            })
            .map_err(|p| bad(&format!("the decoder failed ({p})")))?
            .map_err(|e| bad(&e))?;
            (Reader::Parquet(opened.0), Some(opened.1), opened.2)
        } else if raw.bytes.starts_with(ARROW_FILE_MAGIC) {
            let file = raw.into_regular_file()?.ok_or_else(seekable)?;
            let r = IpcReader::file(source.clone(), file)?;
            let schema = r.schema();
            (Reader::Ipc(r), Some(schema), Vec::new())
        } else {
            let (head, input) = peek(&source, raw.into_input()?, 8)?;
            if head.starts_with(&ARROW_CONTINUATION) {
                let r = IpcReader::stream(source.clone(), input)?;
                let schema = r.schema();
                (Reader::Ipc(r), Some(schema), Vec::new())
            } else if head.starts_with(PARQUET_MAGIC) || head.starts_with(ARROW_FILE_MAGIC) {
                return Err(seekable());
            } else if head.starts_with(b"BAM\x01") {
                return Err(Error::file(&source, alignment_format("BAM")));
            } else {
                (Reader::Tsv(TsvReader::open(input, &source)?), None, Vec::new())
            }
        };
        let mode = match (&reader, &schema) {
            (Reader::Tsv(t), _) => t.mode(),
            (_, Some(schema)) if schema.column_with_name("rank").is_some() => Mode::Search,
            _ => Mode::Align,
        };
        // Parquet key-value metadata keeps the writer's order; Arrow schema metadata is a map,
        // so its keys are sorted for a stable output. Arrow's own keys are not run facts.
        let mut metadata = kv;
        if metadata.is_empty() {
            if let Some(schema) = &schema {
                let mut m: Vec<(String, String)> =
                    schema.metadata().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                m.sort();
                metadata = m;
            }
        }
        metadata.retain(|(k, _)| !k.starts_with("ARROW:"));
        if let Some((_, m)) = metadata.iter().find(|(k, _)| k == "mode") {
            if m != mode.as_str() {
                return Err(Error::file(
                    &source,
                    format!("metadata says mode {} but the columns are those of {} results", shown_id(m), mode),
                ));
            }
        }
        let numbered = mode == Mode::Search
            && match (&reader, &schema) {
                (Reader::Tsv(t), _) => t.columns.contains_key("qnum"),
                (_, Some(schema)) => schema.column_with_name("qnum").is_some(),
                _ => false,
            };
        Ok(ResultInput { source, mode, metadata, numbered, reader, rows_read: 0 })
    }

    /// True for TSV, which carries no run metadata.
    pub fn is_tsv(&self) -> bool {
        matches!(self.reader, Reader::Tsv(_))
    }

    /// The next rows of this input, `None` at its end.
    pub fn next_rows(&mut self) -> Result<Option<Vec<Row>>> {
        let batch = match &mut self.reader {
            Reader::Parquet(r) => match guard_quiet(|| r.next()) {
                Ok(b) => b.map(|b| b.map_err(|e| Error::file(&self.source, format!("cannot read: {}", e)))),
                Err(p) => Some(Err(Error::file(&self.source, format!("cannot read: the decoder failed ({})", p)))),
            },
            Reader::Ipc(r) => r.next(),
            Reader::Tsv(r) => return r.next_rows(self.mode, self.numbered, &self.source, &mut self.rows_read),
        };
        match batch {
            None => Ok(None),
            Some(Err(e)) => Err(e),
            Some(Ok(b)) => rows_of_batch(&b, self.mode, self.numbered, &self.source, &mut self.rows_read).map(Some),
        }
    }
}

/// A column of `batch` cast to `to` (other writers may use LargeUtf8, Utf8View or Int64).
fn column(batch: &RecordBatch, name: &str, to: &DataType, source: &Where, nullable: bool) -> Result<ArrayRef> {
    let idx = batch
        .schema()
        .index_of(name)
        .map_err(|_| Error::file(source, format!("no column '{}': not an output of swarrow search or align", name)))?;
    let array = arrow::compute::cast(batch.column(idx), to)
        .map_err(|e| Error::file(source, format!("column '{}' cannot be read as {}: {}", name, to, e)))?;
    if !nullable && array.null_count() > 0 {
        return Err(Error::file(source, format!("column '{}' has nulls", name)));
    }
    Ok(array)
}

fn rows_of_batch(
    batch: &RecordBatch,
    mode: Mode,
    numbered: bool,
    source: &Where,
    rows_read: &mut i64,
) -> Result<Vec<Row>> {
    let s = |name| column(batch, name, &DataType::Utf8, source, false);
    let i = |name| column(batch, name, &DataType::Int32, source, false);
    let f = |name| column(batch, name, &DataType::Float64, source, true);
    let (query, target) = (s("query")?, s("target")?);
    let (query, target) = (query.as_string::<i32>(), target.as_string::<i32>());
    let ints: Vec<ArrayRef> =
        ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"].iter().map(|n| i(n)).collect::<Result<_>>()?;
    let ints: Vec<&arrow::array::Int32Array> = ints.iter().map(|a| a.as_primitive::<Int32Type>()).collect();
    let (bits, evalue) = (f("bits")?, f("evalue")?);
    let (bits, evalue) = (bits.as_primitive::<Float64Type>(), evalue.as_primitive::<Float64Type>());
    let recomputed = column(batch, "recomputed", &DataType::Boolean, source, false)?;
    let recomputed = recomputed.as_boolean();
    let rank = match mode {
        Mode::Search => Some(i("rank")?),
        Mode::Align => None,
    };
    let qnum = if numbered { Some(i("qnum")?) } else { None };
    let qnum = qnum.as_ref().map(|a| a.as_primitive::<Int32Type>());
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
            qnum: qnum.map(|q| q.value(r)),
        });
    }
    Ok(rows)
}

/// PAF or SAM told by a first line (BAM is told by its magic number, after BGZF): a PAF
/// line, a SAM header line, or a SAM record (11 or more fields, FLAG and POS numbers).
fn alignment_format_of(line: &[u8]) -> Option<&'static str> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
    let number = |f: &[u8]| !f.is_empty() && f.iter().all(u8::is_ascii_digit);
    let sam_header = [b"@HD", b"@SQ", b"@RG", b"@PG", b"@CO"].iter().any(|t| fields[0] == *t);
    // PAF first: its column 5 is a strand, where SAM's is a number (MAPQ).
    if crate::io::pairs::looks_like_paf(line) {
        Some("PAF")
    } else if sam_header || (fields.len() >= 11 && number(fields[1]) && number(fields[3])) {
        Some("SAM")
    } else {
        None
    }
}

/// What merge says of a PAF, SAM or BAM input: what it is, and how such shards are joined.
fn alignment_format(format: &str) -> String {
    let join = match format {
        "PAF" => "join PAF shards with cat (cat a.paf b.paf > all.paf)",
        _ => "join SAM/BAM shards with samtools cat (shards of one header) or samtools merge (sorted shards)",
    };
    format!(
        "is {format}, which merge does not read (it holds no columns merge ranks by, and the shards' paths and \
         sequences need no merging): {join}"
    )
}

/// TSV as `swarrow --format tsv` writes it: one header line naming the columns, empty
/// fields for null bits/evalue. (TSV bits carry one decimal; the binary formats keep them
/// exact.)
struct TsvReader {
    input: Input,
    buf: Vec<u8>,
    /// Position of each column in the file's header.
    columns: HashMap<String, usize>,
    has_rank: bool,
}

impl TsvReader {
    fn open(mut input: Input, source: &Where) -> Result<TsvReader> {
        let mut buf = Vec::new();
        match read_line_bounded(&mut input, &mut buf, MAX_LINE).map_err(|e| read_error(source, e))? {
            Line::Read => {}
            Line::End => return Err(Error::file(source, "empty input: expected a swarrow output with its header")),
            Line::TooLong => return Err(Error::file(source, "line 1 longer than 1 GiB: not a swarrow output")),
        }
        // A UTF-8 byte order mark (a shard passed through an editor) is no part of the header.
        let header = String::from_utf8_lossy(buf.strip_prefix(crate::io::input::UTF8_BOM).unwrap_or(&buf));
        let columns: HashMap<String, usize> =
            header.trim_end_matches('\r').split('\t').enumerate().map(|(i, n)| (n.to_string(), i)).collect();
        if let Some(missing) = COLUMNS.iter().find(|c| !columns.contains_key(**c)) {
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            if let Some(format) = alignment_format_of(line.strip_suffix(b"\r").unwrap_or(line)) {
                return Err(Error::file(source, alignment_format(format)));
            }
            return Err(Error::file(
                source,
                format!(
                    "not Parquet, Arrow IPC or a swarrow TSV (header line without column '{}'); BLAST tabular output cannot be merged",
                    missing
                ),
            ));
        }
        let has_rank = columns.contains_key("rank");
        Ok(TsvReader { input, buf, columns, has_rank })
    }

    fn mode(&self) -> Mode {
        if self.has_rank {
            Mode::Search
        } else {
            Mode::Align
        }
    }

    fn next_rows(
        &mut self,
        mode: Mode,
        numbered: bool,
        source: &Where,
        rows_read: &mut i64,
    ) -> Result<Option<Vec<Row>>> {
        let mut rows = Vec::new();
        while rows.len() < TSV_LINES_PER_BATCH {
            let line_no = *rows_read + 2; // the header is line 1
            match read_line_bounded(&mut self.input, &mut self.buf, MAX_LINE).map_err(|e| read_error(source, e))? {
                Line::End => break,
                Line::TooLong => {
                    return Err(Error::file(
                        source,
                        format!("line {} longer than 1 GiB: not a swarrow output", line_no),
                    ))
                }
                Line::Read => {}
            }
            *rows_read += 1;
            let err = |problem: String| Error::file(source, format!("line {}: {}", line_no, problem));
            let line = std::str::from_utf8(&self.buf).map_err(|_| err("not UTF-8 text".into()))?;
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let field = |name: &str| -> Result<&str> {
                let i = self.columns[name];
                fields.get(i).copied().ok_or_else(|| err(format!("no field for column '{}'", name)))
            };
            let int = |name: &str| -> Result<i32> {
                let v = field(name)?;
                v.parse().map_err(|e: std::num::ParseIntError| {
                    use std::num::IntErrorKind::{NegOverflow, PosOverflow};
                    match e.kind() {
                        PosOverflow | NegOverflow => {
                            err(format!("column '{}': {} is out of range (32-bit integer)", name, shown_id(v)))
                        }
                        _ => err(format!("column '{}': '{}' is not an integer", name, shown_id(v))),
                    }
                })
            };
            let float = |name: &str| -> Result<Option<f64>> {
                let v = field(name)?;
                if v.is_empty() {
                    return Ok(None);
                }
                v.parse().map(Some).map_err(|_| err(format!("column '{}': '{}' is not a number", name, shown_id(v))))
            };
            let recomputed = match field("recomputed")? {
                "true" => true,
                "false" => false,
                v => return Err(err(format!("column 'recomputed': '{}' is not true or false", shown_id(v)))),
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
                qnum: if numbered { Some(int("qnum")?) } else { None },
            });
        }
        Ok(if rows.is_empty() { None } else { Some(rows) })
    }
}

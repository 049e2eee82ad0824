//! Text writers: TSV (our columns, one header line) and BLAST tabular (BLAST's columns and
//! number formatting, no header).
//!
//! TSV: columns as in the schema; `bits` with one decimal (`%.1f`); `evalue` as BLAST+
//! prints it in tabular output ([`blast_evalue`]: `8.30e-140`, `0.0` below 1e-180, `0.012`,
//! `0.57`, `3.1`, `42`), for people and for scripts written against BLAST's text; the binary
//! formats (Arrow, Parquet) carry the exact f64; null `bits`/`evalue` are empty fields;
//! `recomputed` is `true`/`false`.
//!
//! BLAST: by default `-outfmt 6`'s twelve columns `qseqid sseqid pident length mismatch
//! gapopen qstart qend sstart send evalue bitscore`, formatted as BLAST+ does (pident `%.3f`,
//! [`blast_evalue`], [`blast_bitscore`]); null `bitscore`/`evalue` are `*`.
//!
//! BLAST with comments (`-outfmt 7`): the same lines, each query's preceded by the comment
//! lines BLAST+ writes (checked against `blastp -outfmt 7` in tests/blast.rs): `# BLASTP`
//! with the program's version, `# Query:` with the query's FASTA header, `# Database:`,
//! `# Fields:` (only where the query has hits) and `# N hits found`; at the end `# BLAST
//! processed N queries`.
//!
//! Both write the chosen columns (`--columns`) in their order; TSV adds carried input columns.
//!
//! Both: a tab, newline or carriage return inside an id (impossible for FASTA ids, which end
//! at the first whitespace) is written as a space so every record stays one line of fixed
//! columns.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

use super::sink::{Sink, Status};
use arrow::datatypes::SchemaRef;

use super::batch::Value;
use super::columns::{Column, Columns};
use super::{ResultBatch, ResultWriter};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Tsv,
    Blast,
}

pub(super) struct TextWriter {
    out: BufWriter<Sink>,
    status: Status,
    columns: Columns,
    style: Style,
    comments: Option<Comments>,
}

/// `-outfmt 7`'s comment lines: the database's name, the columns' names, and the queries
/// written so far.
struct Comments {
    database: String,
    fields: String,
    queries: usize,
}

impl TextWriter {
    /// `schema`: the results' columns and the carried ones (TSV writes both; BLAST its own).
    pub(super) fn new(sink: Sink, columns: Columns, schema: SchemaRef, style: Style) -> Result<Self> {
        let status = sink.status();
        let mut out = sink.buffered();
        if style == Style::Tsv {
            let names: Vec<String> = schema.fields().iter().map(|f| f.name().to_string()).collect();
            writeln!(out, "{}", names.join("\t")).map_err(|e| status.io_fail(e))?;
        }
        Ok(TextWriter { out, status, columns, style, comments: None })
    }

    /// BLAST's comment lines around each query's lines (`-outfmt 7`), naming `database`.
    pub(super) fn with_comments(mut self, database: &str) -> Self {
        let fields = self.columns.blast_fields();
        self.comments = Some(Comments { database: database.to_string(), fields, queries: 0 });
        self
    }

    /// A batch with each query's comment lines before its rows: batches of a search list
    /// their queries (those without hits too) in row order.
    fn write_commented(&mut self, batch: &ResultBatch) -> Result<()> {
        let Some(comments) = &mut self.comments else { return Ok(()) };
        let queries = batch.queries();
        if queries.iter().map(|q| q.hits).sum::<usize>() != batch.len() {
            return Err(Error::Internal("commented BLAST output without the queries of its rows".into()));
        }
        let mut text = String::new();
        let mut row = 0;
        for query in queries {
            let _ = writeln!(text, "# BLASTP swarrow-{}", env!("CARGO_PKG_VERSION"));
            let _ = writeln!(text, "# Query: {}", query.title);
            let _ = writeln!(text, "# Database: {}", comments.database);
            if query.hits > 0 {
                let _ = writeln!(text, "# Fields: {}", comments.fields);
            }
            let _ = writeln!(text, "# {} hits found", query.hits);
            for i in row..row + query.hits {
                push_line(&mut text, &self.columns, self.style, batch, None, i)?;
            }
            row += query.hits;
        }
        comments.queries += queries.len();
        self.out.write_all(text.as_bytes()).map_err(|e| self.status.io_fail(e))
    }
}

/// TSV or BLAST tabular lines of the chosen columns (and TSV's carried ones), apart from
/// the writer ([`super::RowEncoder`]); `-outfmt 7`'s comments are the writer's own.
pub(super) struct TextEncoder {
    pub(super) columns: Columns,
    pub(super) style: Style,
}

impl super::RowEncoder for TextEncoder {
    fn encode(&self, batch: &ResultBatch) -> Result<Vec<u8>> {
        let carried = if self.style == Style::Tsv { carried_text(batch)? } else { None };
        let (columns, style, carried) = (&self.columns, self.style, carried.as_deref());
        super::encode_lines(batch.len(), 96, |text, i| push_line(text, columns, style, batch, carried, i))
    }
}

impl ResultWriter for TextWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        if self.comments.is_some() {
            self.write_commented(batch)?;
            return self.flush_to_stdout();
        }
        let bytes =
            super::RowEncoder::encode(&TextEncoder { columns: self.columns.clone(), style: self.style }, batch)?;
        self.write_encoded(&bytes)
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|e| self.status.io_fail(e))?;
        self.flush_to_stdout()
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        if let Some(comments) = &self.comments {
            writeln!(self.out, "# BLAST processed {} queries", comments.queries).map_err(|e| self.status.io_fail(e))?;
        }
        Sink::commit_buffered(self.out, &self.status)
    }
}

impl TextWriter {
    /// A reader at the other end of a pipe sees each batch as soon as it is done.
    fn flush_to_stdout(&mut self) -> Result<()> {
        if self.status.is_stdout() {
            self.out.flush().map_err(|e| self.status.io_fail(e))?;
        }
        Ok(())
    }
}

/// Row `i` of `batch` as one line: the chosen columns, then the carried ones (TSV).
fn push_line(
    line: &mut String,
    columns: &Columns,
    style: Style,
    batch: &ResultBatch,
    carried: Option<&[Vec<String>]>,
    i: usize,
) -> Result<()> {
    for (k, &column) in columns.0.iter().enumerate() {
        if k > 0 {
            line.push('\t');
        }
        push_value(line, column, batch.value(column, i)?, style);
    }
    for column in carried.into_iter().flatten() {
        line.push('\t');
        push_id(line, &column[i]);
    }
    line.push('\n');
    Ok(())
}

/// The carried columns of `batch` as text, column by column (nulls empty), if it has any.
fn carried_text(batch: &ResultBatch) -> Result<Option<Vec<Vec<String>>>> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let parts = batch.carried();
    let Some(first) = parts.first() else { return Ok(None) };
    let failed = |e: arrow::error::ArrowError| Error::Internal(format!("carried columns as text: {e}"));
    let mut columns = vec![Vec::with_capacity(batch.len()); first.num_columns()];
    for part in parts {
        for (k, column) in part.columns().iter().enumerate() {
            let column = text_form(column).map_err(failed)?;
            let text = ArrayFormatter::try_new(column.as_ref(), &FormatOptions::default()).map_err(failed)?;
            columns[k].extend((0..column.len()).map(|r| text.value(r).to_string()));
        }
    }
    Ok(Some(columns))
}

/// Refuses, before anything is written, a carried column that has no text form (TSV
/// writes every carried column as text).
pub(super) fn check_carried_text(carried: &arrow::datatypes::Schema) -> Result<()> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    for field in carried.fields() {
        let empty = arrow::array::new_empty_array(field.data_type());
        let formatted = text_form(&empty)
            .and_then(|column| ArrayFormatter::try_new(column.as_ref(), &FormatOptions::default()).map(|_| ()));
        if let Err(e) = formatted {
            return Err(Error::usage(format!(
                "carried column {} has type {}, which TSV cannot write as text ({e}): write Arrow or Parquet \
                 (--format), or leave the column out with --carry",
                field.name(),
                field.data_type()
            )));
        }
    }
    Ok(())
}

/// `column` in the type it is written as text from ([`text_type`]).
fn text_form(column: &arrow::array::ArrayRef) -> std::result::Result<arrow::array::ArrayRef, arrow::error::ArrowError> {
    let ty = text_type(column.data_type());
    if &ty == column.data_type() {
        return Ok(column.clone());
    }
    arrow::compute::cast(column, &ty)
}

/// The type a carried column is written as text from: its own, except that timestamps with
/// a named time zone (`UTC`, `Europe/Paris`), which arrow formats only with a time-zone
/// database, are written as their instants in UTC (`2024-05-01T12:00:00Z`), inside
/// nested columns too.
fn text_type(ty: &arrow::datatypes::DataType) -> arrow::datatypes::DataType {
    use arrow::datatypes::{DataType, Field};
    use std::sync::Arc;
    let child = |f: &Arc<Field>| Arc::new(f.as_ref().clone().with_data_type(text_type(f.data_type())));
    match ty {
        DataType::Timestamp(unit, Some(tz)) if tz.parse::<arrow::array::timezone::Tz>().is_err() => {
            DataType::Timestamp(*unit, Some("+00:00".into()))
        }
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(child).collect()),
        DataType::List(f) => DataType::List(child(f)),
        DataType::LargeList(f) => DataType::LargeList(child(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(child(f), *n),
        DataType::Map(f, sorted) => DataType::Map(child(f), *sorted),
        DataType::Dictionary(key, value) => DataType::Dictionary(key.clone(), Box::new(text_type(value))),
        other => other.clone(),
    }
}

/// One value as TSV or BLAST tabular prints it: ids as they are (tabs and line breaks
/// replaced), bits with one decimal in TSV and as BLAST prints them in BLAST tabular,
/// E-values as BLAST prints them, pident with three decimals (BLAST's `%.3f`), coverage with
/// three; a missing statistic is empty in TSV and `*` in BLAST tabular. Writing into a
/// `String` cannot fail; the `fmt::Result`s are discarded for that reason.
fn push_value(line: &mut String, column: Column, value: Value<'_>, style: Style) {
    match value {
        Value::Text(t) => push_id(line, t),
        Value::Int(x) => {
            let _ = write!(line, "{x}");
        }
        Value::Bool(b) => {
            let _ = write!(line, "{b}");
        }
        Value::Float(None) => {
            if style == Style::Blast {
                line.push('*');
            }
        }
        Value::Float(Some(x)) => match column {
            Column::Evalue => line.push_str(&blast_evalue(x)),
            Column::Bits if style == Style::Blast => line.push_str(&blast_bitscore(x)),
            Column::Bits => {
                let _ = write!(line, "{x:.1}");
            }
            _ => {
                let _ = write!(line, "{x:.3}");
            }
        },
    }
}

fn push_id(line: &mut String, id: &str) {
    if id.contains(['\t', '\n', '\r']) {
        line.extend(id.chars().map(|c| if matches!(c, '\t' | '\n' | '\r') { ' ' } else { c }));
    } else {
        line.push_str(id);
    }
}

/// An e-value as BLAST+ writes it in tabular output (`CAlignFormatUtil::GetScoreString`,
/// with `CBlastTabularInfo::SetScores` replacing the 1e-180..0.0009 range by `%.2e`):
/// below 1e-180 `0.0`; below 0.0009 `%.2e` (`1.23e-45`); below 0.1 `%.3f`; below 1 `%.2f`;
/// below 10 `%.1f`; else `%.0f`.
pub fn blast_evalue(evalue: f64) -> String {
    if evalue < 1.0e-180 {
        "0.0".to_string()
    } else if evalue < 0.0009 {
        c_scientific(evalue, 2)
    } else if evalue < 0.1 {
        format!("{evalue:.3}")
    } else if evalue < 1.0 {
        format!("{evalue:.2}")
    } else if evalue < 10.0 {
        format!("{evalue:.1}")
    } else {
        format!("{evalue:.0}")
    }
}

/// A bit score as BLAST+ writes it (`CAlignFormatUtil::GetScoreString`): above 99999
/// `%5.3e` (`1.235e+05`); above 99.9 the integer part, `%3ld` of the truncated value (so
/// 99.95 prints ` 99`); else `%4.1f`, which pads scores below 10 with a leading space
/// (` 9.5`) exactly as BLAST does.
pub fn blast_bitscore(bits: f64) -> String {
    if bits > 99999.0 {
        c_scientific(bits, 3)
    } else if bits > 99.9 {
        format!("{:>3}", bits.trunc() as i64)
    } else {
        format!("{bits:>4.1}")
    }
}

/// C's `%.{precision}e`: Rust's `{:e}` with the exponent signed and at least two digits.
fn c_scientific(value: f64, precision: usize) -> String {
    let rust = format!("{value:.precision$e}");
    match rust.split_once('e') {
        Some((mantissa, exponent)) => match exponent.parse::<i32>() {
            Ok(exp) => {
                let sign = if exp < 0 { '-' } else { '+' };
                format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
            }
            Err(_) => rust,
        },
        None => rust, // inf, NaN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Mode, ResultRow};

    /// Every type an input may carry ([`crate::io::ipc::readable_type`]) has a text form for
    /// TSV: named time zones (which arrow formats only with a time-zone database) too, also
    /// inside nested columns.
    #[test]
    fn every_carried_type_has_a_text_form() {
        use arrow::datatypes::{DataType as T, Field, IntervalUnit, Schema, TimeUnit};
        use std::sync::Arc;
        let utc = T::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        let paris = T::Timestamp(TimeUnit::Second, Some("Europe/Paris".into()));
        let item = |ty: T| Arc::new(Field::new("item", ty, true));
        let entries = T::Struct(vec![Field::new("key", T::Utf8, false), Field::new("value", utc.clone(), true)].into());
        let types = vec![
            T::Int8,
            T::UInt64,
            T::Float16,
            T::Float64,
            T::Decimal128(10, 2),
            T::Decimal256(40, 3),
            T::Date32,
            T::Date64,
            T::Time32(TimeUnit::Second),
            T::Time64(TimeUnit::Nanosecond),
            T::Timestamp(TimeUnit::Nanosecond, None),
            utc.clone(),
            paris.clone(),
            T::Timestamp(TimeUnit::Microsecond, Some("+02:00".into())),
            T::Duration(TimeUnit::Millisecond),
            T::Interval(IntervalUnit::YearMonth),
            T::Interval(IntervalUnit::DayTime),
            T::Interval(IntervalUnit::MonthDayNano),
            T::Boolean,
            T::Utf8,
            T::LargeUtf8,
            T::Utf8View,
            T::Binary,
            T::LargeBinary,
            T::BinaryView,
            T::FixedSizeBinary(4),
            T::Dictionary(Box::new(T::Int32), Box::new(T::Utf8)),
            T::Dictionary(Box::new(T::UInt8), Box::new(paris.clone())),
            T::Struct(vec![Field::new("at", utc.clone(), true), Field::new("n", T::Int32, true)].into()),
            T::List(item(utc.clone())),
            T::LargeList(item(paris.clone())),
            T::FixedSizeList(item(utc.clone()), 2),
            T::Map(Arc::new(Field::new("entries", entries, false)), false),
        ];
        for ty in types {
            assert!(crate::io::ipc::readable_type(&ty), "{ty}");
            let schema = Schema::new(vec![Field::new("c", ty.clone(), true)]);
            assert!(check_carried_text(&schema).is_ok(), "{ty}: {:?}", check_carried_text(&schema));
        }
        // The instant, in UTC.
        let at = arrow::array::TimestampSecondArray::from(vec![1_714_564_800]).with_timezone("Europe/Paris");
        let text = text_form(&(Arc::new(at) as arrow::array::ArrayRef)).unwrap();
        let shown = arrow::util::display::ArrayFormatter::try_new(text.as_ref(), &Default::default()).unwrap();
        assert_eq!(shown.value(0).to_string(), "2024-05-01T12:00:00Z");
    }

    // Expected strings are what C's printf gives for BLAST's format strings (checked by hand
    // against glibc: printf '%.2e' 1.234e-45 etc.).
    #[test]
    fn blast_evalue_matches_blast_formatting() {
        let cases = [
            (0.0, "0.0"),
            (1e-181, "0.0"),
            (1e-180, "1.00e-180"),
            (3.14159e-120, "3.14e-120"),
            (1.2345e-45, "1.23e-45"),
            (2.0e-5, "2.00e-05"),
            (0.00089, "8.90e-04"),
            (0.0009, "0.001"),
            (0.0123, "0.012"),
            (0.09999, "0.100"),
            (0.1, "0.10"),
            (0.567, "0.57"),
            (1.0, "1.0"),
            (9.96, "10.0"),
            (10.0, "10"),
            (123.6, "124"),
            (45678.0, "45678"),
        ];
        for (value, expected) in cases {
            assert_eq!(blast_evalue(value), expected, "evalue {value:e}");
        }
    }

    #[test]
    fn blast_bitscore_matches_blast_formatting() {
        let cases = [
            (0.0, " 0.0"),
            (9.54, " 9.5"),
            (9.96, "10.0"),
            (45.44, "45.4"),
            (99.9, "99.9"),
            (99.95, " 99"),
            (100.0, "100"),
            (512.99, "512"),
            (99999.0, "99999"),
            (123456.0, "1.235e+05"),
            (-3.25, "-3.2"),
        ];
        for (value, expected) in cases {
            assert_eq!(blast_bitscore(value), expected, "bits {value}");
        }
    }

    #[test]
    fn tsv_lines_print_evalues_as_blast_does() {
        // Hand-checked against BLAST+'s rules (align_format_util.cpp GetScoreString, with
        // tabular.cpp's `%.2e` between 1e-180 and 0.0009): the 16-digit
        // 8.303488615907861e-140 is BLAST's 8.30e-140.
        let row = |evalue: f64| ResultRow {
            query: "q1",
            target: "sp|P1|A",
            score: 512,
            bits: Some(201.66),
            evalue: Some(evalue),
            qstart: 1,
            qend: 200,
            tstart: 3,
            tend: 202,
            qlen: 210,
            tlen: 220,
            recomputed: false,
            rank: 1,
        };
        let cases = [
            (8.303488615907861e-140, "8.30e-140"),
            (3.0e-200, "0.0"),
            (0.0004567, "4.57e-04"),
            (0.0344, "0.034"),
            (0.567, "0.57"),
            (3.14158, "3.1"),
            (42.4, "42"),
        ];
        for (evalue, text) in cases {
            let mut line = String::new();
            let mut batch = ResultBatch::new();
            batch.push(row(evalue));
            batch.push_query("q1", 1);
            batch.number_queries(6).unwrap();
            let columns = Columns::default_for(Mode::Search, super::super::Format::Tsv);
            for (k, &c) in columns.0.iter().enumerate() {
                if k > 0 {
                    line.push('\t');
                }
                push_value(&mut line, c, batch.value(c, 0).unwrap(), Style::Tsv);
            }
            assert_eq!(line, format!("q1\tsp|P1|A\t512\t201.7\t{text}\t1\t200\t3\t202\t210\t220\tfalse\t1\t7"));
        }
    }

    #[test]
    fn ids_with_tabs_stay_on_one_line() {
        let mut line = String::new();
        push_id(&mut line, "a\tb\nc\rd");
        assert_eq!(line, "a b c d");
    }
}

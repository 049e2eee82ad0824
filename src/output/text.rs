//! Text writers: TSV (our columns, one header line) and BLAST tabular (BLAST's columns and
//! number formatting, no header).
//!
//! TSV: columns as in the schema; `bits` with one decimal (`%.1f`); `evalue` in the shortest
//! text that reads back to the same f64 (plain decimal between 1e-4 and 1e16, else scientific,
//! e.g. `0.0123`, `3.2e-45`), so TSV and the binary formats agree exactly; null `bits`/`evalue`
//! are empty fields; `recomputed` is `true`/`false`.
//!
//! BLAST: `qseqid sseqid score bitscore evalue qstart qend sstart send qlen slen`, formatted as
//! BLAST+ does in `-outfmt 6` (see [`blast_evalue`], [`blast_bitscore`]); null `bitscore`/
//! `evalue` are `*`.
//!
//! Both: a tab, newline or carriage return inside an id (impossible for FASTA ids, which end
//! at the first whitespace) is written as a space so every record stays one line of fixed
//! columns.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

use super::sink::{Sink, Status};
use arrow::datatypes::SchemaRef;

use super::{Mode, ResultBatch, ResultRow, ResultWriter};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Tsv,
    Blast,
}

pub(super) struct TextWriter {
    out: BufWriter<Sink>,
    status: Status,
    mode: Mode,
    style: Style,
    line: String,
}

impl TextWriter {
    /// `schema`: the results' columns and the carried ones (TSV writes both; BLAST its own).
    pub(super) fn new(sink: Sink, mode: Mode, schema: SchemaRef, style: Style) -> Result<Self> {
        let status = sink.status();
        let mut out = sink.buffered();
        if style == Style::Tsv {
            let names: Vec<String> = schema.fields().iter().map(|f| f.name().to_string()).collect();
            writeln!(out, "{}", names.join("\t")).map_err(|e| status.io_fail(e))?;
        }
        Ok(TextWriter { out, status, mode, style, line: String::with_capacity(256) })
    }
}

impl ResultWriter for TextWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        let carried = carried_text(batch)?;
        for (i, row) in batch.rows().enumerate() {
            self.line.clear();
            match self.style {
                Style::Tsv => {
                    tsv_line(&mut self.line, &row, self.mode);
                    if let Some(columns) = &carried {
                        self.line.pop();
                        for column in columns {
                            self.line.push('\t');
                            push_id(&mut self.line, &column[i]);
                        }
                        self.line.push('\n');
                    }
                }
                Style::Blast => blast_line(&mut self.line, &row),
            }
            self.out.write_all(self.line.as_bytes()).map_err(|e| self.status.io_fail(e))?;
        }
        // A reader at the other end of a pipe sees each batch as soon as it is done.
        if self.status.is_stdout() {
            self.out.flush().map_err(|e| self.status.io_fail(e))?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Sink::commit_buffered(self.out, &self.status)
    }
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
            let text = ArrayFormatter::try_new(column.as_ref(), &FormatOptions::default()).map_err(failed)?;
            columns[k].extend((0..column.len()).map(|r| text.value(r).to_string()));
        }
    }
    Ok(Some(columns))
}

/// Writing into a `String` cannot fail; the `fmt::Result`s below are discarded for that reason.
fn tsv_line(line: &mut String, row: &ResultRow<'_>, mode: Mode) {
    push_id(line, row.query);
    line.push('\t');
    push_id(line, row.target);
    let _ = write!(line, "\t{}\t", row.score);
    if let Some(bits) = row.bits {
        let _ = write!(line, "{bits:.1}");
    }
    line.push('\t');
    if let Some(evalue) = row.evalue {
        line.push_str(&tsv_evalue(evalue));
    }
    let _ = write!(
        line,
        "\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        row.qstart, row.qend, row.tstart, row.tend, row.qlen, row.tlen, row.recomputed
    );
    if mode == Mode::Search {
        let _ = write!(line, "\t{}", row.rank);
    }
    line.push('\n');
}

fn blast_line(line: &mut String, row: &ResultRow<'_>) {
    push_id(line, row.query);
    line.push('\t');
    push_id(line, row.target);
    let bits = row.bits.map_or_else(|| "*".to_string(), blast_bitscore);
    let evalue = row.evalue.map_or_else(|| "*".to_string(), blast_evalue);
    let _ = writeln!(
        line,
        "\t{}\t{bits}\t{evalue}\t{}\t{}\t{}\t{}\t{}\t{}",
        row.score, row.qstart, row.qend, row.tstart, row.tend, row.qlen, row.tlen
    );
}

fn push_id(line: &mut String, id: &str) {
    if id.contains(['\t', '\n', '\r']) {
        line.extend(id.chars().map(|c| if matches!(c, '\t' | '\n' | '\r') { ' ' } else { c }));
    } else {
        line.push_str(id);
    }
}

/// The TSV e-value: the shortest text that parses back to the same f64, in plain decimal
/// for 1e-4 <= |e| < 1e16 and in scientific notation otherwise (as Python's `repr`).
pub fn tsv_evalue(evalue: f64) -> String {
    let magnitude = evalue.abs();
    if evalue == 0.0 || (1e-4..1e16).contains(&magnitude) || !evalue.is_finite() {
        format!("{evalue}")
    } else {
        format!("{evalue:e}")
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
    fn tsv_evalue_round_trips_and_reads_naturally() {
        let cases = [
            (0.0, "0"),
            (0.5, "0.5"),
            (1.0, "1"),
            (0.0001, "0.0001"),
            (0.00009, "9e-5"),
            (3.2e-45, "3.2e-45"),
            (1234.5, "1234.5"),
            (1e16, "1e16"),
        ];
        for (value, expected) in cases {
            assert_eq!(tsv_evalue(value), expected);
        }
        for value in [1.0 / 3.0, 2.718281828459045e-100, 6.02214076e23, 7.0e-310, f64::MAX] {
            assert_eq!(tsv_evalue(value).parse::<f64>().unwrap(), value);
        }
    }

    #[test]
    fn ids_with_tabs_stay_on_one_line() {
        let mut line = String::new();
        push_id(&mut line, "a\tb\nc\rd");
        assert_eq!(line, "a b c d");
    }
}

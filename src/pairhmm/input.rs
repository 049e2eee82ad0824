//! Inputs of `swarrow pairhmm`, read as a stream of [`PairBatch`]es in input order.
//!
//! Tables (TSV with a header line, Arrow IPC stream or file, Parquet; detected by content,
//! TSV may be gzip-compressed) with named columns; qualities are phred+33 text:
//! - pairs (`--pairs`): `read, read_bases, base_quals, ins_quals, del_quals, [gcp_quals],
//!   haplotype, hap_bases, [group]`: one likelihood per row;
//! - grouped (`--reads` with `--haplotypes`): reads `group, read, read_bases, base_quals,
//!   ins_quals, del_quals, [gcp_quals]` and haplotypes `group, haplotype, hap_bases`, each
//!   file's rows contiguous by group and the groups in the same order in both: every read
//!   against every haplotype of its group (GATK's use), reads in input order, each read's
//!   haplotypes in input order.
//!
//! GATK's PairHMM test-data text (`--pairs` with lines `hap read qual ins del gcp [expected]`,
//! whitespace-separated, `#` comments) is recognised when the first line is not a header:
//! record N gets read id `rN`, haplotype id `hN` and group `N`.
//!
//! A missing `gcp_quals` column takes `--gcp Q` for every base. Bad records are input errors
//! naming file, record (1-based, header excluded) and problem. Rows are copied once into a
//! reusable row buffer, then into the batch: no allocation per record.

use super::batch::{Invalid, PairBatch, PairRef, Quals};
use crate::error::{Error, Result, Where};
use crate::io::input::{
    open_file, open_input, peek, read_error, read_line_bounded, Input, Line, ARROW_CONTINUATION, ARROW_FILE_MAGIC,
    MAX_LINE, PARQUET_MAGIC,
};
use crate::io::Table;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchReader};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::fmt::Write as _;
use std::path::Path;

const READ_COLUMNS: [&str; 6] = ["read", "read_bases", "base_quals", "ins_quals", "del_quals", "gcp_quals"];
const HAP_COLUMNS: [&str; 2] = ["haplotype", "hap_bases"];

/// Bytes of sequence and qualities per batch, whatever the cell count: bounds memory when
/// reads are long and haplotypes short.
const MAX_BATCH_BYTES: usize = 1 << 28;

/// Limits of one batch.
#[derive(Debug, Clone, Copy)]
pub struct BatchLimits {
    /// Read x haplotype cells.
    pub cells: u64,
    pub pairs: usize,
}

/// One row's fields, in one reusable buffer.
#[derive(Debug, Default)]
struct Row {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Row {
    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    fn end_field(&mut self) {
        self.ends.push(self.data.len());
    }

    fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    fn str(&self, i: usize) -> &str {
        // Ids come from UTF-8 text or Arrow strings; anything else is shown lossily.
        std::str::from_utf8(self.get(i)).unwrap_or("<non-UTF-8>")
    }
}

/// Rows of a table, with column names.
trait RowSource: Send {
    fn columns(&self) -> &[String];
    /// Reads the next row into `row`; false at the end.
    fn next_row(&mut self, row: &mut Row) -> Result<bool>;
}

/// A table opened by content: TSV (header line), Arrow IPC, Parquet; or GATK text.
enum Opened {
    Table(Box<dyn RowSource>),
    Gatk(TextRows),
}

fn open_table(path: &Path) -> Result<(Where, Opened)> {
    let place = Where::from_arg(path);
    if let Where::Path(p) = &place {
        let mut head = [0u8; 6];
        let n = {
            use std::io::Read;
            let mut f = open_file(p)?;
            f.read(&mut head).map_err(|e| read_error(&place, e))?
        };
        if n >= 4 && &head[..4] == PARQUET_MAGIC {
            let file = open_file(p)?;
            let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| Error::file(&place, format!("not a readable Parquet file: {e}")))?;
            let reader = builder.build().map_err(|e| Error::file(&place, format!("Parquet: {e}")))?;
            return Ok((place.clone(), Opened::Table(Box::new(ArrowRows::new(place, reader)?))));
        }
        if n == 6 && &head == ARROW_FILE_MAGIC {
            let reader = arrow::ipc::reader::FileReader::try_new(open_file(p)?, None)
                .map_err(|e| Error::file(&place, format!("not a readable Arrow IPC file: {e}")))?;
            return Ok((place.clone(), Opened::Table(Box::new(ArrowRows::new(place, reader)?))));
        }
    }
    let (place, input) = open_input(path)?;
    let (head, input) = peek(&place, input, 4)?;
    if head == ARROW_CONTINUATION {
        let reader = arrow::ipc::reader::StreamReader::try_new(input, None)
            .map_err(|e| Error::file(&place, format!("not a readable Arrow IPC stream: {e}")))?;
        return Ok((place.clone(), Opened::Table(Box::new(ArrowRows::new(place, reader)?))));
    }
    if head.starts_with(PARQUET_MAGIC) {
        return Err(Error::file(&place, "Parquet cannot be read from standard input: give a file"));
    }
    let mut text =
        TextRows { place: place.clone(), input, line: Vec::new(), columns: Vec::new(), line_no: 0, pending: None };
    let mut first = text.next_line()?;
    // A UTF-8 byte order mark (spreadsheet exports) before the header is no part of it.
    if first.starts_with(crate::io::input::UTF8_BOM) {
        first.drain(..3);
    }
    let header: Vec<String> =
        first.split(|&b| b == b'\t').map(|f| String::from_utf8_lossy(f).trim().to_string()).collect();
    let known = |c: &String| READ_COLUMNS.contains(&c.as_str()) || HAP_COLUMNS.contains(&c.as_str()) || c == "group";
    if !first.is_empty() && header.iter().all(known) {
        text.columns = header;
        Ok((place, Opened::Table(Box::new(text))))
    } else {
        text.pending = Some(first);
        Ok((place, Opened::Gatk(text)))
    }
}

/// TSV rows (after the header) or GATK text lines.
struct TextRows {
    place: Where,
    input: Input,
    line: Vec<u8>,
    columns: Vec<String>,
    line_no: usize,
    /// A line read ahead (the first data line of GATK text).
    pending: Option<Vec<u8>>,
}

impl TextRows {
    /// The next line that is neither empty nor a `#` comment; empty at the end.
    fn next_line(&mut self) -> Result<Vec<u8>> {
        loop {
            match read_line_bounded(&mut self.input, &mut self.line, MAX_LINE)
                .map_err(|e| read_error(&self.place, e))?
            {
                Line::End => return Ok(Vec::new()),
                Line::TooLong => {
                    return Err(Error::file(
                        &self.place,
                        format!("line {} is longer than {} bytes", self.line_no + 1, MAX_LINE),
                    ))
                }
                Line::Read => {}
            }
            self.line_no += 1;
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if !self.line.is_empty() && self.line[0] != b'#' {
                return Ok(std::mem::take(&mut self.line));
            }
        }
    }

    fn fill(&mut self, row: &mut Row, sep: impl Fn(&u8) -> bool, skip_empty: bool) -> Result<bool> {
        let line = match self.pending.take() {
            Some(l) => l,
            None => self.next_line()?,
        };
        row.clear();
        if line.is_empty() {
            return Ok(false);
        }
        for field in line.split(sep) {
            if skip_empty && field.is_empty() {
                continue;
            }
            row.data.extend_from_slice(field);
            row.end_field();
        }
        // Keep the line's buffer for the next read.
        self.line = line;
        Ok(true)
    }
}

impl RowSource for TextRows {
    fn columns(&self) -> &[String] {
        &self.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool> {
        self.fill(row, |&b| b == b'\t', false)
    }
}

/// The rows of an in-memory table.
fn table_rows(table: Table) -> Result<(Where, Box<dyn RowSource>)> {
    let place = table.place.clone();
    let reader = TableReader { schema: table.schema, batches: table.batches };
    Ok((place.clone(), Box::new(ArrowRows::new(place, reader)?)))
}

/// A [`Table`] as a record batch reader.
struct TableReader {
    schema: arrow::datatypes::SchemaRef,
    batches: crate::io::Batches,
}

impl Iterator for TableReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.batches.next()?.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for TableReader {
    fn schema(&self) -> arrow::datatypes::SchemaRef {
        self.schema.clone()
    }
}

/// Rows of Arrow record batches (IPC or Parquet), one record batch in memory at a time.
struct ArrowRows<R> {
    place: Where,
    reader: R,
    columns: Vec<String>,
    batch: Option<RecordBatch>,
    row: usize,
    format: FormatOptions<'static>,
}

impl<R: Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + RecordBatchReader + Send> ArrowRows<R> {
    fn new(place: Where, reader: R) -> Result<Self> {
        let columns = reader.schema().fields().iter().map(|f| f.name().to_string()).collect();
        Ok(ArrowRows { place, reader, columns, batch: None, row: 0, format: FormatOptions::default() })
    }
}

fn push_cell(row: &mut Row, array: &ArrayRef, i: usize, format: &FormatOptions<'_>) -> std::result::Result<(), String> {
    if array.is_null(i) {
        return Err("null".into());
    }
    match array.data_type() {
        DataType::Utf8 => row.data.extend_from_slice(array.as_string::<i32>().value(i).as_bytes()),
        DataType::LargeUtf8 => row.data.extend_from_slice(array.as_string::<i64>().value(i).as_bytes()),
        DataType::Utf8View => row.data.extend_from_slice(array.as_string_view().value(i).as_bytes()),
        DataType::Binary => row.data.extend_from_slice(array.as_binary::<i32>().value(i)),
        DataType::LargeBinary => row.data.extend_from_slice(array.as_binary::<i64>().value(i)),
        _ => {
            // Numbers and other scalars (group ids, say) as Arrow displays them.
            let f = ArrayFormatter::try_new(array.as_ref(), format).map_err(|e| e.to_string())?;
            use std::io::Write;
            write!(row.data, "{}", f.value(i)).map_err(|e| e.to_string())?;
        }
    }
    row.end_field();
    Ok(())
}

impl<R: Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send> RowSource for ArrowRows<R> {
    fn columns(&self) -> &[String] {
        &self.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool> {
        loop {
            if let Some(batch) = &self.batch {
                if self.row < batch.num_rows() {
                    row.clear();
                    for (c, array) in batch.columns().iter().enumerate() {
                        push_cell(row, array, self.row, &self.format).map_err(|problem| {
                            Error::file(&self.place, format!("column {}: {problem}", self.columns[c]))
                        })?;
                    }
                    self.row += 1;
                    return Ok(true);
                }
            }
            match self.reader.next() {
                None => return Ok(false),
                Some(Ok(b)) => {
                    self.batch = Some(b);
                    self.row = 0;
                }
                Some(Err(e)) => return Err(Error::file(&self.place, format!("corrupt Arrow data: {e}"))),
            }
        }
    }
}

/// Where each needed column is in a table.
struct ReadColumns {
    id: usize,
    bases: usize,
    base_q: usize,
    ins_q: usize,
    del_q: usize,
    gcp_q: Option<usize>,
}

fn find(place: &Where, columns: &[String], name: &str) -> Result<usize> {
    find_optional(place, columns, name)?
        .ok_or_else(|| Error::file(place, format!("no column '{name}' (columns: {})", columns.join(", "))))
}

/// The column named `name`, if there is one; two of that name are ambiguous, refused as
/// `align` refuses them.
fn find_optional(place: &Where, columns: &[String], name: &str) -> Result<Option<usize>> {
    let same = columns.iter().filter(|c| *c == name).count();
    if same > 1 {
        return Err(Error::file(
            place,
            format!("{same} columns are named {name}: which one to read is ambiguous (rename them apart)"),
        ));
    }
    Ok(columns.iter().position(|c| c == name))
}

impl ReadColumns {
    fn find(place: &Where, columns: &[String]) -> Result<Self> {
        Ok(ReadColumns {
            id: find(place, columns, "read")?,
            bases: find(place, columns, "read_bases")?,
            base_q: find(place, columns, "base_quals")?,
            ins_q: find(place, columns, "ins_quals")?,
            del_q: find(place, columns, "del_quals")?,
            gcp_q: find_optional(place, columns, "gcp_quals")?,
        })
    }

    fn push(&self, batch: &mut PairBatch, row: &Row, gcp: u8) -> std::result::Result<u32, Invalid> {
        let gcp = match self.gcp_q {
            Some(c) => Quals::Text(row.get(c)),
            None => Quals::Constant(gcp),
        };
        batch.push_read(
            row.str(self.id),
            row.get(self.bases),
            row.get(self.base_q),
            row.get(self.ins_q),
            row.get(self.del_q),
            gcp,
        )
    }
}

/// Fields of a row must match the header's count.
fn check_width(place: &Where, record: usize, row: &Row, columns: usize) -> Result<()> {
    if row.ends.len() != columns {
        return Err(Error::record(
            place,
            record,
            "",
            format!("{} fields, expected {} (one per header column)", row.ends.len(), columns),
        ));
    }
    Ok(())
}

/// A stream of batches from `swarrow pairhmm`'s input.
pub struct BatchReader {
    kind: Kind,
    limits: BatchLimits,
    gcp: u8,
    row: Row,
    records: usize,
    /// Scratch for generated ids (GATK text).
    id: String,
}

enum Kind {
    Pairs { place: Where, rows: Box<dyn RowSource>, read: ReadColumns, hap: [usize; 2], group: Option<usize> },
    Gatk { place: Where, text: TextRows },
    Grouped(Box<Grouped>),
}

impl BatchReader {
    /// `--pairs FILE`: a pair table or GATK text.
    pub fn pairs(path: &Path, gcp: u8, limits: BatchLimits) -> Result<Self> {
        let (place, opened) = open_table(path)?;
        Self::pairs_from(place, opened, gcp, limits)
    }

    /// A pair table handed over in memory (the Python package's `pairhmm(pairs=...)`).
    pub fn pairs_table(table: Table, gcp: u8, limits: BatchLimits) -> Result<Self> {
        let (place, rows) = table_rows(table)?;
        Self::pairs_from(place, Opened::Table(rows), gcp, limits)
    }

    fn pairs_from(place: Where, opened: Opened, gcp: u8, limits: BatchLimits) -> Result<Self> {
        let kind = match opened {
            Opened::Gatk(text) => Kind::Gatk { place, text },
            Opened::Table(rows) => {
                let cols = rows.columns();
                let read = ReadColumns::find(&place, cols)?;
                let hap = [find(&place, cols, "haplotype")?, find(&place, cols, "hap_bases")?];
                let group = find_optional(&place, cols, "group")?;
                Kind::Pairs { place, rows, read, hap, group }
            }
        };
        Ok(BatchReader { kind, limits, gcp, row: Row::default(), records: 0, id: String::new() })
    }

    /// `--reads FILE --haplotypes FILE`: every read against every haplotype of its group.
    pub fn grouped(reads: &Path, haps: &Path, gcp: u8, limits: BatchLimits) -> Result<Self> {
        let table = |path: &Path| -> Result<(Where, Box<dyn RowSource>)> {
            match open_table(path)? {
                (place, Opened::Table(rows)) => Ok((place, rows)),
                (place, Opened::Gatk(_)) => {
                    Err(Error::file(&place, "expected a table with a header line naming its columns"))
                }
            }
        };
        Self::grouped_from(table(reads)?, table(haps)?, gcp, limits)
    }

    /// Reads and haplotypes tables handed over in memory.
    pub fn grouped_tables(reads: Table, haps: Table, gcp: u8, limits: BatchLimits) -> Result<Self> {
        Self::grouped_from(table_rows(reads)?, table_rows(haps)?, gcp, limits)
    }

    fn grouped_from(
        (read_place, reads): (Where, Box<dyn RowSource>),
        (hap_place, haps): (Where, Box<dyn RowSource>),
        gcp: u8,
        limits: BatchLimits,
    ) -> Result<Self> {
        let read_cols = ReadColumns::find(&read_place, reads.columns())?;
        let read_group = find(&read_place, reads.columns(), "group")?;
        let hap_cols = [find(&hap_place, haps.columns(), "haplotype")?, find(&hap_place, haps.columns(), "hap_bases")?];
        let hap_group = find(&hap_place, haps.columns(), "group")?;
        let grouped = Grouped {
            read_place,
            reads,
            read_cols,
            read_group,
            hap_place,
            haps,
            hap_cols,
            hap_group,
            hap_row: Row::default(),
            hap_pending: false,
            hap_records: 0,
            read_pending: false,
            group: String::new(),
            group_haps: PairBatch::new(),
            seen_groups: 0,
        };
        Ok(BatchReader {
            kind: Kind::Grouped(Box::new(grouped)),
            limits,
            gcp,
            row: Row::default(),
            records: 0,
            id: String::new(),
        })
    }

    /// The next batch (`batch` is cleared first); false when the input is exhausted.
    pub fn next_batch(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.clear();
        let full = |b: &PairBatch, cells: u64, limits: &BatchLimits| {
            cells >= limits.cells || b.pairs.len() >= limits.pairs || b.bytes() >= MAX_BATCH_BYTES
        };
        let mut cells = 0u64;
        match &mut self.kind {
            Kind::Pairs { place, rows, read, hap, group } => {
                let width = rows.columns().len();
                while !full(batch, cells, &self.limits) && rows.next_row(&mut self.row)? {
                    let rec = self.records;
                    self.records += 1;
                    check_width(place, rec, &self.row, width)?;
                    let row = &self.row;
                    let bad = |e: Invalid| Error::record(place, rec, row.str(read.id), e.0);
                    let r = read.push(batch, row, self.gcp).map_err(bad)?;
                    let h = batch.push_hap(row.str(hap[0]), row.get(hap[1])).map_err(bad)?;
                    let g = push_group(batch, group.map_or("", |g| row.str(g)));
                    batch.pairs.push(PairRef { read: r, hap: h, group: g });
                    cells += (batch.read(r as usize).len() * batch.hap(h as usize).len()) as u64;
                }
            }
            Kind::Gatk { place, text } => {
                while !full(batch, cells, &self.limits)
                    && text.fill(&mut self.row, |b| b.is_ascii_whitespace(), true)?
                {
                    let rec = self.records;
                    self.records += 1;
                    let n = rec + 1;
                    let row = &self.row;
                    if !(6..=7).contains(&row.ends.len()) {
                        return Err(Error::record(
                            place,
                            rec,
                            "",
                            format!("{} fields: expected 'hap read qual ins del gcp [expected]'", row.ends.len()),
                        ));
                    }
                    // Ids written into one reused buffer: no allocation per record.
                    let id = &mut self.id;
                    id.clear();
                    let _ = write!(id, "r{n}");
                    let bad = |e: Invalid| Error::record(place, rec, &format!("r{n}"), e.0);
                    let r = batch
                        .push_read(id, row.get(1), row.get(2), row.get(3), row.get(4), Quals::Text(row.get(5)))
                        .map_err(bad)?;
                    id.clear();
                    let _ = write!(id, "h{n}");
                    let h = batch.push_hap(id, row.get(0)).map_err(bad)?;
                    id.clear();
                    let _ = write!(id, "{n}");
                    let g = batch.groups.push(id);
                    batch.pairs.push(PairRef { read: r, hap: h, group: g });
                    cells += (batch.read(r as usize).len() * batch.hap(h as usize).len()) as u64;
                }
            }
            Kind::Grouped(g) => g.fill(batch, &self.limits, self.gcp, &mut self.row, &mut self.records)?,
        }
        Ok(!batch.pairs.is_empty())
    }
}

/// The index of group `name` in the batch, reusing the last one when it is the same.
fn push_group(batch: &mut PairBatch, name: &str) -> u32 {
    let n = batch.groups.len();
    if n > 0 && batch.groups.get(n - 1) == name {
        (n - 1) as u32
    } else {
        batch.groups.push(name)
    }
}

/// The merge of a reads table and a haplotypes table by group.
struct Grouped {
    read_place: Where,
    reads: Box<dyn RowSource>,
    read_cols: ReadColumns,
    read_group: usize,
    hap_place: Where,
    haps: Box<dyn RowSource>,
    hap_cols: [usize; 2],
    hap_group: usize,
    hap_row: Row,
    /// `hap_row` holds a row not yet used (the first of the next group).
    hap_pending: bool,
    hap_records: usize,
    /// The caller's row holds a read not yet used (the first of the next batch).
    read_pending: bool,
    /// The current group and its haplotypes.
    group: String,
    group_haps: PairBatch,
    seen_groups: usize,
}

impl Grouped {
    /// Loads the haplotypes of `group` (the haplotype table's next group).
    fn load_group(&mut self, group: &str, read_record: usize) -> Result<()> {
        self.group_haps.clear();
        self.group.clear();
        self.group.push_str(group);
        loop {
            if !self.hap_pending {
                if !self.haps.next_row(&mut self.hap_row)? {
                    break;
                }
                check_width(&self.hap_place, self.hap_records, &self.hap_row, self.haps.columns().len())?;
                self.hap_records += 1;
                self.hap_pending = true;
            }
            if self.hap_row.str(self.hap_group) != group {
                break;
            }
            let rec = self.hap_records - 1;
            let id = self.hap_row.str(self.hap_cols[0]);
            self.group_haps
                .push_hap(id, self.hap_row.get(self.hap_cols[1]))
                .map_err(|e| Error::record(&self.hap_place, rec, id, e.0))?;
            self.hap_pending = false;
        }
        if self.group_haps.hap_count() == 0 {
            let next = if self.hap_pending {
                format!("its next group is '{}'", self.hap_row.str(self.hap_group))
            } else {
                "it has no more rows".to_string()
            };
            return Err(Error::record(
                &self.read_place,
                read_record,
                "",
                format!(
                    "group '{group}' has no haplotypes in {} ({next}; both files must list their groups in the same order)",
                    self.hap_place
                ),
            ));
        }
        self.seen_groups += 1;
        Ok(())
    }

    fn fill(
        &mut self,
        batch: &mut PairBatch,
        limits: &BatchLimits,
        gcp: u8,
        row: &mut Row,
        records: &mut usize,
    ) -> Result<()> {
        let mut cells = 0u64;
        // Haplotype indexes of the current group in this batch.
        let mut hap_start: Option<u32> = None;
        loop {
            if cells >= limits.cells || batch.pairs.len() >= limits.pairs || batch.bytes() >= MAX_BATCH_BYTES {
                return Ok(());
            }
            if !self.read_pending {
                if !self.reads.next_row(row)? {
                    if self.hap_pending || self.haps.next_row(&mut self.hap_row)? {
                        let group = self.hap_row.str(self.hap_group).to_string();
                        return Err(Error::record(
                            &self.hap_place,
                            self.hap_records.saturating_sub(1) + !self.hap_pending as usize,
                            "",
                            format!("group '{group}' has no reads in {}", self.read_place),
                        ));
                    }
                    return Ok(());
                }
                check_width(&self.read_place, *records, row, self.reads.columns().len())?;
                *records += 1;
                self.read_pending = true;
            }
            let rec = *records - 1;
            let group = row.str(self.read_group);
            if self.seen_groups == 0 || group != self.group {
                let group = group.to_string();
                self.load_group(&group, rec)?;
                hap_start = None;
            }
            let first_hap = match hap_start {
                Some(h) => h,
                None => {
                    let first = batch.hap_count() as u32;
                    for h in 0..self.group_haps.hap_count() {
                        batch.push_hap_from(&self.group_haps, h);
                    }
                    hap_start = Some(first);
                    first
                }
            };
            let r = self
                .read_cols
                .push(batch, row, gcp)
                .map_err(|e| Error::record(&self.read_place, rec, row.str(self.read_cols.id), e.0))?;
            self.read_pending = false;
            let g = push_group(batch, &self.group);
            let read_len = batch.read(r as usize).len() as u64;
            for h in 0..self.group_haps.hap_count() as u32 {
                let hap = first_hap + h;
                batch.pairs.push(PairRef { read: r, hap, group: g });
                cells += read_len * batch.hap(hap as usize).len() as u64;
            }
        }
    }
}

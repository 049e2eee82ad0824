//! Pair input for `align`, streamed one pair at a time: two FASTA files paired record by
//! record, or one file (or stdin) holding `query_id, query_seq, target_id, target_seq` as an
//! Arrow IPC stream/file or as TSV, told apart by content.

use std::path::{Path, PathBuf};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};

use crate::error::{Error, Result, Where};
use crate::io::fasta_blocks::BlockFastaReader;
use crate::io::input::{peek, read_error, read_line_bounded, Head, Input, Line, MAX_LINE};
use crate::io::ipc::IpcReader;
use crate::scoring::alphabet::describe_byte;
use crate::scoring::Alphabet;
use crate::seq::{Pair, Record};

/// The four columns of a pair file, in TSV order.
pub const PAIR_COLUMNS: [&str; 4] = ["query_id", "query_seq", "target_id", "target_seq"];

/// Where `align` reads its pairs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairInput {
    /// Record i of `query` is aligned with record i of `target`.
    TwoFasta { query: PathBuf, target: PathBuf },
    /// One pair file (`-` = stdin): Arrow IPC stream or file, or TSV; gzip allowed.
    File(PathBuf),
}

/// A stream of pairs that can move to a reader thread.
pub type PairIter = Box<dyn Iterator<Item = Result<Pair>> + Send>;

/// Opens a pair input. Errors name the file, the pair number (1-based) and its id.
pub fn open_pairs(input: &PairInput, alphabet: Alphabet) -> Result<PairIter> {
    match input {
        PairInput::TwoFasta { query, target } => {
            if Where::from_arg(query) == Where::Stdin && Where::from_arg(target) == Where::Stdin {
                return Err(Error::usage("query and target cannot both be read from stdin ('-')"));
            }
            let query = BlockFastaReader::open(query, alphabet)?;
            let target = BlockFastaReader::open(target, alphabet)?;
            Ok(Box::new(FastaPairs { query, target, done: false }))
        }
        PairInput::File(path) => open_pair_file(path, alphabet),
    }
}

const ARROW_CONTINUATION: [u8; 4] = [0xff; 4];
const ARROW_FILE_MAGIC: &[u8; 6] = b"ARROW1";

fn open_pair_file(path: &Path, alphabet: Alphabet) -> Result<PairIter> {
    // Opened once and sniffed from its head: a pipe cannot be reopened.
    let raw = Head::open(path, 8)?;
    let place = raw.place.clone();
    // The file format keeps its footer at the end: it needs a regular, uncompressed file.
    let refuse = || {
        Error::file(
            &place,
            "Arrow IPC file format can only be read from an uncompressed file, \
             not stdin, a pipe or gzip: use the Arrow IPC stream format",
        )
    };
    if raw.bytes.starts_with(ARROW_FILE_MAGIC) {
        let file = raw.into_regular_file()?.ok_or_else(refuse)?;
        let reader = IpcReader::file(place.clone(), file)?;
        let schema = reader.schema();
        return Ok(Box::new(ArrowPairs::new(place, schema, reader, alphabet)?));
    }
    let (head, input) = peek(&place, raw.into_input()?, 8)?;
    if head.starts_with(&ARROW_CONTINUATION) {
        let reader = IpcReader::stream(place.clone(), input)?;
        let schema = reader.schema();
        return Ok(Box::new(ArrowPairs::new(place, schema, reader, alphabet)?));
    }
    if head.starts_with(ARROW_FILE_MAGIC) {
        return Err(refuse());
    }
    Ok(Box::new(TsvPairs {
        input,
        place,
        alphabet,
        line: 0,
        count: 0,
        buf: Vec::new(),
        done: false,
    }))
}

/// Encodes one sequence field of pair `index`, naming the column on error.
fn encode_field(
    place: &Where,
    index: usize,
    id: &str,
    column: &str,
    context: &str,
    raw: &[u8],
    alphabet: Alphabet,
) -> Result<Vec<u8>> {
    if raw.is_empty() {
        return Err(Error::record(place, index, id, format!("{}{} is empty", context, column)));
    }
    alphabet.encode(raw).map_err(|i| {
        let problem =
            format!("{}{}: {} at position {}", context, column, describe_byte(raw[i]), i + 1);
        Error::record(place, index, id, problem)
    })
}

/// Builds pair `index` from its four fields; `context` prefixes problems (a TSV line number).
fn make_pair(
    place: &Where,
    index: usize,
    context: &str,
    fields: [&[u8]; 4],
    alphabet: Alphabet,
) -> Result<Pair> {
    let query_id = String::from_utf8_lossy(fields[0]).into_owned();
    let target_id = String::from_utf8_lossy(fields[2]).into_owned();
    if query_id.is_empty() {
        return Err(Error::record(place, index, "", format!("{}query_id is empty", context)));
    }
    if target_id.is_empty() {
        return Err(Error::record(
            place,
            index,
            &query_id,
            format!("{}target_id is empty", context),
        ));
    }
    // Ids become TSV fields: a tab or line break (possible in Arrow input) would break rows.
    for (column, id) in [("query_id", &query_id), ("target_id", &target_id)] {
        if id.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
            let problem = format!("{}{} contains a tab or line break", context, column);
            return Err(Error::record(place, index, &query_id, problem));
        }
    }
    let query_seq =
        encode_field(place, index, &query_id, "query_seq", context, fields[1], alphabet)?;
    let target_seq =
        encode_field(place, index, &target_id, "target_seq", context, fields[3], alphabet)?;
    Ok(Pair {
        query: Record { id: query_id, seq: query_seq },
        target: Record { id: target_id, seq: target_seq },
    })
}

/// Two FASTA files read in step.
struct FastaPairs {
    query: BlockFastaReader,
    target: BlockFastaReader,
    done: bool,
}

impl FastaPairs {
    fn unmatched(found: &BlockFastaReader, record: &Record, short: &BlockFastaReader) -> Error {
        let problem = format!(
            "no record to pair it with: {} ran out after {} records",
            short.place(),
            short.count()
        );
        Error::record(found.place(), found.count() - 1, &record.id, problem)
    }

    fn step(&mut self) -> Option<Result<Pair>> {
        let query = self.query.next();
        // Report the query file's problem before reading on in the target.
        if let Some(Err(e)) = query {
            return Some(Err(e));
        }
        match (query, self.target.next()) {
            (None, None) => None,
            (_, Some(Err(e))) => Some(Err(e)),
            (Some(Ok(query)), Some(Ok(target))) => Some(Ok(Pair { query, target })),
            (Some(Ok(q)), None) => Some(Err(Self::unmatched(&self.query, &q, &self.target))),
            (None, Some(Ok(t))) => Some(Err(Self::unmatched(&self.target, &t, &self.query))),
            (Some(Err(_)), _) => unreachable!("handled above"),
        }
    }
}

impl Iterator for FastaPairs {
    type Item = Result<Pair>;

    fn next(&mut self) -> Option<Result<Pair>> {
        if self.done {
            return None;
        }
        let item = self.step();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Tab-separated `query_id, query_seq, target_id, target_seq`, with an optional header.
struct TsvPairs {
    input: Input,
    place: Where,
    alphabet: Alphabet,
    /// Lines consumed so far.
    line: usize,
    /// Pairs read so far.
    count: usize,
    buf: Vec<u8>,
    done: bool,
}

impl TsvPairs {
    fn read_pair(&mut self) -> Result<Option<Pair>> {
        loop {
            let got = read_line_bounded(&mut self.input, &mut self.buf, MAX_LINE)
                .map_err(|e| read_error(&self.place, e))?;
            match got {
                Line::End => return Ok(None),
                Line::TooLong => {
                    return Err(Error::file(
                        &self.place,
                        format!("line {} longer than 1 GiB: not a real pair file?", self.line + 1),
                    ))
                }
                Line::Read => self.line += 1,
            }
            let mut line = &self.buf[..];
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
            if self.count == 0
                && fields.iter().copied().eq(PAIR_COLUMNS.iter().map(|c| c.as_bytes()))
            {
                continue; // the header
            }
            if self.count == 0 && line.starts_with(b">") {
                return Err(Error::file(
                    &self.place,
                    format!(
                        "line {}: looks like FASTA, not a pair file: give query and target \
                         FASTA files as two inputs",
                        self.line
                    ),
                ));
            }
            let context = format!("line {}: ", self.line);
            let Ok(four) = <[&[u8]; 4]>::try_from(fields.as_slice()) else {
                let id = String::from_utf8_lossy(fields[0]);
                let problem = format!(
                    "{}expected 4 tab-separated columns ({}), found {}",
                    context,
                    PAIR_COLUMNS.join(", "),
                    fields.len()
                );
                return Err(Error::record(&self.place, self.count, &id, problem));
            };
            let pair = make_pair(&self.place, self.count, &context, four, self.alphabet)?;
            self.count += 1;
            return Ok(Some(pair));
        }
    }
}

/// Turns one `read_pair` result into an iterator step: the stream ends after its first error,
/// and an input with no pairs at all is an error. Shared by the TSV and Arrow readers.
fn next_pair(
    done: &mut bool,
    count: usize,
    place: &Where,
    read: Result<Option<Pair>>,
) -> Option<Result<Pair>> {
    let item = match read {
        Ok(Some(pair)) => return Some(Ok(pair)),
        Ok(None) if count > 0 => None,
        Ok(None) => Some(Err(Error::file(place, "no pairs"))),
        Err(e) => Some(Err(e)),
    };
    *done = true;
    item
}

impl Iterator for TsvPairs {
    type Item = Result<Pair>;

    fn next(&mut self) -> Option<Result<Pair>> {
        if self.done {
            return None;
        }
        let read = self.read_pair();
        next_pair(&mut self.done, self.count, &self.place, read)
    }
}

/// A string column of any Arrow string type.
enum StrColumn {
    Utf8(ArrayRef),
    LargeUtf8(ArrayRef),
    Utf8View(ArrayRef),
}

impl StrColumn {
    fn new(array: ArrayRef) -> StrColumn {
        match array.data_type() {
            DataType::Utf8 => StrColumn::Utf8(array),
            DataType::LargeUtf8 => StrColumn::LargeUtf8(array),
            _ => StrColumn::Utf8View(array),
        }
    }

    /// The value at `row`; `None` when null.
    fn get(&self, row: usize) -> Option<&[u8]> {
        let array = match self {
            StrColumn::Utf8(a) | StrColumn::LargeUtf8(a) | StrColumn::Utf8View(a) => a,
        };
        if array.is_null(row) {
            return None;
        }
        Some(match self {
            StrColumn::Utf8(a) => a.as_string::<i32>().value(row).as_bytes(),
            StrColumn::LargeUtf8(a) => a.as_string::<i64>().value(row).as_bytes(),
            StrColumn::Utf8View(a) => a.as_string_view().value(row).as_bytes(),
        })
    }
}

/// Pairs from Arrow record batches, one batch in memory at a time.
struct ArrowPairs<B> {
    batches: B,
    place: Where,
    alphabet: Alphabet,
    /// Index of each of [`PAIR_COLUMNS`] in the schema.
    columns: [usize; 4],
    batch: Vec<StrColumn>,
    row: usize,
    rows: usize,
    count: usize,
    done: bool,
}

impl<B: Iterator<Item = Result<RecordBatch>>> ArrowPairs<B> {
    fn new(place: Where, schema: SchemaRef, batches: B, alphabet: Alphabet) -> Result<Self> {
        let mut columns = [0usize; 4];
        let mut missing = Vec::new();
        for (slot, name) in columns.iter_mut().zip(PAIR_COLUMNS) {
            match schema.index_of(name) {
                Ok(i) => {
                    let ty = schema.field(i).data_type();
                    if !matches!(ty, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
                        return Err(Error::file(
                            &place,
                            format!(
                                "column {} has type {}, expected a string (utf8) column",
                                name, ty
                            ),
                        ));
                    }
                    *slot = i;
                }
                Err(_) => missing.push(name),
            }
        }
        if !missing.is_empty() {
            return Err(Error::file(
                &place,
                format!(
                    "missing column{} {} (pair input needs {})",
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", "),
                    PAIR_COLUMNS.join(", ")
                ),
            ));
        }
        Ok(ArrowPairs {
            batches,
            place,
            alphabet,
            columns,
            batch: Vec::new(),
            row: 0,
            rows: 0,
            count: 0,
            done: false,
        })
    }

    fn read_pair(&mut self) -> Result<Option<Pair>> {
        while self.row == self.rows {
            match self.batches.next() {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(batch)) => {
                    self.batch = self
                        .columns
                        .iter()
                        .map(|&i| StrColumn::new(batch.column(i).clone()))
                        .collect();
                    self.row = 0;
                    self.rows = batch.num_rows();
                }
            }
        }
        let row = self.row;
        self.row += 1;
        let mut fields: [&[u8]; 4] = [&[]; 4];
        for (k, field) in fields.iter_mut().enumerate() {
            match self.batch[k].get(row) {
                Some(v) => *field = v,
                None => {
                    let id =
                        self.batch[0].get(row).map(String::from_utf8_lossy).unwrap_or_default();
                    let problem = format!("{} is null", PAIR_COLUMNS[k]);
                    return Err(Error::record(&self.place, self.count, &id, problem));
                }
            }
        }
        let pair = make_pair(&self.place, self.count, "", fields, self.alphabet)?;
        self.count += 1;
        Ok(Some(pair))
    }
}

impl<B: Iterator<Item = Result<RecordBatch>>> Iterator for ArrowPairs<B> {
    type Item = Result<Pair>;

    fn next(&mut self) -> Option<Result<Pair>> {
        if self.done {
            return None;
        }
        let read = self.read_pair();
        next_pair(&mut self.done, self.count, &self.place, read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{LargeStringArray, StringArray, StringViewArray};
    use arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    const P: Alphabet = Alphabet::Protein;

    /// Hand-encoded protein residues (NCBI order ARNDCQEGHILKMFPSTWYVBZX*).
    fn rec(id: &str, letters: &str) -> Record {
        let order = b"ARNDCQEGHILKMFPSTWYVBZX*";
        let seq =
            letters.bytes().map(|l| order.iter().position(|&c| c == l).unwrap() as u8).collect();
        Record { id: id.into(), seq }
    }

    fn pair(q: (&str, &str), t: (&str, &str)) -> Pair {
        Pair { query: rec(q.0, q.1), target: rec(t.0, t.1) }
    }

    fn read(input: &PairInput) -> Result<Vec<Pair>> {
        open_pairs(input, P)?.collect()
    }

    fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, data).unwrap();
        path
    }

    #[test]
    fn two_fasta_files_pair_record_by_record() {
        let dir = tempfile::tempdir().unwrap();
        let query = write(dir.path(), "q.fa", b">q1 x\nMKV\n>q2\nWW\n");
        let target = write(dir.path(), "t.fa", b">t1\nMK\nW\n>t2\nA\n");
        let got = read(&PairInput::TwoFasta { query, target }).unwrap();
        assert_eq!(got, vec![pair(("q1", "MKV"), ("t1", "MKW")), pair(("q2", "WW"), ("t2", "A"))]);
    }

    #[test]
    fn differing_counts_name_the_unmatched_record_and_the_short_file() {
        let dir = tempfile::tempdir().unwrap();
        let long = write(dir.path(), "long.fa", b">a\nM\n>b\nK\n>c\nW\n");
        let short = write(dir.path(), "short.fa", b">x\nM\n>y\nK\n");
        let input = PairInput::TwoFasta { query: long.clone(), target: short.clone() };
        let msg = read(&input).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: record 3 (c): no record to pair it with: {} ran out after 2 records",
                long.display(),
                short.display()
            )
        );
        let input = PairInput::TwoFasta { query: short.clone(), target: long.clone() };
        let msg = read(&input).unwrap_err().to_string();
        assert!(msg.starts_with(&format!("{}: record 3 (c)", long.display())), "{}", msg);
        assert!(msg.ends_with(&format!("{} ran out after 2 records", short.display())), "{}", msg);
    }

    #[test]
    fn errors_inside_either_fasta_file_pass_through() {
        let dir = tempfile::tempdir().unwrap();
        let good = write(dir.path(), "good.fa", b">a\nM\n>b\nK\n");
        let bad = write(dir.path(), "bad.fa", b">a\nM\n>b\nK1\n");
        let msg = read(&PairInput::TwoFasta { query: good, target: bad.clone() })
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            format!("{}: record 2 (b): invalid residue '1' at position 2 (line 4)", bad.display())
        );
    }

    #[test]
    fn tsv_with_and_without_header_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let body = "q1\tMKV\tt1\tMKW\n\nq2\tww\tt2\tA\r\n";
        let plain = write(dir.path(), "p.tsv", body.as_bytes());
        let headed = format!("query_id\tquery_seq\ttarget_id\ttarget_seq\n{}", body);
        let headed = write(dir.path(), "h.tsv", headed.as_bytes());
        let want = vec![pair(("q1", "MKV"), ("t1", "MKW")), pair(("q2", "WW"), ("t2", "A"))];
        assert_eq!(read(&PairInput::File(plain)).unwrap(), want);
        assert_eq!(read(&PairInput::File(headed)).unwrap(), want);
    }

    #[test]
    fn a_single_fasta_file_is_not_taken_for_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "one.fa", b">a\nMKV\n");
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("{}: line 1: looks like FASTA", path.display())),
            "{}",
            msg
        );
    }

    #[test]
    fn gzip_tsv_is_detected_by_content() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"q1\tMKV\tt1\tMKW\n").unwrap();
        let path = write(dir.path(), "pairs.txt", &enc.finish().unwrap());
        assert_eq!(read(&PairInput::File(path)).unwrap(), vec![pair(("q1", "MKV"), ("t1", "MKW"))]);
    }

    #[test]
    fn tsv_errors_name_file_pair_id_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "bad.tsv",
            b"query_id\tquery_seq\ttarget_id\ttarget_seq\nq1\tM\tt1\tK\nq2\tMK\tt2\n",
        );
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: record 2 (q2): line 3: expected 4 tab-separated columns \
                 (query_id, query_seq, target_id, target_seq), found 3",
                path.display()
            )
        );
        let path = write(dir.path(), "res.tsv", b"q1\tM\tt1\tK\n\nq2\tMK\tt2\tKW-\n");
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: record 2 (t2): line 3: target_seq: invalid residue '-' at position 3",
                path.display()
            )
        );
        let path = write(dir.path(), "emp.tsv", b"q1\t\tt1\tK\n");
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 1 (q1): line 1: query_seq is empty", path.display()));
        let path = write(dir.path(), "none.tsv", b"query_id\tquery_seq\ttarget_id\ttarget_seq\n\n");
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: no pairs", path.display()));
    }

    fn pair_batch(ty: DataType, rows: &[[&str; 4]]) -> RecordBatch {
        let col = |k: usize| -> ArrayRef {
            let values = rows.iter().map(|r| r[k]);
            match ty {
                DataType::Utf8 => Arc::new(StringArray::from_iter_values(values)),
                DataType::LargeUtf8 => Arc::new(LargeStringArray::from_iter_values(values)),
                _ => Arc::new(StringViewArray::from_iter_values(values)),
            }
        };
        // Columns in an unusual order, with an extra one: the reader goes by name.
        let schema = Schema::new(vec![
            Field::new("target_seq", ty.clone(), false),
            Field::new("note", DataType::Utf8, false),
            Field::new("query_id", ty.clone(), false),
            Field::new("query_seq", ty.clone(), false),
            Field::new("target_id", ty.clone(), false),
        ]);
        let note: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "x")));
        RecordBatch::try_new(Arc::new(schema), vec![col(3), note, col(0), col(1), col(2)]).unwrap()
    }

    fn arrow_stream(batches: &[RecordBatch]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w =
            arrow::ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
        drop(w);
        out
    }

    #[test]
    fn arrow_stream_pairs_read_back_across_batches() {
        let dir = tempfile::tempdir().unwrap();
        for ty in [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View] {
            let data = arrow_stream(&[
                pair_batch(ty.clone(), &[["q1", "MKV", "t1", "MKW"], ["q2", "W", "t2", "a"]]),
                pair_batch(ty.clone(), &[["q3", "RN", "t3", "D"]]),
            ]);
            let path = write(dir.path(), "pairs.arrows", &data);
            let want = vec![
                pair(("q1", "MKV"), ("t1", "MKW")),
                pair(("q2", "W"), ("t2", "A")),
                pair(("q3", "RN"), ("t3", "D")),
            ];
            assert_eq!(read(&PairInput::File(path)).unwrap(), want);
        }
    }

    #[test]
    fn arrow_file_format_reads_too() {
        let dir = tempfile::tempdir().unwrap();
        let batch = pair_batch(DataType::Utf8, &[["q1", "MKV", "t1", "MKW"]]);
        let mut out = Vec::new();
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
        let path = write(dir.path(), "pairs.arrow", &out);
        assert_eq!(read(&PairInput::File(path)).unwrap(), vec![pair(("q1", "MKV"), ("t1", "MKW"))]);
    }

    #[test]
    fn arrow_missing_columns_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("query_id", DataType::Utf8, false),
            Field::new("target_seq", DataType::Utf8, false),
        ]));
        let cols: Vec<ArrayRef> =
            vec![Arc::new(StringArray::from(vec!["q"])), Arc::new(StringArray::from(vec!["M"]))];
        let data = arrow_stream(&[RecordBatch::try_new(schema, cols).unwrap()]);
        let path = write(dir.path(), "cols.arrows", &data);
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: missing columns query_seq, target_id (pair input needs query_id, query_seq, target_id, target_seq)",
                path.display()
            )
        );
    }

    #[test]
    fn arrow_nulls_and_bad_residues_name_the_pair() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(
            PAIR_COLUMNS.iter().map(|c| Field::new(*c, DataType::Utf8, true)).collect::<Vec<_>>(),
        ));
        let col = |v: Vec<Option<&str>>| -> ArrayRef { Arc::new(StringArray::from(v)) };
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                col(vec![Some("q1"), Some("q2")]),
                col(vec![Some("M"), Some("K")]),
                col(vec![Some("t1"), Some("t2")]),
                col(vec![Some("W"), None]),
            ],
        )
        .unwrap();
        let path = write(dir.path(), "null.arrows", &arrow_stream(&[batch]));
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 2 (q2): target_seq is null", path.display()));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                col(vec![Some("q1")]),
                col(vec![Some("M.K")]),
                col(vec![Some("t1")]),
                col(vec![Some("W")]),
            ],
        )
        .unwrap();
        let path = write(dir.path(), "dot.arrows", &arrow_stream(&[batch]));
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: record 1 (q1): query_seq: invalid residue '.' at position 2",
                path.display()
            )
        );
    }

    #[test]
    fn arrow_ids_with_tabs_or_line_breaks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = arrow_stream(&[pair_batch(DataType::Utf8, &[["q1", "M", "t1", "K"], ["q2", "M", "t\n2", "K"]])]);
        let path = write(dir.path(), "nl.arrows", &data);
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 2 (q2): target_id contains a tab or line break", path.display()));
    }

    #[test]
    fn truncated_arrow_stream_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<[&str; 4]> = (0..200).map(|_| ["q", "MKVLAW", "t", "MKW"]).collect();
        let data =
            arrow_stream(&[pair_batch(DataType::Utf8, &rows), pair_batch(DataType::Utf8, &rows)]);
        let path = write(dir.path(), "cut.arrows", &data[..data.len() - 100]);
        let result = read(&PairInput::File(path.clone()));
        let err = result.unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("{}: bad Arrow IPC data after 200 rows", path.display())),
            "{}",
            msg
        );
    }
}

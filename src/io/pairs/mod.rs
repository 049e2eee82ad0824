//! Pair input for `align`, read batch by batch into a caller-owned [`PairBatch`]: two FASTA
//! files paired record by record, or one file (or stdin) holding `query_id, query_seq,
//! target_id, target_seq` as TSV, an Arrow IPC stream or file, or Parquet, told apart by
//! content; or candidate pairs by id (`by_id`) against resident sequence sets (`seqset`).
//! One file per format; what they share (column names, limits, the encoding of a run of
//! pairs with its error messages) lives here.

mod by_id;
mod fasta;
mod paf;
mod seqset;
mod table;
mod tsv;

pub(crate) use paf::looks_like_paf;
pub use seqset::{table_records, SeqSet, SetColumns};
pub use table::{Batches, Table};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::Schema;
use rayon::prelude::*;

use crate::error::{Error, Result, Where};
use crate::io::input::{skip_bom, Head};
use crate::pipeline::orient::StrandRule;
use crate::scoring::alphabet::describe_residue;
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch, Reach};

/// The four columns of a pair file, in TSV order.
pub const PAIR_COLUMNS: [&str; 4] = ["query_id", "query_seq", "target_id", "target_seq"];

/// Whether the first line of a TSV pair file, split at tabs (`fields`), is a header rather
/// than a pair: its names are [`PAIR_COLUMNS`], or its second and fourth columns name
/// sequences rather than hold them: `seq`, `sequence` (or `seqs`, `sequences`), alone or
/// after `query_`, `target_`, `subject_`, `q`, `t` or `s`, in any case (`query sequence
/// target sequence`, `id seq id seq`, `qid qseq tid tseq`). A trailing tab is allowed.
pub fn is_pair_header(fields: &[&[u8]]) -> bool {
    let fields = match fields {
        [four @ .., last] if four.len() == 4 && last.is_empty() => four,
        f => f,
    };
    if fields.len() != 4 {
        return false;
    }
    if fields.iter().copied().eq(PAIR_COLUMNS.iter().map(|c| c.as_bytes())) {
        return true;
    }
    let names_sequences = |field: &[u8]| {
        let word = field.trim_ascii().to_ascii_lowercase();
        let bare = |w: &[u8]| matches!(w, b"seq" | b"seqs" | b"sequence" | b"sequences");
        bare(&word)
            || ["query_", "target_", "subject_", "q", "t", "s"]
                .iter()
                .any(|p| word.strip_prefix(p.as_bytes()).is_some_and(|rest| bare(rest)))
    };
    names_sequences(fields[1]) && names_sequences(fields[3])
}

/// Where `align` reads its pairs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairInput {
    /// Record i of `query` is aligned with record i of `target`.
    TwoFasta { query: PathBuf, target: PathBuf },
    /// One pair file (`-` = stdin): TSV (gzip allowed), Arrow IPC stream or file, or Parquet.
    File(PathBuf),
}

/// How to read a pair table (Arrow, Parquet): which columns hold the pairs, and which other
/// columns the output carries through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairColumns {
    /// Names of `query_id, query_seq, target_id, target_seq` in the input.
    pub names: [String; 4],
    /// Columns carried to the output; `None` = every column but the four.
    pub carry: Option<Vec<String>>,
}

impl Default for PairColumns {
    fn default() -> Self {
        PairColumns { names: PAIR_COLUMNS.map(String::from), carry: None }
    }
}

/// The default margin of `--window`: residues added on each side of a candidate's region.
pub const DEFAULT_WINDOW: usize = 200;

/// What a candidate list is (`--pairs-format`): told from content and name (`Auto`), or
/// PAF as named (a pipe, where nothing else tells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CandidateFormat {
    #[default]
    Auto,
    Paf,
}

/// How pair readers place candidates and what they hand out beside the residues; one
/// place for every reader option that is not a column name or a batch limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairOptions {
    /// The margin around a candidate's region (`--window MARGIN`): each side's residues in
    /// the batch are its region widened by the margin (`seq::window`); `None` (`--window
    /// full`): whole sequences. Applies to candidates that carry regions (PAF, region
    /// columns); their `PairBatch::frames` say where the windows sit.
    pub window: Option<usize>,
    /// The sides where windows first run along the candidate's diagonal to the sequences'
    /// borders (`seq::windows`): the mode's free ends (`Reach::default()`: neither).
    pub reach: Reach,
    /// The strands the run aligns each query on (`--strand`): the diagonal windows reach
    /// along.
    pub strand: StrandRule,
    /// Candidate tables (TSV with a header, Arrow, Parquet): the columns of the query's and
    /// the target's region, `[qstart, qend, tstart, tend]`, 0-based half-open.
    pub region_cols: Option<[String; 4]>,
    /// Candidate tables: the column of the query's strand (`+` or `-`).
    pub strand_col: Option<String>,
    pub format: CandidateFormat,
    /// Fill `PairBatch::query_text` (each query's whole sequence, letters) and
    /// `PairBatch::query_quals` (its FASTQ qualities; empty without) row for row, as SAM
    /// and BAM need them. Resident sets keep qualities only where `SetColumns::quals` asks.
    pub query_text: bool,
}

impl Default for PairOptions {
    fn default() -> Self {
        PairOptions {
            window: Some(DEFAULT_WINDOW),
            reach: Reach::default(),
            strand: StrandRule::default(),
            region_cols: None,
            strand_col: None,
            format: CandidateFormat::Auto,
            query_text: false,
        }
    }
}

impl PairOptions {
    /// Whether candidates are placed on regions or strands by columns of a table.
    fn placed_by_columns(&self) -> bool {
        self.region_cols.is_some() || self.strand_col.is_some()
    }
}

/// How large a batch may grow: pairs, and residues of both sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    pub pairs: usize,
    pub residues: usize,
}

/// A source of pairs that fills the caller's batches (noodles-style: the caller owns and
/// recycles the buffers). Ends after its first error; an input without pairs just ends.
pub trait PairReader: Send {
    /// The input columns carried through to the output (none for TSV and FASTA).
    fn carried(&self) -> Carried;

    /// Appends the next pairs to `batch` (empty on entry), up to the limits; false at the
    /// end of the input, with nothing added.
    fn fill(&mut self, batch: &mut PairBatch) -> Result<bool>;
}

/// What each format's reader does; [`Fused`] makes it a [`PairReader`].
trait Source: Send {
    fn carried(&self) -> Carried;

    /// Appends the next pairs; false at the end, with nothing added.
    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool>;
}

/// A reader that ends after its first error or at its end, whatever the format.
struct Fused<S> {
    source: S,
    done: bool,
}

impl<S: Source> PairReader for Fused<S> {
    fn carried(&self) -> Carried {
        self.source.carried()
    }

    fn fill(&mut self, batch: &mut PairBatch) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let result = self.source.next_pairs(batch);
        self.done = !matches!(result, Ok(true));
        result
    }
}

/// A reader whose batches get `query_text` (and empty `query_quals`) from their own query
/// residues where the source has not filled them (`PairOptions::query_text`; pairs with
/// their sequences inline: whole queries, no qualities).
struct WithText {
    inner: Box<dyn PairReader>,
    alphabet: Alphabet,
}

impl PairReader for WithText {
    fn carried(&self) -> Carried {
        self.inner.carried()
    }

    fn fill(&mut self, batch: &mut PairBatch) -> Result<bool> {
        let more = self.inner.fill(batch)?;
        if more && batch.query_text.is_empty() && batch.frames.is_empty() {
            whole_queries_from_batch(batch, self.alphabet)?;
        }
        Ok(more)
    }
}

/// `reader`, filling whole queries where `options` asks (`PairOptions::query_text`).
fn with_text(reader: Box<dyn PairReader>, alphabet: Alphabet, options: &PairOptions) -> Box<dyn PairReader> {
    match options.query_text {
        true => Box::new(WithText { inner: reader, alphabet }),
        false => reader,
    }
}

/// Fills `query_text` from the batch's own query residues (whole queries: no frames), and
/// `query_quals` with empty strings (inputs without qualities).
fn whole_queries_from_batch(batch: &mut PairBatch, alphabet: Alphabet) -> Result<()> {
    let seqs = batch.seqs.view();
    let n = seqs.len();
    let texts: Vec<Vec<u8>> =
        (0..n).into_par_iter().with_min_len(256).map(|i| alphabet.decode(seqs.pair(i).0)).collect();
    batch.query_text.extend_utf8_par_with(n, |i| &texts[i])?;
    batch.query_quals.extend_utf8_par_with(n, |_| b"")
}

fn fused(source: impl Source + 'static) -> Box<dyn PairReader> {
    Box::new(Fused { source, done: false })
}

/// Opens a pair input. Errors name the file, the pair number (1-based) and its id.
/// `options`: reader options (`query_text`: whole queries and FASTQ qualities
/// for SAM; the other options concern candidates by id).
pub fn open_pairs(
    input: &PairInput,
    alphabet: Alphabet,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    Ok(with_text(open_inline(input, alphabet, columns, limits, options)?, alphabet, options))
}

fn open_inline(
    input: &PairInput,
    alphabet: Alphabet,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    match input {
        PairInput::TwoFasta { query, target } => {
            if Where::from_arg(query) == Where::Stdin && Where::from_arg(target) == Where::Stdin {
                return Err(Error::usage("query and target cannot both be read from stdin ('-')"));
            }
            let text = options.query_text.then_some(alphabet);
            Ok(fused(fasta::FastaPairs::open(query, target, alphabet, limits, text)?))
        }
        PairInput::File(path) => {
            // Opened once and sniffed from its head: a pipe cannot be reopened.
            let raw = Head::open(path, 8)?;
            let place = raw.place.clone();
            let binary =
                [&crate::io::input::SWDB_MAGIC[..], b"BZh", &[0x28, 0xb5, 0x2f, 0xfd], &[0xfd, b'7', b'z'], b"PK"];
            if binary.iter().any(|m| raw.bytes.starts_with(m)) {
                let (kind, hint) = crate::io::input::kind_of(&raw.bytes).unwrap_or(("binary data", ""));
                let hint = match raw.bytes.starts_with(&crate::io::input::SWDB_MAGIC) {
                    true => {
                        "a database's sequences are given with --seqs or --target-seqs, the pairs by id with --pairs"
                    }
                    false => hint,
                };
                return Err(Error::file(&place, format!("this is {kind}, not a pair file: {hint}")));
            }
            if raw.is_plain_regular_file() && columns == &PairColumns::default() {
                // TSV in a file: read at offsets on the pool, no reading thread, no copy.
                let file = raw.into_regular_file()?.ok_or_else(|| Error::Internal("regular file gone".into()))?;
                return Ok(fused(tsv::TsvPairs::from_file(place, file, alphabet, limits)?));
            }
            let input = match table::open(raw, alphabet, columns, limits)? {
                Ok(reader) => return Ok(reader),
                Err(input) => input,
            };
            if columns != &PairColumns::default() {
                return Err(Error::usage(format!(
                    "{place}: column options apply to Arrow and Parquet pair tables, not TSV"
                )));
            }
            let input = skip_bom(&place, input)?;
            Ok(fused(tsv::TsvPairs::new(place, input, alphabet, limits)))
        }
    }
}

/// Pairs from a [`Table`] of record batches, read as a pair table file is (columns by name,
/// the others carried through).
pub fn open_pair_table(
    table: Table,
    alphabet: Alphabet,
    columns: &PairColumns,
    limits: BatchLimits,
) -> Result<Box<dyn PairReader>> {
    Ok(fused(table::TablePairs::new(table.place, table.schema, table.batches, alphabet, columns, limits)?))
}

/// Candidate pairs by id from a [`Table`], as [`open_pairs_by_id`] reads a candidate table.
/// `options`: reader options (region and strand columns, windows,
/// whole queries for SAM).
pub fn open_pairs_by_id_table(
    candidates: Table,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    by_id::from_table(candidates, query, target, columns, limits, options)
}

/// Opens candidate pairs by id (`-` = stdin: TSV of query id, target id, or an Arrow/Parquet
/// table with the id columns `columns` names and carried columns) against the resident sets
/// holding their sequences: query ids in `query`, target ids in `target` (the same set for
/// pairs within one set). Errors name the candidate file, the pair number and the id.
/// `options`: reader options: PAF candidates (told by content or name, or
/// named by `options.format`) with their regions and strands, region and strand columns
/// of candidate tables, the window around regions, whole queries and qualities for SAM.
pub fn open_pairs_by_id(
    candidates: &Path,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    by_id::open(candidates, query, target, columns, limits, true, options)
}

/// [`open_pairs_by_id`] for an engine that reads the sets where they are: batches hold
/// only the pairs' sequence numbers (`PairBatch::set_pairs`) and carried columns.
/// `options`: reader options: PAF and region or strand columns are
/// refused (their windows are gathered by [`open_pairs_by_id`]).
pub fn open_pair_numbers_by_id(
    candidates: &Path,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    by_id::open(candidates, query, target, columns, limits, false, options)
}

fn no_columns() -> Carried {
    Arc::new(Schema::empty())
}

/// Counts pairs handed out. An input without pairs simply ends: an empty workflow shard is
/// a valid input with an empty result (the caller says so on stderr).
struct Counter {
    pairs: u64,
}

impl Counter {
    fn end(&self, _place: &Where) -> Result<bool> {
        Ok(false)
    }
}

/// One pair's four raw fields, as the input holds them.
type Fields<'a> = [&'a [u8]; 4];

/// Appends `n` pairs to `batch`, pair `i` given by `fields(i)`: ids copied, residues
/// encoded in parallel straight into the batch's buffer (copied once). On a bad pair, the
/// error is exactly the one a pair-by-pair reader reports first, naming pair
/// `first + i + 1`; `context(i)` prefixes its problem (a TSV line number).
fn append_pairs<'a>(
    batch: &mut PairBatch,
    n: usize,
    fields: impl Fn(usize) -> std::result::Result<Fields<'a>, Error> + Sync,
    place: &Where,
    first: u64,
    context: impl Fn(usize) -> String + Sync,
    alphabet: Alphabet,
) -> Result<()> {
    // Pass 1: the first pair whose fields are missing or empty, found in parallel (a serial
    // pass over ids and sizes bounded a whole run of short pairs at ~8M pairs a second).
    let well_formed = |i: usize| matches!(fields(i), Ok(f) if f.iter().all(|v| !v.is_empty()) && !breaks_rows(f[0]) && !breaks_rows(f[2]));
    let bad = (0..n).into_par_iter().with_min_len(1024).find_first(|&i| !well_formed(i));
    let good = bad.unwrap_or(n);
    // Pass 1b: ids copied in parallel; sizes into the bounds (one add a pair).
    let field = |i: usize, k: usize| fields(i).map_or(&[][..], |f| f[k]);
    batch.query_ids.extend_par_with(good, |i| field(i, 0))?;
    batch.target_ids.extend_par_with(good, |i| field(i, 2))?;
    let seqs_start = batch.seqs.len();
    let base = batch.seqs.residues.len();
    let mut end = base;
    batch.seqs.bounds.reserve(2 * good);
    for i in 0..good {
        end += field(i, 1).len();
        batch.seqs.bounds.push(end);
        end += field(i, 3).len();
        batch.seqs.bounds.push(end);
    }
    // Pass 2, in parallel: residues into disjoint slices of one buffer (grown in parallel
    // too: a serial zero-fill of a block's residues cost as much as encoding them).
    batch.seqs.residues.par_extend(rayon::iter::repeat_n(0u8, end - base));
    let bounds = &batch.seqs.bounds[2 * seqs_start..];
    let mut slices: Vec<(usize, &mut [u8])> = Vec::with_capacity(good);
    let mut rest = &mut batch.seqs.residues[base..];
    for i in 0..good {
        let len = bounds[2 * i + 2] - bounds[2 * i];
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push((i, head));
        rest = tail;
    }
    let first_bad_residue = slices
        .par_iter_mut()
        .with_min_len(256)
        .filter_map(|(i, dst)| {
            let f = fields(*i).ok()?;
            let (q, t) = dst.split_at_mut(f[1].len());
            let ok = alphabet.encode_to_slice(f[1], q).is_ok() && alphabet.encode_to_slice(f[3], t).is_ok();
            (!ok).then_some(*i)
        })
        .min();
    let Some(i) = first_bad_residue.or(bad) else { return Ok(()) };
    // Every pair before `i` is good: the pair-by-pair checks of pair `i` say what is wrong.
    Err(match fields(i) {
        Err(e) => e,
        Ok(f) => check_pair(place, (first + i as u64) as usize, &context(i), f, alphabet),
    })
}

/// Ids become TSV fields: a tab or line break (possible in Arrow input) would break rows.
fn breaks_rows(id: &[u8]) -> bool {
    id.iter().any(|b| matches!(b, b'\t' | b'\n' | b'\r'))
}

/// The first problem of one pair's fields, in the order a reader meets them: ids, then
/// the query's residues, then the target's.
fn check_pair(place: &Where, index: usize, context: &str, f: Fields<'_>, alphabet: Alphabet) -> Error {
    let (query_id, target_id) = (f[0], f[2]);
    if query_id.is_empty() {
        return Error::record(place, index, "", format!("{context}query_id is empty"));
    }
    if target_id.is_empty() {
        return Error::record(place, index, query_id, format!("{context}target_id is empty"));
    }
    for (column, id) in [("query_id", f[0]), ("target_id", f[2])] {
        if breaks_rows(id) {
            return Error::record(place, index, query_id, format!("{context}{column} contains a tab or line break"));
        }
    }
    for (id, column, raw) in [(query_id, PAIR_COLUMNS[1], f[1]), (target_id, PAIR_COLUMNS[3], f[3])] {
        if raw.is_empty() {
            return Error::record(place, index, id, format!("{context}{column} is empty"));
        }
        if let Err(i) = alphabet.encode(raw) {
            let problem = format!("{context}{column}: {} at position {}", describe_residue(alphabet, raw[i]), i + 1);
            return Error::record(place, index, id, problem);
        }
    }
    Error::Internal(format!("{place}: pair {} was refused but has no problem", index + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 54, item 4: a header in other words is a header, not the pair `query`/`target`.
    #[test]
    fn headers_in_other_words_are_headers() {
        fn split(line: &str) -> Vec<&[u8]> {
            line.split('\t').map(str::as_bytes).collect()
        }
        for line in [
            "query_id\tquery_seq\ttarget_id\ttarget_seq",
            "query\tsequence\ttarget\tsequence",
            "id\tseq\tid\tseq",
            "qid\tqseq\tsid\tsseq",
            "Query\tQuery_Sequence\tTarget\tTarget_Sequence\t",
            "a\tSEQS\tb\tSequences",
        ] {
            assert!(is_pair_header(&split(line)), "{line}");
        }
        for line in ["q1\tMKV\tt1\tSEQ2", "q\tsequence\tt\tMKV", "query\tsequence\ttarget", "a\tseq\tb\tseq\tc"] {
            assert!(!is_pair_header(&split(line)), "{line}");
        }
    }
    use arrow::array::{ArrayRef, AsArray, Int64Array, LargeStringArray, RecordBatch, StringArray, StringViewArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::path::{Path, PathBuf};

    const P: Alphabet = Alphabet::Protein;

    /// A pair as read: ids and hand-encoded residues (NCBI order ARNDCQEGHILKMFPSTWYVBZX*).
    type Pair = ((String, Vec<u8>), (String, Vec<u8>));

    fn rec(id: &str, letters: &str) -> (String, Vec<u8>) {
        let order = b"ARNDCQEGHILKMFPSTWYVBZX*";
        let seq = letters.bytes().map(|l| order.iter().position(|&c| c == l).unwrap() as u8).collect();
        (id.into(), seq)
    }

    fn pair(q: (&str, &str), t: (&str, &str)) -> Pair {
        (rec(q.0, q.1), rec(t.0, t.1))
    }

    const ROOMY: BatchLimits = BatchLimits { pairs: 1 << 20, residues: 1 << 30 };

    /// Every pair of `input`, read in batches of at most `limits`, with the carried rows.
    fn read_with(
        input: &PairInput,
        columns: &PairColumns,
        limits: BatchLimits,
    ) -> Result<(Vec<Pair>, Vec<RecordBatch>)> {
        let mut reader = open_pairs(input, P, columns, limits, &PairOptions::default())?;
        let (mut pairs, mut carried) = (Vec::new(), Vec::new());
        let mut batch = PairBatch::default();
        loop {
            batch.clear();
            if !reader.fill(&mut batch)? {
                return Ok((pairs, carried));
            }
            assert!(batch.len() <= limits.pairs);
            assert_eq!(batch.first as usize, pairs.len());
            let seqs = batch.seqs.view();
            for i in 0..batch.len() {
                let (q, t) = seqs.pair(i);
                let ids = (batch.query_ids.get(i).to_string(), batch.target_ids.get(i).to_string());
                pairs.push(((ids.0, q.to_vec()), (ids.1, t.to_vec())));
            }
            assert_eq!(
                batch.carried.iter().map(|b| b.num_rows()).sum::<usize>(),
                if reader.carried().fields().is_empty() { 0 } else { batch.len() }
            );
            carried.append(&mut batch.carried);
        }
    }

    fn read(input: &PairInput) -> Result<Vec<Pair>> {
        // Batches of one pair too: every boundary crossed.
        let one = read_with(input, &PairColumns::default(), BatchLimits { pairs: 1, residues: 1 });
        let all = read_with(input, &PairColumns::default(), ROOMY);
        assert_eq!(
            one.as_ref().map(|r| &r.0).map_err(|e| e.to_string()),
            all.as_ref().map(|r| &r.0).map_err(|e| e.to_string())
        );
        all.map(|r| r.0)
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
        let msg = read(&PairInput::TwoFasta { query: good, target: bad.clone() }).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 2 (b): invalid residue '1' at position 2 (line 4)", bad.display()));
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
        assert!(msg.starts_with(&format!("{}: line 1: looks like FASTA", path.display())), "{}", msg);
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
        let path =
            write(dir.path(), "bad.tsv", b"query_id\tquery_seq\ttarget_id\ttarget_seq\nq1\tM\tt1\tK\nq2\tMK\tt2\n");
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
            format!("{}: record 2 (t2): line 3: target_seq: invalid residue '-' at position 3", path.display())
        );
        let path = write(dir.path(), "emp.tsv", b"q1\t\tt1\tK\n");
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 1 (q1): line 1: query_seq is empty", path.display()));
        // No pairs (a header and blank lines) is a valid, empty input.
        let path = write(dir.path(), "none.tsv", b"query_id\tquery_seq\ttarget_id\ttarget_seq\n\n");
        assert_eq!(read(&PairInput::File(path)).unwrap().len(), 0);
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
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
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
        let cols: Vec<ArrayRef> = vec![Arc::new(StringArray::from(vec!["q"])), Arc::new(StringArray::from(vec!["M"]))];
        let data = arrow_stream(&[RecordBatch::try_new(schema, cols).unwrap()]);
        let path = write(dir.path(), "cols.arrows", &data);
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: missing columns query_seq, target_id (pair input needs query_id, query_seq, target_id, target_seq; it has query_id, target_seq; name others with --query-col, --target-col, --query-id-col, --target-id-col)",
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
            vec![col(vec![Some("q1")]), col(vec![Some("M.K")]), col(vec![Some("t1")]), col(vec![Some("W")])],
        )
        .unwrap();
        let path = write(dir.path(), "dot.arrows", &arrow_stream(&[batch]));
        let msg = read(&PairInput::File(path.clone())).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: record 1 (q1): query_seq: invalid residue '.' at position 2", path.display()));
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
        let data = arrow_stream(&[pair_batch(DataType::Utf8, &rows), pair_batch(DataType::Utf8, &rows)]);
        let path = write(dir.path(), "cut.arrows", &data[..data.len() - 100]);
        let result = read(&PairInput::File(path.clone()));
        let err = result.unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(msg.starts_with(&format!("{}: bad Arrow IPC data after 200 rows", path.display())), "{}", msg);
    }

    fn parquet_file(batches: &[RecordBatch]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batches[0].schema(), None).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.close().unwrap();
        out
    }

    #[test]
    fn parquet_pairs_read_by_content_from_a_file_and_from_stdin_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [["q1", "MKV", "t1", "MKW"], ["q2", "W", "t2", "a"]];
        let data = parquet_file(&[pair_batch(DataType::Utf8, &rows), pair_batch(DataType::Utf8, &rows[1..])]);
        // A misleading name: detection goes by content.
        let path = write(dir.path(), "pairs.tsv", &data);
        let want =
            vec![pair(("q1", "MKV"), ("t1", "MKW")), pair(("q2", "W"), ("t2", "A")), pair(("q2", "W"), ("t2", "A"))];
        assert_eq!(read(&PairInput::File(path)).unwrap(), want);
        // Gzip-compressed Parquet goes through the buffered path.
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&data).unwrap();
        let path = write(dir.path(), "pairs.parquet.gz", &enc.finish().unwrap());
        assert_eq!(read(&PairInput::File(path)).unwrap(), want);
    }

    #[test]
    fn named_columns_and_carried_columns_travel_row_for_row() {
        let dir = tempfile::tempdir().unwrap();
        let n = 25;
        let ids: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        let seqs: Vec<&str> = (0..n).map(|i| ["MKV", "W", "ACDEFG"][i % 3]).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("key", DataType::Int64, false),
            Field::new("a", DataType::Utf8, false),
            Field::new("b", DataType::Utf8, false),
            Field::new("score", DataType::Utf8, false),
            Field::new("sa", DataType::Utf8, false),
            Field::new("sb", DataType::Utf8, false),
        ]));
        let strs = |v: Vec<&str>| -> ArrayRef { Arc::new(StringArray::from(v)) };
        let batch = |range: std::ops::Range<usize>| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from_iter_values(range.clone().map(|i| 1000 + i as i64))),
                    strs(range.clone().map(|i| ids[i].as_str()).collect()),
                    strs(range.clone().map(|i| ids[n - 1 - i].as_str()).collect()),
                    strs(range.clone().map(|_| "input score").collect()),
                    strs(range.clone().map(|i| seqs[i]).collect()),
                    strs(range.clone().map(|i| seqs[n - 1 - i]).collect()),
                ],
            )
            .unwrap()
        };
        let path = write(dir.path(), "named.parquet", &parquet_file(&[batch(0..10), batch(10..n)]));
        let stream = write(dir.path(), "named.arrows", &arrow_stream(&[batch(0..7), batch(7..n)]));
        let columns = PairColumns { names: ["a", "sa", "b", "sb"].map(String::from), carry: None };
        for input in [PairInput::File(path.clone()), PairInput::File(stream)] {
            for limits in [ROOMY, BatchLimits { pairs: 4, residues: 1 << 20 }, BatchLimits { pairs: 100, residues: 5 }]
            {
                let (pairs, carried) = read_with(&input, &columns, limits).unwrap();
                assert_eq!(pairs.len(), n);
                for (i, p) in pairs.iter().enumerate() {
                    assert_eq!(p, &pair((&ids[i], seqs[i]), (&ids[n - 1 - i], seqs[n - 1 - i])));
                }
                let all = arrow::compute::concat_batches(&carried[0].schema(), &carried).unwrap();
                let names: Vec<String> = all.schema().fields().iter().map(|f| f.name().clone()).collect();
                assert_eq!(names, ["key", "input_score"]);
                let keys: Vec<i64> = all.column(0).as_primitive::<arrow::datatypes::Int64Type>().values().to_vec();
                assert_eq!(keys, (0..n as i64).map(|i| 1000 + i).collect::<Vec<_>>());
            }
        }
        // Only the named carried columns; an unknown one is an error naming it.
        let only = PairColumns { carry: Some(vec!["key".into()]), ..columns.clone() };
        let (_, carried) = read_with(&PairInput::File(path.clone()), &only, ROOMY).unwrap();
        assert_eq!(carried[0].num_columns(), 1);
        let none = PairColumns { carry: Some(vec![]), ..columns.clone() };
        let (_, carried) = read_with(&PairInput::File(path.clone()), &none, ROOMY).unwrap();
        assert!(carried.is_empty());
        let bad = PairColumns { carry: Some(vec!["nope".into()]), ..columns };
        let msg = read_with(&PairInput::File(path.clone()), &bad, ROOMY).err().unwrap().to_string();
        assert_eq!(msg, format!("{}: --carry: no column 'nope' in the input", path.display()));
    }

    #[test]
    fn column_options_on_tsv_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "p.tsv", b"q\tM\tt\tK\n");
        let columns = PairColumns { names: ["a", "b", "c", "d"].map(String::from), carry: None };
        let msg = read_with(&PairInput::File(path), &columns, ROOMY).err().unwrap().to_string();
        assert!(msg.ends_with("column options apply to Arrow and Parquet pair tables, not TSV"), "{msg}");
    }
}

//! The writers: one schema for every format (Arrow IPC stream and file, Parquet, TSV, BLAST
//! tabular), written in batches by a pipeline's last stage.
//!
//! Columns ([`columns`]): by default `query`, `target` (utf8), `score` (int32), `bits`,
//! `evalue` (float64, the only nullable columns: null when no Karlin-Altschul parameters are
//! known), `qstart`, `qend`, `tstart`, `tend`, `qlen`, `tlen` (int32, coordinates 1-based
//! inclusive), `recomputed` (bool), and in search mode only `rank` (int32, 1 = best hit of that
//! query); BLAST tabular's default is `-outfmt 6`'s twelve. `--columns` chooses any of the
//! registry's columns, traceback ones included, for every format.
//!
//! File outputs are atomic ([`crate::atomic`]): bytes go to a unique temporary name beside
//! the target and are renamed onto it by [`ResultWriter::finish`]; a writer dropped without
//! `finish` (an error happened) deletes its temporary file, so no partial file is ever left
//! under the output name. Devices and FIFOs given as `-o` are written directly.
//!
//! A closed pipe on standard output (`swarrow ... | head`) surfaces as an [`Error::Io`] whose
//! source has kind `BrokenPipe`; [`is_broken_pipe`] recognises it so the caller can stop quietly
//! with exit status 0.

mod batch;
mod bgzf;
pub mod columns;
mod filter;
mod format;
mod ipc;
pub mod mapping;
mod paf;
mod pq;
mod sam;
mod sink;
mod table;
mod text;

pub use batch::{schema, schema_with_metadata, ResultBatch, ResultRow, Value};
pub use columns::{Column, Columns, Need};
pub use filter::{ThresholdValues, Thresholds};
pub use format::{default_format_note, resolve_format, Format, Stdout, PIPE_NOTE};
pub use paf::gap_compressed_divergence;
pub use sam::BAM_PROTEIN;
pub use sink::OutputTime;
pub use table::{create_table_writer, table_batches, TableWriter};
pub use text::{blast_bitscore, blast_evalue};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};

use crate::error::{Error, Result};

/// Which pipeline produced the rows: search results carry a `rank` column, align results not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Search,
    Align,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Search => "search",
            Mode::Align => "align",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Key/value facts about the run (swarrow version, mode, scoring, gap costs, database name,
/// residues and sequences, search-space rule, ...), filled by the caller. Stored as Arrow schema
/// metadata (IPC stream and file, and Parquet through the embedded Arrow schema) and as Parquet
/// key-value metadata. TSV and BLAST outputs stay clean: no comment lines (but BLAST's own
/// in `-outfmt 7`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunMetadata(pub Vec<(String, String)>);

impl RunMetadata {
    pub fn new() -> Self {
        RunMetadata(Vec::new())
    }

    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.0.push((key.into(), value.into()));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The `engine` key: the engine's name without its thread count (`cpu-simd avx2 (8
    /// threads)` is recorded as `cpu-simd avx2`), so that an output's bytes are the same
    /// whatever `--threads` is (workflow caches checksum them).
    pub fn push_engine(&mut self, name: &str) {
        self.push("engine", without_thread_count(name));
    }
}

/// `name` without a ` (N threads)` part, or the `, N threads` of a longer parenthesis.
fn without_thread_count(name: &str) -> String {
    let Some(open) = name.rfind('(') else { return name.to_string() };
    let Some(inner) = name[open + 1..].strip_suffix(')') else { return name.to_string() };
    let parts: Vec<&str> = inner.split(", ").collect();
    let is_threads = |p: &&str| {
        p.strip_suffix(" threads").or_else(|| p.strip_suffix(" thread")).is_some_and(|n| n.parse::<usize>().is_ok())
    };
    let kept: Vec<&str> = parts.iter().filter(|p| !is_threads(p)).copied().collect();
    if kept.len() == parts.len() {
        return name.to_string();
    }
    match kept.is_empty() {
        true => name[..open].trim_end().to_string(),
        false => format!("{}({})", &name[..open], kept.join(", ")),
    }
}

/// What the alignment formats (PAF, SAM, BAM) need beyond the rows; the other formats
/// ignore it.
#[derive(Debug, Clone, Default)]
pub struct AlignmentOutput {
    /// `--eqx`: `=`/`X` in PAF's `cg:Z` and SAM's CIGAR instead of `M`.
    pub eqx: bool,
    /// SAM/BAM: the targets' (name, length), in the target set's order, where they are known
    /// before the rows (pairs by id); `None`: the header lists the targets the rows name
    /// (records are spooled until the end).
    pub targets: Option<Arc<Vec<(Vec<u8>, usize)>>>,
    /// SAM's `@PG CL`.
    pub command_line: String,
    /// The scoring's alphabet (BAM refuses protein; SAM's `N` rule is DNA's).
    pub alphabet: Option<crate::scoring::Alphabet>,
}

impl AlignmentOutput {
    /// The process's command line, as `@PG CL` records it (arguments joined by spaces).
    pub fn command_line_of_process() -> String {
        std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }
}

/// A format's refusal of an alphabet, before anything runs: BAM of protein alignments.
pub fn check_format_alphabet(format: Format, alphabet: crate::scoring::Alphabet) -> Result<()> {
    if format == Format::Bam && alphabet == crate::scoring::Alphabet::Protein {
        return Err(Error::usage(BAM_PROTEIN));
    }
    Ok(())
}

/// One output, written batch by batch. `finish` must be called for the output to be complete:
/// it writes footers, flushes and (for files) renames the temporary file onto the target.
pub trait ResultWriter: Send {
    fn write(&mut self, batch: &ResultBatch) -> Result<()>;
    /// [`ResultWriter::write`] of rows the caller gives away: a writer that holds batches
    /// (grouping a read's rows across batches, [`mapping::Grouped`]) keeps them uncopied.
    fn write_owned(&mut self, batch: ResultBatch) -> Result<()> {
        self.write(&batch)
    }
    fn finish(self: Box<Self>) -> Result<()>;
    /// The time its output takes bytes, for outputs into a file or pipe.
    fn output_time(&self) -> Option<OutputTime> {
        None
    }
    /// The writer's encoding of rows, where it keeps no state between batches: a pipeline
    /// may run it on its own workers (several batches at once) and hand the bytes to
    /// [`ResultWriter::write_encoded`] in order, so that its write stage only puts bytes out.
    fn encoder(&self) -> Option<Arc<dyn RowEncoder>> {
        None
    }
    /// Writes a batch that this writer's [`ResultWriter::encoder`] encoded.
    fn write_encoded(&mut self, _bytes: &[u8]) -> Result<()> {
        Err(Error::Internal("rows encoded for a writer without an encoder".into()))
    }
    /// Writes `rows`, encoded or not.
    fn write_rows(&mut self, rows: Rows) -> Result<()> {
        match rows {
            Rows::Batch(batch) => self.write_owned(*batch),
            Rows::Encoded { bytes, .. } => self.write_encoded(&bytes),
        }
    }
}

/// Encodes a batch of rows as a writer writes them (TSV and BLAST tabular lines), on any
/// thread ([`ResultWriter::encoder`]).
pub trait RowEncoder: Send + Sync {
    fn encode(&self, batch: &ResultBatch) -> Result<Vec<u8>>;
}

/// A batch of rows on its way to a writer: as they are, or already encoded by the writer's
/// [`RowEncoder`].
pub enum Rows {
    Batch(Box<ResultBatch>),
    Encoded { rows: usize, bytes: Vec<u8> },
}

impl Rows {
    /// `batch`, encoded by `encoder` where there is one.
    pub fn encoded(batch: ResultBatch, encoder: Option<&dyn RowEncoder>) -> Result<Rows> {
        Ok(match encoder {
            Some(e) => Rows::Encoded { rows: batch.len(), bytes: e.encode(&batch)? },
            None => Rows::Batch(Box::new(batch)),
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Rows::Batch(batch) => batch.len(),
            Rows::Encoded { rows, .. } => *rows,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows formatted per task by [`encode_lines`]: large enough that a task's overhead
/// vanishes, small enough that a batch spreads over every core.
const ROWS_PER_TASK: usize = 4096;

/// Rows `0..n` as text, `line(text, i)` appending row `i`: formatted on every core (numbers
/// printed one by one, ~1 us a row, bound text outputs), in pieces concatenated in order.
pub(crate) fn encode_lines(
    n: usize,
    bytes_per_row: usize,
    line: impl Fn(&mut String, usize) -> Result<()> + Sync,
) -> Result<Vec<u8>> {
    use rayon::prelude::*;
    let texts: Vec<String> = (0..n.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .map(|k| {
            let rows = k * ROWS_PER_TASK..((k + 1) * ROWS_PER_TASK).min(n);
            let mut text = String::with_capacity(rows.len() * bytes_per_row);
            for i in rows {
                line(&mut text, i)?;
            }
            Ok(text)
        })
        .collect::<Result<_>>()?;
    let mut bytes = Vec::with_capacity(texts.iter().map(String::len).sum());
    for text in &texts {
        bytes.extend_from_slice(text.as_bytes());
    }
    Ok(bytes)
}

/// What a run says once, just before its output takes its first results (or is finished
/// empty): the note that standard output got an Arrow IPC stream only because it is a pipe.
/// An input error found before then is shown alone.
pub type Announcement = Box<dyn FnOnce() + Send>;

/// `inner`, saying `announcement` (if any) before its first write or its finish.
pub struct Announced<W: ?Sized> {
    inner: Box<W>,
    announcement: Option<Announcement>,
}

impl<W: ?Sized> Announced<W> {
    pub fn new(inner: Box<W>, announcement: Option<Announcement>) -> Announced<W> {
        Announced { inner, announcement }
    }

    fn announce(&mut self) {
        if let Some(say) = self.announcement.take() {
            say();
        }
    }
}

impl ResultWriter for Announced<dyn ResultWriter> {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        self.announce();
        self.inner.write(batch)
    }
    fn write_owned(&mut self, batch: ResultBatch) -> Result<()> {
        self.announce();
        self.inner.write_owned(batch)
    }
    fn finish(mut self: Box<Self>) -> Result<()> {
        self.announce();
        self.inner.finish()
    }
    fn output_time(&self) -> Option<OutputTime> {
        self.inner.output_time()
    }
    fn encoder(&self) -> Option<Arc<dyn RowEncoder>> {
        self.inner.encoder()
    }
    fn write_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.announce();
        self.inner.write_encoded(bytes)
    }
}

impl TableWriter for Announced<dyn TableWriter> {
    fn write(&mut self, batch: &arrow::array::RecordBatch) -> Result<()> {
        self.announce();
        self.inner.write(batch)
    }
    fn finish(mut self: Box<Self>) -> Result<()> {
        self.announce();
        self.inner.finish()
    }
}

/// The writer for `format`, writing to `output` (a path; `None` or `-` = standard output).
/// A file output's directory is checked now: missing or not writable -> `Error::Input`.
pub fn create_writer(
    format: Format,
    mode: Mode,
    metadata: &RunMetadata,
    output: Option<&Path>,
) -> Result<Box<dyn ResultWriter>> {
    create_writer_carrying(format, &Columns::default_for(mode, format), &Schema::empty(), metadata, output)
}

/// [`create_writer`] for the chosen `columns`, followed by input columns carried through
/// (`carried`: their fields, as [`crate::io::PairReader::carried`] names them). BLAST tabular
/// leaves carried columns out.
pub fn create_writer_carrying(
    format: Format,
    columns: &Columns,
    carried: &Schema,
    metadata: &RunMetadata,
    output: Option<&Path>,
) -> Result<Box<dyn ResultWriter>> {
    create_writer_with(format, columns, carried, metadata, output, &AlignmentOutput::default())
}

/// [`create_writer_carrying`] with what PAF, SAM and BAM need (`alignment`). PAF, SAM and
/// BAM leave carried columns out.
pub fn create_writer_with(
    format: Format,
    columns: &Columns,
    carried: &Schema,
    metadata: &RunMetadata,
    output: Option<&Path>,
    alignment: &AlignmentOutput,
) -> Result<Box<dyn ResultWriter>> {
    match format {
        Format::Tsv => text::check_carried_text(carried)?,
        Format::Parquet => pq::check_carried_parquet(carried)?,
        _ => {}
    }
    if let Some(alphabet) = alignment.alphabet {
        check_format_alphabet(format, alphabet)?;
    }
    let mut writer = lazy_on(sink::Sink::open(output)?, format, columns, carried, metadata);
    if let Some(p) = writer.pending.as_mut() {
        p.output = output.map(Path::to_path_buf);
        p.alignment = alignment.clone();
        writer.encoder = encoder_of(format, columns);
    }
    Ok(grouped(writer, format, columns, alignment))
}

/// `writer`, its rows grouped by read and decided ([`mapping`]) where `format` or `columns`
/// need the decisions: PAF, SAM, BAM, and the `mapq` and `flag` columns.
fn grouped(
    writer: Box<dyn ResultWriter>,
    format: Format,
    columns: &Columns,
    alignment: &AlignmentOutput,
) -> Box<dyn ResultWriter> {
    match format {
        Format::Sam | Format::Bam => Box::new(mapping::Grouped::new(writer, Some(sam::sa_maker(alignment)))),
        Format::Paf => Box::new(mapping::Grouped::new(writer, None)),
        _ if columns.are_decided() => Box::new(mapping::Grouped::new(writer, None)),
        _ => writer,
    }
}

/// What receives the record batches of an in-memory output (the Python package hands them
/// to its caller); an error stops the run.
pub type Deliver = Box<dyn FnMut(RecordBatch) -> Result<()> + Send>;

/// An output that is no file: each batch of rows becomes a record batch of the returned
/// schema ([`schema_with_metadata`] of `columns`, `carried` and `metadata`, as every Arrow
/// output has it) handed to `deliver`.
pub fn batch_writer(
    columns: &Columns,
    carried: &Schema,
    metadata: &RunMetadata,
    deliver: Deliver,
) -> (SchemaRef, Box<dyn ResultWriter>) {
    let schema = schema_with_metadata(columns, carried, metadata);
    let writer = Batches { columns: columns.clone(), schema: schema.clone(), deliver };
    (schema, grouped(Box::new(writer), Format::ArrowStream, columns, &AlignmentOutput::default()))
}

struct Batches {
    columns: Columns,
    schema: SchemaRef,
    deliver: Deliver,
}

impl ResultWriter for Batches {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        (self.deliver)(batch.to_record_batch(&self.columns, &self.schema)?)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

fn lazy_on(sink: sink::Sink, format: Format, columns: &Columns, carried: &Schema, metadata: &RunMetadata) -> Box<Lazy> {
    let pending = Pending {
        sink,
        format,
        columns: columns.clone(),
        carried: carried.clone(),
        metadata: metadata.clone(),
        output: None,
        alignment: AlignmentOutput::default(),
    };
    let output_time = pending.sink.status().output_time;
    let encoder = encoder_of(format, columns);
    Box::new(Lazy { pending: Some(pending), started: None, output_time, encoder })
}

/// The encoder of the writer of `format` ([`ResultWriter::encoder`]), for the formats that
/// keep no state between batches: TSV, BLAST tabular without comments.
fn encoder_of(format: Format, columns: &Columns) -> Option<Arc<dyn RowEncoder>> {
    let c = columns.clone();
    match format {
        Format::Tsv => Some(Arc::new(text::TextEncoder { columns: c, style: text::Style::Tsv })),
        Format::Blast => Some(Arc::new(text::TextEncoder { columns: c, style: text::Style::Blast })),
        // PAF keeps to its writer: its lines take per-read decisions made across batches.
        _ => None,
    }
}

/// What a writer needs to start.
struct Pending {
    sink: sink::Sink,
    format: Format,
    columns: Columns,
    carried: Schema,
    metadata: RunMetadata,
    /// The output's path (SAM/BAM spool their records beside it).
    output: Option<PathBuf>,
    alignment: AlignmentOutput,
}

/// A writer that starts its encoder (schema, magic bytes, header line) with the first batch,
/// or at `finish` for an empty result: a run that fails before its first results (a bad
/// input found while reading it) leaves standard output untouched, never a Parquet magic or
/// a header alone.
struct Lazy {
    pending: Option<Pending>,
    started: Option<Box<dyn ResultWriter>>,
    output_time: OutputTime,
    /// The writer's encoder, known before it starts.
    encoder: Option<Arc<dyn RowEncoder>>,
}

impl Lazy {
    fn started(&mut self) -> Result<&mut Box<dyn ResultWriter>> {
        if let Some(p) = self.pending.take() {
            self.started = Some(writer_on_with(
                p.sink,
                p.format,
                &p.columns,
                &p.carried,
                &p.metadata,
                p.output.as_deref(),
                &p.alignment,
            )?);
        }
        self.started.as_mut().ok_or_else(|| Error::Internal("writer used after it failed to start".into()))
    }
}

impl ResultWriter for Lazy {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        self.started()?.write(batch)
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.started()?;
        match self.started.take() {
            Some(writer) => writer.finish(),
            None => Err(Error::Internal("writer not started".into())),
        }
    }

    fn output_time(&self) -> Option<OutputTime> {
        Some(self.output_time.clone())
    }

    fn encoder(&self) -> Option<Arc<dyn RowEncoder>> {
        self.encoder.clone()
    }

    fn write_encoded(&mut self, bytes: &[u8]) -> Result<()> {
        self.started()?.write_encoded(bytes)
    }
}

#[cfg(test)]
fn writer_on(
    sink: sink::Sink,
    format: Format,
    columns: &Columns,
    carried: &Schema,
    metadata: &RunMetadata,
) -> Result<Box<dyn ResultWriter>> {
    let alignment = AlignmentOutput::default();
    let writer = writer_on_with(sink, format, columns, carried, metadata, None, &alignment)?;
    Ok(grouped(writer, format, columns, &alignment))
}

fn writer_on_with(
    sink: sink::Sink,
    format: Format,
    columns: &Columns,
    carried: &Schema,
    metadata: &RunMetadata,
    output: Option<&Path>,
    alignment: &AlignmentOutput,
) -> Result<Box<dyn ResultWriter>> {
    let carried = if format.is_blast_tabular() { Schema::empty() } else { carried.clone() };
    let schema = schema_with_metadata(columns, &carried, metadata);
    let c = columns.clone();
    Ok(match format {
        Format::ArrowStream => Box::new(ipc::ArrowStreamWriter::new(sink, c, schema)?),
        Format::ArrowFile => Box::new(ipc::ArrowFileWriter::new(sink, c, schema)?),
        Format::Parquet => Box::new(pq::ParquetWriter::new(sink, c, schema, metadata)?),
        Format::Tsv => Box::new(text::TextWriter::new(sink, c, schema, text::Style::Tsv)?),
        Format::Blast => Box::new(text::TextWriter::new(sink, c, schema, text::Style::Blast)?),
        Format::BlastCommented => {
            let database = metadata.iter().find(|(k, _)| *k == "database").map_or("", |(_, v)| v);
            Box::new(text::TextWriter::new(sink, c, schema, text::Style::Blast)?.with_comments(database))
        }
        Format::Paf => Box::new(paf::PafWriter::new(sink, c.contains(Column::Cigar), alignment.eqx)),
        Format::Sam => Box::new(sam::SamWriter::new(sink, sam::Kind2::Sam, alignment, output)?),
        Format::Bam => Box::new(sam::SamWriter::new(sink, sam::Kind2::Bam, alignment, output)?),
    })
}

/// True when `err` means the reader of standard output went away (`| head`): the caller should
/// stop writing and exit 0 without a message.
pub fn is_broken_pipe(err: &Error) -> bool {
    matches!(err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    #[test]
    fn engine_metadata_has_no_thread_count() {
        use super::without_thread_count as w;
        assert_eq!(w("cpu-simd avx2 (8 threads)"), "cpu-simd avx2");
        assert_eq!(w("cpu-scalar (1 thread)"), "cpu-scalar");
        assert_eq!(w("cpu-scalar (double, 16 threads)"), "cpu-scalar (double)");
        assert_eq!(w("cuda (2 x NVIDIA H100)"), "cuda (2 x NVIDIA H100)");
        assert_eq!(w("plain"), "plain");
    }

    use super::*;
    use std::io::{self, Write};

    /// Standard output whose reader has gone away: every write fails with EPIPE.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
    }

    fn one_row() -> ResultBatch {
        let mut batch = ResultBatch::new();
        batch.push(ResultRow {
            query: "q",
            target: "t",
            score: 5,
            bits: None,
            evalue: None,
            qstart: 1,
            qend: 2,
            tstart: 1,
            tend: 2,
            qlen: 2,
            tlen: 2,
            recomputed: false,
            rank: 1,
        });
        // The path too, so that every format, PAF and SAM included, writes the row.
        batch.push_stats(crate::engine::traceback::PathStats {
            length: 2,
            nident: 2,
            mismatch: 0,
            gapopen: 0,
            gaps: 0,
        });
        batch.push_path("2=", "AC", "AC").unwrap();
        batch.push_query("q", 1);
        batch.number_queries(0).unwrap();
        batch
    }

    // Arrow and parquet wrap I/O errors in their own types; the writer must still report a
    // closed pipe as one, whichever format, so the binary can exit 0 quietly.
    #[test]
    fn closed_pipe_is_reported_as_broken_pipe_in_every_format() {
        for (format, _) in Format::ALL {
            let sink = sink::Sink::test(Box::new(ClosedPipe));
            // Score and coordinate columns (one_row has no traceback) in every format.
            let columns = Columns::default_for(Mode::Search, Format::Tsv);
            let error = match writer_on(sink, format, &columns, &Schema::empty(), &RunMetadata::new()) {
                Err(e) => e,
                Ok(mut writer) => match writer.write(&one_row()) {
                    Err(e) => e,
                    Ok(()) => writer.finish().expect_err("writing into a closed pipe succeeded"),
                },
            };
            assert!(is_broken_pipe(&error), "{format}: {error:?}");
            assert_eq!(error.exit_code(), 1, "{format}");
        }
    }

    /// Standard output that keeps what it was given.
    #[derive(Clone, Default)]
    struct Kept(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Kept {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    // A run that fails before its first batch leaves standard output empty; an empty result
    // is still a complete output (Parquet magic at both ends, the TSV header).
    #[test]
    fn nothing_reaches_stdout_before_the_first_batch_and_an_empty_result_is_complete() {
        let columns = Columns::default_for(Mode::Search, Format::Tsv);
        for (format, _) in Format::ALL {
            let kept = Kept::default();
            let writer = lazy_on(
                sink::Sink::test(Box::new(kept.clone())),
                format,
                &columns,
                &Schema::empty(),
                &RunMetadata::new(),
            );
            drop(writer);
            assert!(kept.0.lock().unwrap().is_empty(), "{format}: bytes before the first batch");
            let kept = Kept::default();
            let writer = lazy_on(
                sink::Sink::test(Box::new(kept.clone())),
                format,
                &columns,
                &Schema::empty(),
                &RunMetadata::new(),
            );
            writer.finish().unwrap();
            let bytes = kept.0.lock().unwrap().clone();
            match format {
                Format::Parquet => assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1") && bytes.len() > 8),
                Format::Tsv => {
                    assert!(bytes.starts_with(b"query\ttarget\tscore\t") && bytes.ends_with(b"rank\tqnum\n"))
                }
                Format::Blast => assert!(bytes.is_empty()),
                Format::BlastCommented => assert_eq!(bytes, b"# BLAST processed 0 queries\n"),
                Format::Paf => assert!(bytes.is_empty()),
                Format::Sam => assert!(bytes.starts_with(b"@HD\tVN:1.6\tSO:unsorted\n@PG\tID:swarrow"), "{bytes:?}"),
                Format::Bam => assert!(bytes.starts_with(&[0x1f, 0x8b]) && bytes.len() > 28),
                _ => assert!(!bytes.is_empty(), "{format}"),
            }
        }
    }

    // Text rows are formatted in pieces on several threads: every row, once, in order, across
    // pieces and batches (expected lines built here with format!, not by the writer's code).
    #[test]
    fn text_rows_come_out_in_order_across_formatting_pieces() {
        let columns = Columns::parse("query,target,score,qstart,bits", Mode::Align).unwrap();
        let kept = Kept::default();
        let mut writer = writer_on(
            sink::Sink::test(Box::new(kept.clone())),
            Format::Tsv,
            &columns,
            &Schema::empty(),
            &RunMetadata::new(),
        )
        .unwrap();
        let mut expected = String::new();
        let mut next = 0usize;
        for rows in [1usize, 10_000, 4096, 8193] {
            let mut batch = ResultBatch::new();
            let ids: Vec<(String, String)> = (next..next + rows).map(|i| (format!("q{i}"), format!("t{i}"))).collect();
            for (k, (q, t)) in ids.iter().enumerate() {
                let i = (next + k) as i32;
                let bits = Some(i as f64 / 8.0);
                batch.push(ResultRow { query: q, target: t, score: i, qstart: i % 7, bits, ..one_row().row(0) });
                expected.push_str(&format!("{q}\t{t}\t{i}\t{}\t{:.1}\n", i % 7, i as f64 / 8.0));
            }
            writer.write(&batch).unwrap();
            next += rows;
        }
        writer.finish().unwrap();
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        let body = text.split_once('\n').unwrap().1;
        assert_eq!(body.lines().count(), next);
        assert!(body == expected, "rows out of order or missing");
    }

    #[test]
    fn other_errors_are_not_broken_pipes() {
        assert!(!is_broken_pipe(&Error::io("x", io::Error::from(io::ErrorKind::Other))));
        assert!(!is_broken_pipe(&Error::Internal("x".into())));
    }
}

//! `swarrow._swarrow`: the Python package's native module. Tables come in and go out through
//! the Arrow C stream interface (the `__arrow_c_stream__` PyCapsule protocol), so pyarrow,
//! Polars, DuckDB and Spark data reach the engines without a copy of their columns; carried
//! columns leave as the very buffers that came in. Everything else is the library's: the
//! readers of pair, candidate and sequence tables, [`swarrow::session`]'s scoring checks,
//! engine and metadata, the pipelines, and the output columns. Engines run with the GIL
//! released. The Python layer (`python/swarrow/__init__.py`) adds the module-level
//! functions and input conversions.

use std::ffi::OsString;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow::array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow::datatypes::SchemaRef;
use arrow::ffi_stream::RecordBatchStreamReader;
use arrow_pyarrow::{FromPyArrow, IntoPyArrow, ToPyArrow};
use clap::ValueEnum;
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use swarrow::engine::{self, Device, EngineOptions};
use swarrow::io::{self, PairColumns, PairReader, SeqSet, SetColumns, Table};
use swarrow::output::{self, Columns, Format, Mode, ResultWriter, ThresholdValues, Thresholds};
use swarrow::pipeline::orient::StrandRule;
use swarrow::progress::Progress;
use swarrow::scoring::stats::EvalueModel;
use swarrow::scoring::{Alphabet, Matrix, Scoring};
use swarrow::session::{self, AlignScoring, SearchSettings};

create_exception!(
    _swarrow,
    SwarrowError,
    PyValueError,
    "A swarrow error (bad input or options, or an engine failure), with the command line's message."
);

fn err(e: swarrow::Error) -> PyErr {
    SwarrowError::new_err(keyword_names(&e.to_string()))
}

/// The command line's options that Python takes as keyword arguments of the same meaning.
const KEYWORDS: [&str; 20] = [
    "query-col",
    "target-col",
    "query-id-col",
    "target-id-col",
    "seqs-id-col",
    "seqs-col",
    "seqs",
    "target-seqs",
    "carry",
    "columns",
    "gap-open",
    "gap-extend",
    "min-score",
    "min-bits",
    "max-evalue",
    "min-pident",
    "min-qcov",
    "min-tcov",
    "mode",
    "free-ends",
];

/// `message` (the command line's) with the options it names spelt as Python's keyword
/// arguments: `--query-col` becomes `query_col=` (`columns:` where a message starts with
/// `--columns:`); other options stay as they are.
fn keyword_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let len = after.find(|c: char| !(c.is_ascii_lowercase() || c == '-')).unwrap_or(after.len());
        let name = after[..len].trim_end_matches('-');
        if KEYWORDS.contains(&name) {
            out.push_str(&name.replace('-', "_"));
            // `--columns: unknown column` names the option; elsewhere it is one to pass.
            if !after[name.len()..].starts_with(':') {
                out.push('=');
            }
        } else {
            out.push_str("--");
            out.push_str(name);
        }
        rest = &after[name.len()..];
    }
    out.push_str(rest);
    out
}

type Res<T> = Result<T, swarrow::Error>;

/// A `--device`/`--evalue-model` style value, as the command line spells it.
fn choice<T: ValueEnum>(option: &str, value: &str) -> PyResult<T> {
    T::from_str(value, true).map_err(|_| {
        let known: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        SwarrowError::new_err(format!("{option}: unknown value {value:?} (one of {})", known.join(", ")))
    })
}

/// A table-like Python object (anything with `__arrow_c_stream__`) as a [`Table`] named `name`.
fn table(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Table> {
    if !obj.hasattr("__arrow_c_stream__")? {
        let ty = obj.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "{name}: expected an Arrow table or stream (pyarrow Table/RecordBatchReader, Polars DataFrame, \
             DuckDB relation: anything with __arrow_c_stream__), got {ty}"
        )));
    }
    let reader = RecordBatchStreamReader::from_pyarrow_bound(obj)?;
    Ok(Table::from_reader(name, reader))
}

fn output_columns(columns: Option<&str>, mode: Mode) -> Res<Columns> {
    match columns {
        Some(list) => Columns::parse(list, mode),
        None => Ok(Columns::default_for(mode, Format::ArrowStream)),
    }
}

fn carry_list(carry: &str) -> Option<Vec<String>> {
    match carry {
        "all" => None,
        "none" => Some(Vec::new()),
        list => Some(list.split(',').map(|c| c.trim().to_string()).collect()),
    }
}

fn progress_line(show: bool) -> Progress {
    if show {
        Progress::new(false, false)
    } else {
        Progress::hidden()
    }
}

/// Record batches of `schema` as a `pyarrow.Table` (no copy: the buffers are exported).
fn to_table(py: Python<'_>, schema: SchemaRef, batches: Vec<RecordBatch>) -> PyResult<Py<PyAny>> {
    let reader: Box<dyn RecordBatchReader + Send> =
        Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), schema));
    Ok(reader.into_pyarrow(py)?.call_method0("read_all")?.unbind())
}

/// A writer keeping the record batches of a run.
fn collecting() -> (Arc<Mutex<Vec<RecordBatch>>>, output::Deliver) {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let into = kept.clone();
    let deliver: output::Deliver = Box::new(move |b| {
        into.lock().map_err(|_| swarrow::Error::Internal("results lock poisoned".into()))?.push(b);
        Ok(())
    });
    (kept, deliver)
}

fn taken(kept: Arc<Mutex<Vec<RecordBatch>>>) -> Vec<RecordBatch> {
    std::mem::take(&mut *kept.lock().unwrap_or_else(|p| p.into_inner()))
}

/// An engine opened once, aligning any number of pair tables.
///
/// Aligner(*, matrix=None, dna=False, match_score=2, mismatch=-3, gap_open=None,
///         gap_extend=None, evalue_model="classic", device="auto", threads=None,
///         verbose=False, progress=False, batch_pairs=None)
#[pyclass(module = "swarrow", frozen, subclass)]
struct Aligner {
    inner: session::Aligner,
    progress: bool,
}

/// What a pair input of `align` is.
struct PairSource {
    pairs: Box<dyn PairReader>,
    name: String,
    /// Ids looked up in sequence sets (looked at for nucleotides as they were loaded).
    by_id: bool,
}

impl Aligner {
    /// Opens the pair reader of `pairs` (with sequences, or ids with `seqs`/`target_seqs`).
    #[allow(clippy::too_many_arguments)]
    fn open(
        &self,
        pairs: Table,
        seqs: Option<Table>,
        target_seqs: Option<Table>,
        columns: PairColumns,
        set_columns: SetColumns,
        options: io::PairOptions,
    ) -> Res<PairSource> {
        let alphabet = self.inner.scoring().alphabet();
        let limits = self.inner.limits();
        let name = pairs.place.to_string();
        let mut by_id = false;
        let pairs = match (seqs, target_seqs) {
            (None, None) => {
                if options.region_cols.is_some() || options.strand_col.is_some() {
                    return Err(swarrow::Error::usage(
                        "region_cols and strand_col place candidate pairs by id (with seqs), not pairs with sequences",
                    ));
                }
                io::open_pair_table(pairs, alphabet, &columns, limits)?
            }
            (Some(seqs), target) => {
                if columns.names[1] != "query_seq" || columns.names[3] != "target_seq" {
                    return Err(swarrow::Error::usage(
                        "query_col and target_col name sequence columns of a pair table; with seqs the sequences \
                         come from the sequence set (its columns: seqs_id_col, seqs_col)",
                    ));
                }
                let query = Arc::new(SeqSet::from_table(seqs, alphabet, &set_columns)?);
                session::warn_if_nucleotide_set(&query, alphabet);
                let target = match target {
                    Some(t) => {
                        let target = Arc::new(SeqSet::from_table(t, alphabet, &set_columns)?);
                        session::warn_if_nucleotide_set(&target, alphabet);
                        target
                    }
                    None => query.clone(),
                };
                by_id = true;
                io::open_pairs_by_id_table(pairs, query, target, &columns, limits, &options)?
            }
            (None, Some(_)) => return Err(swarrow::Error::usage("target_seqs needs seqs (the query ids' sequences)")),
        };
        Ok(PairSource { pairs, name, by_id })
    }

    fn start(
        aligner: &session::Aligner,
        source: PairSource,
        columns: &Columns,
        deliver: output::Deliver,
    ) -> (SchemaRef, Run) {
        let count = Arc::new(AtomicU64::new(0));
        let watched = (!source.by_id).then_some(source.name.as_str());
        let pairs = session::watch_pairs(source.pairs, watched, aligner.scoring().alphabet(), &count);
        let (schema, writer) = output::batch_writer(columns, &pairs.carried(), &aligner.metadata(), deliver);
        (schema, Run { pairs, writer, need: columns.need() })
    }
}

/// A prepared run: reader and writer.
struct Run {
    pairs: Box<dyn PairReader>,
    writer: Box<dyn ResultWriter>,
    need: output::Need,
}

#[pymethods]
impl Aligner {
    #[new]
    #[pyo3(signature = (*, matrix=None, dna=false, match_score=2, mismatch=-3, gap_open=None, gap_extend=None,
                        evalue_model="classic", device="auto", threads=None, verbose=false, progress=false,
                        batch_pairs=None, mode="local", free_ends=None, strand=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        matrix: Option<String>,
        dna: bool,
        match_score: i32,
        mismatch: i32,
        gap_open: Option<i32>,
        gap_extend: Option<i32>,
        evalue_model: &str,
        device: &str,
        threads: Option<usize>,
        verbose: bool,
        progress: bool,
        batch_pairs: Option<usize>,
        mode: &str,
        free_ends: Option<&str>,
        strand: Option<&str>,
    ) -> PyResult<Self> {
        let model: EvalueModel = choice("evalue_model", evalue_model)?;
        let device: Device = choice("device", device)?;
        let scoring = AlignScoring { matrix, dna, match_score, mismatch, gap_open, gap_extend };
        let inner = py
            .detach(|| -> Res<session::Aligner> {
                let scoring = scoring.scoring()?;
                session::check_threads(threads)?;
                let mode = engine::mode::AlignMode::parse(mode, free_ends)?;
                let engine = engine::select_mode(device, mode, &scoring, &EngineOptions::threads(threads), verbose)?;
                let rule = match strand {
                    None => StrandRule::AsGiven,
                    Some(s) => StrandRule::parse(s).ok_or_else(|| {
                        swarrow::Error::usage(format!("strand must be 'plus', 'minus' or 'both' (got {s:?})"))
                    })?,
                };
                // Query ends are always among the columns a table from Python may hold.
                session::Aligner::new(engine, model, batch_pairs, None)?.with_strand(rule, true)
            })
            .map_err(err)?;
        Ok(Aligner { inner, progress })
    }

    /// The engine's name, e.g. "cpu-simd avx2 (2 threads)" or "cuda (1 x H100)".
    #[getter]
    fn engine(&self) -> String {
        self.inner.engine().name()
    }

    /// `Aligner(engine='cpu-simd avx2 (2 threads)', matrix='BLOSUM62', gap_open=11, gap_extend=1)`:
    /// the device and the scoring it aligns with.
    fn __repr__(&self) -> String {
        let scoring = self.inner.scoring();
        format!(
            "Aligner(engine='{}', matrix='{}', gap_open={}, gap_extend={})",
            self.inner.engine().name(),
            scoring.matrix.name,
            scoring.gap_open,
            scoring.gap_extend
        )
    }

    /// Aligns every pair of `pairs` (a table of query_id, query_seq, target_id, target_seq,
    /// or of ids only with `seqs`, and `target_seqs` for the target ids): an iterator of
    /// pyarrow.RecordBatch (result columns, then the carried input columns) as they are
    /// computed, in input order, its `schema` known at once; memory stays bounded however
    /// long the input stream is. (`align`, in Python, gathers them into a Table.)
    #[pyo3(signature = (pairs, seqs=None, target_seqs=None, *, columns=None, query_col="query_seq",
                        target_col="target_seq", query_id_col="query_id", target_id_col="target_id",
                        carry="all", seqs_id_col="id", seqs_col="sequence", min_score=None, max_evalue=None,
                        min_bits=None, min_pident=None, min_qcov=None, min_tcov=None, window=None,
                        region_cols=None, strand_col=None))]
    #[allow(clippy::too_many_arguments)]
    fn align_batches(
        &self,
        py: Python<'_>,
        pairs: &Bound<'_, PyAny>,
        seqs: Option<&Bound<'_, PyAny>>,
        target_seqs: Option<&Bound<'_, PyAny>>,
        columns: Option<&str>,
        query_col: &str,
        target_col: &str,
        query_id_col: &str,
        target_id_col: &str,
        carry: &str,
        seqs_id_col: &str,
        seqs_col: &str,
        min_score: Option<i64>,
        max_evalue: Option<f64>,
        min_bits: Option<f64>,
        min_pident: Option<f64>,
        min_qcov: Option<f64>,
        min_tcov: Option<f64>,
        window: Option<&Bound<'_, PyAny>>,
        region_cols: Option<Vec<String>>,
        strand_col: Option<String>,
    ) -> PyResult<BatchIter> {
        let mut options = pair_options(window, region_cols, strand_col)?;
        self.inner.place_windows(&mut options);
        let thresholds = ThresholdValues { min_score, min_bits, max_evalue, min_pident, min_qcov, min_tcov };
        let pair_columns = PairColumns {
            names: [query_id_col, query_col, target_id_col, target_col].map(String::from),
            carry: carry_list(carry),
        };
        let set_columns = SetColumns { id: seqs_id_col.into(), seq: seqs_col.into(), headers: false, quals: false };
        let pairs = table("pairs", pairs)?;
        let seqs = seqs.map(|s| table("seqs", s)).transpose()?;
        let target_seqs = target_seqs.map(|s| table("target_seqs", s)).transpose()?;
        let show = self.progress;
        py.detach(|| -> Res<BatchIter> {
            let aligner = self.inner.clone().with_thresholds(Thresholds::new(&thresholds)?)?;
            let columns = output_columns(columns, Mode::Align)?;
            let source = self.open(pairs, seqs, target_seqs, pair_columns, set_columns, options)?;
            // Two batches ahead of the consumer at most.
            let (tx, rx) = sync_channel::<RecordBatch>(2);
            let deliver: output::Deliver = Box::new(move |b| {
                tx.send(b).map_err(|_| swarrow::Error::Internal("the batch iterator was dropped".into()))
            });
            let (schema, run) = Self::start(&aligner, source, &columns, deliver);
            let handle = std::thread::spawn(move || {
                let progress = progress_line(show);
                let result = aligner.run(run.pairs, run.need, &progress, run.writer).map(|_| ());
                progress.stop();
                result
            });
            Ok(BatchIter { schema, state: Mutex::new(IterState { rx: Some(rx), handle: Some(handle) }) })
        })
        .map_err(err)
    }
}

/// The reader options of `align_batches`: `window` (a margin in residues, default 200, or
/// "full"), `region_cols` ([qstart, qend, tstart, tend] column names), `strand_col`.
fn pair_options(
    window: Option<&Bound<'_, PyAny>>,
    region_cols: Option<Vec<String>>,
    strand_col: Option<String>,
) -> PyResult<io::PairOptions> {
    let window = match window {
        None => Some(io::pairs::DEFAULT_WINDOW),
        Some(w) => match w.extract::<String>() {
            Ok(s) if s == "full" => None,
            Ok(s) => return Err(PyValueError::new_err(format!("window: '{s}' is neither a margin nor 'full'"))),
            Err(_) => Some(
                w.extract::<usize>()
                    .map_err(|_| PyValueError::new_err("window: a margin in residues (0 or more) or 'full'"))?,
            ),
        },
    };
    let region_cols = match region_cols {
        None => None,
        Some(names) => Some(
            <[String; 4]>::try_from(names)
                .map_err(|_| PyValueError::new_err("region_cols: four column names [qstart, qend, tstart, tend]"))?,
        ),
    };
    Ok(io::PairOptions { window, region_cols, strand_col, ..io::PairOptions::default() })
}

struct IterState {
    rx: Option<Receiver<RecordBatch>>,
    handle: Option<JoinHandle<Res<()>>>,
}

/// Result batches of `Aligner.align_batches`, in input order.
#[pyclass(module = "swarrow")]
struct BatchIter {
    schema: SchemaRef,
    state: Mutex<IterState>,
}

#[pymethods]
impl BatchIter {
    /// The pyarrow.Schema of every batch (result columns, then carried columns).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.schema.as_ref().to_pyarrow(py)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let next = py.detach(|| -> Res<Option<RecordBatch>> {
            let mut state = self.state.lock().map_err(|_| swarrow::Error::Internal("iterator lock poisoned".into()))?;
            if let Some(rx) = &state.rx {
                if let Ok(batch) = rx.recv() {
                    return Ok(Some(batch));
                }
            }
            state.rx = None;
            match state.handle.take() {
                Some(h) => h.join().map_err(|_| swarrow::Error::Internal("the aligner thread panicked".into()))??,
                None => {}
            }
            Ok(None)
        });
        match next.map_err(err)? {
            Some(batch) => Ok(Some(batch.to_pyarrow(py)?.unbind())),
            None => Ok(None),
        }
    }
}

/// search(queries, database, *, ...) -> pyarrow.Table: the best hits of each query.
#[pyfunction]
#[pyo3(signature = (queries, database, *, top=10, max_evalue=10.0, matrix="BLOSUM62", gap_open=None,
                    gap_extend=None, columns=None, evalue_model="classic", db_size=None, db_seqs=None,
                    id_col="id", seq_col="sequence", device="auto", threads=None, verbose=false,
                    progress=false, min_score=None, min_bits=None, min_pident=None, min_qcov=None,
                    min_tcov=None))]
#[allow(clippy::too_many_arguments)]
fn search(
    py: Python<'_>,
    queries: &Bound<'_, PyAny>,
    database: &Bound<'_, PyAny>,
    top: usize,
    max_evalue: f64,
    matrix: &str,
    gap_open: Option<i32>,
    gap_extend: Option<i32>,
    columns: Option<&str>,
    evalue_model: &str,
    db_size: Option<u64>,
    db_seqs: Option<u64>,
    id_col: &str,
    seq_col: &str,
    device: &str,
    threads: Option<usize>,
    verbose: bool,
    progress: bool,
    min_score: Option<i64>,
    min_bits: Option<f64>,
    min_pident: Option<f64>,
    min_qcov: Option<f64>,
    min_tcov: Option<f64>,
) -> PyResult<Py<PyAny>> {
    let thresholds = ThresholdValues { min_score, min_bits, max_evalue: None, min_pident, min_qcov, min_tcov };
    let evalue_model: EvalueModel = choice("evalue_model", evalue_model)?;
    let device: Device = choice("device", device)?;
    let queries = table("queries", queries)?;
    let database = table("database", database)?;
    let set_columns = SetColumns { id: id_col.into(), seq: seq_col.into(), headers: false, quals: false };
    let show = progress;
    let (schema, batches) = py
        .detach(|| -> Res<(SchemaRef, Vec<RecordBatch>)> {
            let scoring = Scoring::new(Matrix::protein(matrix)?, gap_open.unwrap_or(11), gap_extend.unwrap_or(1))?;
            let thresholds = Thresholds::new(&thresholds)?;
            let settings = SearchSettings { top, max_evalue, db_size, db_seqs, evalue_model, thresholds };
            settings.check()?;
            session::check_threads(threads)?;
            let columns = output_columns(columns, Mode::Search)?;
            let engine = engine::select(device, &scoring, &EngineOptions::threads(threads), verbose)?;
            let db_place = database.place.to_string();
            let db = swarrow::database::Database::from_records(
                &db_place,
                io::table_records(database, Alphabet::Protein, &set_columns)?,
            );
            if db.is_empty() {
                return Err(swarrow::Error::usage(format!("{db_place}: no sequences")));
            }
            session::warn_if_nucleotides(&db, &db_place);
            let queries = io::table_records(queries, Alphabet::Protein, &set_columns)?;
            let progress = progress_line(show);
            let (opts, meta) = settings.prepare(engine.as_ref(), &db, columns.need(), &progress);
            let (kept, deliver) = collecting();
            let (schema, writer) = output::batch_writer(&columns, &arrow::datatypes::Schema::empty(), &meta, deliver);
            progress.phase_aligning("aligning", None);
            let queries = Box::new(queries.into_iter().map(Ok));
            let result = swarrow::pipeline::search::search(engine, Arc::new(db), queries, opts, writer);
            progress.stop();
            result?;
            Ok((schema, taken(kept)))
        })
        .map_err(err)?;
    to_table(py, schema, batches)
}

/// pairhmm(pairs=None, *, reads=None, haplotypes=None, gcp=10, ...) -> pyarrow.Table.
#[pyfunction]
#[pyo3(signature = (pairs=None, *, reads=None, haplotypes=None, gcp=10, device="auto", threads=None,
                    verbose=false))]
#[allow(clippy::too_many_arguments)]
fn pairhmm(
    py: Python<'_>,
    pairs: Option<&Bound<'_, PyAny>>,
    reads: Option<&Bound<'_, PyAny>>,
    haplotypes: Option<&Bound<'_, PyAny>>,
    gcp: u8,
    device: &str,
    threads: Option<usize>,
    verbose: bool,
) -> PyResult<Py<PyAny>> {
    use swarrow::pairhmm::{self as ph, input::BatchReader};
    let device: Device = choice("device", device)?;
    let input = match (pairs, reads, haplotypes) {
        (Some(p), None, None) => (table("pairs", p)?, None),
        (None, Some(r), Some(h)) => (table("reads", r)?, Some(table("haplotypes", h)?)),
        _ => return Err(SwarrowError::new_err("give pairs, or reads with haplotypes")),
    };
    let (schema, batches) = py
        .detach(|| -> Res<(SchemaRef, Vec<RecordBatch>)> {
            ph::check_gcp(gcp)?;
            let engine = ph::select(device, threads, verbose)?;
            let limits = ph::batch_limits(engine.as_ref(), None);
            let reader = match input {
                (pairs, None) => BatchReader::pairs_table(pairs, gcp, limits)?,
                (reads, Some(haps)) => BatchReader::grouped_tables(reads, haps, gcp, limits)?,
            };
            let (kept, deliver) = collecting();
            let (schema, writer) =
                output::table_batches(ph::pipeline::schema(), &ph::run_metadata(engine.as_ref()), deliver);
            ph::pipeline::run(engine, reader, writer)?;
            Ok((schema, taken(kept)))
        })
        .map_err(err)?;
    to_table(py, schema, batches)
}

/// The `swarrow` command, in-process: `argv` as `sys.argv` (program name first); returns
/// the exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| swarrow::cli::main_with(argv.into_iter().map(OsString::from)))
}

#[pymodule]
fn _swarrow(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SwarrowError", m.py().get_type::<SwarrowError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Aligner>()?;
    m.add_class::<BatchIter>()?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    m.add_function(wrap_pyfunction!(pairhmm, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    Ok(())
}

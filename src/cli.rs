//! The command line: argument parsing and the wiring of readers, engine, pipeline and
//! writer for each subcommand. No alignment logic lives here.

use crate::engine::{self, Device};
use crate::error::{Error, Result, Where};
use crate::io::{self, PairInput};
use crate::output::{self, Format, Mode, RunMetadata};
use crate::pipeline;
use crate::scoring::{stats::KarlinAltschul, Alphabet, Matrix, Scoring};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(name = "swarrow", version, about = "Exact Smith-Waterman local alignment (affine gaps) on GPUs and CPUs, streaming Arrow/Parquet/TSV", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Search protein queries against a database; best hits per query.
    #[command(after_help = "Examples:\n  swarrow search -q queries.fa -d db.fasta.gz -o hits.parquet\n  swarrow makedb db.fasta.gz -o db.swdb && swarrow search -q queries.fa -d db.swdb --top 5 --format tsv\n  cat q.fa | swarrow search -q - -d db.swdb | duckdb -c \"SELECT * FROM read_parquet('/dev/stdin')\"   # use --format parquet -o for DuckDB")]
    Search(SearchArgs),
    /// Align pairs one-to-one; one result per pair, in input order.
    #[command(after_help = "Examples:\n  swarrow align --query a.fa --target b.fa -o pairs.parquet\n  swarrow align --pairs pairs.tsv --dna --format tsv\n  producer | swarrow align --pairs - | consumer      # Arrow IPC stream in, Arrow IPC stream out")]
    Align(AlignArgs),
    /// Build a binary database (sorted by length, memory-mappable) for fast repeated searches.
    #[command(after_help = "Example:\n  swarrow makedb uniprot.fasta.gz -o uniprot.swdb")]
    Makedb(MakedbArgs),
    /// Merge shard outputs into one: global top N per query (search) or concatenation (align).
    #[command(after_help = "Shards of a database split in order, each searched with the whole database's --db-size and\n--db-seqs, merge into exactly the unsharded result (same rows, E-values and ranks):\n  swarrow merge --top 10 -o hits.parquet shard-0.parquet shard-1.parquet shard-2.parquet\nInputs: Parquet, Arrow IPC file or stream (`-` = stdin), TSV; detected by content.")]
    Merge(MergeArgs),
    /// Read likelihoods under GATK's PairHMM (as GKL computes them), one row per read-haplotype pair.
    #[command(after_help = "Examples:\n  swarrow pairhmm --reads reads.tsv --haplotypes haps.tsv -o likelihoods.parquet   # every read x every haplotype of its group\n  swarrow pairhmm --pairs pairs.parquet --format tsv\n  swarrow pairhmm --pairs pairhmm-testdata.txt      # GATK's test-data text: hap read qual ins del gcp [expected]")]
    Pairhmm(PairhmmArgs),
}

#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output file; `-` or absent = stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format: arrow (IPC stream), arrow-file, parquet, tsv, blast. Default: from the
    /// extension of -o, else Arrow IPC stream when stdout is not a terminal, TSV when it is.
    #[arg(long, value_name = "F")]
    pub format: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Where to align: auto uses CUDA when a GPU is available, else the CPU.
    #[arg(long, value_enum, default_value = "auto")]
    pub device: Device,
    /// CPU threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bar and no informational messages (warnings and errors still print).
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct GapArgs {
    /// Gap open cost: a gap of length k costs OPEN + k*EXTEND [protein 11, DNA 5].
    #[arg(long, value_name = "O", allow_negative_numbers = true)]
    pub gap_open: Option<i32>,
    /// Gap extension cost per position [protein 1, DNA 2].
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub gap_extend: Option<i32>,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Query FASTA (plain or gzip; `-` = stdin).
    #[arg(short, long, value_name = "QUERIES")]
    pub query: PathBuf,
    /// Database: FASTA (plain or gzip) or a file made by `swarrow makedb`.
    #[arg(short, long, value_name = "DB")]
    pub db: PathBuf,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Hits reported per query.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Report only hits with an E-value at most E (where statistics exist).
    #[arg(long, value_name = "E", default_value_t = 10.0)]
    pub max_evalue: f64,
    /// Substitution matrix: BLOSUM45/50/62/80/90, PAM30/70/250.
    #[arg(long, value_name = "NAME", default_value = "BLOSUM62")]
    pub matrix: String,
    #[command(flatten)]
    pub gaps: GapArgs,
    /// Database size in residues for E-values (keeps E-values consistent when a workflow
    /// shards the database); default: the loaded database.
    #[arg(long, value_name = "RESIDUES")]
    pub db_size: Option<u64>,
    /// Number of sequences of the whole database for BLAST's length adjustment, with
    /// --db-size; default: the loaded database's.
    #[arg(long, value_name = "N")]
    pub db_seqs: Option<u64>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["query", "pairs"]))]
pub struct AlignArgs {
    /// FASTA of queries, paired record by record with --target.
    #[arg(long, value_name = "A.fa", requires = "target")]
    pub query: Option<PathBuf>,
    /// FASTA of targets, paired record by record with --query.
    #[arg(long, value_name = "B.fa", requires = "query")]
    pub target: Option<PathBuf>,
    /// Pairs: TSV (query_id, query_seq, target_id, target_seq; header optional) or an Arrow
    /// IPC stream with those columns, detected from content; `-` = stdin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["query", "target"])]
    pub pairs: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Substitution matrix for proteins: BLOSUM45/50/62/80/90, PAM30/70/250.
    #[arg(long, value_name = "NAME", conflicts_with = "dna")]
    pub matrix: Option<String>,
    /// DNA scoring: match/mismatch instead of a matrix (U reads as T; ambiguity codes mismatch).
    #[arg(long)]
    pub dna: bool,
    /// DNA match score.
    #[arg(long = "match", value_name = "M", default_value_t = 2, requires = "dna", allow_negative_numbers = true)]
    pub match_score: i32,
    /// DNA mismatch score.
    #[arg(long, value_name = "N", default_value_t = -3, requires = "dna", allow_negative_numbers = true)]
    pub mismatch: i32,
    #[command(flatten)]
    pub gaps: GapArgs,
    /// Pairs per engine batch (default: sized for the device).
    #[arg(long, value_name = "N", hide = true)]
    pub batch: Option<usize>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["pairs", "reads"]))]
pub struct PairhmmArgs {
    /// Pairs: a table (TSV with header, Arrow IPC, Parquet) with columns read, read_bases,
    /// base_quals, ins_quals, del_quals, [gcp_quals], haplotype, hap_bases, [group]; or GATK's
    /// PairHMM test-data text. `-` = stdin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["reads", "haplotypes"])]
    pub pairs: Option<PathBuf>,
    /// Reads table: group, read, read_bases, base_quals, ins_quals, del_quals, [gcp_quals];
    /// rows contiguous by group. Every read is scored against every haplotype of its group.
    #[arg(long, value_name = "FILE", requires = "haplotypes")]
    pub reads: Option<PathBuf>,
    /// Haplotypes table: group, haplotype, hap_bases; groups in the order of --reads.
    #[arg(long, value_name = "FILE", requires = "reads")]
    pub haplotypes: Option<PathBuf>,
    /// Gap-continuation quality for every base when the input has no gcp_quals column.
    #[arg(long, value_name = "Q", default_value_t = 10)]
    pub gcp: u8,
    /// Pairs per engine batch (default: sized for the device; tests use tiny batches).
    #[arg(long, value_name = "N", hide = true)]
    pub batch_pairs: Option<usize>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
pub struct MakedbArgs {
    /// Protein FASTA (plain or gzip; `-` = stdin).
    #[arg(value_name = "DB.fasta")]
    pub input: PathBuf,
    /// Output database file.
    #[arg(short, long, value_name = "DB.swdb")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Outputs of `swarrow search` (or `align`), in shard order: the order breaks score ties.
    #[arg(value_name = "SHARD", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Hits kept per query (search results; normally the --top of the shard runs).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Search(args) => search(args),
        Command::Align(args) => align(args),
        Command::Makedb(args) => makedb(args),
        Command::Merge(args) => merge(args),
        Command::Pairhmm(args) => pairhmm(args),
    }
}

fn pairhmm(args: PairhmmArgs) -> Result<()> {
    use crate::pairhmm::{self, input::{BatchLimits, BatchReader}, model};
    if args.gcp > model::MAX_QUAL {
        return Err(Error::usage(format!("--gcp must be at most {} (got {})", model::MAX_QUAL, args.gcp)));
    }
    let inputs: Vec<&Path> = [&args.pairs, &args.reads, &args.haplotypes].into_iter().flatten().map(|p| p.as_path()).collect();
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Error::usage("only one of --reads and --haplotypes can be read from stdin"));
    }
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    let format = resolve_format(&args.out)?;
    let engine = pairhmm::select(args.run.device, args.run.threads, args.run.quiet)?;
    let limits = BatchLimits { cells: engine.batch_cells(), pairs: args.batch_pairs.unwrap_or(1 << 20).max(1) };
    let reader = match (&args.pairs, &args.reads, &args.haplotypes) {
        (Some(p), _, _) => BatchReader::pairs(p, args.gcp, limits)?,
        (None, Some(r), Some(h)) => BatchReader::grouped(r, h, args.gcp, limits)?,
        _ => return Err(Error::usage("give --pairs FILE, or --reads FILE with --haplotypes FILE")),
    };
    let mut meta = RunMetadata::new();
    meta.push("swarrow_version", env!("CARGO_PKG_VERSION"));
    meta.push("mode", "pairhmm");
    meta.push("model", "GATK PairHMM as GKL computes it: float pass, double recomputation below 1e-28 (scaled)");
    meta.push("engine", &engine.name());
    let writer = output::create_table_writer(format, pairhmm::pipeline::schema(), &meta, out_path(&args.out))?;
    pairhmm::pipeline::run(engine, reader, writer)
}

fn merge(args: MergeArgs) -> Result<()> {
    let inputs: Vec<&Path> = args.inputs.iter().map(|p| p.as_path()).collect();
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    let format = resolve_format(&args.out)?;
    pipeline::merge::merge(&args.inputs, args.top, format, out_path(&args.out))
}

fn search(args: SearchArgs) -> Result<()> {
    let gap_open = args.gaps.gap_open.unwrap_or(11);
    let gap_extend = args.gaps.gap_extend.unwrap_or(1);
    let scoring = Scoring::new(Matrix::protein(&args.matrix)?, gap_open, gap_extend)?;
    if args.query.as_os_str() == "-" && args.db.as_os_str() == "-" {
        return Err(Error::usage("only one of --query and --db can be read from stdin"));
    }
    check_output_not_input(args.out.output.as_deref(), &[&args.query, &args.db])?;
    let format = resolve_format(&args.out)?;
    let stats = statistics(&scoring);
    // The database loads while the engine starts (CUDA start-up takes a while); an engine
    // problem is reported first, as it would be without the overlap.
    let (engine, db) = std::thread::scope(|s| {
        let db = s.spawn(|| io::load_database(&args.db, Alphabet::Protein));
        let engine = engine::select(args.run.device, &scoring, args.run.threads, args.run.quiet);
        let db = db.join().unwrap_or_else(|_| Err(Error::Internal("database loading panicked".into())));
        (engine, db)
    });
    let engine = engine?;
    let db = Arc::new(db?);
    if db.is_empty() {
        return Err(Error::file(&Where::from_arg(&args.db), "no sequences"));
    }
    let queries = io::FastaReader::open(&args.query, Alphabet::Protein)?;
    let db_residues = args.db_size.unwrap_or_else(|| db.total_residues());
    let db_seqs = args.db_seqs.unwrap_or(db.len() as u64);
    let mut meta = run_metadata("search", &scoring, &*engine);
    meta.push("database", db.name.as_str());
    meta.push("database_residues", &db.total_residues().to_string());
    meta.push("database_sequences", &db.len().to_string());
    meta.push("search_space", &format!(
        "BLAST length-adjusted, database of {} residues in {} sequences", db_residues, db_seqs));
    let writer = output::create_writer(format, Mode::Search, &meta, out_path(&args.out))?;
    let opts = pipeline::search::SearchOptions {
        top: args.top,
        max_evalue: Some(args.max_evalue),
        db_residues,
        db_seqs,
        stats,
        quiet: args.run.quiet,
    };
    pipeline::search::search(engine, db, Box::new(queries), opts, writer)
}

fn align(args: AlignArgs) -> Result<()> {
    let (matrix, open, extend) = if args.dna {
        (Matrix::dna(args.match_score, args.mismatch), 5, 2)
    } else {
        (Matrix::protein(args.matrix.as_deref().unwrap_or("BLOSUM62"))?, 11, 1)
    };
    if args.dna && args.match_score <= 0 {
        return Err(Error::usage(format!("--match must be positive (got {})", args.match_score)));
    }
    let scoring = Scoring::new(matrix, args.gaps.gap_open.unwrap_or(open), args.gaps.gap_extend.unwrap_or(extend))?;
    let input = match (&args.pairs, &args.query, &args.target) {
        (Some(p), _, _) => PairInput::File(p.clone()),
        (None, Some(q), Some(t)) => PairInput::TwoFasta { query: q.clone(), target: t.clone() },
        _ => return Err(Error::usage("give --pairs FILE, or --query A.fa with --target B.fa")),
    };
    let inputs: Vec<&Path> = match &input {
        PairInput::File(p) => vec![p.as_path()],
        PairInput::TwoFasta { query, target } => vec![query.as_path(), target.as_path()],
    };
    if inputs.len() == 2 && inputs.iter().all(|p| p.as_os_str() == "-") {
        return Err(Error::usage("only one of --query and --target can be read from stdin"));
    }
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    let format = resolve_format(&args.out)?;
    let stats = statistics(&scoring);
    let engine = engine::select(args.run.device, &scoring, args.run.threads, args.run.quiet)?;
    let pairs = io::open_pairs(&input, scoring.alphabet())?;
    let meta = run_metadata("align", &scoring, &*engine);
    let writer = output::create_writer(format, Mode::Align, &meta, out_path(&args.out))?;
    let opts = pipeline::align::AlignOptions { stats, quiet: args.run.quiet, batch_pairs: args.batch };
    pipeline::align::align(engine, pairs, opts, writer)
}

fn makedb(args: MakedbArgs) -> Result<()> {
    check_output_not_input(Some(&args.output), &[&args.input])?;
    let db = io::load_database(&args.input, Alphabet::Protein)?;
    if db.is_empty() {
        return Err(Error::file(&Where::from_arg(&args.input), "no sequences"));
    }
    io::write_swdb(&db, Alphabet::Protein, &args.output)
}

fn resolve_format(out: &OutputArgs) -> Result<Format> {
    let explicit = out.format.as_deref().map(Format::parse).transpose()?;
    output::resolve_format(explicit, out_path(out), std::io::stdout().is_terminal())
}

fn out_path(out: &OutputArgs) -> Option<&Path> {
    out.output.as_deref().filter(|p| p.as_os_str() != "-")
}

/// Karlin-Altschul parameters, or a one-line warning that bits and E-values will be null.
fn statistics(scoring: &Scoring) -> Option<KarlinAltschul> {
    let stats = KarlinAltschul::lookup(scoring);
    if stats.is_none() {
        eprintln!(
            "swarrow: warning: no BLAST statistics for {}; bits and evalue will be null",
            scoring.describe()
        );
    }
    stats
}

fn run_metadata(mode: &str, scoring: &Scoring, engine: &dyn engine::Engine) -> RunMetadata {
    let mut meta = RunMetadata::new();
    meta.push("swarrow_version", env!("CARGO_PKG_VERSION"));
    meta.push("mode", mode);
    meta.push("scoring", &scoring.matrix.name);
    meta.push("gap_open", &scoring.gap_open.to_string());
    meta.push("gap_extend", &scoring.gap_extend.to_string());
    meta.push("gap_cost_rule", "a gap of length k costs gap_open + k * gap_extend");
    meta.push("coordinates", "1-based inclusive; 0 when score is 0");
    meta.push("engine", &engine.name());
    meta
}

/// Refuses `-o` naming one of the inputs: the run would destroy its own input.
fn check_output_not_input(output: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(out) = output.filter(|p| p.as_os_str() != "-") else { return Ok(()) };
    let out_abs = absolute(out);
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        if absolute(input) == out_abs {
            return Err(Error::usage(format!("output {} is also an input; choose another -o", out.display())));
        }
    }
    Ok(())
}

/// Canonical path where it exists; else the canonical parent joined with the file name.
fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match (parent.canonicalize(), p.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => p.to_path_buf(),
    }
}

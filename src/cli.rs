//! The command line: argument parsing and the wiring of readers, engine, pipeline and
//! writer for each subcommand. No alignment logic lives here.

use crate::engine::cuda::kernels::PAIRED_SHAPE;
use crate::engine::cuda::paired::PairedAligner;
use crate::engine::{self, Device};
use crate::error::{Error, Result, Where};
use crate::io::{self, PairColumns, PairInput};
use crate::output::{self, Column, Columns, Format, Mode, Stdout, ThresholdValues, Thresholds};
use crate::pipeline;
use crate::pipeline::orient::StrandRule;
use crate::progress::{input_size, Progress};
use crate::scoring::{alphabet::NucleotideLook, stats::EvalueModel, Alphabet, Matrix, Scoring};
use crate::session::{self, check_threads, warn_once, AlignScoring, Aligner, SearchSettings};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    #[command(after_help = SEARCH_EXAMPLES)]
    Search(SearchArgs),
    /// Align pairs one-to-one; one result per pair, in input order.
    #[command(after_help = ALIGN_EXAMPLES)]
    Align(AlignArgs),
    /// Build a binary database (sorted by length, memory-mappable) for fast repeated searches.
    #[command(after_help = MAKEDB_EXAMPLES)]
    Makedb(MakedbArgs),
    /// Merge shard outputs into one: global top N per query (search) or concatenation (align).
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Read likelihoods under GATK's PairHMM (as GKL computes them), one row per read-haplotype pair.
    #[command(
        after_help = "Examples:\n  swarrow pairhmm --reads reads.tsv --haplotypes haps.tsv -o likelihoods.parquet   # every read x every haplotype of its group\n  swarrow pairhmm --pairs pairs.parquet --format tsv\n  swarrow pairhmm --pairs pairhmm-testdata.txt      # GATK's test-data text: hap read qual ins del gcp [expected]"
    )]
    Pairhmm(PairhmmArgs),
    /// Print a completion script for SHELL (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example (bash):\n  swarrow completions bash > ~/.local/share/bash-completion/completions/swarrow"
    )]
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per subcommand into --dir.
    #[command(after_help = "Examples:\n  swarrow man | man -l -\n  swarrow man --dir ~/.local/share/man/man1")]
    Man {
        /// Directory for swarrow.1, swarrow-search.1, ...
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// BLAST+'s single-dash options and the options they mean here, as `swarrow search` (and
/// `align`, where it has the option) reads them: same meaning, including the gap costs
/// (BLAST's `-gapopen 11 -gapextend 1` is our `--gap-open 11 --gap-extend 1`).
pub const BLAST_OPTIONS: [(&str, &str); 12] = [
    ("-query", "--query"),
    ("-db", "--db"),
    ("-out", "--output"),
    ("-outfmt", "--outfmt"),
    ("-evalue", "--max-evalue"),
    ("-max_target_seqs", "--top"),
    ("-num_threads", "--threads"),
    ("-matrix", "--matrix"),
    ("-gapopen", "--gap-open"),
    ("-gapextend", "--gap-extend"),
    ("-perc_identity", "--min-pident"),
    ("-qcov_hsp_perc", "--query-cover"),
];

/// The command line with BLAST+'s single-dash options ([`BLAST_OPTIONS`]) spelled as ours,
/// before clap reads it: clap would take `-outfmt` for `-o utfmt` and `-evalue` for `-e
/// value`. Only those exact tokens change (never a value, never anything after `--`); a value
/// that happens to equal one of them is rewritten too, which no real file name does. Then
/// DIAMOND's unquoted field list joins its format ([`join_outfmt_fields`]).
pub fn blast_argv<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> Vec<std::ffi::OsString> {
    let mut rest_is_positional = false;
    let args = args
        .into_iter()
        .enumerate()
        .map(|(k, arg)| {
            if k == 0 || rest_is_positional {
                return arg;
            }
            if arg == "--" {
                rest_is_positional = true;
                return arg;
            }
            match BLAST_OPTIONS.iter().find(|(blast, _)| arg == *blast) {
                Some((_, ours)) => std::ffi::OsString::from(ours),
                None => blast_with_value(&arg).unwrap_or(arg),
            }
        })
        .collect();
    join_outfmt_fields(args)
}

/// `-out=x.tsv`, `-evalue=1e-5`: a BLAST option of [`BLAST_OPTIONS`] with its value after
/// `=`, as ours with the same value (`--output=x.tsv`).
fn blast_with_value(arg: &std::ffi::OsStr) -> Option<std::ffi::OsString> {
    let (name, value) = arg.to_str()?.split_once('=')?;
    let (_, ours) = BLAST_OPTIONS.iter().find(|(blast, _)| name == *blast)?;
    Some(format!("{ours}={value}").into())
}

/// BLAST+ options (blastp and makeblastdb) that swarrow does not have; words spelled like
/// them are refused by [`check_blast_words`] rather than read as short options.
const BLAST_OTHER_OPTIONS: [&str; 50] = [
    "-max_hsps",
    "-db_soft_mask",
    "-db_hard_mask",
    "-query_gencode",
    "-db_gencode",
    "-strand",
    "-import_search_strategy",
    "-task",
    "-word_size",
    "-num_alignments",
    "-num_descriptions",
    "-seg",
    "-comp_based_stats",
    "-subject",
    "-subject_loc",
    "-query_loc",
    "-html",
    "-parse_deflines",
    "-taxids",
    "-negative_taxids",
    "-taxidlist",
    "-gilist",
    "-seqidlist",
    "-negative_seqidlist",
    "-threshold",
    "-window_size",
    "-xdrop_ungap",
    "-xdrop_gap",
    "-xdrop_gap_final",
    "-ungapped",
    "-lcase_masking",
    "-soft_masking",
    "-use_sw_tback",
    "-culling_limit",
    "-best_hit_overhang",
    "-best_hit_score_edge",
    "-subject_besthit",
    "-remote",
    "-entrez_query",
    "-dbsize",
    "-searchsp",
    "-sum_stats",
    "-show_gis",
    "-line_length",
    "-sorthits",
    "-sorthsps",
    "-qcov_hsp_perc",
    "-mt_mode",
    "-in",
    "-dbtype",
];

/// Refuses, naming it, every word (before `--`) that starts like a BLAST+ option but is not
/// one swarrow reads as BLAST does ([`blast_argv`] has rewritten those): clap would split it
/// into a short option and a glued value (`-outfmt6` as `-o utfmt6`, writing a file named
/// `utfmt6`; `-max_hsps` as `-m ax_hsps`).
pub fn check_blast_words(args: &[std::ffi::OsString]) -> Result<()> {
    for arg in args.iter().skip(1).take_while(|a| *a != "--") {
        let Some(word) = arg.to_str().filter(|w| !w.starts_with("--")) else { continue };
        let name = word.split_once('=').map_or(word, |(name, _)| name);
        // A word spelled as BLAST+ spells its options (`-db_soft_mask`, `-out_fmt`: lowercase
        // words joined by `_`) is one swarrow lacks, never one of its options glued to a value.
        let blast_spelled = name.strip_prefix('-').is_some_and(|n| {
            n.contains('_')
                && n.split('_')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
                && n.as_bytes()[0].is_ascii_lowercase()
        });
        let known = BLAST_OPTIONS.iter().any(|(blast, _)| *blast == name);
        if (BLAST_OTHER_OPTIONS.contains(&name) || blast_spelled) && !known {
            let hint = match name {
                "-max_hsps" => " (swarrow reports one alignment per query and target, as -max_hsps 1 does)",
                "-dbsize" => " (the search space is --db-size and --db-seqs)",
                "-out_fmt" => " (the output format is -outfmt)",
                _ => "",
            };
            let whose = if BLAST_OTHER_OPTIONS.contains(&name) { "BLAST+'s " } else { "" };
            return Err(Error::usage(format!(
                "'{word}': {whose}{name} is not an option of swarrow{hint}; see swarrow help for the BLAST+ \
                 options it reads"
            )));
        }
        let glued = BLAST_OPTIONS
            .iter()
            .filter(|(blast, _)| word.len() > blast.len() && word.starts_with(blast))
            .max_by_key(|(blast, _)| blast.len());
        if let Some((blast, _)) = glued {
            let value = &word[blast.len()..];
            return Err(Error::usage(format!(
                "'{word}' is BLAST's {blast} glued to its value: write '{blast} {value}' (or '{blast}={value}')"
            )));
        }
    }
    Ok(())
}

/// Refuses a single-dash word (before `--`) that names one of the subcommand's long options
/// (`-id 40`, `-top 5`, `-dna`): clap would split it into a short option and a glued value
/// (`-i d`, `-t op`) and answer about a letter the user never typed. BLAST+'s words were
/// rewritten before ([`blast_argv`]).
pub fn check_single_dash_longs(args: &[std::ffi::OsString]) -> Result<()> {
    let cmd = Cli::command();
    let Some(sub) = args.get(1).and_then(|a| a.to_str()).and_then(|s| cmd.find_subcommand(s)) else {
        return Ok(());
    };
    for arg in args.iter().skip(2).take_while(|a| *a != "--") {
        let Some(word) = arg.to_str().filter(|w| w.starts_with('-') && !w.starts_with("--") && w.len() > 2) else {
            continue;
        };
        let name = word[1..].split_once('=').map_or(&word[1..], |(name, _)| name);
        let long = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|aliases| aliases.contains(&name)));
        if long.is_some() {
            return Err(Error::usage(format!(
                "'{word}': swarrow's long options take two dashes: write '-{word}' (a single dash starts a \
                 one-letter option, so '{word}' would read as -{} followed by '{}')",
                &word[1..2],
                &word[2..]
            )));
        }
    }
    Ok(())
}

/// DIAMOND's `--outfmt 6 qseqid sseqid pident` (the fields as separate arguments) as BLAST's
/// quoted `--outfmt "6 qseqid sseqid pident"`: for `search` and `align`, which take no
/// positional arguments, the words after a tabular format number (`6`, `7`) up to the next
/// option join its value. Other subcommands (merge takes file names) are left as they are.
fn join_outfmt_fields(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if !matches!(args.get(1).and_then(|a| a.to_str()), Some("search" | "align")) {
        return args;
    }
    let is_tabular = |value: &str| matches!(value.split_whitespace().next(), Some("6" | "7"));
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len());
    // Index in `out` of a tabular format value that field names may still join.
    let mut open: Option<usize> = None;
    for arg in args {
        let text = arg.to_str().unwrap_or("-");
        if arg == "--" {
            open = None;
        } else if let Some(k) = open.filter(|_| !text.starts_with('-')) {
            out[k].push(" ");
            out[k].push(&arg);
            continue;
        } else {
            let previous = out.last().and_then(|a| a.to_str());
            let after_option = matches!(previous, Some("--outfmt" | "--format")) && is_tabular(text);
            let joined = ["--outfmt=", "--format="].iter().any(|o| text.strip_prefix(o).is_some_and(is_tabular));
            open = (after_option || joined).then_some(out.len());
        }
        out.push(arg);
    }
    out
}

// Help examples: one command per line, each runnable as pasted from the repository root on
// the bundled data (tests/cli.rs runs every line that starts with `swarrow`, `cat` or `workflows`).
const SEARCH_EXAMPLES: &str = "\
Examples (from the repository root, on the bundled data):
  swarrow search -q examples/queries.fasta -d examples/db.fasta.gz -o hits.parquet
  swarrow search -q examples/queries.fasta -d examples/db.fasta.gz -k 5 -e 1e-5 > hits.tsv
  swarrow makedb examples/db.fasta.gz -o db.swdb
  swarrow search -q examples/queries.fasta -d db.swdb --outfmt 6 > hits.m8
  cat examples/queries.fasta | swarrow search -q - -d db.swdb --format tsv
  swarrow search -query examples/queries.fasta -db db.swdb -outfmt 6 -evalue 1e-5 > blast.m8

BLAST+'s options work as in BLAST: -query -db -out -outfmt -evalue -max_target_seqs
-num_threads -matrix -gapopen -gapextend (-gapopen 11 -gapextend 1 is --gap-open 11
--gap-extend 1: the gap costs are BLAST's here). -outfmt takes BLAST's column lists
('6 std qlen slen qcovhsp', or unquoted as DIAMOND takes them) and 7 (with comment lines).
--out is -o (DIAMOND).

Default output format: -o's extension (TSV for others, e.g. .out); else, for stdout, TSV on a
terminal, the extension of the file stdout is redirected to (> hits.parquet), TSV for other
files, Arrow IPC into a pipe (--format tsv for cut, sort, awk).";

const ALIGN_EXAMPLES: &str = "\
Examples (from the repository root, on the bundled data):
  swarrow align --pairs examples/pairs.tsv -o pairs.parquet
  swarrow align -q examples/pair-queries.fasta -t examples/pair-targets.fasta > pairs.tsv
  cat examples/pairs.tsv | swarrow align --pairs - | swarrow merge - -o from-pipe.parquet
  swarrow align --pairs examples/candidates.tsv --seqs examples/queries.fasta --target-seqs db.swdb

Pairs come as TSV (query_id, query_seq, target_id, target_seq) or an Arrow IPC stream, so
swarrow reads another program's Arrow output; into a pipe it writes an Arrow IPC stream.
With --seqs, --pairs holds ids only (query id, target id: TSV or a table), looked up in the
sequence set(s) read once (FASTA, makedb file, Arrow/Parquet of id and sequence).";

const MAKEDB_EXAMPLES: &str = "\
Example (from the repository root):
  swarrow makedb examples/db.fasta.gz -o db.swdb";

const MERGE_EXAMPLES: &str = "\
Examples (from the repository root): the queries in two shards, searched and merged:
  workflows/bin/swarrow-shard fasta examples/queries.fasta 2 part
  swarrow search -q part-000.fasta -d examples/db.fasta.gz -o part-000.parquet
  swarrow search -q part-001.fasta -d examples/db.fasta.gz -o part-001.parquet
  swarrow merge --top 10 -o merged.parquet part-000.parquet part-001.parquet

Shards of a database split in order, each searched with the whole database's --db-size and
--db-seqs, merge into exactly the unsharded result (same rows, E-values and ranks).
Inputs: Parquet, Arrow IPC file or stream (`-` = stdin), TSV; detected by content.";

#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output file; `-` or absent = stdout (`--out`: DIAMOND's name).
    #[arg(short, long, visible_alias = "out", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format: arrow (IPC stream), arrow-file, parquet, tsv, blast (also `6`, `m8`),
    /// paf, sam, bam (search and align; see the README for their fields). BLAST's `7` (search: tabular with comment lines) and field lists (`6 qseqid sseqid`,
    /// quoted or not). Default: from the extension of -o (TSV for others: .out); for stdout,
    /// TSV on a terminal, the extension of the file stdout is redirected to (TSV if none),
    /// Arrow IPC stream into a pipe.
    #[arg(long, visible_alias = "outfmt", value_name = "F")]
    pub format: Option<String>,
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Where to align: auto uses CUDA when a GPU is available, else the CPU.
    #[arg(long, value_enum, default_value = "auto")]
    pub device: Device,
    /// CPU threads (default: all cores).
    #[arg(short = 'p', long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress line and no summary (warnings and errors still print). Without a terminal
    /// on stderr there are none anyway.
    #[arg(long)]
    pub quiet: bool,
    /// Say which engine runs, and why not the GPU when --device auto falls back to the CPU.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print what the engine and the pipeline did (work, time per phase) on stderr at the end.
    #[arg(long, hide = true)]
    pub stats: bool,
    /// GPU tuning (hidden): host threads, each with a CUDA stream, per GPU for align.
    #[arg(long, hide = true, value_name = "N")]
    pub gpu_streams: Option<usize>,
    /// GPU tuning (hidden): pairs per piece one stream takes.
    #[arg(long, hide = true, value_name = "N")]
    pub gpu_piece: Option<usize>,
    /// GPU tuning (hidden): pieces an align call is cut into per stream.
    #[arg(long, hide = true, value_name = "N")]
    pub gpu_pieces_per_stream: Option<usize>,
    /// GPU tuning (hidden): stream the search database in chunks of this many bytes.
    #[arg(long, hide = true, value_name = "BYTES")]
    pub gpu_chunk_bytes: Option<usize>,
    /// GPU tuning (hidden): extra NVRTC options for the search kernels.
    #[arg(long, hide = true, value_name = "OPTIONS", allow_hyphen_values = true)]
    pub gpu_nvrtc: Option<String>,
}

impl RunArgs {
    /// The engine configuration these options ask for (defaults where not given).
    pub fn engine_options(&self) -> engine::EngineOptions {
        let mut cuda = engine::cuda::CudaConfig::default();
        if let Some(n) = self.gpu_streams {
            cuda.align_streams = n.max(1);
        }
        if let Some(n) = self.gpu_piece {
            cuda.align_piece_pairs = n.max(1);
        }
        if let Some(n) = self.gpu_pieces_per_stream {
            cuda.align_pieces_per_worker = n.max(1);
        }
        cuda.search_chunk_bytes = self.gpu_chunk_bytes;
        cuda.nvrtc_options = self.gpu_nvrtc.iter().flat_map(|o| o.split_whitespace().map(String::from)).collect();
        engine::EngineOptions { threads: self.threads, cuda }
    }
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

/// Row thresholds: a pair (search: a hit) failing one is not written. In the units of the
/// output columns; the other tools' spellings convert theirs.
#[derive(Args, Debug, Default)]
pub struct ThresholdArgs {
    /// Keep rows scoring at least N (raw score, the `score` column).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub min_score: Option<i64>,
    /// Keep rows of at least B bits (DIAMOND's --min-score is this, in bits).
    #[arg(long, value_name = "B", allow_negative_numbers = true)]
    pub min_bits: Option<f64>,
    /// Keep rows of at least P percent identity (0-100, the `pident` column; DIAMOND's --id,
    /// BLAST's -perc_identity).
    #[arg(long, visible_alias = "id", value_name = "P", allow_negative_numbers = true)]
    pub min_pident: Option<f64>,
    /// MMseqs2's --min-seq-id: identity as a fraction (0-1); 0.9 is --min-pident 90.
    #[arg(long, value_name = "F", conflicts_with = "min_pident", allow_negative_numbers = true)]
    pub min_seq_id: Option<f64>,
    /// Keep rows covering at least F of the query (0-1, the `qcov` column).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub min_qcov: Option<f64>,
    /// DIAMOND's --query-cover, BLAST's -qcov_hsp_perc: query coverage in percent (0-100).
    #[arg(long, value_name = "P", conflicts_with = "min_qcov", allow_negative_numbers = true)]
    pub query_cover: Option<f64>,
    /// Keep rows covering at least F of the target (0-1, the `tcov` column).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub min_tcov: Option<f64>,
    /// DIAMOND's --subject-cover: target coverage in percent (0-100).
    #[arg(long, value_name = "P", conflicts_with = "min_tcov", allow_negative_numbers = true)]
    pub subject_cover: Option<f64>,
}

impl ThresholdArgs {
    /// The thresholds, with `max_evalue` (align's; search filters E-values itself), each
    /// value checked in the units of the option that gave it.
    pub fn thresholds(&self, max_evalue: Option<f64>) -> Result<Thresholds> {
        let values = ThresholdValues {
            min_score: self.min_score,
            min_bits: self.min_bits,
            max_evalue,
            min_pident: self.min_pident,
            min_qcov: self.min_qcov,
            min_tcov: self.min_tcov,
        };
        // Options in other units are compared in those units (`--query-cover 70` keeps qcov
        // 0.7), never converted: 70 x 0.01 is 0.7000000000000001.
        let mut thresholds = Thresholds::new(&values)?;
        if let Some(v) = self.min_seq_id {
            thresholds = thresholds.with_scaled("min-seq-id", Column::Pident, false, v)?;
        }
        if let Some(v) = self.query_cover {
            thresholds = thresholds.with_scaled("query-cover", Column::Qcov, true, v)?;
        }
        if let Some(v) = self.subject_cover {
            thresholds = thresholds.with_scaled("subject-cover", Column::Tcov, true, v)?;
        }
        self.warn_small_percents();
        Ok(thresholds)
    }

    /// A percentage of 1 or below (`--id 0.9`) is most likely a fraction typed where a
    /// percentage is read: said once on stderr, the value kept as given.
    fn warn_small_percents(&self) {
        let percents = [
            ("--min-pident (--id, -perc_identity)", self.min_pident, "identity", "--min-seq-id"),
            ("--query-cover (-qcov_hsp_perc)", self.query_cover, "query coverage", "--min-qcov"),
            ("--subject-cover", self.subject_cover, "target coverage", "--min-tcov"),
        ];
        for (name, value, what, fraction) in percents {
            if let Some(v) = value.filter(|v| *v > 0.0 && *v <= 1.0) {
                eprintln!(
                    "swarrow: warning: {name} {v} is read as {v}% {what}; it takes a percentage (0-100), \
                     {fraction} takes a fraction (0-1)"
                );
            }
        }
    }
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
    /// Output columns, comma separated, in order, for every format: query target score bits
    /// evalue qstart qend tstart tend qlen tlen recomputed rank pident nident length mismatch
    /// gapopen gaps qcov tcov qcovhsp cigar qaln taln qheader theader; BLAST's and MMseqs2's
    /// names work too (qseqid sseqid bitscore sstart send slen alnlen qseq sseq qtitle
    /// stitle; std = BLAST's twelve). Identity columns compute the traceback (see the
    /// README). Default: the format's (BLAST tabular: outfmt 6).
    #[arg(long, value_name = "COLS")]
    pub columns: Option<String>,
    /// E-values: classic (as `OLD_FSC=1 blastp -comp_based_stats 0`) or spouge (BLAST's
    /// finite-size correction, as plain `blastp -comp_based_stats 0`; protein matrices).
    #[arg(long, value_enum, value_name = "MODEL", default_value = "classic")]
    pub evalue_model: EvalueModel,
    /// Hits reported per query, as BLAST's and DIAMOND's --max-target-seqs (not DIAMOND's
    /// --top, which is a score percentage).
    #[arg(short = 'k', long, visible_alias = "max-target-seqs", value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Report only hits with an E-value at most E (where statistics exist).
    #[arg(
        short = 'e',
        long,
        visible_alias = "evalue",
        value_name = "E",
        default_value_t = 10.0,
        allow_negative_numbers = true
    )]
    pub max_evalue: f64,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
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
    /// PAF's cg:Z and SAM/BAM's CIGAR with =/X (identical/different residues) instead of M;
    /// in PAF it also asks for cg:Z.
    #[arg(long)]
    pub eqx: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["query", "pairs"]))]
pub struct AlignArgs {
    /// FASTA of queries, paired record by record with --target.
    #[arg(short, long, value_name = "A.fa", requires = "target")]
    pub query: Option<PathBuf>,
    /// FASTA of targets, paired record by record with --query.
    #[arg(short, long, value_name = "B.fa", requires = "query")]
    pub target: Option<PathBuf>,
    /// Pairs: TSV (query_id, query_seq, target_id, target_seq; header optional; gzip allowed),
    /// or a table with those columns as an Arrow IPC stream or file or a Parquet file;
    /// detected from content; `-` = stdin. With --seqs: candidate pairs by id (TSV of
    /// query id, target id; or a table with the id columns).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["query", "target"])]
    pub pairs: Option<PathBuf>,
    /// Pairs by id: the sequences of the ids in --pairs (then a list of candidate pairs:
    /// TSV of query id, target id, or an Arrow/Parquet table with --query-id-col and
    /// --target-id-col). FASTA (plain or gzip), a makedb file, or an Arrow/Parquet table of
    /// --seqs-id-col, --seqs-col; read once and kept in memory. Alone it holds both ids.
    #[arg(long, value_name = "SEQS", requires = "pairs")]
    pub seqs: Option<PathBuf>,
    /// Pairs by id: the target ids' sequences (then --seqs holds the query ids').
    #[arg(long, value_name = "SEQS", requires = "seqs")]
    pub target_seqs: Option<PathBuf>,
    /// Arrow/Parquet sequence sets (--seqs, --target-seqs): the column holding the ids.
    #[arg(long, value_name = "NAME", default_value = "id")]
    pub seqs_id_col: String,
    /// Arrow/Parquet sequence sets (--seqs, --target-seqs): the column holding the sequences.
    #[arg(long, value_name = "NAME", default_value = "sequence")]
    pub seqs_col: String,
    /// Arrow/Parquet pairs: the column holding the query sequences.
    #[arg(long, value_name = "NAME", default_value = "query_seq")]
    pub query_col: String,
    /// Arrow/Parquet pairs: the column holding the target sequences.
    #[arg(long, value_name = "NAME", default_value = "target_seq")]
    pub target_col: String,
    /// Arrow/Parquet pairs: the column holding the query ids.
    #[arg(long, value_name = "NAME", default_value = "query_id")]
    pub query_id_col: String,
    /// Arrow/Parquet pairs: the column holding the target ids.
    #[arg(long, value_name = "NAME", default_value = "target_id")]
    pub target_id_col: String,
    /// Arrow/Parquet pairs: input columns copied to the output beside each result, comma
    /// separated; `all` (default: every column but the four above) or `none`. A carried
    /// column named like a result column (score, qstart, ...) is renamed input_<name>.
    #[arg(long, value_name = "COLS", default_value = "all")]
    pub carry: String,
    /// Pairs by id: what the candidate list is. auto: told from its content (PAF: 12 or
    /// more tab-separated columns, + or - in column 5, numbers in columns 2-4 and 7-12) or
    /// its name (.paf, .paf.gz); else TSV, Arrow or Parquet. paf: PAF whatever it looks like
    /// (stdin).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "auto", requires = "seqs")]
    pub pairs_format: CandidateFormatArg,
    /// Candidates with regions (PAF, --region-cols): residues added on each side of each
    /// region (the window aligned, inside the sequence); `full`: whole sequences. The
    /// result is the best alignment within the window; coordinates are on the whole
    /// sequences.
    #[arg(long, value_name = "MARGIN|full", default_value = "200")]
    pub window: String,
    /// TSV (with a header), Arrow or Parquet candidates: the columns of each candidate's
    /// regions, QSTART,QEND,TSTART,TEND (0-based half-open on the forward strands, as PAF's
    /// columns 3-4 and 8-9); each pair is aligned in its window (--window).
    #[arg(long, value_name = "QSTART,QEND,TSTART,TEND", requires = "seqs")]
    pub region_cols: Option<String>,
    /// TSV (with a header), Arrow or Parquet candidates: the column of each candidate's
    /// strand (+ or -).
    #[arg(long, value_name = "NAME", requires = "seqs")]
    pub strand_col: Option<String>,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Output columns, comma separated, in order, for every format: query target score bits
    /// evalue qstart qend tstart tend qlen tlen recomputed pident nident length mismatch
    /// gapopen gaps qcov tcov qcovhsp cigar qaln taln qheader theader; BLAST's and MMseqs2's
    /// names work too (qseqid sseqid bitscore sstart send slen alnlen qseq sseq qtitle
    /// stitle; std = BLAST's twelve). Identity columns compute the traceback (see the
    /// README). Default: the format's (BLAST tabular: outfmt 6).
    #[arg(long, value_name = "COLS")]
    pub columns: Option<String>,
    /// E-values: classic (as `OLD_FSC=1 blastp -comp_based_stats 0`) or spouge (BLAST's
    /// finite-size correction, as plain `blastp -comp_based_stats 0`; protein matrices).
    #[arg(long, value_enum, value_name = "MODEL", default_value = "classic")]
    pub evalue_model: EvalueModel,
    /// Substitution matrix for proteins: BLOSUM45/50/62/80/90, PAM30/70/250.
    #[arg(long, value_name = "NAME", conflicts_with = "dna")]
    pub matrix: Option<String>,
    /// DNA scoring: match/mismatch instead of a matrix (U reads as T; ambiguity codes mismatch).
    #[arg(long)]
    pub dna: bool,
    /// DNA match score.
    #[arg(long = "match", value_name = "M", default_value_t = 2, requires = "dna", allow_negative_numbers = true)]
    pub match_score: i32,
    /// DNA mismatch score: negative, below --match (-3 costs 3 per mismatch; not a positive
    /// penalty as in BWA or minimap2).
    #[arg(long, value_name = "N", default_value_t = -3, requires = "dna", allow_negative_numbers = true)]
    pub mismatch: i32,
    #[command(flatten)]
    pub gaps: GapArgs,
    /// Keep pairs with an E-value at most E (default: every pair).
    #[arg(short = 'e', long, visible_alias = "evalue", value_name = "E", allow_negative_numbers = true)]
    pub max_evalue: Option<f64>,
    #[command(flatten)]
    pub thresholds: ThresholdArgs,
    /// Alignment mode: local (Smith-Waterman), global (whole query against whole target,
    /// Needleman-Wunsch), semi-global (the ends --free-ends names stay unaligned at no
    /// cost) or overlap (read overlaps: the semi-global alignment with all four ends free
    /// when its score + --clip-penalty reaches the local score, else the local alignment, an
    /// internal match). Bits and evalue are null outside local mode.
    #[arg(long, value_name = "MODE", default_value = "local")]
    pub mode: String,
    /// With --mode overlap: what leaving the ends unaligned costs, P (default 20): an
    /// overlap that reaches the sequences' ends is kept when its score + P is at least the
    /// best local score.
    #[arg(long, value_name = "P")]
    pub clip_penalty: Option<u32>,
    /// With --mode semi-global: the ends that may stay unaligned at no cost, a comma list of
    /// query-start, query-end, target-start, target-end (default: all four; e.g.
    /// target-start,target-end places the whole query inside the target).
    #[arg(long, value_name = "ENDS")]
    pub free_ends: Option<String>,
    /// DNA: the query's strands to align against the target: plus (as given), minus (its
    /// reverse complement) or both (the better score is kept, a tie going to plus). Default:
    /// the strand each PAF candidate names, else plus. Coordinates stay on the query as given;
    /// CIGAR and aligned strings are in target order (the strand column says which).
    #[arg(long, value_name = "STRAND", value_parser = ["plus", "minus", "both"])]
    pub strand: Option<String>,
    /// Pairs per engine batch (default: sized for the device).
    #[arg(long, value_name = "N", hide = true)]
    pub batch: Option<usize>,
    /// Batches in the engine at once (default: 4 on a GPU, 2 on the CPU; tuning).
    #[arg(long, value_name = "N", hide = true)]
    pub in_flight: Option<usize>,
    /// PAF's cg:Z and SAM/BAM's CIGAR with =/X (identical/different residues) instead of M;
    /// in PAF it also asks for cg:Z.
    #[arg(long)]
    pub eqx: bool,
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
    /// Output database file (not `-`: a database is memory-mapped, never streamed).
    #[arg(short, long, value_name = "DB.swdb")]
    pub output: PathBuf,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Outputs of `swarrow search` (or `align`), in shard order: the order breaks score ties.
    #[arg(value_name = "SHARD", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Hits kept per query (search results; normally the --top of the shard runs).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Merge shards that carry no run settings (TSV, or metadata stripped by another tool)
    /// without checking that their scoring, gap costs and search space agree.
    #[arg(long)]
    pub trust_shards: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    /// Accepted for uniformity with the other subcommands (merge prints no progress).
    #[arg(long)]
    pub quiet: bool,
}

/// The whole program on `args` (the program name first), as `main` runs it and as the Python
/// package's `swarrow` command runs it in-process: BLAST's options rewritten, signal cleanup
/// installed, errors printed; returns the exit status. Help, version and argument errors
/// print and exit as clap does.
pub fn main_with<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> u8 {
    crate::pipeline::mark_start();
    let args = blast_argv(args);
    if let Err(e) = check_blast_words(&args).and_then(|()| check_single_dash_longs(&args)) {
        eprintln!("swarrow: error: {}", e);
        return e.exit_code() as u8;
    }
    let subcommand = args.get(1).and_then(|a| a.to_str()).filter(|a| !a.starts_with('-')).map(str::to_string);
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return argument_error(e, subcommand.as_deref()),
    };
    crate::atomic::install_signal_cleanup();
    match run(cli) {
        Ok(()) => 0,
        Err(e) if e.is_broken_pipe() => 0,
        // Bad input is the user's to fix: one line (a GPU compiler's log may take several).
        Err(e @ Error::Input(_)) => {
            eprintln!("swarrow: error: {}", crate::error::one_line(&e.to_string()));
            e.exit_code() as u8
        }
        Err(e) => {
            eprintln!("swarrow: error: {}", e);
            e.exit_code() as u8
        }
    }
}

/// Help and version print as clap prints them; an argument error is one line, `swarrow:
/// error: ...`, and at most one hint (clap's tip, else where the options are listed), exit 2.
fn argument_error(e: clap::Error, subcommand: Option<&str>) -> u8 {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return 0;
    }
    let text = e.render().to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    if matches!(e.kind(), ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand)
        || !first.starts_with("error:")
    {
        // A bare `swarrow` or `swarrow SUB` without what it needs: the help is the answer.
        let _ = e.print();
        return 2;
    }
    let rest: Vec<&str> = lines.collect();
    // A number too large for its option is out of range, not malformed.
    let first = first
        .replace("number too large to fit in target type", "out of range (too large)")
        .replace("number too small to fit in target type", "out of range (too small)");
    let first = first.as_str();
    if first.ends_with(':') {
        // `the following required arguments were not provided:` and their list, on one line.
        let listed: Vec<&str> = rest.iter().take_while(|l| !l.starts_with("Usage:")).copied().collect();
        eprintln!("swarrow: {} {}", first, listed.join(", "));
    } else {
        eprintln!("swarrow: {first}");
    }
    let known = subcommand.filter(|s| Cli::command().get_subcommands().any(|c| c.get_name() == *s));
    match (rest.iter().find_map(|l| l.strip_prefix("tip: ")), known) {
        (Some(tip), _) => eprintln!("  tip: {tip}"),
        (None, Some(sub)) => eprintln!("  tip: swarrow {sub} --help lists its options"),
        (None, None) => eprintln!("  tip: swarrow --help lists the subcommands"),
    }
    2
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Search(args) => with_progress(args.run.quiet, out_path(&args.out).is_none(), |p| search(args, p)),
        Command::Align(args) => with_progress(args.run.quiet, out_path(&args.out).is_none(), |p| align(args, p)),
        Command::Makedb(args) => with_progress(args.quiet, false, |p| makedb(args, p)),
        Command::Merge(args) => merge(args),
        Command::Pairhmm(args) => pairhmm(args),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "swarrow", &mut std::io::stdout());
            Ok(())
        }
        Command::Man { dir } => man(dir.as_deref()),
    }
}

/// Runs `f` with a progress line (on a terminal), erased before any error is printed.
fn with_progress(quiet: bool, to_stdout: bool, f: impl FnOnce(&Progress) -> Result<()>) -> Result<()> {
    let progress = Progress::new(quiet, to_stdout);
    let result = f(&progress);
    progress.stop();
    result
}

fn man(dir: Option<&Path>) -> Result<()> {
    let cmd = Cli::command();
    match dir {
        Some(dir) => clap_mangen::generate_to(cmd, dir)
            .map_err(|e| Error::io(format!("writing man pages into {}", dir.display()), e)),
        None => {
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout()).map_err(|e| Error::io("writing the man page", e))
        }
    }
}

/// Checks that the named input files exist before anything starts, so a mistyped path is the
/// first and only message.
fn require_inputs(paths: &[&Path]) -> Result<()> {
    for p in paths.iter().filter(|p| p.as_os_str() != "-") {
        // Opening a pipe (`<(zcat db.fa.gz)`, a FIFO) would consume its writer: only regular
        // files are opened ahead; the readers report the rest.
        let regular = std::fs::metadata(p).map(|m| m.is_file()).unwrap_or(true);
        if regular {
            io::input::open_file(p)?;
        }
    }
    Ok(())
}

fn pairhmm(args: PairhmmArgs) -> Result<()> {
    use crate::pairhmm::{self, input::BatchReader};
    pairhmm::check_gcp(args.gcp)?;
    let inputs: Vec<&Path> =
        [&args.pairs, &args.reads, &args.haplotypes].into_iter().flatten().map(|p| p.as_path()).collect();
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Error::usage("only one of --reads and --haplotypes can be read from stdin"));
    }
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    let format = resolve_format(&args.out)?;
    let engine = pairhmm::select(args.run.device, args.run.threads, args.run.verbose)?;
    let limits = pairhmm::batch_limits(engine.as_ref(), args.batch_pairs);
    let reader = match (&args.pairs, &args.reads, &args.haplotypes) {
        (Some(p), _, _) => BatchReader::pairs(p, args.gcp, limits)?,
        (None, Some(r), Some(h)) => BatchReader::grouped(r, h, args.gcp, limits)?,
        _ => return Err(Error::usage("give --pairs FILE, or --reads FILE with --haplotypes FILE")),
    };
    let meta = pairhmm::run_metadata(engine.as_ref());
    let note = note_default_format(&args.out, args.run.quiet, &Progress::hidden());
    let writer = output::create_table_writer(format, pairhmm::pipeline::schema(), &meta, out_path(&args.out))?;
    let writer: Box<dyn output::TableWriter> = Box::new(output::Announced::new(writer, note));
    if pairhmm::pipeline::run(engine, reader, writer)? == 0 && !args.run.quiet {
        let names: Vec<String> = inputs.iter().map(|p| Where::from_arg(p).to_string()).collect();
        eprintln!("swarrow: note: {}: no pairs; wrote an empty result", names.join(", "));
    }
    Ok(())
}

fn merge(args: MergeArgs) -> Result<()> {
    let inputs: Vec<&Path> = args.inputs.iter().map(|p| p.as_path()).collect();
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    // BLAST's `6 ...`/`7` spellings are refused here with merge's own reason, before
    // `Format::parse` would suggest `6`, which merge cannot write either.
    let blast_spelling = |f: &str| matches!(f.split_whitespace().next(), Some("6" | "7"));
    if args.out.format.as_deref().is_some_and(blast_spelling) {
        return Err(pipeline::merge::no_blast_tabular());
    }
    let format = resolve_format(&args.out)?;
    let note = note_default_format(&args.out, args.quiet, &Progress::hidden());
    pipeline::merge::merge(&args.inputs, args.top, args.trust_shards, format, out_path(&args.out), note)
}

fn search(args: SearchArgs, progress: &Progress) -> Result<()> {
    let gap_open = args.gaps.gap_open.unwrap_or(11);
    let gap_extend = args.gaps.gap_extend.unwrap_or(1);
    let scoring = Scoring::new(Matrix::protein(&args.matrix)?, gap_open, gap_extend)?;
    let settings = SearchSettings {
        top: args.top,
        max_evalue: args.max_evalue,
        db_size: args.db_size,
        db_seqs: args.db_seqs,
        evalue_model: args.evalue_model,
        thresholds: args.thresholds.thresholds(None)?,
    };
    settings.check()?;
    check_threads(args.run.threads)?;
    if args.query.as_os_str() == "-" && args.db.as_os_str() == "-" {
        return Err(Error::usage("only one of --query and --db can be read from stdin"));
    }
    check_output_not_input(args.out.output.as_deref(), &[&args.query, &args.db])?;
    require_inputs(&[&args.query, &args.db])?;
    let (format, columns) = resolve_output(&args.out, args.columns.as_deref(), Mode::Search)?;
    let columns = alignment_columns(format, args.columns.as_deref(), columns, args.eqx, Mode::Search)?;
    output::check_format_alphabet(format, Alphabet::Protein)?;
    // The database loads while the engine starts (CUDA start-up takes a while); an engine
    // problem is reported first, as it would be without the overlap.
    progress.phase_reading("loading the database", input_size(&[&args.db]));
    let engine_ready = AtomicBool::new(false);
    let (engine, db) = std::thread::scope(|s| {
        let db = crate::threads::spawn_scoped(s, "sw-load-db", || {
            let db = io::load_database(&args.db, Alphabet::Protein);
            if !engine_ready.load(Ordering::Relaxed) {
                progress.phase(starting_phase(args.run.device));
            }
            db
        });
        let engine = engine::select(args.run.device, &scoring, &args.run.engine_options(), args.run.verbose);
        engine_ready.store(true, Ordering::Relaxed);
        let db = db.join().unwrap_or_else(|_| Err(Error::Internal("database loading panicked".into())));
        (engine, db)
    });
    let engine = engine?;
    let db = Arc::new(db?);
    if db.is_empty() {
        return Err(Error::file(&Where::from_arg(&args.db), "no sequences"));
    }
    session::warn_if_nucleotides(&db, &Where::from_arg(&args.db).to_string());
    let query_count = Arc::new(AtomicU64::new(0));
    let queries =
        watch_queries(io::FastaReader::open(&args.query, Alphabet::Protein)?.allow_empty(), &args.query, &query_count);
    let (opts, mut meta) = settings.prepare(engine.as_ref(), &db, columns.need(), progress);
    if let Some(id) = query_input_id(&args.query) {
        meta.push("queries", id);
    }
    let note = note_default_format(&args.out, args.run.quiet, progress);
    // SAM's header lists the database's sequences.
    let targets = matches!(format, Format::Sam | Format::Bam)
        .then(|| Arc::new((0..db.len()).map(|i| (db.id(i).as_bytes().to_vec(), db.seq_len(i))).collect()));
    let writer = output::create_writer_with(
        format,
        &columns,
        &arrow::datatypes::Schema::empty(),
        &meta,
        out_path(&args.out),
        &alignment_output(args.eqx, Alphabet::Protein, targets),
    )?;
    let writer: Box<dyn output::ResultWriter> = Box::new(output::Announced::new(writer, note));
    progress.phase_aligning("aligning", input_size(&[&args.query]));
    let name = engine.name();
    let times = pipeline::search::search(engine.clone(), db, queries, opts, writer)?;
    progress.finish("queries", Some("hits"), &name);
    if query_count.load(Ordering::Relaxed) == 0 && !args.run.quiet {
        eprintln!("swarrow: note: {}: no queries; wrote an empty result", Where::from_arg(&args.query));
    }
    if args.run.stats {
        print_stats(engine.statistics().into_iter().chain(times.lines()));
    }
    Ok(())
}

/// The queries of a search, counted into `count`; a warning once the first residues look
/// like nucleotides (a DNA file searched as protein runs, with meaningless hits).
fn watch_queries(
    reader: io::FastaReader<io::input::Input>,
    path: &Path,
    count: &Arc<AtomicU64>,
) -> Box<dyn Iterator<Item = Result<crate::seq::Record>> + Send> {
    let name = format!("query file {}", Where::from_arg(path));
    let (place, seen) = (Where::from_arg(path), std::collections::HashMap::new());
    Box::new(WatchedQueries { reader, count: count.clone(), look: Some(NucleotideLook::default()), name, place, seen })
}

struct WatchedQueries {
    reader: io::FastaReader<io::input::Input>,
    count: Arc<AtomicU64>,
    look: Option<NucleotideLook>,
    name: String,
    place: Where,
    /// Each query id seen, by its 128-bit hash (a fixed size per query, however long the
    /// ids; two ids colliding by chance is out of reach), with its record index: two queries
    /// with one id are refused, as their hits could not be told apart downstream (`merge`
    /// groups hits by query id).
    seen: std::collections::HashMap<u128, usize>,
}

impl Iterator for WatchedQueries {
    type Item = Result<crate::seq::Record>;

    fn next(&mut self) -> Option<Self::Item> {
        let record = self.reader.next();
        match &record {
            Some(Ok(r)) => {
                let index = self.count.fetch_add(1, Ordering::Relaxed) as usize;
                let hash = |seed: u64| ahash::RandomState::with_seeds(seed, 1, 2, 3).hash_one(&r.id) as u128;
                if let Some(first) = self.seen.insert(hash(0) << 64 | hash(0x5eed), index) {
                    self.look = None;
                    return Some(Err(Error::record(
                        &self.place,
                        index,
                        &r.id,
                        format!(
                            "the same id as record {}: every query needs its own id, or their hits could not \
                             be told apart (swarrow merge groups hits by query id)",
                            first + 1
                        ),
                    )));
                }
                if let Some(look) = &mut self.look {
                    look.add(&r.seq);
                    if look.full() {
                        warn_once(&mut self.look, &self.name);
                    }
                }
            }
            Some(Err(_)) => self.look = None,
            None => warn_once(&mut self.look, &self.name),
        }
        record
    }
}

/// `--pairs-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CandidateFormatArg {
    Auto,
    Paf,
}

/// The pair readers' options of `align` (`--window`, `--pairs-format`, `--region-cols`,
/// `--strand-col`).
fn pair_options(args: &AlignArgs) -> Result<io::PairOptions> {
    let window = match args.window.trim() {
        "full" => None,
        margin => Some(margin.parse::<usize>().map_err(|_| {
            Error::usage(format!("--window: '{}' is neither a margin (residues, 0 or more) nor 'full'", args.window))
        })?),
    };
    let region_cols = match &args.region_cols {
        None => None,
        Some(list) => {
            let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
            match <[String; 4]>::try_from(names) {
                Ok(names) if names.iter().all(|n| !n.is_empty()) => Some(names),
                _ => {
                    return Err(Error::usage(format!(
                        "--region-cols: '{list}' is not four column names QSTART,QEND,TSTART,TEND"
                    )))
                }
            }
        }
    };
    let format = match args.pairs_format {
        CandidateFormatArg::Auto => io::CandidateFormat::Auto,
        CandidateFormatArg::Paf => io::CandidateFormat::Paf,
    };
    let reach = align_mode(args)?.window_reach();
    let strand = strand_rule(args);
    Ok(io::PairOptions {
        window,
        reach,
        strand,
        region_cols,
        strand_col: args.strand_col.clone(),
        format,
        query_text: false,
    })
}

/// `--mode`, `--free-ends` and `--clip-penalty`.
fn align_mode(args: &AlignArgs) -> Result<engine::mode::AlignMode> {
    engine::mode::AlignMode::parse(&args.mode, args.free_ends.as_deref())?.with_clip_penalty(args.clip_penalty)
}

/// `--stats`: one `name: value` line each on stderr.
fn print_stats(lines: impl IntoIterator<Item = (String, String)>) {
    for (name, value) in lines {
        eprintln!("swarrow stats: {name}: {value}");
    }
}

/// What the user waits for while the engine starts.
fn starting_phase(device: Device) -> &'static str {
    match device {
        Device::Cpu => "starting the engine",
        Device::Auto | Device::Cuda => "starting the engine (looking for a GPU, compiling kernels)",
    }
}

/// Gets `engine`'s aligner ready on a thread of its own while the pairs open and the first
/// batch is read (the first `align` call waits for it; a failure there is met again, and
/// reported, by that call). Nothing for a CPU engine.
fn prepare_in_background(engine: &Arc<dyn engine::Engine>) {
    if engine.name().starts_with("cuda") {
        let engine = engine.clone();
        crate::threads::spawn("sw-gpu-start", move || {
            let _ = engine.prepare_align();
        });
    }
}

/// The engine of `align`: `--device` in `--mode` (`engine::select_mode`).
fn select_align_engine(args: &AlignArgs, scoring: &Scoring) -> Result<Arc<dyn engine::Engine>> {
    let mode = align_mode(args)?;
    engine::select_mode(args.run.device, mode, scoring, &args.run.engine_options(), args.run.verbose)
}

/// Inputs up to this size, in all, run on the CPU under `--device auto`: at most ~1e9 cells
/// (two 32 kb sequences), a fraction of a second on the CPU, where the GPU's start alone
/// takes ~0.5 s (issue 53).
const SMALL_JOB_BYTES: u64 = 64 << 10;

/// `--device auto` on a small job is the CPU: every input a regular file (a pipe's size is
/// not known up front) and all of them together at most [`SMALL_JOB_BYTES`].
fn device_for_inputs(device: engine::Device, inputs: &[&Path]) -> engine::Device {
    if device != engine::Device::Auto || inputs.is_empty() {
        return device;
    }
    let mut total = 0u64;
    for p in inputs {
        match std::fs::metadata(p) {
            Ok(m) if m.is_file() => total += m.len(),
            _ => return device,
        }
    }
    if total <= SMALL_JOB_BYTES {
        engine::Device::Cpu
    } else {
        device
    }
}

fn align(mut args: AlignArgs, progress: &Progress) -> Result<()> {
    let inputs: Vec<&Path> = [&args.pairs, &args.query, &args.target, &args.seqs, &args.target_seqs]
        .into_iter()
        .filter_map(|p| p.as_deref())
        .collect();
    args.run.device = device_for_inputs(args.run.device, &inputs);
    let scoring = AlignScoring {
        matrix: args.matrix.clone(),
        dna: args.dna,
        match_score: args.match_score,
        mismatch: args.mismatch,
        gap_open: args.gaps.gap_open,
        gap_extend: args.gaps.gap_extend,
    }
    .scoring()?;
    check_threads(args.run.threads)?;
    if args.batch == Some(0) {
        return Err(Error::usage("--batch must be at least 1"));
    }
    let thresholds = args.thresholds.thresholds(args.max_evalue)?;
    pair_options(&args)?;
    if let (Some(candidates), Some(seqs)) = (&args.pairs, &args.seqs) {
        let (candidates, seqs) = (candidates.clone(), seqs.clone());
        return align_by_id(args, &candidates, &seqs, scoring, thresholds, progress);
    }
    refuse_what_does_not_apply(&args)?;
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
    require_inputs(&inputs)?;
    let (format, out_columns) = resolve_output(&args.out, args.columns.as_deref(), Mode::Align)?;
    let out_columns = alignment_columns(format, args.columns.as_deref(), out_columns, args.eqx, Mode::Align)?;
    output::check_format_alphabet(format, scoring.alphabet())?;
    progress.phase(starting_phase(args.run.device));
    let engine = select_align_engine(&args, &scoring)?;
    prepare_in_background(&engine);
    let aligner = Aligner::new(engine, args.evalue_model, args.batch, args.in_flight)?
        .with_thresholds(thresholds)?
        .with_statistics_written(statistics_written(&out_columns))
        .with_strand(strand_rule(&args), query_end_written(&out_columns))?;
    let mut options = pair_options(&args)?;
    options.query_text = format.writes_whole_queries();
    let pairs = io::open_pairs(&input, scoring.alphabet(), &pair_columns(&args), aligner.limits(), &options)?;
    run_align(&args, &aligner, pairs, &inputs, false, None, format, &out_columns, None, progress)
}

/// What names a search's query input in its metadata (`queries`), so that `merge` tells
/// shards of one query input (database shards: queries ordered by `qnum`) from shards of
/// query pieces (in shard order): the file's name and a hash of its real path (links
/// resolved, as workflow engines stage one file under many names), size and modification
/// time. `None` for stdin, pipes and other files that are not regular.
fn query_input_id(path: &Path) -> Option<String> {
    use std::hash::{Hash, Hasher};
    let real = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&real).ok().filter(|m| m.is_file())?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&real, meta.len(), meta.modified().ok()).hash(&mut h);
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Some(format!("{name} #{:016x}", h.finish()))
}

/// The strands `--strand` names (unset: each PAF candidate's, else plus).
fn strand_rule(args: &AlignArgs) -> StrandRule {
    args.strand.as_deref().and_then(StrandRule::parse).unwrap_or_default()
}

/// Whether `columns` write where a query's alignment ends (on the minus strand, the start
/// pass's cell).
fn query_end_written(columns: &Columns) -> bool {
    [Column::Qend, Column::Qstart, Column::Qcov, Column::Qcovhsp].iter().any(|&c| columns.contains(c))
}

/// Whether `columns` write bits or E-values (else align skips computing them).
fn statistics_written(columns: &Columns) -> bool {
    columns.contains(Column::Bits) || columns.contains(Column::Evalue)
}

/// Options of pairs by id or of pair tables given where they have no meaning (clap drops a
/// `requires` on `--pairs` once `--query` conflicts with it): an error, never ignored.
fn refuse_what_does_not_apply(args: &AlignArgs) -> Result<()> {
    if args.seqs.is_some() || args.target_seqs.is_some() || set_columns_named(args) {
        return Err(Error::usage(
            "--seqs, --target-seqs, --seqs-id-col and --seqs-col go with --pairs CANDIDATES (pairs by id); \
             --query A.fa --target B.fa pairs two FASTA files record by record",
        ));
    }
    if args.query.is_some() && pair_columns(args) != PairColumns::default() {
        return Err(Error::usage(
            "--query-col, --target-col, --query-id-col, --target-id-col and --carry name columns of a pair \
             table (--pairs); --query A.fa --target B.fa pairs two FASTA files record by record",
        ));
    }
    Ok(())
}

/// Whether `--seqs-id-col` or `--seqs-col` names a column (of a table sequence set).
fn set_columns_named(args: &AlignArgs) -> bool {
    let default = io::SetColumns::default();
    args.seqs_id_col != default.id || args.seqs_col != default.seq
}

/// The pair and carried columns `align`'s options name.
fn pair_columns(args: &AlignArgs) -> PairColumns {
    PairColumns {
        names: [args.query_id_col.clone(), args.query_col.clone(), args.target_id_col.clone(), args.target_col.clone()],
        carry: carry_list(&args.carry),
    }
}

/// Aligns `pairs` (read from `inputs`; `by_id`: their residues come from sequence sets,
/// looked at for nucleotides already) into the output `args` names, with a note when there
/// were none.
#[allow(clippy::too_many_arguments)]
fn run_align(
    args: &AlignArgs,
    aligner: &Aligner,
    pairs: Box<dyn io::PairReader>,
    inputs: &[&Path],
    by_id: bool,
    paired: Option<PairedRun>,
    format: Format,
    columns: &Columns,
    targets: Option<Arc<Vec<(Vec<u8>, usize)>>>,
    progress: &Progress,
) -> Result<()> {
    let names: Vec<String> = inputs.iter().map(|p| Where::from_arg(p).to_string()).collect();
    let names = names.join(", ");
    let pair_count = Arc::new(AtomicU64::new(0));
    let watched = (!by_id).then_some(names.as_str());
    let pairs = session::watch_pairs(pairs, watched, aligner.scoring().alphabet(), &pair_count);
    let note = note_default_format(&args.out, args.run.quiet, progress);
    let meta = aligner.metadata();
    let alignment = alignment_output(args.eqx, aligner.scoring().alphabet(), targets);
    let writer = output::create_writer_with(format, columns, &pairs.carried(), &meta, out_path(&args.out), &alignment)?;
    let writer: Box<dyn output::ResultWriter> = Box::new(output::Announced::new(writer, note));
    progress.phase_aligning("aligning", input_size(inputs));
    let name = aligner.engine().name();
    let times = match paired {
        Some((p, sets)) => aligner.run_paired(p, sets, pairs, columns.need(), progress, writer)?,
        None => aligner.run(pairs, columns.need(), progress, writer)?,
    };
    progress.finish("pairs", None, &name);
    if pair_count.load(Ordering::Relaxed) == 0 && !args.run.quiet {
        eprintln!("swarrow: note: {names}: no pairs; wrote an empty result");
    }
    if args.run.stats {
        let (read, kept) = progress.counts();
        let pairs = [("pairs read".to_string(), read.to_string()), ("pairs kept".to_string(), kept.to_string())];
        print_stats(aligner.engine().statistics().into_iter().chain(pairs).chain(times.lines()));
    }
    Ok(())
}

/// `align --pairs CANDIDATES --seqs SEQS [--target-seqs SEQS2]`: the sets are loaded (while
/// the engine starts), then the candidate pairs stream through as any pair input does.
fn align_by_id(
    args: AlignArgs,
    candidates: &Path,
    seqs: &Path,
    scoring: Scoring,
    thresholds: Thresholds,
    progress: &Progress,
) -> Result<()> {
    let target_seqs = args.target_seqs.clone();
    let mut inputs: Vec<&Path> = vec![candidates, seqs];
    inputs.extend(target_seqs.as_deref());
    if inputs.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Error::usage("only one of --pairs, --seqs and --target-seqs can be read from stdin"));
    }
    if args.query_col != "query_seq" || args.target_col != "target_seq" {
        return Err(Error::usage(
            "--query-col and --target-col name sequence columns of a pair table; with --seqs the sequences \
             come from the sequence set (its columns: --seqs-id-col, --seqs-col)",
        ));
    }
    check_output_not_input(args.out.output.as_deref(), &inputs)?;
    require_inputs(&inputs)?;
    let (format, out_columns) = resolve_output(&args.out, args.columns.as_deref(), Mode::Align)?;
    let out_columns = alignment_columns(format, args.columns.as_deref(), out_columns, args.eqx, Mode::Align)?;
    output::check_format_alphabet(format, scoring.alphabet())?;
    let mut options = pair_options(&args)?;
    options.query_text = format.writes_whole_queries();
    let set_columns = io::SetColumns {
        id: args.seqs_id_col.clone(),
        seq: args.seqs_col.clone(),
        headers: out_columns.contains(Column::Qheader) || out_columns.contains(Column::Theader),
        quals: options.query_text,
    };
    let alphabet = scoring.alphabet();
    // The sets load while the engine starts; an engine problem is reported first.
    progress.phase_reading("loading the sequences", input_size(&inputs[1..]));
    let engine_ready = AtomicBool::new(false);
    let (engine, sets) = std::thread::scope(|s| {
        let sets = crate::threads::spawn_scoped(s, "sw-load-seqs", || {
            // Two sets load side by side (each is read, encoded and indexed on one thread).
            let other = match &target_seqs {
                Some(t) if t != seqs || t.as_os_str() == "-" => {
                    Some(crate::threads::spawn_scoped(s, "sw-load-seqs", || {
                        io::SeqSet::load(t, alphabet, &set_columns)
                    }))
                }
                _ => None,
            };
            let query = io::SeqSet::load(seqs, alphabet, &set_columns).map(Arc::new);
            let target = other
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("loading the sequences panicked".into()))));
            // The query set's problem first, as when they loaded one after the other.
            let query = query?;
            let target = match target {
                Some(t) => Arc::new(t?),
                None => query.clone(),
            };
            if !engine_ready.load(Ordering::Relaxed) {
                progress.phase(starting_phase(args.run.device));
            }
            Ok::<_, Error>((query, target))
        });
        // The GPU's aligner too (context, modules, first allocations), not on the first batch.
        let engine = select_align_engine(&args, &scoring).and_then(|e| e.prepare_align().map(|()| e));
        engine_ready.store(true, Ordering::Relaxed);
        let sets = sets.join().unwrap_or_else(|_| Err(Error::Internal("loading the sequences panicked".into())));
        (engine, sets)
    });
    let aligner = Aligner::new(engine?, args.evalue_model, args.batch, args.in_flight)?
        .with_thresholds(thresholds)?
        .with_statistics_written(statistics_written(&out_columns))
        .with_strand(strand_rule(&args), query_end_written(&out_columns))?;
    let (query_set, target_set) = sets?;
    // Column names apply to table sets: given where no set is one, they are a mistake.
    if set_columns_named(&args) && !query_set.is_table() && !target_set.is_table() {
        return Err(Error::usage(format!(
            "--seqs-id-col and --seqs-col name the columns of an Arrow or Parquet sequence set; {} (FASTA or makedb)",
            if Arc::ptr_eq(&query_set, &target_set) {
                format!("{} is not one", query_set.place())
            } else {
                format!("neither {} nor {} is one", query_set.place(), target_set.place())
            }
        )));
    }
    session::warn_if_nucleotide_set(&query_set, alphabet);
    if !Arc::ptr_eq(&query_set, &target_set) {
        session::warn_if_nucleotide_set(&target_set, alphabet);
    }
    // SAM's header lists every target of the target set, known before the first pair.
    let targets: Option<Arc<Vec<(Vec<u8>, usize)>>> = matches!(format, Format::Sam | Format::Bam).then(|| {
        Arc::new((0..target_set.len() as u32).map(|i| (target_set.id(i).to_vec(), target_set.seq(i).len())).collect())
    });
    // Candidates with regions or strands (PAF, region columns) are aligned in their windows,
    // which the paired kernel (whole sequences) does not take.
    let name = candidates.to_string_lossy();
    let placed = options.format == io::CandidateFormat::Paf
        || options.region_cols.is_some()
        || options.strand_col.is_some()
        || name.ends_with(".paf")
        || name.ends_with(".paf.gz");
    let paired =
        if placed { None } else { paired_aligner(&args, &aligner, out_columns.need(), &query_set, &target_set) };
    if let Some(paired) = paired {
        // Large batches, so that a query meets many of its candidates in one kernel call.
        let limits = io::BatchLimits { pairs: args.batch.unwrap_or(PAIRED_BATCH), residues: usize::MAX };
        let sets = (query_set.clone(), target_set.clone());
        let pairs =
            io::open_pair_numbers_by_id(candidates, query_set, target_set, &pair_columns(&args), limits, &options)?;
        let paired = Some((&paired, sets));
        return run_align(&args, &aligner, pairs, &[candidates], true, paired, format, &out_columns, targets, progress);
    }
    let pairs =
        io::open_pairs_by_id(candidates, query_set, target_set, &pair_columns(&args), aligner.limits(), &options)?;
    run_align(&args, &aligner, pairs, &[candidates], true, None, format, &out_columns, targets, progress)
}

/// Pairs by id on the paired kernel: the aligner and the (query, target) sets.
type PairedRun<'a> = (&'a PairedAligner, (Arc<io::SeqSet>, Arc<io::SeqSet>));

/// Candidates per batch of pairs by id on the paired kernel (three in flight): a query
/// meets fewer of its candidates in a smaller batch (48% of the stepped cells real at 4M
/// random candidates, 63% at 20M), but the host's work per batch then overlaps the kernels
/// (BENCHMARKS.md, session 13: 20M protein candidates in 3.7 s at 4M, 6.0 s at 16M).
const PAIRED_BATCH: usize = 4 << 20;

/// The GPU's kernel of pairs grouped by query, for pairs by id where it beats the pair
/// engine (issue 53, BENCHMARKS.md sessions 13-14: protein score-and-end columns, 1.31-1.33
/// against 1.19-1.21 TCUPS; slower for DNA read overlaps and for columns that need starts):
/// a CUDA engine in local mode, a protein scoring, columns and thresholds that need the
/// score and end alone, the query on plus. `None` elsewhere, or when it cannot start: the
/// pair engine serves then.
fn paired_aligner(
    args: &AlignArgs,
    aligner: &Aligner,
    need: output::Need,
    query: &Arc<io::SeqSet>,
    target: &Arc<io::SeqSet>,
) -> Option<PairedAligner> {
    let engine = aligner.engine();
    let wins = engine.name().starts_with("cuda")
        && engine.mode().is_local()
        && aligner.scoring().alphabet() == Alphabet::Protein
        && aligner.work_need(need) == output::Need::ScoreEnd
        && args.strand.is_none();
    if !wins {
        return None;
    }
    fn seqs<'a>(set: &'a io::SeqSet) -> impl Fn(u32) -> &'a [u8] + 'a {
        move |i| set.seq(i)
    }
    let other = (!Arc::ptr_eq(query, target)).then(|| (query.len(), seqs(query)));
    match PairedAligner::new(0, aligner.scoring(), PAIRED_SHAPE, (target.len(), seqs(target)), other) {
        Ok(p) if args.run.stats => Some(p.with_reports()),
        Ok(p) => Some(p),
        Err(e) => {
            if args.run.verbose {
                eprintln!("swarrow: pairs by id run pair by pair: {e}");
            }
            None
        }
    }
}

/// `--carry`: `all` (None: every other column), `none`, or a comma-separated list.
fn carry_list(carry: &str) -> Option<Vec<String>> {
    match carry {
        "all" => None,
        "none" => Some(Vec::new()),
        list => Some(list.split(',').map(|c| c.trim().to_string()).collect()),
    }
}

fn makedb(args: MakedbArgs, progress: &Progress) -> Result<()> {
    if args.output.as_os_str() == "-" {
        return Err(Error::usage(
            "makedb -o: give a file name; a .swdb database is memory-mapped, so it cannot go to stdout ('-')",
        ));
    }
    check_output_not_input(Some(&args.output), &[&args.input])?;
    require_inputs(&[&args.input])?;
    progress.phase_reading("reading the database", input_size(&[&args.input]));
    let db = io::load_database(&args.input, Alphabet::Protein)?;
    if db.is_empty() {
        return Err(Error::file(&Where::from_arg(&args.input), "no sequences"));
    }
    progress.phase("writing");
    io::write_swdb(&db, Alphabet::Protein, &args.output)
}

/// The format and columns of a search or align output: `--format` (BLAST's `--outfmt "6
/// qseqid sseqid ..."` names columns too), `--columns`, else the format's default columns.
fn resolve_output(out: &OutputArgs, columns: Option<&str>, mode: Mode) -> Result<(Format, Columns)> {
    let (explicit, blast_list) = match out.format.as_deref() {
        Some(f) => {
            let (format, list) = Format::parse_with_columns(f)?;
            (Some(format), list)
        }
        None => (None, None),
    };
    let format = output::resolve_format(explicit, out_path(out), &Stdout::detect())?;
    if format == Format::BlastCommented && mode == Mode::Align {
        return Err(Error::usage(
            "--outfmt 7 lists the hits of each query of a search; align writes one line per pair: \
             use --outfmt 6 (BLAST tabular without comments)",
        ));
    }
    let columns = match (columns, blast_list.as_deref()) {
        (Some(_), Some(_)) => {
            return Err(Error::usage("give the columns once: --columns, or BLAST's --outfmt '6 qseqid ...'"))
        }
        (Some(list), None) | (None, Some(list)) => Columns::parse(&list, mode)?,
        (None, None) => Columns::default_for(mode, format),
    };
    Ok((format, columns))
}

/// The columns a PAF, SAM or BAM output computes (its mandatory ones, the path where needed
/// or asked: [`output::columns::for_alignment_format`]); other formats' columns unchanged.
/// `--eqx` belongs to the alignment formats.
fn alignment_columns(format: Format, given: Option<&str>, columns: Columns, eqx: bool, mode: Mode) -> Result<Columns> {
    if !format.is_alignment_format() {
        if eqx {
            return Err(Error::usage(format!(
                "--eqx writes =/X in PAF's cg:Z and SAM/BAM's CIGAR; this output is {format} (the cigar column is \
                 always =/X)"
            )));
        }
        return Ok(columns);
    }
    let given = given.map(|list| Columns::parse(list, mode)).transpose()?;
    output::columns::for_alignment_format(format, given.as_ref(), eqx)
}

/// What PAF, SAM and BAM writers need beyond the rows: `--eqx`, the targets where they are
/// known up front (pairs by id), the command line and the alphabet.
fn alignment_output(
    eqx: bool,
    alphabet: Alphabet,
    targets: Option<Arc<Vec<(Vec<u8>, usize)>>>,
) -> output::AlignmentOutput {
    output::AlignmentOutput {
        eqx,
        targets,
        command_line: output::AlignmentOutput::command_line_of_process(),
        alphabet: Some(alphabet),
    }
}

fn resolve_format(out: &OutputArgs) -> Result<Format> {
    let explicit = out.format.as_deref().map(Format::parse).transpose()?;
    output::resolve_format(explicit, out_path(out), &Stdout::detect())
}

/// Says once on stderr (unless `quiet`) that standard output gets an Arrow IPC stream only
/// because it is a pipe: a text tool reading it would see binary without a word. Said by the
/// writer just before its first results ([`output::Announced`]), so an input error found
/// before them is shown alone; above the progress line (`progress`), never joined to it.
fn note_default_format(out: &OutputArgs, quiet: bool, progress: &Progress) -> Option<output::Announcement> {
    if quiet || out.format.is_some() {
        return None;
    }
    let note = output::default_format_note(None, out_path(out), &Stdout::detect())?;
    let progress = progress.clone();
    Some(Box::new(move || progress.note(&format!("swarrow: {note}"))))
}

fn out_path(out: &OutputArgs) -> Option<&Path> {
    out.output.as_deref().filter(|p| p.as_os_str() != "-")
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn argv(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn blast_options_become_ours_and_nothing_else_changes() {
        let line = "swarrow search -query q.fa -db d.fa -out o.m8 -outfmt 6 -evalue 1e-5 -max_target_seqs 5 \
                    -num_threads 2 -matrix PAM30 -gapopen 9 -gapextend 1";
        let want = "swarrow search --query q.fa --db d.fa --output o.m8 --outfmt 6 --max-evalue 1e-5 --top 5 \
                    --threads 2 --matrix PAM30 --gap-open 9 --gap-extend 1";
        assert_eq!(blast_argv(argv(line)), argv(want));
        // Our own short options, values and everything after `--` stay as they are.
        let ours = "swarrow search -q q.fa -d d.fa -o out -e 1e-3 -k 3 -p 1 --columns std -- -db";
        assert_eq!(blast_argv(argv(ours)), argv(ours));
        // `=` forms are rewritten too; other prefixes stay for `check_blast_words` to refuse.
        assert_eq!(
            blast_argv(argv("swarrow -outfmt=6 -out=x=y.tsv -dbx -evalues")),
            argv("swarrow --outfmt=6 --output=x=y.tsv -dbx -evalues")
        );
        // The program name is never an option.
        assert_eq!(blast_argv(argv("-db")), argv("-db"));
    }

    #[test]
    fn words_spelled_like_blast_options_are_refused_not_split() {
        let problem = |line: &str| check_blast_words(&blast_argv(argv(line))).err().map(|e| e.to_string());
        assert!(problem("swarrow search -outfmt6").unwrap().contains("BLAST's -outfmt glued to its value"));
        assert!(problem("swarrow search -outfmt=6").is_none());
        assert!(problem("swarrow search -max_hsps 1").unwrap().contains("-max_hsps is not an option of swarrow"));
        assert!(problem("swarrow search -dbtype prot").unwrap().contains("-dbtype is not an option"));
        // Our short options with glued values, and anything after `--`, are left to clap.
        assert!(problem("swarrow search -k5 -e1e-5 -p2 -ohits.tsv -- -outfmt6").is_none());
        assert!(problem("-outfmt6").is_none());
    }

    #[test]
    fn diamond_unquoted_fields_join_the_format() {
        let joined =
            |line: &str| blast_argv(argv(line)).into_iter().map(|a| a.into_string().unwrap()).collect::<Vec<_>>();
        assert_eq!(
            joined("swarrow search -q q.fa --outfmt 6 qseqid sseqid pident -d d.fa"),
            ["swarrow", "search", "-q", "q.fa", "--outfmt", "6 qseqid sseqid pident", "-d", "d.fa"]
        );
        assert_eq!(joined("swarrow align -outfmt 7 std qlen"), ["swarrow", "align", "--outfmt", "7 std qlen"]);
        assert_eq!(
            joined("swarrow search --outfmt=6 qseqid sseqid"),
            ["swarrow", "search", "--outfmt=6 qseqid sseqid"]
        );
        // Not after another format, not after `--`, not for merge's file names.
        assert_eq!(joined("swarrow search --format tsv x"), ["swarrow", "search", "--format", "tsv", "x"]);
        assert_eq!(joined("swarrow search --outfmt 6 -- x"), ["swarrow", "search", "--outfmt", "6", "--", "x"]);
        assert_eq!(joined("swarrow merge --outfmt 6 a.parquet"), ["swarrow", "merge", "--outfmt", "6", "a.parquet"]);
    }

    #[test]
    fn blast_options_parse_with_blast_meaning() {
        let cli = Cli::try_parse_from(blast_argv(argv(
            "swarrow search -query q.fa -db d.fa -outfmt 6 -evalue 1e-5 -max_target_seqs 5 -num_threads 2 \
             -gapopen 11 -gapextend 1 -matrix BLOSUM80 -out hits.m8",
        )))
        .unwrap();
        let Command::Search(a) = cli.command else { panic!("not a search") };
        assert_eq!((a.query.to_str(), a.db.to_str()), (Some("q.fa"), Some("d.fa")));
        assert_eq!(a.out.format.as_deref(), Some("6"));
        assert_eq!(a.out.output.as_deref(), Some(Path::new("hits.m8")));
        assert_eq!((a.max_evalue, a.top, a.run.threads), (1e-5, 5, Some(2)));
        assert_eq!((a.gaps.gap_open, a.gaps.gap_extend), (Some(11), Some(1)));
        assert_eq!(a.matrix, "BLOSUM80");
    }
}

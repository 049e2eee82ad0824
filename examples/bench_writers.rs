//! The output writers alone, on the same rows: an Arrow IPC stream against Parquet (and any
//! other format), as `swarrow align` drives them (batches of `ResultBatch` rows, written in
//! order on one thread; Parquet's row groups and their columns encoded on the rayon pool).
//! Prints rows/s per format and each format's rate over the Arrow stream's, per repetition
//! (alternated).
//!
//!   bench_writers RESULTS [--rows N] [--batch N] [--threads N] [--repeat R]
//!                 [--formats arrow,parquet] [--out PATH] [--columns LIST]
//!
//! RESULTS: an Arrow IPC stream or file of `swarrow align` results (`--format arrow`) with
//! at least the columns to write; its rows are cycled up to N rows (default 2,000,000) in
//! batches of N (default 65,536, the CPU engine's). `--threads`: the rayon pool's threads
//! (default: all cores). `--out`: where every format writes (default /dev/null, so only the
//! writers are timed; a file path gets `.FORMAT` appended and is removed after each run).
//! `--columns`: the output columns (default: align's twelve and cigar,qaln,taln).
//! PAF, SAM and BAM (`--formats arrow,paf,sam,bam`) write their own fields: PAF with `cg:Z`
//! when `--columns` holds cigar; SAM/BAM with the targets known up front (as pairs by id),
//! or spooled until the end with `--spool` (as pairs with their residues). Path statistics
//! are counted from qaln/taln where the results have them. BAM compresses on every core.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::PathBuf;
use std::time::Instant;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Float64Type, Int32Type};
use swarrow::engine::traceback::PathStats;
use swarrow::output::{
    columns::for_alignment_format, create_writer_with, AlignmentOutput, Column, Columns, Format, Mode, Need,
    ResultBatch, ResultRow, RunMetadata,
};

const DEFAULT_COLUMNS: &str =
    "query,target,score,bits,evalue,qstart,qend,tstart,tend,qlen,tlen,recomputed,cigar,qaln,taln";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let num = |name: &str, default: usize| opt(name).map_or(default, |v| v.parse().expect(name));
    let input = args.first().filter(|a| !a.starts_with("--")).expect("usage: bench_writers RESULTS [options]");
    let rows = num("--rows", 2_000_000);
    let batch_rows = num("--batch", 65_536).max(1);
    let repeat = num("--repeat", 3);
    if let Some(n) = opt("--threads") {
        rayon::ThreadPoolBuilder::new().num_threads(n.parse().expect("--threads")).build_global().expect("pool");
    }
    let out = PathBuf::from(opt("--out").unwrap_or_else(|| "/dev/null".into()));
    let columns =
        Columns::parse(&opt("--columns").unwrap_or_else(|| DEFAULT_COLUMNS.into()), Mode::Align).expect("columns");
    let formats: Vec<Format> = opt("--formats")
        .unwrap_or_else(|| "arrow,parquet".into())
        .split(',')
        .map(|f| f.parse().expect("format"))
        .collect();

    let base = read_results(input);
    // What the formats need: PAF the statistics, SAM/BAM the path (from the results' columns).
    let need = formats.iter().fold(columns.need(), |need, f| match f {
        Format::Sam | Format::Bam => need.max(Need::Path),
        Format::Paf => need.max(Need::PathStats),
        _ => need,
    });
    let batches = cycle(&base, rows, batch_rows, need);
    let total: usize = batches.iter().map(|(_, n)| n).sum();
    println!(
        "{} base rows cycled to {total} rows in batches of {batch_rows}; columns {}; {} rayon threads; out {}",
        base.iter().map(RecordBatch::num_rows).sum::<usize>(),
        opt("--columns").unwrap_or_else(|| DEFAULT_COLUMNS.into()),
        rayon::current_num_threads(),
        out.display()
    );
    let meta = RunMetadata(vec![("mode".into(), "align".into())]);
    // SAM's targets: those of the rows, with their lengths, in order of first appearance.
    let mut targets: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (batch, _) in &batches {
        for row in batch.rows() {
            if seen.insert(row.target.to_string()) {
                targets.push((row.target.as_bytes().to_vec(), row.tlen as usize));
            }
        }
    }
    let spool = args.iter().any(|a| a == "--spool");
    let alignment = AlignmentOutput {
        eqx: false,
        targets: (!spool).then(|| std::sync::Arc::new(targets)),
        command_line: "bench_writers".into(),
        alphabet: None,
    };
    for r in 0..repeat {
        let mut line = format!("run {}:", r + 1);
        let mut first_rate = None;
        for &format in &formats {
            let path =
                if out.as_os_str() == "/dev/null" { out.clone() } else { out.with_extension(format.to_string()) };
            let schema = arrow::datatypes::Schema::empty();
            let started = Instant::now();
            let columns = match format.is_alignment_format() {
                true => {
                    let path = columns.contains(Column::Cigar).then(|| Columns(vec![Column::Cigar]));
                    for_alignment_format(format, path.as_ref(), false).expect("columns")
                }
                false => columns.clone(),
            };
            let mut writer =
                create_writer_with(format, &columns, &schema, &meta, Some(&path), &alignment).expect("writer");
            // Rows handed over as the pipeline hands them (owned: PAF/SAM/BAM hold a batch until
            // the next shows where a read's rows end); the copy made here is not timed.
            let mut copying = std::time::Duration::ZERO;
            for (batch, _) in &batches {
                let t = Instant::now();
                let batch = batch.clone();
                copying += t.elapsed();
                writer.write_owned(batch).expect("write");
            }
            writer.finish().expect("finish");
            let secs = (started.elapsed() - copying).as_secs_f64();
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            if path != out || out.as_os_str() != "/dev/null" {
                let _ = std::fs::remove_file(&path);
            }
            let rate = total as f64 / secs;
            let ratio =
                first_rate.map_or(String::new(), |f: f64| format!(" = {:.1}% of {}", 100.0 * rate / f, formats[0]));
            first_rate.get_or_insert(rate);
            let size = if bytes > 0 { format!(", {:.0} MB", bytes as f64 / 1e6) } else { String::new() };
            line += &format!("  {format} {secs:.3} s {:.3} M rows/s{size}{ratio};", rate / 1e6);
        }
        println!("{line}");
    }
}

/// The record batches of an Arrow IPC stream or file.
fn read_results(path: &str) -> Vec<RecordBatch> {
    let mut file = File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut magic = [0u8; 6];
    let is_file = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
    file.rewind().expect("rewind");
    if is_file {
        arrow::ipc::reader::FileReader::try_new(file, None).expect("Arrow file").map(|b| b.expect("batch")).collect()
    } else {
        arrow::ipc::reader::StreamReader::try_new(BufReader::new(file), None)
            .expect("Arrow stream")
            .map(|b| b.expect("batch"))
            .collect()
    }
}

/// The rows of `base` as result batches of `batch_rows`, cycled until `rows`, each with its
/// row count. Path statistics are zero where `need` asks for them (they are not read back).
fn cycle(base: &[RecordBatch], rows: usize, batch_rows: usize, need: Need) -> Vec<(ResultBatch, usize)> {
    let base_rows: usize = base.iter().map(RecordBatch::num_rows).sum();
    assert!(base_rows > 0, "no rows in the results");
    let mut out = Vec::new();
    let mut current = ResultBatch::new();
    let mut done = 0;
    'fill: loop {
        for b in base {
            let text = |name: &str| b.column_by_name(name).map(|c| c.as_string::<i32>().clone());
            let int = |name: &str| b.column_by_name(name).map(|c| c.as_primitive::<Int32Type>().clone());
            let float = |name: &str| b.column_by_name(name).map(|c| c.as_primitive::<Float64Type>().clone());
            let (query, target) = (text("query"), text("target"));
            let (cigar, qaln, taln) = (text("cigar"), text("qaln"), text("taln"));
            let ints: Vec<_> = ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"].map(int).into();
            let (bits, evalue) = (float("bits"), float("evalue"));
            let recomputed = b.column_by_name("recomputed").map(|c| c.as_boolean().clone());
            for i in 0..b.num_rows() {
                let n = |k: usize| ints[k].as_ref().map_or(0, |a| a.value(i));
                let f = |k: Option<&arrow::array::Float64Array>| k.and_then(|a| a.is_valid(i).then(|| a.value(i)));
                current.push(ResultRow {
                    query: text_at(&query, i),
                    target: text_at(&target, i),
                    score: n(0),
                    bits: f(bits.as_ref()),
                    evalue: f(evalue.as_ref()),
                    qstart: n(1),
                    qend: n(2),
                    tstart: n(3),
                    tend: n(4),
                    qlen: n(5),
                    tlen: n(6),
                    recomputed: recomputed.as_ref().is_some_and(|a| a.value(i)),
                    rank: 0,
                });
                if need >= Need::PathStats {
                    current.push_stats(stats_of(text_at(&qaln, i), text_at(&taln, i)));
                }
                if need == Need::Path {
                    current.push_path(text_at(&cigar, i), text_at(&qaln, i), text_at(&taln, i)).expect("path");
                }
                if current.len() == batch_rows || done + current.len() == rows {
                    let n = current.len();
                    done += n;
                    out.push((std::mem::replace(&mut current, ResultBatch::new()), n));
                    if done == rows {
                        break 'fill;
                    }
                }
            }
        }
    }
    out
}

/// The statistics of an alignment from its aligned strings (zero without them).
fn stats_of(qaln: &str, taln: &str) -> PathStats {
    let mut s = PathStats::default();
    let mut gap = None;
    for (q, t) in qaln.bytes().zip(taln.bytes()) {
        s.length += 1;
        let now = match (q, t) {
            (b'-', _) => Some(0),
            (_, b'-') => Some(1),
            _ => {
                if q == t {
                    s.nident += 1;
                } else {
                    s.mismatch += 1;
                }
                None
            }
        };
        if now.is_some() {
            s.gaps += 1;
            if now != gap {
                s.gapopen += 1;
            }
        }
        gap = now;
    }
    s
}

fn text_at(column: &Option<arrow::array::StringArray>, i: usize) -> &str {
    column.as_ref().map_or("", |a| a.value(i))
}

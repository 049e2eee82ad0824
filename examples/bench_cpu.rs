//! CPU engine benchmark: search GCUPS or align pairs/s through the `Engine` trait, timed
//! from reading the input to the last result (wall time including I/O, as parasail_aligner
//! is timed). Used by scripts/bench-cpu.sh.
//!
//!   bench_cpu search DB.fasta QUERIES.fasta THREADS [simd|scalar]
//!   bench_cpu align QUERIES.fasta TARGETS.fasta THREADS [simd|scalar]
//!   bench_cpu longpair DB.fasta LEN THREADS [simd|scalar]
//!
//! longpair: one pair, the first LEN residues of DB.fasta's records run together, against
//! itself (its score passes 16 bits, so the engine aligns it at 32 bits).
//!
//! BLOSUM62, gap open 11, extend 1. `SWARROW_SIMD` picks the instruction set.

use std::io::Read;
use std::time::Instant;
use swarrow::database::Database;
use swarrow::engine::scalar::ScalarEngine;
use swarrow::engine::simd::SimdEngine;
use swarrow::engine::Engine;
use swarrow::progress::Work;
use swarrow::scoring::{Alphabet, Scoring};
use swarrow::seq::Record;

/// Minimal FASTA reader (plain or gzip); residues outside the alphabet read as X.
fn read_fasta(path: &str) -> Vec<Record> {
    let mut raw = Vec::new();
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {}", path, e));
    if path.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(file).read_to_end(&mut raw).unwrap();
    } else {
        std::io::BufReader::new(file).read_to_end(&mut raw).unwrap();
    }
    let mut out: Vec<Record> = Vec::new();
    for line in raw.split(|&b| b == b'\n') {
        if let Some(h) = line.strip_prefix(b">") {
            let id = String::from_utf8_lossy(h).split_whitespace().next().unwrap_or("").to_string();
            out.push(Record { id, seq: Vec::new(), header: String::new() });
        } else if let Some(r) = out.last_mut() {
            let letters: Vec<u8> = line.iter().copied().filter(|b| b.is_ascii_alphabetic() || *b == b'*').collect();
            r.seq.extend(Alphabet::Protein.encode(&letters).expect("letters encode"));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: bench_cpu search|align FILE1 FILE2 THREADS [simd|scalar]");
        std::process::exit(2);
    }
    let threads: usize = args[4].parse().expect("THREADS");
    let sc = Scoring::blosum62();
    let engine: Box<dyn Engine> = match args.get(5).map(String::as_str).unwrap_or("simd") {
        "scalar" => Box::new(ScalarEngine::new(sc, threads).unwrap()),
        _ => Box::new(SimdEngine::new(sc, threads).unwrap()),
    };
    let start = Instant::now();
    match args[1].as_str() {
        "search" => {
            let db = Database::from_records(&args[2], read_fasta(&args[2]));
            let queries = read_fasta(&args[3]);
            let qs: Vec<&[u8]> = queries.iter().map(|q| q.seq.as_slice()).collect();
            let hits = engine.search(&qs, &db, 10, &Work::new()).unwrap();
            let secs = start.elapsed().as_secs_f64();
            let cells: f64 = qs.iter().map(|q| q.len() as f64).sum::<f64>() * db.total_residues() as f64;
            let recomputed: usize = hits.iter().flatten().filter(|h| h.recomputed).count();
            let best: Vec<i32> = hits.iter().map(|h| h.first().map_or(0, |h| h.score)).collect();
            println!(
                "engine={} mode=search queries={} targets={} cells={:.3e} seconds={:.3} gcups={:.2} top_scores={:?} recomputed_in_top={}",
                engine.name(), qs.len(), db.len(), cells, secs, cells / secs / 1e9, best, recomputed
            );
        }
        "align" => {
            let q = read_fasta(&args[2]);
            let t = read_fasta(&args[3]);
            let pairs: Vec<(&[u8], &[u8])> =
                q.iter().zip(&t).map(|(a, b)| (a.seq.as_slice(), b.seq.as_slice())).collect();
            let pairs_buf = swarrow::seq::SeqPairs::from_slices(&pairs);
            let engine_start = Instant::now();
            let al = engine.align(pairs_buf.view(), swarrow::engine::Level::Coordinates).unwrap();
            let engine_secs = engine_start.elapsed().as_secs_f64();
            let secs = start.elapsed().as_secs_f64();
            let cells: f64 = pairs.iter().map(|(a, b)| a.len() as f64 * b.len() as f64).sum();
            let checksum: i64 = al.iter().map(|a| a.score as i64 + a.qstart as i64 + a.tend as i64).sum();
            println!(
                "engine={} mode=align pairs={} cells={:.3e} seconds={:.3} pairs_per_s={:.0} gcups={:.2} engine_gcups={:.2} checksum={} recomputed={}",
                engine.name(), pairs.len(), cells, secs, pairs.len() as f64 / secs, cells / secs / 1e9,
                cells / engine_secs / 1e9, checksum,
                al.iter().filter(|a| a.recomputed).count()
            );
        }
        "longpair" => {
            let len: usize = args[3].parse().expect("LEN");
            let seq: Vec<u8> = read_fasta(&args[2]).into_iter().flat_map(|r| r.seq).take(len).collect();
            let pairs_buf = swarrow::seq::SeqPairs::from_slices(&[(seq.as_slice(), seq.as_slice())]);
            let engine_start = Instant::now();
            let al = engine.align(pairs_buf.view(), swarrow::engine::Level::Coordinates).unwrap();
            let secs = engine_start.elapsed().as_secs_f64();
            let a = &al[0];
            println!(
                "engine={} mode=longpair len={} seconds={:.3} gcups={:.2} score={} q={}-{} t={}-{} recomputed={}",
                engine.name(),
                seq.len(),
                secs,
                (seq.len() as f64).powi(2) / secs / 1e9,
                a.score,
                a.qstart,
                a.qend,
                a.tstart,
                a.tend,
                a.recomputed
            );
        }
        other => panic!("unknown mode {}", other),
    }
}

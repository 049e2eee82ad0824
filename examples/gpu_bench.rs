//! Hidden check-and-benchmark entry point for the CUDA engine (used by scripts/gpu-check.sh on
//! the GPU machine until `swarrow search --device cuda` exists).
//!
//!   gpu_bench check DB.fasta[.gz] QUERIES.fasta [MORE_QUERIES.fasta]
//!       every score of every query against the whole DB: GPU vs the CPU reference, plus a
//!       40,000-residue target and a pair whose score overflows 16 bits
//!   gpu_bench bench DB.fasta[.gz] QUERIES.fasta [--top N] [--bins SPEC] [--repeat N]
//!   gpu_bench bench-equal N LEN QUERIES.fasta [--top N] [--bins SPEC]
//!       N random sequences of length LEN, generated in memory
//!
//! --bins SPEC: e.g. "4096:8x16,max:16x16" (longest target length : P x K); --nvrtc OPTS:
//! extra NVRTC options for the search kernels (check; bench takes --configs "BINS|OPTS;...").

use std::io::Read;
use std::time::Instant;
use swarrow::database::Database;
use swarrow::engine::cuda::{layout::Shape, CudaConfig, CudaEngine};
use swarrow::engine::scalar::ScalarEngine;
use swarrow::engine::simd::SimdEngine;
use swarrow::engine::{Engine, Hit};
use swarrow::progress::Work;
use swarrow::scoring::{Alphabet, Scoring};
use swarrow::seq::Record;

type R<T> = Result<T, Box<dyn std::error::Error>>;

fn read_fasta(path: &str) -> R<Vec<Record>> {
    let mut raw = Vec::new();
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {}", path, e))?;
    if path.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(f).read_to_end(&mut raw)?;
    } else {
        std::io::BufReader::new(f).read_to_end(&mut raw)?;
    }
    let mut recs = Vec::new();
    let mut cur: Option<(String, Vec<u8>)> = None;
    for line in raw.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(h) = line.strip_prefix(b">") {
            if let Some((id, s)) = cur.take() {
                recs.push(Record { id, seq: s, header: String::new() });
            }
            let id = String::from_utf8_lossy(h).split_whitespace().next().unwrap_or("").to_string();
            cur = Some((id, Vec::new()));
        } else if let Some((_, s)) = cur.as_mut() {
            let t: Vec<u8> = line.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
            Alphabet::Protein.encode_into(&t, s).map_err(|i| format!("{}: bad residue at {}", path, i))?;
        }
    }
    if let Some((id, s)) = cur {
        recs.push(Record { id, seq: s, header: String::new() });
    }
    Ok(recs)
}

/// Deterministic xorshift, so runs are repeatable without a rand dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A residue code drawn from rough protein background frequencies (20 standard letters).
    fn residue(&mut self) -> u8 {
        // ARNDCQEGHILKMFPSTWYV, percent * 10
        const F: [u32; 20] = [83, 55, 41, 55, 14, 39, 67, 71, 23, 59, 97, 58, 24, 39, 47, 66, 53, 11, 29, 69];
        let mut x = (self.next() % 1000) as u32;
        for (i, &f) in F.iter().enumerate() {
            if x < f {
                return i as u8;
            }
            x -= f;
        }
        0
    }
    fn seq(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.residue()).collect()
    }
}

fn parse_bins(spec: &str) -> R<Vec<(u32, Shape)>> {
    spec.split(',')
        .map(|part| {
            let (lim, v) = part.split_once(':').ok_or("bin needs LIMIT:PxK")?;
            let (p, k) = v.split_once('x').ok_or("bin needs PxK")?;
            let lim = if lim == "max" { u32::MAX } else { lim.parse()? };
            Ok((lim, Shape { threads: p.parse()?, rows: k.parse()? }))
        })
        .collect()
}

fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn engine(args: &[String]) -> R<CudaEngine> {
    engine_with(opt(args, "--bins").as_deref(), &opt(args, "--nvrtc").unwrap_or_default())
}

/// This benchmark's own knobs, passed to the engine as configuration: the environment
/// variable `SWARROW_CUDA_CHUNK_BYTES` (stream the database in chunks of that size) and
/// `nvrtc` (extra NVRTC options for the search kernels).
fn cuda_config(nvrtc: &str) -> CudaConfig {
    CudaConfig {
        search_chunk_bytes: chunk_bytes(),
        // Tuning experiments: the longest query strand in passes.
        search_strand_passes: std::env::var("SWARROW_STRAND_PASSES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(swarrow::engine::cuda::layout::STRAND_PASSES),
        nvrtc_options: nvrtc.split_whitespace().map(String::from).collect(),
        ..CudaConfig::default()
    }
}

fn chunk_bytes() -> Option<usize> {
    std::env::var("SWARROW_CUDA_CHUNK_BYTES").ok().and_then(|v| v.trim().parse().ok())
}

fn engine_with(bins: Option<&str>, nvrtc: &str) -> R<CudaEngine> {
    let t = Instant::now();
    let mut e = CudaEngine::with_config(Scoring::blosum62(), cuda_config(nvrtc))?;
    if let Some(spec) = bins.filter(|s| !s.is_empty() && *s != "default") {
        e.set_bins(parse_bins(spec)?)?;
    }
    eprintln!("engine: {} (open + kernel compile/cache {:.2} s)", e.name(), t.elapsed().as_secs_f64());
    Ok(e)
}

fn compare(name: &str, gpu: &[Vec<Hit>], cpu: &[Vec<Hit>]) -> bool {
    let mut ok = true;
    let mut n = 0usize;
    for (q, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        n += c.len();
        let strip = |v: &[Hit]| v.iter().map(|h| (h.target, h.score)).collect::<Vec<_>>();
        if strip(g) != strip(c) {
            ok = false;
            let first = strip(g).iter().zip(strip(c)).position(|(a, b)| *a != b);
            eprintln!(
                "MISMATCH {} query {}: gpu {} hits, cpu {} hits, first difference at rank {:?}",
                name,
                q,
                g.len(),
                c.len(),
                first
            );
        }
    }
    println!("{}: {} queries, {} scores compared: {}", name, gpu.len(), n, if ok { "IDENTICAL" } else { "DIFFERENT" });
    ok
}

fn check(args: &[String]) -> R<bool> {
    let db = Database::from_records(&args[2], read_fasta(&args[2])?);
    let mut queries = read_fasta(&args[3])?;
    if let Some(more) = args.get(4).filter(|a| !a.starts_with("--")) {
        queries.extend(read_fasta(more)?.into_iter().take(4));
    }
    let qs: Vec<&[u8]> = queries.iter().map(|r| r.seq.as_slice()).collect();
    let e = engine(args)?;
    // The CPU oracle: the SIMD engine (tested identical to the scalar reference, and ~10x
    // faster), or the scalar reference itself with --oracle scalar.
    let threads = std::thread::available_parallelism()?.get();
    let cpu: Box<dyn Engine> = match opt(args, "--oracle").as_deref() {
        Some("scalar") => Box::new(ScalarEngine::new(Scoring::blosum62(), threads)?),
        _ => Box::new(SimdEngine::new(Scoring::blosum62(), threads)?),
    };
    eprintln!("cpu oracle: {}", cpu.name());
    let all = db.len();
    let t = Instant::now();
    let g = e.search(&qs, &db, all, &Work::new())?;
    let tg = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let c = cpu.search(&qs, &db, all, &Work::new())?;
    eprintln!("real DB: gpu {:.2} s, cpu {:.2} s", tg, t.elapsed().as_secs_f64());
    let mut ok = compare("real DB (all scores)", &g, &c);
    // The same with a small top-k, which exercises the GPU threshold selection.
    let g10 = e.search(&qs, &db, 10, &Work::new())?;
    let c10: Vec<Vec<Hit>> = c.iter().map(|v| v.iter().take(10).copied().collect()).collect();
    ok &= compare("real DB (top 10)", &g10, &c10);

    // Long target, overflowing pair, and odd shapes.
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut long = rng.seq(40_000);
    let planted = &queries[0].seq;
    long[25_000..25_000 + planted.len()].copy_from_slice(planted);
    let w = Alphabet::Protein.encode(b"W").map_err(|_| "encode")?[0];
    let wall = vec![w; 3100]; // 3100 * 11 = 34100 > 32767
    let mut recs = vec![
        Record { id: "long40000".into(), seq: long, header: String::new() },
        Record { id: "overflow".into(), seq: wall.clone(), header: String::new() },
        Record { id: "one".into(), seq: vec![w], header: String::new() },
    ];
    for i in 0..300 {
        let n = 1 + (rng.next() % 3000) as usize;
        recs.push(Record { id: format!("r{}", i), seq: rng.seq(n), header: String::new() });
    }
    let special = Database::from_records("special", recs);
    let mut sq: Vec<Vec<u8>> = vec![wall, queries[0].seq.clone(), rng.seq(1), rng.seq(5478), rng.seq(33)];
    sq.push(queries[queries.len() - 1].seq.clone());
    let sqr: Vec<&[u8]> = sq.iter().map(|v| v.as_slice()).collect();
    let g = e.search(&sqr, &special, special.len(), &Work::new())?;
    let c = cpu.search(&sqr, &special, special.len(), &Work::new())?;
    ok &= compare("40,000-residue target / overflow / odd shapes", &g, &c);
    let ov = special.original.iter().position(|&o| o == 1).unwrap() as u32;
    match g[0].iter().find(|h| h.target == ov) {
        Some(h) if h.score == 34100 && h.recomputed => {
            println!("overflow pair: score {} recomputed: OK", h.score)
        }
        other => {
            ok = false;
            println!("overflow pair: WRONG {:?}", other)
        }
    }
    println!("{}", if ok { "CHECK PASSED" } else { "CHECK FAILED" });
    Ok(ok)
}

fn bench_db(args: &[String], db: &Database, label: &str) -> R<()> {
    let qfile = if args[1] == "bench" { &args[3] } else { &args[4] };
    let queries = read_fasta(qfile)?;
    let qs: Vec<&[u8]> = queries.iter().map(|r| r.seq.as_slice()).collect();
    let top: usize = opt(args, "--top").map(|s| s.parse()).transpose()?.unwrap_or(10);
    let repeat: usize = opt(args, "--repeat").map(|s| s.parse()).transpose()?.unwrap_or(2);
    // --configs "BINS|NVRTC_OPTS;..." runs each configuration on the same loaded database.
    let configs: Vec<(String, String)> = match opt(args, "--configs") {
        Some(c) => c
            .split(';')
            .map(|c| {
                let (b, o) = c.split_once('|').unwrap_or((c, ""));
                (b.to_string(), o.to_string())
            })
            .collect(),
        None => vec![(opt(args, "--bins").unwrap_or_default(), String::new())],
    };
    let cells: f64 = qs.iter().map(|q| q.len() as f64).sum::<f64>() * db.total_residues() as f64;
    for (bins, opts) in configs {
        let e = engine_with(Some(&bins), &opts)?;
        println!("config bins='{}' opts='{}'", bins, opts);
        for i in 0..repeat {
            let t = Instant::now();
            let hits = e.search(&qs, db, top, &Work::new())?;
            let s = t.elapsed().as_secs_f64();
            let best = hits.iter().map(|h| h.first().map_or(0, |h| h.score)).max().unwrap_or(0);
            println!(
                "{} run {} ({}): {} queries x {} seqs / {} residues: {:.3} s, {:.3} TCUPS (best score {})",
                label,
                i + 1,
                if chunk_bytes().is_some() {
                    "DB streamed"
                } else if i == 0 {
                    "incl. DB upload"
                } else {
                    "DB resident"
                },
                qs.len(),
                db.len(),
                db.total_residues(),
                s,
                cells / s / 1e12,
                best
            );
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let r: R<bool> = match args.get(1).map(String::as_str) {
        Some("check") if args.len() >= 4 => check(&args),
        Some("bench") if args.len() >= 4 => (|| {
            let t = Instant::now();
            let db = Database::from_records(&args[2], read_fasta(&args[2])?);
            eprintln!("loaded {} in {:.2} s", args[2], t.elapsed().as_secs_f64());
            bench_db(&args, &db, &args[2])?;
            Ok(true)
        })(),
        Some("bench-equal") if args.len() >= 5 => (|| {
            let n: usize = args[2].parse()?;
            let len: usize = args[3].parse()?;
            let mut rng = Rng(42 + len as u64);
            let recs =
                (0..n).map(|i| Record { id: format!("e{}", i), seq: rng.seq(len), header: String::new() }).collect();
            let db = Database::from_records("equal", recs);
            bench_db(&args, &db, &format!("equal {}x{}", n, len))?;
            Ok(true)
        })(),
        _ => Err("usage: gpu_bench check DB Q [Q2] | bench DB Q [--top N] [--bins S] | bench-equal N LEN Q".into()),
    };
    match r {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {}", e);
            std::process::exit(1);
        }
    }
}

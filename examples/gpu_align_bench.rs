//! Benchmark and check harness for the CUDA one-to-one aligner (not part of the CLI).
//!
//!   gpu_align_bench bench --query q.fa --target t.fa [--dna] [--batch N] [--out x.arrow]
//!       reads pairs from two FASTA files (record i with record i), aligns them in batches
//!       (reader, GPU and writer overlapped), writes Arrow IPC, prints TCUPS, pairs/s, RSS
//!   gpu_align_bench make-dna --pairs N --query q.fa --target t.fa [--seed S]
//!       DNA pairs shaped like ADEPT's DNA-2: reads 201-250 vs contigs 99-979, matches planted
//!   gpu_align_bench make-shapes --class NAME --pairs N --query q.fa --target t.fa [--tsv p.tsv]
//!       one of issue 33's pair classes (SHAPE_CLASSES), half of them related, seeded
//!   gpu_align_bench check --pairs N [--seed S] [--dna2 N] [--shapes N] [--query q.fa --target t.fa]...
//!       GPU against the CPU engine on random protein and DNA pairs (lengths 1 to 20,000,
//!       overflowing pairs included), DNA-2-shaped pairs and the given real protein pairs
//!       (each --query/--target file pair): every score and coordinate equal
//!   gpu_align_bench host [--pairs N] [--min-group G] [--multipass]
//!       host costs of planning a piece, and the forward pass's share of real cells
//!
//!   gpu_align_bench by-id --seqs SET --pairs CANDIDATES [--target-seqs SET2] [--dna]
//!       the engine on the pairs `swarrow align --pairs CANDIDATES --seqs SET` reads: the
//!       sets loaded once, batches gathered by the CLI's reader (not timed) and aligned one
//!       call at a time (timed): the engine's rate on exactly those pairs, and peak RSS
//!
//! bench options: --preload (parse one pass of the files before the clock, then stream it
//! --repeat times), --in-flight N (calls in flight), and the engine's tuning: --streams,
//! --piece, --pieces-per-stream (pieces a call is cut into per stream), --depth (pieces in flight per stream), --max-rows, --min-group, --multipass,
//! --host-bins (every piece binned on the host), --no-pipeline (multi-pass groups on one warp),
//! --upload staged|direct.

use std::io::{BufWriter, Write};
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::Instant;
use swarrow::engine::cuda::align::GpuAligner;
use swarrow::engine::cuda::CudaConfig;
use swarrow::engine::{select, Alignment, Device, Engine};
use swarrow::scoring::{Alphabet, Matrix, Scoring};
use swarrow::seq::SeqPairs;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn num(args: &[String], name: &str, default: usize) -> usize {
    arg(args, name).map(|v| v.parse().expect("number")).unwrap_or(default)
}

fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// User and system CPU seconds of `who` (a `getrusage` target): on a host of many cores,
/// the consumer thread's busy time bounds the reader's rate.
fn cpu_seconds(who: libc::c_int) -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn scoring(args: &[String], dna: bool) -> Scoring {
    let open = num(args, "--gap-open", if dna { 5 } else { 11 }) as i32;
    let ext = num(args, "--gap-extend", if dna { 2 } else { 1 }) as i32;
    let m = if dna {
        Matrix::dna(num(args, "--match", 2) as i32, -(num(args, "--mismatch", 3) as i32))
    } else {
        Matrix::protein(&arg(args, "--matrix").unwrap_or("BLOSUM62".into())).unwrap()
    };
    Scoring::new(m, open, ext).unwrap()
}

/// Parsed FASTA records: encoded residues of many records in one buffer.
struct Chunk {
    buf: Vec<u8>,
    recs: Vec<(usize, usize)>,
}

/// Encodes the records of `data` (whole records, starting at a '>').
fn parse_records(data: &[u8], alpha: Alphabet) -> Chunk {
    let mut buf = Vec::with_capacity(data.len());
    let mut recs = Vec::new();
    let mut i = 0;
    while i < data.len() {
        // Header line.
        let nl = data[i..].iter().position(|&b| b == b'\n').map_or(data.len(), |p| i + p);
        let start = buf.len();
        let mut j = nl + 1;
        while j < data.len() && data[j] != b'>' {
            let e = data[j..].iter().position(|&b| b == b'\n').map_or(data.len(), |p| j + p);
            let mut line = &data[j..e];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            alpha.encode_into(line, &mut buf).expect("valid residues");
            j = e + 1;
        }
        recs.push((start, buf.len() - start));
        i = j;
    }
    Chunk { buf, recs }
}

/// Streams one FASTA file as parsed chunks: maps the file (no read copy), takes 64 MiB
/// windows cut at record starts, and parses each window's pieces on all cores. `repeat`
/// passes over the file.
fn stream_fasta(path: String, alpha: Alphabet, repeat: usize, tx: std::sync::mpsc::SyncSender<Arc<Chunk>>) {
    use rayon::prelude::*;
    const BLOCK: usize = 64 << 20;
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {}", path, e));
    // SAFETY: the benchmark's input files are not modified while it runs.
    let map = unsafe { memmap2::Mmap::map(&file) }.unwrap_or_else(|e| panic!("{}: {}", path, e));
    let all: &[u8] = &map;
    let record_start = |p: usize| all[p] == b'>' && (p == 0 || all[p - 1] == b'\n');
    for _ in 0..repeat {
        let mut pos = 0;
        while pos < all.len() {
            // Window end: the last record start before pos + BLOCK (or the next one after).
            let mut cut = (pos + BLOCK).min(all.len());
            if cut < all.len() {
                let back = all[pos + 1..cut].windows(2).rposition(|w| w == b"\n>").map(|p| pos + 1 + p + 1);
                cut = back.unwrap_or_else(|| (cut..all.len()).find(|&p| record_start(p)).unwrap_or(all.len()));
            }
            let data = &all[pos..cut];
            // Pieces cut at record starts, parsed in parallel.
            let pieces = 64;
            let mut bounds = vec![0usize];
            for k in 1..pieces {
                let mut p = (data.len() * k / pieces).max(*bounds.last().unwrap());
                while p < data.len() && !(data[p] == b'>' && p > 0 && data[p - 1] == b'\n') {
                    p += 1;
                }
                bounds.push(p);
            }
            bounds.push(data.len());
            let chunks: Vec<Chunk> = bounds
                .windows(2)
                .collect::<Vec<_>>()
                .par_iter()
                .map(|w| parse_records(&data[w[0]..w[1]], alpha))
                .collect();
            for c in chunks {
                if !c.recs.is_empty() && tx.send(Arc::new(c)).is_err() {
                    return;
                }
            }
            // Drop the parsed window's pages from this mapping (they are copies in the
            // chunks now), so resident memory stays flat however large the file is.
            // SAFETY: a read-only file mapping; no slice of this window outlives the parse.
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, pos, cut - pos) };
            pos = cut;
        }
    }
}

type Rec = (Arc<Chunk>, usize);

fn slice(r: &Rec) -> &[u8] {
    let (o, l) = r.0.recs[r.1];
    &r.0.buf[o..o + l]
}
/// Pairs laid out as the engine takes them, built on the reader thread.
type Batch = SeqPairs;

/// The aligner's tuning from this benchmark's options: `--streams N`, `--piece N`,
/// `--upload staged|direct`.
fn cuda_config(args: &[String]) -> CudaConfig {
    let d = CudaConfig::default();
    CudaConfig {
        align_streams: num(args, "--streams", d.align_streams),
        align_piece_pairs: num(args, "--piece", d.align_piece_pairs),
        align_depth: num(args, "--depth", d.align_depth),
        align_pieces_per_worker: num(args, "--pieces-per-stream", d.align_pieces_per_worker),
        align_multipass: args.iter().any(|a| a == "--multipass"),
        align_min_group: arg(args, "--min-group").and_then(|v| v.parse().ok()),
        align_host_bins: args.iter().any(|a| a == "--host-bins"),
        align_pipeline: !args.iter().any(|a| a == "--no-pipeline"),
        align_max_rows: arg(args, "--max-rows").map(|v| v.parse().expect("--max-rows N")),
        ..d
    }
}

fn bench(args: &[String]) {
    let dna = args.iter().any(|a| a == "--dna");
    let sc = scoring(args, dna);
    let alpha = sc.alphabet();
    let batch = num(args, "--batch", 524_288);
    let repeat = num(args, "--repeat", 1);
    let qpath = arg(args, "--query").expect("--query");
    let tpath = arg(args, "--target").expect("--target");
    let out_path = arg(args, "--out").unwrap_or("/dev/null".into());
    let t0 = Instant::now();
    // --mode global|semi-global [--free-ends LIST]: the modes' kernel (with --score-end the
    // forward pass alone; otherwise the reverse pass too where the mode has a free start).
    let mode = swarrow::engine::mode::AlignMode::parse(
        &arg(args, "--mode").unwrap_or("local".into()),
        arg(args, "--free-ends").as_deref(),
    )
    .unwrap();
    let aligner = Arc::new(GpuAligner::with_mode(&sc, &cuda_config(args), mode).unwrap());
    aligner.warm_up().unwrap();
    eprintln!("gpus {:?}, kernels ready in {:.2}s", aligner.gpu_names(), t0.elapsed().as_secs_f64());
    for l in aligner.kernel_report() {
        eprintln!("  {}", l);
    }

    // --preload: one pass over the files is parsed into batches before the clock starts,
    // and those batches are streamed `repeat` times (the engine end to end, without the
    // FASTA parsing); otherwise the files are parsed `repeat` times while the GPU runs.
    let preload = args.iter().any(|a| a == "--preload");
    let in_flight = num(args, "--in-flight", 2).max(1);
    let (qtx, qrx) = sync_channel::<Arc<Chunk>>(8);
    let (ttx, trx) = sync_channel::<Arc<Chunk>>(8);
    let file_passes = if preload { 1 } else { repeat };
    std::thread::spawn(move || stream_fasta(qpath, alpha, file_passes, qtx));
    std::thread::spawn(move || stream_fasta(tpath, alpha, file_passes, ttx));
    let (btx, brx) = sync_channel::<(usize, Arc<Batch>)>(2);
    // Emptied batches go back to the reader (no fresh pages per batch).
    let (spare_tx, spare_rx) = sync_channel::<Batch>(4);
    let (rtx, rrx) = sync_channel::<(usize, Vec<Alignment>)>(2 + in_flight);
    let read_batches = move |emit: &mut dyn FnMut(Batch)| -> u128 {
        let mut cells: u128 = 0;
        let recs = |rx: std::sync::mpsc::Receiver<Arc<Chunk>>| {
            rx.into_iter().flat_map(|c| (0..c.recs.len()).map(move |i| (c.clone(), i)))
        };
        let mut qs = recs(qrx);
        let mut ts = recs(trx);
        loop {
            let mut b = spare_rx.try_recv().unwrap_or_default();
            b.clear();
            let mut recs = Vec::with_capacity(batch);
            while recs.len() < batch {
                match (qs.next(), ts.next()) {
                    (Some(q), Some(t)) => {
                        cells += q.0.recs[q.1].1 as u128 * t.0.recs[t.1].1 as u128;
                        recs.push((q, t));
                    }
                    (None, None) => break,
                    _ => panic!("query and target files hold different numbers of records"),
                }
            }
            // The layout the engine reads, copied in parallel (what its packing did before).
            let refs: Vec<(&[u8], &[u8])> = recs.iter().map(|(q, t)| (slice(q), slice(t))).collect();
            b.extend_par(&refs).expect("gather");
            if b.is_empty() {
                break;
            }
            emit(b);
        }
        cells
    };
    let mut loaded: Vec<Arc<Batch>> = Vec::new();
    let mut pass_cells = 0;
    let mut read_batches = Some(read_batches);
    if preload {
        pass_cells = read_batches.take().unwrap()(&mut |b| loaded.push(Arc::new(b)));
        eprintln!("preloaded {} batches", loaded.len());
    }
    let start = Instant::now();
    let reader = std::thread::spawn(move || {
        let mut k = 0;
        if preload {
            for _ in 0..repeat {
                for b in &loaded {
                    btx.send((k, b.clone())).unwrap();
                    k += 1;
                }
            }
            return pass_cells * repeat as u128;
        }
        read_batches.unwrap()(&mut |b| {
            btx.send((k, Arc::new(b))).unwrap();
            k += 1;
        })
    });
    let writer = std::thread::spawn(move || {
        use arrow::array::{Int32Array, UInt32Array};
        use arrow::datatypes::{DataType, Field, Schema};
        use arrow::record_batch::RecordBatch;
        let schema = Arc::new(Schema::new(vec![
            Field::new("score", DataType::Int32, false),
            Field::new("qstart", DataType::UInt32, false),
            Field::new("qend", DataType::UInt32, false),
            Field::new("tstart", DataType::UInt32, false),
            Field::new("tend", DataType::UInt32, false),
        ]));
        let f = BufWriter::with_capacity(1 << 22, std::fs::File::create(&out_path).unwrap());
        let mut w = arrow::ipc::writer::StreamWriter::try_new(f, &schema).unwrap();
        let mut n = 0usize;
        // Results come back from the align threads in any order: written in input order.
        let mut held = std::collections::BTreeMap::new();
        let mut next = 0usize;
        for (k, res) in rrx {
            held.insert(k, res);
            while let Some(res) = held.remove(&next) {
                next += 1;
                n += res.len();
                let col = |f: fn(&Alignment) -> u32| Arc::new(UInt32Array::from(res.iter().map(f).collect::<Vec<_>>()));
                let rb = RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(Int32Array::from(res.iter().map(|a| a.score).collect::<Vec<_>>())),
                        col(|a| a.qstart),
                        col(|a| a.qend),
                        col(|a| a.tstart),
                        col(|a| a.tend),
                    ],
                )
                .unwrap();
                w.write(&rb).unwrap();
            }
        }
        w.finish().unwrap();
        n
    });
    // `in_flight` threads call the aligner at once (as the CLI's pipeline does), so one
    // call's tail and the next call's host preparation overlap the GPU's work.
    let path_stats = args.iter().any(|a| a == "--path-stats");
    // --score-end: the forward pass alone (score and end cell: the level of score/end columns).
    let level = match args.iter().any(|a| a == "--score-end") {
        true => swarrow::engine::Level::ScoreEnd,
        false => swarrow::engine::Level::Coordinates,
    };
    // --paths: traceback paths (CIGAR) on the GPU after each call, timed as statistics are.
    let paths = args.iter().any(|a| a == "--paths");
    let sc_paths = scoring(args, args.iter().any(|a| a == "--dna"));
    let brx = std::sync::Mutex::new(brx);
    let (gpu_secs, stats_secs) = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..in_flight)
            .map(|_| {
                let (brx, aligner, rtx, spare_tx, sc_paths) =
                    (&brx, &aligner, rtx.clone(), spare_tx.clone(), &sc_paths);
                sc.spawn(move || {
                    let (mut gpu, mut stats) = (0.0, 0.0);
                    loop {
                        let Ok((k, pairs)) = brx.lock().unwrap().recv() else { break };
                        let g = Instant::now();
                        let res = aligner.align(pairs.view(), level).unwrap();
                        gpu += g.elapsed().as_secs_f64();
                        if path_stats {
                            let g = Instant::now();
                            let counts = aligner.path_counts(pairs.view(), &res).unwrap();
                            stats += g.elapsed().as_secs_f64();
                            std::hint::black_box(counts);
                        }
                        if paths {
                            let g = Instant::now();
                            let traced = aligner.paths(pairs.view(), &res, sc_paths).unwrap();
                            stats += g.elapsed().as_secs_f64();
                            std::hint::black_box(traced);
                        }
                        if let Ok(b) = Arc::try_unwrap(pairs) {
                            let _ = spare_tx.try_send(b);
                        }
                        rtx.send((k, res)).unwrap();
                    }
                    (gpu, stats)
                })
            })
            .collect();
        let per: Vec<(f64, f64)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        // Calls overlap: the summed time over threads, divided by their number.
        let n = per.len() as f64;
        (per.iter().map(|p| p.0).sum::<f64>() / n, per.iter().map(|p| p.1).sum::<f64>() / n)
    });
    drop(rtx);
    drop(spare_tx);
    let cells = reader.join().unwrap();
    let n = writer.join().unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "pairs {} cells {:.4e} time {:.3}s (align calls {:.3}s) -> {:.3} TCUPS end to end, {:.3} TCUPS in align, {:.0} pairs/s, peak RSS {:.0} MiB",
        n,
        cells as f64,
        secs,
        gpu_secs,
        cells as f64 / secs / 1e12,
        cells as f64 / gpu_secs / 1e12,
        n as f64 / secs,
        peak_rss_mib()
    );
    if path_stats || paths {
        println!(
            "path {} calls {:.3}s ({:.3} TCUPS of the score cells); align + these at {:.0}% of the align calls' rate",
            if paths { "traceback" } else { "statistics" },
            stats_secs,
            cells as f64 / stats_secs / 1e12,
            100.0 * gpu_secs / (gpu_secs + stats_secs)
        );
    }
    for (name, value) in aligner.statistics() {
        println!("  {name}: {value}");
    }
}

/// Reader throughput alone: streams both files as `bench` does and counts residues.
fn parse_only(args: &[String]) {
    let dna = args.iter().any(|a| a == "--dna");
    let alpha = scoring(args, dna).alphabet();
    let repeat = num(args, "--repeat", 1);
    let start = Instant::now();
    let mut handles = Vec::new();
    for name in ["--query", "--target"] {
        let path = arg(args, name).expect(name);
        let (tx, rx) = sync_channel::<Arc<Chunk>>(8);
        std::thread::spawn(move || stream_fasta(path, alpha, repeat, tx));
        handles.push(std::thread::spawn(move || {
            rx.into_iter().map(|c| (c.recs.len(), c.buf.len())).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        }));
    }
    for h in handles {
        let (recs, bytes) = h.join().unwrap();
        println!("records {} residues {} in {:.3}s", recs, bytes, start.elapsed().as_secs_f64());
    }
    println!("peak RSS {:.0} MiB", peak_rss_mib());
}

/// The engine alone on candidate pairs by id (see the module doc).
fn by_id(args: &[String]) {
    use swarrow::io::pairs::{open_pairs_by_id, BatchLimits, PairColumns, SeqSet, SetColumns};
    use swarrow::seq::PairBatch;
    let dna = args.iter().any(|a| a == "--dna");
    let sc = scoring(args, dna);
    // --read-only: the reader alone (no GPU needed), for its own rate.
    let aligner = (!args.iter().any(|a| a == "--read-only")).then(|| {
        let a = GpuAligner::new(&sc, &cuda_config(args)).unwrap();
        a.warm_up().unwrap();
        a
    });
    let t0 = Instant::now();
    // As the CLI loads them for its default columns (no header columns asked for).
    let columns = SetColumns { headers: false, ..SetColumns::default() };
    let load = |name: &str| {
        let path = arg(args, name).expect(name);
        Arc::new(SeqSet::load(std::path::Path::new(&path), sc.alphabet(), &columns).unwrap())
    };
    let query = load("--seqs");
    let target = if arg(args, "--target-seqs").is_some() { load("--target-seqs") } else { query.clone() };
    eprintln!("sets loaded in {:.2}s ({} + {} sequences)", t0.elapsed().as_secs_f64(), query.len(), target.len());
    let limits = BatchLimits { pairs: num(args, "--batch", 262_144), residues: 256 << 20 };
    let path = arg(args, "--pairs").expect("--pairs");
    let mut reader = open_pairs_by_id(
        std::path::Path::new(&path),
        query,
        target,
        &PairColumns::default(),
        limits,
        &swarrow::io::PairOptions::default(),
    )
    .unwrap();
    let (mut batch, mut pairs, mut cells, mut in_align) = (PairBatch::default(), 0usize, 0f64, 0f64);
    let t1 = Instant::now();
    // CPU of the candidates' reading only (the sets loaded before).
    let cpu0 = (cpu_seconds(libc::RUSAGE_THREAD), cpu_seconds(libc::RUSAGE_SELF));
    loop {
        batch.clear();
        if !reader.fill(&mut batch).unwrap() {
            break;
        }
        let view = batch.seqs.view();
        if let Some(aligner) = &aligner {
            let t = Instant::now();
            std::hint::black_box(aligner.align(view, swarrow::engine::Level::Coordinates).unwrap());
            in_align += t.elapsed().as_secs_f64();
        }
        pairs += view.len();
        cells += view.cells() as f64;
    }
    let wall = t1.elapsed().as_secs_f64();
    println!(
        "pairs {} cells {:.4e} wall {:.3}s align calls {:.3}s -> {:.3} TCUPS in align, {:.3} end to end, peak RSS {:.0} MiB; \
         CPU s: consumer thread {:.2}, process {:.2}",
        pairs,
        cells,
        wall,
        in_align,
        cells / in_align / 1e12,
        cells / wall / 1e12,
        peak_rss_mib(),
        cpu_seconds(libc::RUSAGE_THREAD) - cpu0.0,
        cpu_seconds(libc::RUSAGE_SELF) - cpu0.1
    );
}

/// Pairs by id grouped by query (`PairedAligner`) against the pair engine on the same
/// candidates: both timed on the engine calls alone (score and end), results compared.
fn paired(args: &[String]) {
    use rayon::prelude::*;
    use swarrow::engine::cuda::paired::PairedAligner;
    use swarrow::io::pairs::{SeqSet, SetColumns};
    let dna = args.iter().any(|a| a == "--dna");
    let sc = scoring(args, dna);
    let columns = SetColumns { headers: false, ..SetColumns::default() };
    let load = |name: &str| {
        let path = arg(args, name).expect(name);
        Arc::new(SeqSet::load(std::path::Path::new(&path), sc.alphabet(), &columns).unwrap())
    };
    let t0 = Instant::now();
    let qset = load("--seqs");
    let tset = if arg(args, "--target-seqs").is_some() { load("--target-seqs") } else { qset.clone() };
    let text = std::fs::read(arg(args, "--pairs").expect("--pairs")).unwrap();
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let pairs: Vec<[u32; 2]> = lines
        .par_iter()
        .filter_map(|l| {
            let tab = l.iter().position(|&b| b == b'\t')?;
            let rest = &l[tab + 1..];
            let end = rest.iter().position(|&b| b == b'\t').unwrap_or(rest.len());
            Some([qset.find(&l[..tab])?, tset.find(&rest[..end])?])
        })
        .collect();
    drop(text);
    let limit = num(args, "--limit", pairs.len()).min(pairs.len());
    let pairs = &pairs[..limit];
    eprintln!("loaded {} candidates in {:.2}s", pairs.len(), t0.elapsed().as_secs_f64());
    let t1 = Instant::now();
    let same = Arc::ptr_eq(&qset, &tset);
    fn seqs<'a>(set: &'a SeqSet) -> impl Fn(u32) -> &'a [u8] + 'a {
        move |i| set.seq(i)
    }
    // --shape PxK: another shape of the paired kernel (compiled at run time).
    let shape = arg(args, "--shape")
        .and_then(|v| {
            let (p, k) = v.split_once('x')?;
            Some(swarrow::engine::cuda::kernels::Shape { threads: p.parse().ok()?, rows: k.parse().ok()? })
        })
        .unwrap_or(swarrow::engine::cuda::kernels::PAIRED_SHAPE);
    let pa = PairedAligner::new(0, &sc, shape, (tset.len(), seqs(&tset)), (!same).then(|| (qset.len(), seqs(&qset))))
        .unwrap()
        .with_reports();
    eprintln!("paired aligner ready in {:.2}s ({})", t1.elapsed().as_secs_f64(), pa.kernel_report());
    let cells: f64 = pairs.iter().map(|&[q, t]| qset.seq(q).len() as f64 * tset.seq(t).len() as f64).sum();
    let window = num(args, "--window", pairs.len()).max(1);
    let repeat = num(args, "--repeat", 2);
    let mut got = Vec::new();
    let mut best = f64::MAX;
    for r in 0..repeat {
        let t = Instant::now();
        got.clear();
        for w in pairs.chunks(window) {
            got.extend(pa.align_ends(w).unwrap());
        }
        pa.reports().iter().for_each(|r| eprintln!("{r}"));
        let s = t.elapsed().as_secs_f64();
        best = best.min(s);
        println!(
            "paired  round {r}: {} candidates {:.4e} cells {:.3}s -> {:.3} TCUPS, {:.2}M pairs/s (window {window})",
            pairs.len(),
            cells,
            s,
            cells / s / 1e12,
            pairs.len() as f64 / s / 1e6
        );
    }
    let missing = got.iter().filter(|a| a.is_none()).count();
    // The pair engine on the same candidates (gathered untimed), score and end.
    if args.iter().any(|a| a == "--no-compare") {
        return;
    }
    let aligner = GpuAligner::new(&sc, &cuda_config(args)).unwrap();
    aligner.warm_up().unwrap();
    let mut want = Vec::with_capacity(pairs.len());
    let mut in_align = 0f64;
    for w in pairs.chunks(262_144) {
        let mut sp = SeqPairs::default();
        for &[q, t] in w {
            sp.push(qset.seq(q), tset.seq(t));
        }
        let t = Instant::now();
        want.extend(aligner.align(sp.view(), swarrow::engine::Level::ScoreEnd).unwrap());
        in_align += t.elapsed().as_secs_f64();
    }
    println!(
        "pairs   engine: {:.3}s in align calls -> {:.3} TCUPS; paired / pairs = {:.2}x",
        in_align,
        cells / in_align / 1e12,
        in_align / best
    );
    let mut bad = 0;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(g) = g {
            if (g.score, g.qend, g.tend) != (w.score, w.qend, w.tend) {
                if bad < 10 {
                    let [q, t] = pairs[i];
                    eprintln!(
                        "MISMATCH {i} ({q},{t}) lens {}x{}: paired {:?} pairs {:?}",
                        qset.seq(q).len(),
                        tset.seq(t).len(),
                        (g.score, g.qend, g.tend),
                        (w.score, w.qend, w.tend)
                    );
                }
                bad += 1;
            }
        }
    }
    println!(
        "compare: {} candidates, {} from the paired kernel, {} left to the pair engine, {} mismatches",
        pairs.len(),
        pairs.len() - missing,
        missing,
        bad
    );
}

/// Host-side costs of one piece of the aligner (binning, packing), no GPU needed.
fn host_costs(args: &[String]) {
    use swarrow::engine::cuda::align_plan::{make_bins, pack, Item};
    let n = num(args, "--pairs", 131_072);
    let rules = swarrow::engine::cuda::align_plan::ShapeRules {
        min_group: num(args, "--min-group", 1) as u32,
        multipass: args.iter().any(|a| a == "--multipass"),
        ..swarrow::engine::cuda::align_plan::ShapeRules::new(16)
    };
    // Lengths uniform in `--qlen LO HI` and `--tlen LO HI` (default: the protein set's).
    let range = |name: &str, lo: usize, hi: usize| {
        let at = args.iter().position(|a| a == name);
        at.map_or((lo, hi), |i| (args[i + 1].parse().expect(name), args[i + 2].parse().expect(name)))
    };
    let ((qlo, qhi), (tlo, thi)) = (range("--qlen", 20, 400), range("--tlen", 400, 1664));
    let mut rng = Rng(5);
    let items: Vec<Item> = (0..n)
        .map(|i| Item { index: i as u32, qlen: rng.range(qlo, qhi) as u32, tlen: rng.range(tlo, thi) as u32 })
        .collect();
    let t = Instant::now();
    let k: u32 = items
        .iter()
        .map(|it| swarrow::engine::cuda::align_plan::choose_shape(it.qlen as usize, it.tlen as usize, true, rules).rows)
        .sum();
    println!("choose_shape x{}: {:.1} ms ({})", n, t.elapsed().as_secs_f64() * 1e3, k);
    for _ in 0..3 {
        let t = Instant::now();
        let bins = make_bins(&items, true, rules);
        println!("make_bins {} items: {:.1} ms, {} bins", n, t.elapsed().as_secs_f64() * 1e3, bins.len());
    }
    // Forward-pass efficiency: real cells against the cells the warps step through (every
    // lane of a warp runs its longest group's steps: 2 columns x R rows x 2 halves each).
    {
        let bins = make_bins(&items, true, rules);
        let real: f64 = items.iter().map(|it| it.qlen as f64 * it.tlen as f64).sum();
        let mut computed = 0f64;
        for b in &bins {
            let g = b.shape.threads as usize;
            let per_warp = 32 / g;
            let ngroups = b.groups.len() / 2;
            for w in (0..ngroups).step_by(per_warp) {
                let steps = (w..(w + per_warp).min(ngroups))
                    .map(|k| {
                        let p = |h: usize| b.groups[2 * k + h];
                        [p(0), p(1)]
                            .iter()
                            .filter(|&&i| i >= 0)
                            .map(|&i| {
                                let it = items[i as usize];
                                ((it.tlen as usize + 1) / 2 + g - 1) * b.shape.passes(it.qlen as usize)
                            })
                            .max()
                            .unwrap_or(0)
                    })
                    .max()
                    .unwrap_or(0);
                computed += steps as f64 * 2.0 * 32.0 * b.shape.rows as f64 * 2.0;
            }
            println!("bin {:?}: {} groups, max passes {}", b.shape, ngroups, b.max_passes);
        }
        println!(
            "forward: real cells {:.4e}, stepped cells {:.4e}, efficiency {:.1}%",
            real,
            computed,
            100.0 * real / computed
        );
    }
    let seqs: Vec<(Vec<u8>, Vec<u8>)> =
        items.iter().map(|it| (vec![1u8; it.qlen as usize], vec![2u8; it.tlen as usize])).collect();
    let refs: Vec<(&[u8], &[u8])> = seqs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
    let t = Instant::now();
    let p = pack(SeqPairs::from_slices(&refs).view());
    println!("pack: {:.1} ms, {} bytes", t.elapsed().as_secs_f64() * 1e3, p.seqs.len());
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

fn mutate(rng: &mut Rng, s: &[u8], n: usize, rate_pct: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 8);
    for &c in s {
        match rng.below(100) {
            x if x < rate_pct / 2 => out.push(rng.below(n) as u8),
            x if x < rate_pct * 3 / 4 => {} // deletion
            x if x < rate_pct => {
                out.push(c);
                out.push(rng.below(n) as u8)
            }
            _ => out.push(c),
        }
    }
    out
}

/// DNA-2 shape: read 201-250 bases, contig 99-979; in most pairs the read (or its prefix)
/// is planted, mutated, inside the contig. Codes 0..4 (A, C, G, T).
fn dna2_pairs(rng: &mut Rng, n: usize) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> + '_ {
    (0..n).map(move |_| {
        let tl = rng.range(99, 979);
        let ql = rng.range(201, 250);
        let t: Vec<u8> = (0..tl).map(|_| rng.below(4) as u8).collect();
        let q: Vec<u8> = if rng.below(10) < 8 {
            let w = ql.min(tl);
            let s = rng.below(tl - w + 1);
            let mut q = mutate(rng, &t[s..s + w], 4, 8);
            while q.len() < ql {
                q.push(rng.below(4) as u8);
            }
            q.truncate(ql);
            q
        } else {
            (0..ql).map(|_| rng.below(4) as u8).collect()
        };
        (q, t)
    })
}

fn make_dna(args: &[String]) {
    let n = num(args, "--pairs", 1_000_000);
    let mut rng = Rng(num(args, "--seed", 7) as u64 | 1);
    let mut qf = BufWriter::new(std::fs::File::create(arg(args, "--query").expect("--query")).unwrap());
    let mut tf = BufWriter::new(std::fs::File::create(arg(args, "--target").expect("--target")).unwrap());
    let letters = b"ACGT";
    for (k, (q, t)) in dna2_pairs(&mut rng, n).enumerate() {
        writeln!(qf, ">{}", k).unwrap();
        qf.write_all(&q.iter().map(|&c| letters[c as usize]).collect::<Vec<_>>()).unwrap();
        writeln!(qf).unwrap();
        writeln!(tf, ">{}", k).unwrap();
        tf.write_all(&t.iter().map(|&c| letters[c as usize]).collect::<Vec<_>>()).unwrap();
        writeln!(tf).unwrap();
    }
}

/// The pair classes of issue 33 (`make-shapes --class NAME`): name, DNA, query and target
/// length ranges. Half the pairs are related: the query a mutated piece of the target.
const SHAPE_CLASSES: [(&str, bool, (usize, usize), (usize, usize)); 7] = [
    ("protein-short", false, (100, 200), (100, 200)),
    ("dna-reads", true, (100, 150), (100, 150)),
    ("protein-mid", false, (300, 380), (500, 600)),
    ("protein-long", false, (800, 1_000), (800, 1_000)),
    ("protein-vlong", false, (5_000, 20_000), (5_000, 20_000)),
    ("dna-read-contig", true, (100, 150), (1_000, 5_000)),
    ("dna-vlong", true, (10_000, 30_000), (10_000, 30_000)),
];

/// Pairs of one class as letters: a random target (uniform residues), and a query that is,
/// for every second pair, a piece of the target as long as the query with 5-25% of its
/// residues substituted, deleted or inserted; else random.
fn shape_pairs<'a>(rng: &'a mut Rng, class: &str, n: usize) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> + 'a {
    let Some(&(_, dna, q, t)) = SHAPE_CLASSES.iter().find(|c| c.0 == class) else {
        panic!("--class: one of {:?}", SHAPE_CLASSES.map(|c| c.0));
    };
    let letters: &[u8] = if dna { b"ACGT" } else { b"ARNDCQEGHILKMFPSTWYV" };
    (0..n).map(move |k| {
        let (ql, tl) = (rng.range(q.0, q.1), rng.range(t.0, t.1));
        let target: Vec<u8> = (0..tl).map(|_| rng.below(letters.len()) as u8).collect();
        let query = if k % 2 == 0 {
            let w = ql.min(tl);
            let at = rng.below(tl - w + 1);
            let rate = rng.range(5, 25);
            let mut m = mutate(rng, &target[at..at + w], letters.len(), rate);
            if m.is_empty() {
                m.push(0);
            }
            m
        } else {
            (0..ql).map(|_| rng.below(letters.len()) as u8).collect()
        };
        let spell = |v: Vec<u8>| v.into_iter().map(|c| letters[c as usize]).collect::<Vec<u8>>();
        (spell(query), spell(target))
    })
}

/// `make-shapes --class NAME --pairs N [--seed S] --query q.fa --target t.fa [--tsv p.tsv]`:
/// one class's pairs as two FASTA files (record i with record i) and, with `--tsv`, as the
/// command line's TSV (query id, query, target id, target).
fn make_shapes(args: &[String]) {
    let n = num(args, "--pairs", 1_000_000);
    let class = arg(args, "--class").expect("--class");
    let mut rng = Rng(num(args, "--seed", 33) as u64 | 1);
    let file = |name: &str| BufWriter::new(std::fs::File::create(arg(args, name).expect(name)).unwrap());
    let (mut qf, mut tf) = (file("--query"), file("--target"));
    let mut tsv = arg(args, "--tsv").map(|p| BufWriter::new(std::fs::File::create(p).unwrap()));
    for (k, (q, t)) in shape_pairs(&mut rng, &class, n).enumerate() {
        for (f, s) in [(&mut qf, &q), (&mut tf, &t)] {
            writeln!(f, ">{k}").unwrap();
            f.write_all(s).unwrap();
            writeln!(f).unwrap();
        }
        if let Some(w) = tsv.as_mut() {
            write!(w, "q{k}\t").unwrap();
            w.write_all(&q).unwrap();
            write!(w, "\tt{k}\t").unwrap();
            w.write_all(&t).unwrap();
            writeln!(w).unwrap();
        }
    }
}

/// Random pairs: mostly short, some up to 20,000, some identical long ones (which overflow
/// 16 bits), over the alphabet's codes including the catch-all ones.
fn random_pairs(rng: &mut Rng, n: usize, codes: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|k| {
            let (ql, tl) = match k % 1000 {
                0 => (rng.range(1, 20_000), rng.range(1, 20_000)),
                1 => (rng.range(3_000, 6_000), rng.range(3_000, 6_000)),
                2..=20 => (rng.range(1, 2_000), rng.range(1, 2_000)),
                _ => (rng.range(1, 300), rng.range(1, 600)),
            };
            let t: Vec<u8> = (0..tl).map(|_| rng.below(codes) as u8).collect();
            let q = if k % 1000 == 1 || rng.below(2) == 0 {
                let w = ql.min(tl);
                let s = rng.below(tl - w + 1);
                let rate = if k % 1000 == 1 { 0 } else { rng.below(40) };
                let mut q = mutate(rng, &t[s..s + w], codes, rate);
                if q.is_empty() {
                    q.push(0);
                }
                q
            } else {
                (0..ql).map(|_| rng.below(codes) as u8).collect()
            };
            (q, t)
        })
        .collect()
}

fn compare(name: &str, gpu: &GpuAligner, cpu: &dyn Engine, pairs: &[(Vec<u8>, Vec<u8>)]) -> usize {
    let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
    let cells: f64 = refs.iter().map(|(q, t)| q.len() as f64 * t.len() as f64).sum();
    let longest = refs.iter().map(|(q, t)| q.len().max(t.len())).max().unwrap_or(0);
    let g = Instant::now();
    let owned = SeqPairs::from_slices(&refs);
    let got = gpu.align(owned.view(), swarrow::engine::Level::Coordinates).unwrap();
    let gs = g.elapsed().as_secs_f64();
    let c = Instant::now();
    let want = cpu.align(owned.view(), swarrow::engine::Level::Coordinates).unwrap();
    let cs = c.elapsed().as_secs_f64();
    // Score and end alone: the CPU's alignments without their starts.
    let ends = gpu.align(owned.view(), swarrow::engine::Level::ScoreEnd).unwrap();
    let mut bad = 0;
    for (i, (a, b)) in ends.iter().zip(&want).enumerate() {
        if *a != b.end_only() {
            if bad < 10 {
                eprintln!("{} pair {} score-end: gpu {:?} cpu {:?}", name, i, a, b);
            }
            bad += 1;
        }
    }
    let mut recomputed = 0;
    for (i, (a, b)) in got.iter().zip(&want).enumerate() {
        recomputed += a.recomputed as usize;
        let same = (a.score, a.qstart, a.qend, a.tstart, a.tend) == (b.score, b.qstart, b.qend, b.tstart, b.tend);
        if !same {
            if bad < 10 {
                eprintln!(
                    "{} pair {} (qlen {}, tlen {}): gpu {:?} cpu {:?}",
                    name,
                    i,
                    pairs[i].0.len(),
                    pairs[i].1.len(),
                    a,
                    b
                );
            }
            bad += 1;
        }
    }
    println!(
        "check {:<12} pairs {:>8} cells {:.3e} longest {:>6} recomputed(16-bit overflow) {:>5} mismatches {} (gpu {:.2}s, cpu {:.2}s)",
        name,
        pairs.len(),
        cells,
        longest,
        recomputed,
        bad,
        gs,
        cs
    );
    bad
}

/// Real pairs: record i of the query file with record i of the target file.
fn read_pairs(qp: &str, tp: &str, alpha: Alphabet, limit: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let q = parse_records(&std::fs::read(qp).unwrap(), alpha);
    let t = parse_records(&std::fs::read(tp).unwrap(), alpha);
    q.recs
        .iter()
        .zip(&t.recs)
        .take(limit)
        .map(|(&(a, b), &(c, d))| (q.buf[a..a + b].to_vec(), t.buf[c..c + d].to_vec()))
        .collect()
}

/// GPU against the CPU engine (`--device cpu`'s: SIMD, or the scalar reference with
/// SWARROW_ENGINE=scalar): random protein and DNA pairs (`--pairs`, half each), real
/// protein pairs from each `--query`/`--target` file pair (at most `--real` each) and
/// DNA-2-shaped pairs (`--dna2`).
fn check(args: &[String]) {
    let n = num(args, "--pairs", 1_000_000);
    let mut rng = Rng(num(args, "--seed", 11) as u64 | 1);
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(4);
    let files =
        |name: &str| -> Vec<String> { args.windows(2).filter(|w| w[0] == name).map(|w| w[1].clone()).collect() };
    let (qfiles, tfiles) = (files("--query"), files("--target"));
    let mut bad = 0;
    let mut total = 0;
    for dna in [false, true] {
        let sc = if dna { Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap() } else { Scoring::blosum62() };
        let gpu = GpuAligner::new(&sc, &cuda_config(args)).unwrap();
        let cpu = select(Device::Cpu, &sc, &swarrow::engine::EngineOptions::threads(Some(threads)), false).unwrap();
        let pairs = random_pairs(&mut rng, n / 2, sc.matrix.size());
        total += pairs.len();
        bad += compare(if dna { "random-dna" } else { "random-prot" }, &gpu, &*cpu, &pairs);
        drop(pairs);
        // Issue 33's classes of this alphabet, `--shapes` pairs each (the very long ones a
        // thousandth of that).
        for &(class, class_dna, (_, qmax), _) in SHAPE_CLASSES.iter().filter(|c| c.1 == dna) {
            let count = num(args, "--shapes", 50_000) / if qmax > 2_000 { 1_000 } else { 1 };
            let alpha = sc.alphabet();
            let pairs: Vec<_> = shape_pairs(&mut rng, class, count)
                .map(|(q, t)| (alpha.encode(&q).unwrap(), alpha.encode(&t).unwrap()))
                .collect();
            assert_eq!(class_dna, dna);
            total += pairs.len();
            bad += compare(class, &gpu, &*cpu, &pairs);
        }
        if dna {
            let pairs: Vec<_> = dna2_pairs(&mut rng, num(args, "--dna2", 200_000)).collect();
            total += pairs.len();
            bad += compare("dna2-shape", &gpu, &*cpu, &pairs);
        } else {
            for (qp, tp) in qfiles.iter().zip(&tfiles) {
                let real = read_pairs(qp, tp, sc.alphabet(), num(args, "--real", 200_000));
                total += real.len();
                bad += compare("real-prot", &gpu, &*cpu, &real);
            }
        }
    }
    println!("check total pairs {} mismatches {}", total, bad);
    if bad > 0 {
        std::process::exit(1);
    }
}

/// Traceback counters of one alignment by the path rule, the naive way: full H/E/F matrices
/// of the rectangle and a walk back from its end (an oracle independent of the GPU kernel's
/// forward carry). Returns [pairs, nident, gap opens] and H(m,n).
fn naive_counts(q: &[u8], t: &[u8], sc: &Scoring, a: &Alignment) -> ([u32; 3], i32) {
    if a.score <= 0 {
        return ([0; 3], 0);
    }
    let qs = &q[a.qstart as usize - 1..a.qend as usize];
    let ts = &t[a.tstart as usize - 1..a.tend as usize];
    let (m, n, w) = (qs.len(), ts.len(), ts.len() + 1);
    let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let neg = i32::MIN / 4;
    let (mut h, mut e, mut f) = (vec![neg; (m + 1) * w], vec![neg; (m + 1) * w], vec![neg; (m + 1) * w]);
    h[0] = 0;
    for i in 1..=m {
        for j in 1..=n {
            let k = i * w + j;
            e[k] = (h[k - 1] - oe).max(e[k - 1] - ext);
            f[k] = (h[k - w] - oe).max(f[k - w] - ext);
            h[k] = (h[k - w - 1] + sc.score(qs[i - 1], ts[j - 1])).max(e[k]).max(f[k]);
        }
    }
    let (mut i, mut j, mut state, mut last) = (m, n, 0u8, 0u8);
    let mut c = [0u32; 3];
    while i > 0 || j > 0 {
        let k = i * w + j;
        match state {
            0 => {
                if i > 0 && j > 0 && h[k] == h[k - w - 1] + sc.score(qs[i - 1], ts[j - 1]) {
                    c[0] += 1;
                    c[1] += (qs[i - 1] == ts[j - 1]) as u32;
                    last = 0;
                    i -= 1;
                    j -= 1;
                } else if h[k] == e[k] {
                    state = 1;
                } else {
                    state = 2;
                }
            }
            1 => {
                c[2] += (last != 1) as u32; // a new run of 'D' (walking back)
                last = 1;
                if e[k] == h[k - 1] - oe {
                    state = 0;
                }
                j -= 1;
            }
            _ => {
                c[2] += (last != 2) as u32; // a new run of 'I'
                last = 2;
                if f[k] == h[k - w] - oe {
                    state = 0;
                }
                i -= 1;
            }
        }
    }
    (c, h[m * w + n])
}

/// `n` random pairs (see `random_pairs`) cut to `max_len` residues.
fn truncated_pairs(rng: &mut Rng, n: usize, letters: usize, max_len: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    random_pairs(rng, n, letters)
        .into_iter()
        .map(|(mut q, mut t)| {
            q.truncate(max_len);
            t.truncate(max_len);
            (q, t)
        })
        .collect()
}

/// Cells of the alignments' rectangles (start to end).
fn rectangle_cells(alns: &[swarrow::engine::Alignment]) -> f64 {
    alns.iter()
        .filter(|a| a.score > 0)
        .map(|a| ((a.qend - a.qstart + 1) as f64) * ((a.tend - a.tstart + 1) as f64))
        .sum()
}

/// GPU path counters against [`naive_counts`] for alignments the GPU computed (checked
/// equal to the CPU engine by `check`): random protein and DNA pairs (`--pairs`, lengths
/// up to `--max-len`), and real protein pairs of each `--query`/`--target` file pair.
fn check_stats(args: &[String]) {
    use rayon::prelude::*;
    let n = num(args, "--pairs", 200_000);
    let max_len = num(args, "--max-len", 3000);
    let mut rng = Rng(num(args, "--seed", 5) as u64 | 1);
    let files =
        |name: &str| -> Vec<String> { args.windows(2).filter(|w| w[0] == name).map(|w| w[1].clone()).collect() };
    let (qfiles, tfiles) = (files("--query"), files("--target"));
    let (mut bad, mut total, mut cpu_side) = (0usize, 0usize, 0usize);
    for dna in [false, true] {
        let sc = if dna { Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap() } else { Scoring::blosum62() };
        let gpu = GpuAligner::new(&sc, &cuda_config(args)).unwrap();
        let mut sets: Vec<(&str, Vec<(Vec<u8>, Vec<u8>)>)> = Vec::new();
        let random = truncated_pairs(&mut rng, n / 2, sc.matrix.size(), max_len);
        sets.push((if dna { "random-dna" } else { "random-prot" }, random));
        if !dna {
            for (qp, tp) in qfiles.iter().zip(&tfiles) {
                sets.push(("real-prot", read_pairs(qp, tp, sc.alphabet(), num(args, "--real", 100_000))));
            }
        }
        for (name, pairs) in sets {
            let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
            let owned = SeqPairs::from_slices(&refs);
            let alns = gpu.align(owned.view(), swarrow::engine::Level::Coordinates).unwrap();
            let g = Instant::now();
            let got = gpu.path_counts(owned.view(), &alns).unwrap();
            let gs = g.elapsed().as_secs_f64();
            let rect = rectangle_cells(&alns);
            let c = Instant::now();
            let want: Vec<([u32; 3], i32)> =
                (0..refs.len()).into_par_iter().map(|i| naive_counts(refs[i].0, refs[i].1, &sc, &alns[i])).collect();
            let cs = c.elapsed().as_secs_f64();
            let mut wrong = 0;
            for i in 0..refs.len() {
                if want[i].1 != alns[i].score {
                    eprintln!("{name} pair {i}: naive rectangle scores {} not {}", want[i].1, alns[i].score);
                    wrong += 1;
                    continue;
                }
                match got[i] {
                    None => cpu_side += 1,
                    Some(g) if g == want[i].0 => {}
                    Some(g) => {
                        if wrong < 10 {
                            eprintln!("{name} pair {i} {:?}: gpu {:?} naive {:?}", alns[i], g, want[i].0);
                        }
                        wrong += 1;
                    }
                }
            }
            println!(
                "check-stats {name}: {} pairs, {:.3e} rectangle cells, GPU {:.3}s ({:.3} TCUPS), naive CPU {:.2}s, mismatches {}",
                refs.len(),
                rect,
                gs,
                rect / gs / 1e12,
                cs,
                wrong
            );
            total += refs.len();
            bad += wrong;
        }
    }
    println!("check-stats total pairs {total} left to the CPU {cpu_side} mismatches {bad}");
    if bad > 0 {
        std::process::exit(1);
    }
}

/// GPU traceback paths (`GpuAligner::paths`, kernels/path_trace.cu) against the CPU's
/// `traceback::trace` (the specification): operations and statistics identical for random
/// protein and DNA pairs (`--pairs`, lengths up to `--max-len`; DNA also with a free gap
/// open, where ties abound), and real protein pairs of each `--query`/`--target` file pair.
fn check_paths(args: &[String]) {
    use rayon::prelude::*;
    use swarrow::engine::traceback;
    let n = num(args, "--pairs", 200_000);
    let max_len = num(args, "--max-len", 3000);
    let mut rng = Rng(num(args, "--seed", 5) as u64 | 1);
    let files =
        |name: &str| -> Vec<String> { args.windows(2).filter(|w| w[0] == name).map(|w| w[1].clone()).collect() };
    let (qfiles, tfiles) = (files("--query"), files("--target"));
    let (mut bad, mut total, mut cpu_side) = (0usize, 0usize, 0usize);
    let settings: [(bool, i32, i32); 4] = [(false, 11, 1), (false, 6, 1), (true, 5, 2), (true, 0, 2)];
    for (dna, open, ext) in settings {
        let sc = if dna {
            Scoring::new(Matrix::dna(2, -3), open, ext).unwrap()
        } else {
            Scoring::new(Scoring::blosum62().matrix, open, ext).unwrap()
        };
        let gpu = GpuAligner::new(&sc, &cuda_config(args)).unwrap();
        let mut sets: Vec<(String, Vec<(Vec<u8>, Vec<u8>)>)> = Vec::new();
        let random = truncated_pairs(&mut rng, n / 4, sc.matrix.size(), max_len);
        sets.push((format!("random-{} {open}/{ext}", if dna { "dna" } else { "prot" }), random));
        if !dna {
            for (qp, tp) in qfiles.iter().zip(&tfiles) {
                let real = read_pairs(qp, tp, sc.alphabet(), num(args, "--real", 100_000));
                sets.push((format!("real-prot {open}/{ext} {qp}"), real));
            }
        }
        for (name, pairs) in sets {
            let refs: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
            let owned = SeqPairs::from_slices(&refs);
            let alns = gpu.align(owned.view(), swarrow::engine::Level::Coordinates).unwrap();
            let g = Instant::now();
            let got = gpu.paths(owned.view(), &alns, &sc).unwrap();
            let gs = g.elapsed().as_secs_f64();
            let rect = rectangle_cells(&alns);
            let c = Instant::now();
            let want: Vec<traceback::Traceback> = (0..refs.len())
                .into_par_iter()
                .map(|i| traceback::trace(refs[i].0, refs[i].1, &sc, &alns[i]).unwrap())
                .collect();
            let cs = c.elapsed().as_secs_f64();
            let mut wrong = 0;
            for i in 0..refs.len() {
                match &got[i] {
                    None => cpu_side += 1,
                    Some(g) if *g == want[i] => {}
                    Some(g) => {
                        if wrong < 10 {
                            eprintln!(
                                "{name} pair {i} {:?}: gpu {} {:?} cpu {} {:?}",
                                alns[i],
                                g.cigar(),
                                g.stats,
                                want[i].cigar(),
                                want[i].stats
                            );
                        }
                        wrong += 1;
                    }
                }
            }
            println!(
                "check-paths {name}: {} pairs, {:.3e} rectangle cells, GPU {:.3}s ({:.3} TCUPS), CPU trace {:.2}s, mismatches {}",
                refs.len(),
                rect,
                gs,
                rect / gs / 1e12,
                cs,
                wrong
            );
            total += refs.len();
            bad += wrong;
        }
    }
    println!("check-paths total pairs {total} left to the CPU {cpu_side} mismatches {bad}");
    if bad > 0 {
        std::process::exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("check-stats") => check_stats(&args),
        Some("check-paths") => check_paths(&args),
        Some("bench") => bench(&args),
        Some("make-dna") => make_dna(&args),
        Some("check") => check(&args),
        Some("make-shapes") => make_shapes(&args),
        Some("parse") => parse_only(&args),
        Some("host") => host_costs(&args),
        Some("by-id") => by_id(&args),
        Some("paired") => paired(&args),
        _ => eprintln!("usage: gpu_align_bench bench|make-dna|check ... (see the source)"),
    }
}

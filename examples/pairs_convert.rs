//! Benchmark input maker (not part of the CLI): turns two FASTA files of one-line records
//! (record i with record i, as `make_pairs.py` and `gpu_align_bench make-dna` write them)
//! into the pair formats `swarrow align --pairs` reads, optionally repeated N times, so the
//! CLI benchmark feeds every input path the same pairs.
//!
//!   pairs_convert tsv|arrow|arrow-file|parquet|parquet-no-index Q.fa T.fa [--repeat N] [--key] > out
//!   pairs_convert candidates arrow|arrow-file|parquet|parquet-no-index CANDIDATES.tsv [--repeat N] > out
//!       candidate pairs by id (`align --pairs CANDIDATES --seqs SET`): the first two
//!       columns of a TSV (a `query_id` header line skipped) as columns query_id, target_id
//!   pairs_convert random-candidates tsv|parquet SET.fa N SEED > out
//!       N seeded random candidate pairs among the records of SET.fa (the same pairs for a
//!       seed in either format); their cells (qlen x tlen summed) on stderr as `cells C`
//!   pairs_convert read-overlaps READS.fa CANDIDATES.tsv READS PER_READ SEED
//!       an assembler's overlap candidates: READS reads of 100-250 bp (1% substitutions)
//!       from a random genome at 10x coverage, written shuffled to READS.fa; for each read
//!       in file order, the reads overlapping it (nearest first), topped up with random reads
//!       to PER_READ candidates, written to CANDIDATES.tsv; cells on stderr as `cells C`
//!
//! `--key` adds an int64 column `pair_key` (carried through to the output by `align`).
//! Parquet is written uncompressed: the benchmark times swarrow, not zstd.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

const ROWS_PER_BATCH: usize = 65_536;

fn records(path: &str) -> Vec<(String, String)> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    let mut id = String::new();
    for line in BufReader::with_capacity(1 << 20, file).lines() {
        let line = line.expect("read");
        if let Some(h) = line.strip_prefix('>') {
            id = h.split_whitespace().next().unwrap_or("").to_string();
        } else if !line.is_empty() {
            out.push((std::mem::take(&mut id), line));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!(
            "usage: pairs_convert tsv|arrow|arrow-file|parquet|parquet-no-index Q.fa T.fa [--repeat N] [--key] > out"
        );
        eprintln!("       pairs_convert candidates arrow|arrow-file|parquet|parquet-no-index CANDIDATES.tsv [--repeat N] > out");
        std::process::exit(2);
    }
    let repeat: usize = args.iter().position(|a| a == "--repeat").map_or(1, |i| args[i + 1].parse().expect("N"));
    if args[1] == "candidates" {
        return candidates(&args[2], &args[3], repeat);
    }
    if args[1] == "random-candidates" {
        let n = args.get(4).and_then(|v| v.parse().ok()).expect("N");
        let seed = args.get(5).and_then(|v| v.parse().ok()).expect("SEED");
        return random_candidates(&args[2], &args[3], n, seed);
    }
    if args[1] == "read-overlaps" {
        let num = |i: usize| args.get(i).and_then(|v| v.parse().ok()).expect("READS PER_READ SEED");
        return read_overlaps(&args[2], &args[3], num(4) as usize, num(5) as usize, num(6));
    }
    let key = args.iter().any(|a| a == "--key");
    let (q, t) = (records(&args[2]), records(&args[3]));
    assert_eq!(q.len(), t.len(), "query and target files hold different numbers of records");
    let mut out = BufWriter::with_capacity(1 << 22, std::io::stdout());
    if args[1] == "tsv" {
        let mut text = Vec::new();
        for ((qi, qs), (ti, ts)) in q.iter().zip(&t) {
            text.extend_from_slice(format!("{qi}\t{qs}\t{ti}\t{ts}\n").as_bytes());
        }
        for _ in 0..repeat {
            out.write_all(&text).expect("write");
        }
        out.flush().expect("write");
        return;
    }
    let mut fields = vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("query_seq", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("target_seq", DataType::Utf8, false),
    ];
    if key {
        fields.push(Field::new("pair_key", DataType::Int64, false));
    }
    let schema = Arc::new(Schema::new(fields));
    let batches: Vec<RecordBatch> = (0..q.len())
        .step_by(ROWS_PER_BATCH)
        .map(|start| {
            let r = start..(start + ROWS_PER_BATCH).min(q.len());
            let col = |v: Vec<&str>| -> ArrayRef { Arc::new(StringArray::from(v)) };
            let mut cols = vec![
                col(q[r.clone()].iter().map(|x| x.0.as_str()).collect()),
                col(q[r.clone()].iter().map(|x| x.1.as_str()).collect()),
                col(t[r.clone()].iter().map(|x| x.0.as_str()).collect()),
                col(t[r.clone()].iter().map(|x| x.1.as_str()).collect()),
            ];
            if key {
                cols.push(Arc::new(Int64Array::from_iter_values(r.clone().map(|i| i as i64))));
            }
            RecordBatch::try_new(schema.clone(), cols).expect("batch")
        })
        .collect();
    write_table(&args[1], &schema, &batches, repeat, out);
}

/// Candidate pairs by id from the first two columns of a TSV file, as a table.
fn candidates(format: &str, path: &str, repeat: usize) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (mut q, mut t) = (Vec::new(), Vec::new());
    for line in BufReader::with_capacity(1 << 20, file).lines() {
        let line = line.expect("read");
        let mut fields = line.split('\t');
        if let (Some(a), Some(b)) = (fields.next(), fields.next()) {
            if q.is_empty() && a == "query_id" {
                continue;
            }
            q.push(a.to_string());
            t.push(b.to_string());
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
    ]));
    let batches: Vec<RecordBatch> = (0..q.len())
        .step_by(ROWS_PER_BATCH)
        .map(|start| {
            let r = start..(start + ROWS_PER_BATCH).min(q.len());
            let col = |v: &[String]| -> ArrayRef { Arc::new(StringArray::from_iter_values(v)) };
            RecordBatch::try_new(schema.clone(), vec![col(&q[r.clone()]), col(&t[r])]).expect("batch")
        })
        .collect();
    write_table(format, &schema, &batches, repeat, BufWriter::with_capacity(1 << 22, std::io::stdout()));
}

/// splitmix64: the seeded stream of the generators here.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Reads of a random genome and each read's overlap candidates (see the usage above).
fn read_overlaps(reads_path: &str, cands_path: &str, n: usize, per_read: usize, seed: u64) {
    let mut state = seed;
    let mut below = |m: usize| ((splitmix(&mut state) as u128 * m as u128) >> 64) as usize;
    let genome_len = (n * 175 / 10).max(1000);
    let genome: Vec<u8> = (0..genome_len).map(|_| b"ACGT"[below(4)]).collect();
    // (start, length) per read, in genome order; the file order is a shuffle of it.
    let mut reads: Vec<(usize, usize)> = (0..n)
        .map(|_| {
            let len = 100 + below(151);
            (below(genome_len - len), len)
        })
        .collect();
    reads.sort_unstable();
    let mut file_order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        file_order.swap(i, below(i + 1));
    }
    let mut fa = BufWriter::with_capacity(1 << 22, std::fs::File::create(reads_path).expect("reads file"));
    let mut lens = vec![0u64; n];
    for (k, &r) in file_order.iter().enumerate() {
        let (start, len) = reads[r];
        let mut seq = genome[start..start + len].to_vec();
        for b in seq.iter_mut() {
            if below(100) == 0 {
                *b = b"ACGT"[below(4)];
            }
        }
        lens[k] = len as u64;
        writeln!(fa, ">r{k}\n{}", String::from_utf8(seq).expect("ascii")).expect("write");
    }
    fa.flush().expect("write");
    let mut name_of = vec![0usize; n];
    for (k, &r) in file_order.iter().enumerate() {
        name_of[r] = k;
    }
    let mut out = BufWriter::with_capacity(1 << 22, std::fs::File::create(cands_path).expect("candidates file"));
    out.write_all(b"query_id\ttarget_id\n").expect("write");
    let mut cells = 0u64;
    let mut picked = Vec::with_capacity(per_read);
    for &r in &file_order {
        let (start, len) = reads[r];
        // Overlapping reads start within 250 bp before this one's start or before its end.
        let lo = reads.partition_point(|x| x.0 + 250 < start);
        picked.clear();
        let mut near: Vec<usize> = (lo..n)
            .take_while(|&j| reads[j].0 < start + len)
            .filter(|&j| j != r && reads[j].0 + reads[j].1 > start)
            .collect();
        near.sort_by_key(|&j| reads[j].0.abs_diff(start));
        picked.extend(near.into_iter().take(per_read));
        while picked.len() < per_read {
            picked.push(below(n));
        }
        for &j in &picked {
            writeln!(out, "r{}\tr{}", name_of[r], name_of[j]).expect("write");
            cells += lens[name_of[r]] * lens[name_of[j]];
        }
    }
    out.flush().expect("write");
    eprintln!("cells {cells}");
}

/// `n` pairs of records of `set` drawn uniformly (splitmix64 from `seed`), written as they
/// are drawn: 100M pairs need no table in memory.
fn random_candidates(format: &str, set: &str, n: usize, seed: u64) {
    let file = std::fs::File::open(set).unwrap_or_else(|e| panic!("{set}: {e}"));
    let (mut ids, mut lens) = (Vec::<String>::new(), Vec::<u64>::new());
    for line in BufReader::with_capacity(1 << 20, file).lines() {
        let line = line.expect("read");
        if let Some(h) = line.strip_prefix('>') {
            ids.push(h.split_whitespace().next().unwrap_or("").to_string());
            lens.push(0);
        } else if let Some(l) = lens.last_mut() {
            *l += line.trim_end().len() as u64;
        }
    }
    assert!(!ids.is_empty(), "{set}: no records");
    let mut state = seed;
    let mut draw = || ((splitmix(&mut state) as u128 * ids.len() as u128) >> 64) as usize;
    let mut cells = 0u64;
    let mut out = BufWriter::with_capacity(1 << 22, std::io::stdout());
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
    ]));
    let mut parquet = (format == "parquet").then(|| {
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::UNCOMPRESSED)
            .build();
        parquet::arrow::ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).expect("parquet")
    });
    if parquet.is_none() {
        assert_eq!(format, "tsv", "random-candidates writes tsv or parquet");
        out.write_all(b"query_id\ttarget_id\n").expect("write");
    }
    let mut left = n;
    while left > 0 {
        let rows = left.min(ROWS_PER_BATCH);
        left -= rows;
        let pairs: Vec<(usize, usize)> = (0..rows).map(|_| (draw(), draw())).collect();
        cells += pairs.iter().map(|&(a, b)| lens[a] * lens[b]).sum::<u64>();
        match &mut parquet {
            None => {
                for &(a, b) in &pairs {
                    writeln!(out, "{}\t{}", ids[a], ids[b]).expect("write");
                }
            }
            Some(w) => {
                let col = |k: usize| -> ArrayRef {
                    Arc::new(StringArray::from_iter_values(
                        pairs.iter().map(|p| ids[if k == 0 { p.0 } else { p.1 }].as_str()),
                    ))
                };
                w.write(&RecordBatch::try_new(schema.clone(), vec![col(0), col(1)]).expect("batch")).expect("write");
                out.write_all(&std::mem::take(w.inner_mut())).expect("write");
            }
        }
    }
    if let Some(w) = parquet {
        out.write_all(&w.into_inner().expect("parquet")).expect("write");
    }
    out.flush().expect("write");
    eprintln!("cells {cells}");
}

/// Writes `batches` `repeat` times as an Arrow IPC stream or file, or an uncompressed Parquet
/// file.
fn write_table(format: &str, schema: &Arc<Schema>, batches: &[RecordBatch], repeat: usize, mut out: impl Write + Send) {
    match format {
        "arrow" => {
            // Encoded once, then the batches' bytes written `repeat` times between the schema
            // and the end-of-stream marker (the same bytes as encoding every repeat, in a
            // fraction of the writer's CPU time).
            let mut w = arrow::ipc::writer::StreamWriter::try_new(Vec::new(), schema).expect("arrow");
            let schema_end = w.get_ref().len();
            for b in batches {
                w.write(b).expect("write");
            }
            let batches_end = w.get_ref().len();
            w.finish().expect("write");
            let bytes = w.into_inner().expect("arrow");
            out.write_all(&bytes[..schema_end]).expect("write");
            for _ in 0..repeat {
                out.write_all(&bytes[schema_end..batches_end]).expect("write");
            }
            out.write_all(&bytes[batches_end..]).expect("write");
        }
        "arrow-file" => {
            let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, schema).expect("arrow");
            for _ in 0..repeat {
                for b in batches {
                    w.write(b).expect("write");
                }
            }
            w.finish().expect("write");
        }
        "parquet" | "parquet-no-index" => {
            // Without page statistics and offset index, as pyarrow and others write by default.
            let indexed = format == "parquet";
            let props = parquet::file::properties::WriterProperties::builder()
                .set_compression(parquet::basic::Compression::UNCOMPRESSED)
                .set_offset_index_disabled(!indexed)
                .set_statistics_enabled(if indexed {
                    parquet::file::properties::EnabledStatistics::Page
                } else {
                    parquet::file::properties::EnabledStatistics::Chunk
                })
                .build();
            let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).expect("parquet");
            for _ in 0..repeat {
                for b in batches {
                    w.write(b).expect("write");
                }
            }
            w.close().expect("write");
        }
        other => panic!("unknown format {other}"),
    }
    out.flush().expect("write");
}

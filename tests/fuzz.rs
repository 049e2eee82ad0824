//! Mutation fuzzing of every input parser, in-process and deterministic: each target's seed
//! corpus (`tests/fuzz/TARGET/`, kilobytes, committed) is run as is, then mutated (bit
//! flips, interesting integers written over headers, cuts, splices, inserted separators)
//! for a time budget, every input going through the real reader. A panic anywhere (also one
//! a reader catches itself) fails the run; an abort (a huge allocation) kills the test
//! process, which fails it too. Failing inputs are written to `target/fuzz-findings/`; add
//! them to the target's seed directory so they stay regression tests.
//!
//! Stable Rust only, so no libFuzzer: coverage is not measured, the mutations are blind.
//! CI runs a few seconds per target (`SWARROW_FUZZ_SECONDS`, default 8); for a longer run:
//!
//! ```sh
//! SWARROW_FUZZ_SECONDS=600 SWARROW_FUZZ_SEED=$RANDOM cargo test --release --test fuzz -- --nocapture
//! ```
//!
//! Targets: `fasta`, `fastq` (the sequential reader and the block reader of sets, with
//! qualities), `pairs_tsv`, `pairs_arrow` (stream and file format), `pairs_parquet`
//! (with a carried column), `pairs_paf` (PAF candidates, and TSV ones with region and
//! strand columns, windowed), `swdb`, `merge` (Parquet, Arrow IPC, TSV results).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

use swarrow::error::Where;
use swarrow::io::pairs::{
    open_pairs, open_pairs_by_id, BatchLimits, PairColumns, PairInput, PairOptions, SeqSet, SetColumns,
};
use swarrow::io::results::ResultInput;
use swarrow::scoring::Alphabet;
use swarrow::seq::PairBatch;

thread_local! {
    /// Panics seen on this thread since the last reset, caught or not.
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            default(info);
        }));
    });
}

fn corpus(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz").join(target)
}

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(corpus(target))
        .unwrap_or_else(|e| panic!("seed corpus {}: {}", target, e))
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no seeds for {}", target);
    v
}

/// xorshift64*: deterministic for a given seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING_64: [i64; 9] = [0, 1, -1, i64::MAX, i64::MIN, 1 << 31, 1 << 40, 1 << 62, 43_117_445_132];
const INTERESTING_32: [i32; 8] = [0, 1, -1, i32::MAX, i32::MIN, 0x7fff, 1 << 20, 8];
const SEPARATORS: [&[u8]; 10] =
    [b"\t", b"\n", b">", b"\r\n", b"\0", b"\x1b[2J", b"\xff\xfe", b"\xff\xff\xff\xff", b"ARROW1", b"PAR1"];

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        let at = rng.below(len.max(1));
        match rng.below(9) {
            0 if len > 0 => input[at] ^= 1 << rng.below(8),
            1 if len > 0 => input[at] = [0, 1, 0x7f, 0x80, 0xff][rng.below(5)],
            2 if len >= 4 => {
                let at = rng.below(len - 3);
                let v = INTERESTING_32[rng.below(INTERESTING_32.len())].to_le_bytes();
                input[at..at + 4].copy_from_slice(&v);
            }
            3 if len >= 8 => {
                let at = rng.below(len - 7);
                let v = INTERESTING_64[rng.below(INTERESTING_64.len())].to_le_bytes();
                input[at..at + 8].copy_from_slice(&v);
            }
            4 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                input.drain(at..end);
            }
            5 => {
                let sep = SEPARATORS[rng.below(SEPARATORS.len())];
                input.splice(at..at, sep.iter().copied());
            }
            6 if !other.is_empty() => {
                // Splice in a piece of another seed.
                let from = rng.below(other.len());
                let n = rng.below(256).min(other.len() - from);
                input.splice(at..at, other[from..from + n].iter().copied());
            }
            7 if len > 0 => input.truncate(at),
            _ => {
                let n = 1 + rng.below(16);
                input.splice(at..at, (0..n).map(|_| rng.next() as u8));
            }
        }
    }
}

/// Runs `seeds` as they are, then mutated for the time budget, through `parse`; fails
/// listing every input that panicked.
fn fuzz(target: &str, parse: impl Fn(&[u8])) {
    count_panics();
    let seeds = seeds(target);
    let seconds: u64 = std::env::var("SWARROW_FUZZ_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    let start: u64 = std::env::var("SWARROW_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut rng = Rng(start.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ target.len() as u64 ^ 0x5eed);
    let findings = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-findings");
    let mut failed = Vec::new();
    let mut runs = 0usize;
    let check = |failed: &mut Vec<String>, input: &[u8], what: String| {
        PANICS.with(|p| p.set(0));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(input))).is_err();
        if unwound || PANICS.with(|p| p.get()) > 0 {
            std::fs::create_dir_all(&findings).unwrap();
            let path = findings.join(format!("{}-{}.bin", target, failed.len()));
            std::fs::write(&path, input).unwrap();
            failed.push(format!("{} -> {}", what, path.display()));
        }
    };
    for (name, seed) in &seeds {
        check(&mut failed, seed, format!("seed {}", name));
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline && failed.len() < 10 {
        let (name, seed) = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())].1;
        let mut input = seed.clone();
        mutate(&mut rng, &mut input, other);
        check(&mut failed, &input, format!("mutation of {}", name));
        runs += 1;
    }
    eprintln!("fuzz {}: {} seeds, {} mutated inputs in {} s", target, seeds.len(), runs, seconds);
    assert!(failed.is_empty(), "{}: inputs that panicked:\n{}", target, failed.join("\n"));
}

/// A scratch file per target, rewritten for every input (the readers take paths).
fn scratch(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

#[test]
fn fuzz_fasta() {
    fuzz("fasta", |data| {
        for alphabet in [Alphabet::Protein, Alphabet::Dna] {
            for r in swarrow::io::FastaReader::new(Where::Stdin, data, alphabet) {
                if r.is_err() {
                    break;
                }
            }
        }
    });
}

#[test]
fn fuzz_fastq() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("fastq", |data| {
        let mut reader = swarrow::io::FastaReader::new(Where::Stdin, data, Alphabet::Dna).keep_quals(true);
        let mut packed = swarrow::io::fasta::Packed::default();
        while let Some(r) = reader.next_into(&mut packed) {
            if r.is_err() {
                break;
            }
        }
        for i in 0..packed.len() {
            let _ = (packed.seq(i), packed.quals(i));
        }
        let path = scratch(dir.path(), "s.fq", data);
        let columns = SetColumns { quals: true, ..SetColumns::default() };
        if let Ok(set) = SeqSet::load(&path, Alphabet::Dna, &columns) {
            for i in 0..set.len() as u32 {
                assert!(set.quals(i).is_empty() || set.quals(i).len() == set.seq(i).len());
            }
        }
    });
}

#[test]
fn fuzz_pairs_paf() {
    let dir = tempfile::tempdir().unwrap();
    let set = scratch(
        dir.path(),
        "set.fq",
        b"@r1\nACGTACGTAC\n+\nIIIIIIIIII\n@r2\nGGGG\n+\n@@@@\n@c1\nACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIII\n",
    );
    let columns = SetColumns { quals: true, ..SetColumns::default() };
    let set = std::sync::Arc::new(SeqSet::load(&set, Alphabet::Dna, &columns).unwrap());
    let placed = PairOptions {
        region_cols: Some(["qs", "qe", "ts", "te"].map(String::from)),
        strand_col: Some("strand".into()),
        ..PairOptions::default()
    };
    let options = [
        PairOptions { window: Some(2), query_text: true, ..PairOptions::default() },
        PairOptions { window: None, ..placed.clone() },
        PairOptions { window: Some(0), query_text: true, ..placed },
    ];
    fuzz("pairs_paf", |data| {
        let path = scratch(dir.path(), "c", data);
        let limits = BatchLimits { pairs: 2, residues: 16 };
        for options in &options {
            let opened = open_pairs_by_id(&path, set.clone(), set.clone(), &PairColumns::default(), limits, options);
            if let Ok(mut pairs) = opened {
                let mut batch = PairBatch::default();
                loop {
                    batch.clear();
                    if !matches!(pairs.fill(&mut batch), Ok(true)) {
                        break;
                    }
                    assert!(batch.frames.is_empty() || batch.frames.len() == batch.len());
                }
            }
        }
    });
}

fn drain_pairs(path: &Path) {
    // Small batches: every batch boundary of the readers is crossed.
    let limits = BatchLimits { pairs: 2, residues: 64 };
    if let Ok(mut pairs) = open_pairs(
        &PairInput::File(path.to_path_buf()),
        Alphabet::Protein,
        &PairColumns::default(),
        limits,
        &PairOptions::default(),
    ) {
        let mut batch = PairBatch::default();
        loop {
            batch.clear();
            if !matches!(pairs.fill(&mut batch), Ok(true)) {
                break;
            }
        }
    }
}

#[test]
fn fuzz_pairs_tsv() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("pairs_tsv", |data| drain_pairs(&scratch(dir.path(), "p", data)));
}

#[test]
fn fuzz_pairs_arrow() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("pairs_arrow", |data| drain_pairs(&scratch(dir.path(), "p", data)));
}

#[test]
fn fuzz_pairs_parquet() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("pairs_parquet", |data| drain_pairs(&scratch(dir.path(), "p", data)));
}

#[test]
fn fuzz_swdb() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("swdb", |data| {
        let path = scratch(dir.path(), "db", data);
        if let Ok(db) = swarrow::io::load_database(&path, Alphabet::Protein) {
            for i in 0..db.len() {
                let _ = (db.id(i), db.seq(i));
            }
        }
    });
}

#[test]
fn fuzz_merge_inputs() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("merge", |data| {
        let path = scratch(dir.path(), "shard", data);
        if let Ok(mut shard) = ResultInput::open(&path) {
            while let Ok(Some(_)) = shard.next_rows() {}
        }
    });
}

#[test]
fn fuzz_pairs_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let set = scratch(dir.path(), "set.fa", b">q1 x\nMKVLAW\n>t1\nMKW\n>q2\nWHED\n>t2\nA\n>q3\nRN\n>t3\nDDC\n");
    let set = std::sync::Arc::new(SeqSet::load(&set, Alphabet::Protein, &SetColumns::default()).unwrap());
    fuzz("pairs_by_id", |data| {
        let path = scratch(dir.path(), "c", data);
        let limits = BatchLimits { pairs: 2, residues: 16 };
        if let Ok(mut pairs) =
            open_pairs_by_id(&path, set.clone(), set.clone(), &PairColumns::default(), limits, &PairOptions::default())
        {
            let mut batch = PairBatch::default();
            loop {
                batch.clear();
                if !matches!(pairs.fill(&mut batch), Ok(true)) {
                    break;
                }
            }
        }
    });
}

#[test]
fn fuzz_seqset() {
    let dir = tempfile::tempdir().unwrap();
    fuzz("seqset", |data| {
        let path = scratch(dir.path(), "s", data);
        for alphabet in [Alphabet::Protein, Alphabet::Dna] {
            if let Ok(set) = SeqSet::load(&path, alphabet, &SetColumns::default()) {
                for i in 0..set.len() as u32 {
                    let _ = (set.seq(i), set.header(i));
                    assert_eq!(set.find(set.id(i)), Some(i));
                }
            }
        }
    });
}

/// FASTQ records for the `fastq` and `seqset` seeds.
const FASTQ_SEED: &[u8] = b"@r1 first\nACGTNACGT\n+\n@+IIII!~#\n\n@r2\nacgu\n+r2\n+@@I\n@r3\nT\n+\nI";

/// Multi-line FASTQ (issue 60 item 9): sequences and qualities wrapped, quality lines that
/// start with '@' and '+' (data, not headers), CRLF.
const MULTILINE_FASTQ_SEED: &[u8] =
    b"@m1 wrapped\nACGTA\nCGTAC\nGT\n+\n@@III\n+IIII\n@I\n@m2\r\nAC\r\nGT\r\n+m2\r\n+@\r\n@+\r\n@m3\nA\n+\n@\n";

/// Writes the seed corpus: `cargo test --test fuzz write_seed_corpus -- --ignored`.
#[test]
#[ignore]
fn write_seed_corpus() {
    use arrow::array::{ArrayRef, DictionaryArray, RecordBatch, StringArray, StringViewArray};
    use arrow::datatypes::{DataType, Field, Int32Type, Schema};
    use std::sync::Arc;
    use swarrow::output::{create_writer, Format, Mode, ResultBatch, ResultRow, RunMetadata};

    let put = |target: &str, name: &str, data: &[u8]| {
        std::fs::create_dir_all(corpus(target)).unwrap();
        std::fs::write(corpus(target).join(name), data).unwrap();
    };
    let gzip = |data: &[u8]| {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    };
    let bgzf = |data: &[u8]| {
        use std::io::Write;
        let mut w = noodles_bgzf::io::Writer::new(Vec::new());
        w.write_all(data).unwrap();
        w.finish().unwrap()
    };
    let fasta = b">sp|P1|A desc\nMKVLAW\nHEDRST\n>b\nmkw*X\n\n>c\nACGTUN\n";
    put("fasta", "plain.fa", fasta);
    put("fasta", "crlf.fa", b">a x\r\nMKV\r\nLAW\r\n>b\r\nWW\r\n");
    put("fasta", "gzip.fa.gz", &gzip(fasta));
    let tsv = b"query_id\tquery_seq\ttarget_id\ttarget_seq\nq1\tMKVLAW\tt1\tMKW\nq2\tww\tt2\tA\r\n";
    put("pairs_tsv", "header.tsv", tsv);
    put("pairs_tsv", "bare.tsv", b"q1\tMKV\tt1\tMKW\n\nq2\tW\tt2\tA\n");
    put("pairs_tsv", "gzip.tsv.gz", &gzip(tsv));

    let rows = [["q1", "MKVLAW", "t1", "MKW"], ["q2", "WHED", "t2", "A"], ["q3", "RN", "t3", "DDC"]];
    let names = ["query_id", "query_seq", "target_id", "target_seq"];
    let batch = |ty: &DataType| -> RecordBatch {
        let fields: Vec<Field> = names.iter().map(|n| Field::new(*n, ty.clone(), true)).collect();
        let cols: Vec<ArrayRef> = (0..4)
            .map(|k| -> ArrayRef {
                let v = rows.iter().map(|r| r[k]);
                match ty {
                    DataType::Utf8View => Arc::new(StringViewArray::from_iter_values(v)),
                    DataType::Dictionary(..) => Arc::new(v.collect::<DictionaryArray<Int32Type>>()),
                    _ => Arc::new(StringArray::from_iter_values(v)),
                }
            })
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    };
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    for (name, ty) in [("utf8", DataType::Utf8), ("view", DataType::Utf8View), ("dict", dict)] {
        let b = batch(&ty);
        let mut out = Vec::new();
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        drop(w);
        put("pairs_arrow", &format!("{name}.arrows"), &out);
    }
    let b = batch(&DataType::Utf8);
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, &b.schema()).unwrap();
    w.write(&b).unwrap();
    w.finish().unwrap();
    drop(w);
    put("pairs_arrow", "file.arrow", &out);
    let options = arrow::ipc::writer::IpcWriteOptions::default()
        .try_with_compression(Some(arrow::ipc::CompressionType::ZSTD))
        .unwrap();
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new_with_options(&mut out, &b.schema(), options).unwrap();
    w.write(&b).unwrap();
    w.finish().unwrap();
    drop(w);
    put("pairs_arrow", "zstd.arrows", &out);
    // Nested carried columns (a list, a struct holding one), read as Parquet reads them.
    let list = arrow::array::ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1), None]),
        None,
        Some(vec![]),
    ]);
    let numbers: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![Some(1), None, Some(3)]));
    let info = arrow::array::StructArray::from(vec![
        (Arc::new(Field::new("n", DataType::Int64, true)), numbers),
        (
            Arc::new(Field::new("l", arrow::array::Array::data_type(&list).clone(), true)),
            Arc::new(list.clone()) as ArrayRef,
        ),
    ]);
    let nested = RecordBatch::try_from_iter(
        b.columns()
            .iter()
            .cloned()
            .zip(names)
            .map(|(c, n)| (n, c))
            .chain([("tags", Arc::new(list) as ArrayRef), ("info", Arc::new(info) as ArrayRef)]),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &nested.schema()).unwrap();
    w.write(&nested).unwrap();
    w.finish().unwrap();
    drop(w);
    put("pairs_arrow", "nested.arrows", &out);
    // Parquet pairs: plain and with an extra (carried) column, two row groups.
    let key: ArrayRef = Arc::new(arrow::array::Int64Array::from(vec![7, 8, 9]));
    let keyed =
        RecordBatch::try_from_iter(b.columns().iter().cloned().zip(names).map(|(c, n)| (n, c)).chain([("key", key)]))
            .unwrap();
    for (name, batch) in [("plain.parquet", b.clone()), ("keyed.parquet", keyed)] {
        let mut out = Vec::new();
        let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(2)).build();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        put("pairs_parquet", name, &out);
    }

    // Pairs by id: candidate lists (TSV, Arrow, Parquet with a carried column) and sets.
    put("pairs_by_id", "header.tsv", b"query_id\ttarget_id\tscore\nq1\tt1\t5\nq2\tt2\t3\r\n\nq3\tt3\n");
    put("pairs_by_id", "gzip.tsv.gz", &gzip(b"q1\tt1\nq3\tt2\n"));
    let ids = |names: [&str; 3], rows: &[[&str; 3]]| -> RecordBatch {
        let fields: Vec<Field> = names.iter().map(|n| Field::new(*n, DataType::Utf8, true)).collect();
        let cols: Vec<ArrayRef> = (0..3)
            .map(|k| -> ArrayRef { Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r[k]))) })
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    };
    let cands = ids(["query_id", "target_id", "key"], &[["q1", "t1", "a"], ["q2", "t3", "b"], ["q3", "q1", "c"]]);
    let set = ids(["id", "sequence", "note"], &[["q1", "MKVLAW", "x"], ["t1", "MKW", "y"], ["q2", "WHED", "z"]]);
    for (target, batch) in [("pairs_by_id", &cands), ("seqset", &set)] {
        let mut out = Vec::new();
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
        w.write(batch).unwrap();
        w.finish().unwrap();
        drop(w);
        put(target, "table.arrows", &out);
        let mut out = Vec::new();
        let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(2)).build();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        put(target, "table.parquet", &out);
    }
    put("seqset", "set.fa", fasta);
    put("seqset", "set.fa.gz", &gzip(b">q1 x\nMKVLAW\n>t1\nMKW\n>q1\nW\n"));
    put("seqset", "set.fq", FASTQ_SEED);

    // FASTQ: records with '@' and '+' starting quality lines, CRLF, a '+' repeating the id.
    put("fastq", "reads.fq", FASTQ_SEED);
    put("fastq", "crlf.fq", b"@a x\r\nACGT\r\n+a\r\nIIII\r\n@b\r\nN\r\n+\r\n#\r\n");
    put("fastq", "reads.fq.gz", &gzip(FASTQ_SEED));
    put("fastq", "reads.fq.bgz", &bgzf(FASTQ_SEED));
    put("fastq", "multiline.fq", MULTILINE_FASTQ_SEED);
    put("fastq", "multiline.fq.bgz", &bgzf(MULTILINE_FASTQ_SEED));
    put("seqset", "multiline.fq", MULTILINE_FASTQ_SEED);

    // PAF candidates (both strands, regions, tags) and TSV candidates with region columns.
    let paf = b"r1\t10\t2\t8\t+\tc1\t20\t5\t11\t6\t6\t60\ttp:A:P\tcm:i:3\nr2\t4\t0\t4\t-\tc1\t20\t16\t20\t4\t4\t0\n\nr1\t10\t0\t10\t+\tr2\t4\t0\t4\t4\t10\t255\r\n";
    put("pairs_paf", "cands.paf", paf);
    put("pairs_paf", "cands.paf.gz", &gzip(paf));
    put(
        "pairs_paf",
        "regions.tsv",
        b"query_id\ttarget_id\tqs\tqe\tts\tte\tstrand\nr1\tc1\t2\t8\t5\t11\t+\nr2\tc1\t0\t4\t16\t20\t-\n",
    );

    let dir = tempfile::tempdir().unwrap();
    let db = swarrow::database::Database::from_records(
        "x",
        [("a", vec![0u8, 1, 2]), ("bb", vec![5]), ("c", vec![23, 22, 7])]
            .into_iter()
            .map(|(id, seq)| swarrow::seq::Record { id: id.into(), seq, header: String::new() })
            .collect(),
    );
    let path = dir.path().join("db.swdb");
    swarrow::io::write_swdb(&db, Alphabet::Protein, &path).unwrap();
    put("swdb", "db.swdb", &std::fs::read(&path).unwrap());
    put("seqset", "db.swdb", &std::fs::read(&path).unwrap());

    let mut meta = RunMetadata::new();
    meta.push("mode", "search");
    meta.push("scoring", "BLOSUM62");
    meta.push("gap_open", "11");
    meta.push("gap_extend", "1");
    meta.push("search_space", "BLAST length-adjusted, database of 100 residues in 3 sequences");
    let mut rows = ResultBatch::new();
    for (k, (q, t, score)) in [("q1", "t1", 40), ("q1", "t2", 30), ("q2", "t1", 20)].into_iter().enumerate() {
        rows.push(ResultRow {
            query: q,
            target: t,
            score,
            bits: if k == 2 { None } else { Some(score as f64 / 2.0) },
            evalue: if k == 2 { None } else { Some(1e-5) },
            qstart: 1,
            qend: 5,
            tstart: 2,
            tend: 6,
            qlen: 10,
            tlen: 12,
            recomputed: false,
            rank: if k == 1 { 2 } else { 1 },
        });
    }
    rows.push_query("q1", 2);
    rows.push_query("q2", 1);
    rows.number_queries(0).unwrap();
    for (format, name) in [
        (Format::Tsv, "search.tsv"),
        (Format::ArrowStream, "search.arrows"),
        (Format::ArrowFile, "search.arrow"),
        (Format::Parquet, "search.parquet"),
    ] {
        let path = dir.path().join(name);
        let mut w = create_writer(format, Mode::Search, &meta, Some(&path)).unwrap();
        w.write(&rows).unwrap();
        w.finish().unwrap();
        put("merge", name, &std::fs::read(&path).unwrap());
    }
    let mut align_meta = RunMetadata::new();
    align_meta.push("mode", "align");
    let path = dir.path().join("align.arrows");
    let mut w = create_writer(Format::ArrowStream, Mode::Align, &align_meta, Some(&path)).unwrap();
    w.write(&rows).unwrap();
    w.finish().unwrap();
    put("merge", "align.arrows", &std::fs::read(&path).unwrap());
    put("merge", "align.tsv.gz", &gzip(b"query\ttarget\tscore\tbits\tevalue\tqstart\tqend\ttstart\ttend\tqlen\ttlen\trecomputed\nq\tt\t5\t\t\t1\t2\t1\t2\t3\t3\tfalse\n"));
}

//! The binary under hostile input and faults (issue 13's catalogue): every case checks the
//! exit status, the message, and that nothing is left behind. Oracles are hand-built inputs
//! and arithmetic (a self pair of n matches scores n x match), never swarrow's own output.

mod common;
use common::*;
use std::fs;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Exit status 2, a message containing `needle`, no panic, and `dir` holding only `keep`.
fn assert_input_error(o: &Output, needle: &str, dir: &Path, keep: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "status {:?}: {}", o.status, err);
    assert!(err.contains(needle), "expected '{}' in: {}", needle, err);
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{}", err);
    assert_eq!(entries(dir), keep, "left behind");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

fn pair_stream(rows: usize) -> Vec<u8> {
    let schema = Arc::new(Schema::new(
        ["query_id", "query_seq", "target_id", "target_seq"]
            .iter()
            .map(|c| Field::new(*c, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let col = |v: &str| -> ArrayRef { Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("{v}{i}")))) };
    let seq = |v: &str| -> ArrayRef { Arc::new(StringArray::from_iter_values((0..rows).map(|_| v))) };
    let batch = RecordBatch::try_new(schema.clone(), vec![col("q"), seq("MKVLAWHE"), col("t"), seq("MKVLW")]).unwrap();
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    out
}

/// The metadata and body ranges of each message of an Arrow IPC stream.
fn messages(data: &[u8]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 8 <= data.len() {
        assert_eq!(&data[at..at + 4], &[0xff; 4]);
        let len = i32::from_le_bytes(data[at + 4..at + 8].try_into().unwrap()) as usize;
        if len == 0 {
            break;
        }
        let meta = at + 8..at + 8 + len;
        let body_len = arrow::ipc::root_as_message(&data[meta.clone()]).unwrap().bodyLength() as usize;
        out.push((meta.clone(), meta.end..meta.end + body_len));
        at = meta.end + body_len;
    }
    out
}

/// The stream with the first record batch's body length (an i64 in its metadata) replaced.
fn with_body_length(data: &[u8], value: i64) -> Vec<u8> {
    let (meta, body) = messages(data)[1].clone();
    let old = (body.len() as i64).to_le_bytes();
    let mut out = data.to_vec();
    let at = meta.start + data[meta.clone()].windows(8).position(|w| w == old).expect("body length in metadata");
    out[at..at + 8].copy_from_slice(&value.to_le_bytes());
    out
}

/// The stream with the offset of the first record batch's last buffer pointed far outside
/// its body.
fn with_buffer_outside(data: &[u8]) -> Vec<u8> {
    let (meta, body) = messages(data)[1].clone();
    let m = &data[meta.clone()];
    let message = arrow::ipc::root_as_message(m).unwrap();
    let last =
        message.header_as_record_batch().unwrap().buffers().unwrap().iter().filter(|b| b.length() > 0).last().unwrap();
    let mut entry = last.offset().to_le_bytes().to_vec();
    entry.extend(last.length().to_le_bytes());
    let at = meta.start + m.windows(16).position(|w| w == entry).expect("buffer entry");
    let mut out = data.to_vec();
    out[at..at + 8].copy_from_slice(&(body.len() as i64 * 1000).to_le_bytes());
    out
}

// 1. Corrupt Arrow IPC input: a clear input error, never a panic or an abort.
#[test]
fn corrupt_arrow_ipc_pairs_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = pair_stream(50);
    let cases = [
        ("huge.arrows", with_body_length(&good, 1 << 62), "message body"),
        ("abort.arrows", with_body_length(&good, 43_117_445_132), "message body"),
        ("offset.arrows", with_buffer_outside(&good), "lies outside the body"),
    ];
    for (name, data, needle) in &cases {
        let input = d.join(name);
        fs::write(&input, data).unwrap();
        let out = d.join("out.tsv");
        let o = run(&[
            "align",
            "--pairs",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--device",
            "cpu",
            "--quiet",
        ]);
        let mut names: Vec<&str> = cases.iter().map(|c| c.0).filter(|n| d.join(n).exists()).collect();
        names.sort();
        assert_input_error(&o, needle, d, &names);
        assert!(stderr(&o).contains(name), "names the file: {}", stderr(&o));
        let o = run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet"], data);
        assert_eq!(o.status.code(), Some(2), "stdin {}: {}", name, stderr(&o));
        assert!(stderr(&o).contains("<stdin>: bad Arrow IPC data"), "{}", stderr(&o));
    }
    // The unharmed stream aligns.
    let o = run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet"], &good);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 51);
}

#[test]
fn corrupt_arrow_ipc_shards_are_merge_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shard = d.join("shard.arrows");
    let o = run(&[
        "align",
        "--pairs",
        &ex("pairs.tsv"),
        "--format",
        "arrow",
        "-o",
        shard.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let good = fs::read(&shard).unwrap();
    for (data, needle) in
        [(with_body_length(&good, 1 << 62), "message body"), (with_buffer_outside(&good), "lies outside the body")]
    {
        fs::write(&shard, &data).unwrap();
        let out = d.join("merged.arrows");
        let o = run(&["merge", "-o", out.to_str().unwrap(), shard.to_str().unwrap()]);
        assert_input_error(&o, needle, d, &["shard.arrows"]);
    }
}

// 2. A huge --top is sized by the database, not allocated as asked.
#[test]
fn huge_top_is_sized_by_the_database() {
    let dir = tempfile::tempdir().unwrap();
    for top in ["1000000000000000", "4611686018427387904", &usize::MAX.to_string()] {
        let out = dir.path().join("hits.tsv");
        let o = run(&[
            "search",
            "-q",
            &ex("queries.fasta"),
            "-d",
            &ex("db.fasta.gz"),
            "--top",
            top,
            "-o",
            out.to_str().unwrap(),
            "--device",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "--top {}: {}", top, stderr(&o));
        let rows = fs::read_to_string(&out).unwrap().lines().count() - 1;
        // 6 queries against 156 sequences: at most every pair, and at least the planted hits.
        assert!((6..=6 * 156).contains(&rows), "{} rows", rows);
    }
}

// 3. A database through a pipe loses nothing, also a first record shorter than the sniff.
#[test]
fn databases_through_pipes_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = ">a\nMKW\n>b\nMKVLAWHEKKLLDDRRSTTAAMKW\n>c\nWWWWHHHH\n";
    let plain = d.join("db.fa");
    fs::write(&plain, db).unwrap();
    let query = d.join("q.fa");
    fs::write(&query, ">q\nMKW\n").unwrap();
    let search = |db_path: &Path| {
        let o = run(&[
            "search",
            "-q",
            query.to_str().unwrap(),
            "-d",
            db_path.to_str().unwrap(),
            "--format",
            "tsv",
            "--device",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let want = search(&plain);
    assert!(want.contains("\ta\t"), "the oracle run finds record a: {}", want);
    let fifo = d.join("db.fifo");
    mkfifo(&fifo);
    let feed = |data: Vec<u8>| {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(&fifo, data).unwrap())
    };
    let w = feed(db.as_bytes().to_vec());
    assert_eq!(search(&fifo), want);
    w.join().unwrap();
    // Gzip through the pipe, as `-d <(cat db.fa.gz)`.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(db.as_bytes()).unwrap();
    let w = feed(gz.finish().unwrap());
    assert_eq!(search(&fifo), want);
    w.join().unwrap();
    // makedb from a pipe.
    let swdb = d.join("db.swdb");
    let w = feed(db.as_bytes().to_vec());
    let o = run(&["makedb", fifo.to_str().unwrap(), "-o", swdb.to_str().unwrap()]);
    w.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = search(&swdb);
    assert_eq!(got.lines().count(), want.lines().count());
    assert!(got.contains("\ta\t"), "{}", got);
}

// 4. -o that is a FIFO is written into, a symlink keeps pointing at its (new) target.
#[test]
fn fifo_and_symlink_outputs_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("out.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(&fifo).unwrap())
    };
    let o = run(&[
        "align",
        "--pairs",
        &ex("pairs.tsv"),
        "--format",
        "tsv",
        "-o",
        fifo.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    let text = reader.join().unwrap();
    assert!(text.starts_with("query\ttarget\tscore"), "{}", text);
    assert_eq!(entries(d), ["out.fifo"]);

    let real = d.join("real.tsv");
    fs::write(&real, "old").unwrap();
    let link = d.join("link.tsv");
    std::os::unix::fs::symlink("real.tsv", &link).unwrap();
    let o = run(&["align", "--pairs", &ex("pairs.tsv"), "-o", link.to_str().unwrap(), "--device", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(fs::read_to_string(&real).unwrap().starts_with("query\ttarget\tscore"));
    assert_eq!(entries(d), ["link.tsv", "out.fifo", "real.tsv"]);
}

// 5. makedb runs with one -o do not share a temporary name.
#[test]
fn makedb_temp_names_are_unique() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("db.swdb");
    // What the old fixed temporary name would collide with.
    fs::create_dir(d.join("db.swdb.tmp")).unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            bin()
                .args(["makedb", &ex("db.fasta.gz"), "-o", out.to_str().unwrap()])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(entries(d), ["db.swdb", "db.swdb.tmp"]);
    // The database is whole: it searches like the FASTA it came from.
    let search = |db: &str| {
        let o = run(&["search", "-q", &ex("queries.fasta"), "-d", db, "--format", "tsv", "--device", "cpu", "--quiet"]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    assert_eq!(search(out.to_str().unwrap()), search(&ex("db.fasta.gz")));
}

// 6. Signals remove the temporary output and exit 128 + signal.
#[test]
fn signals_remove_the_temporary_output() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let out = d.join("hits.parquet");
        // Queries from a pipe that stays open: the run waits with its output file open.
        let mut child = bin();
        child
            .args([
                "search",
                "-q",
                "-",
                "-d",
                &ex("db.fasta.gz"),
                "-o",
                out.to_str().unwrap(),
                "--device",
                "cpu",
                "--quiet",
            ])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped());
        // The signals' default dispositions in the child, as a shell gives them (a test
        // run under nohup would hand down SIGHUP ignored).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut child, || {
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = child.spawn().unwrap();
        // A record begun but not ended: the run has opened its output and waits for more.
        child.stdin.as_mut().unwrap().write_all(b">q\nMKVLAWHE\n").unwrap();
        let start = Instant::now();
        while entries(d).is_empty() {
            assert!(start.elapsed() < Duration::from_secs(60), "no temporary file appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        drop(child.stdin.take());
        assert_eq!(status.code(), Some(code), "signal {}: {:?}", signal, status);
        assert_eq!(entries(d), Vec::<String>::new(), "signal {}", signal);
    }
}

// 7. makedb leaves nothing when its output cannot be written.
#[test]
fn makedb_leaves_nothing_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("out")).unwrap();
    let o = run(&["makedb", &ex("db.fasta.gz"), "-o", d.join("out").to_str().unwrap()]);
    assert_input_error(&o, "is a directory", d, &["out"]);
    assert_eq!(entries(&d.join("out")), Vec::<String>::new());
}

// 8. merge never mixes scorings silently, and its metadata never claims what it cannot know.
#[test]
fn merge_refuses_tsv_shards_without_settings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // b.tsv searches another part of the database (its own target), as a shard does.
    fs::write(d.join("other.fa"), ">other\nMKVLAWHEGGSTPQRDNCW\n").unwrap();
    let other = d.join("other.fa").to_str().unwrap().to_string();
    let shard = |name: &str, open: &str, format: &str| {
        let path = d.join(name);
        let db = if name == "b.tsv" { other.clone() } else { ex("db.fasta.gz") };
        let o = run(&[
            "search",
            "-q",
            &ex("queries.fasta"),
            "-d",
            &db,
            "--gap-open",
            open,
            "--format",
            format,
            "-o",
            path.to_str().unwrap(),
            "--device",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        path.to_str().unwrap().to_string()
    };
    let a = shard("a.tsv", "11", "tsv");
    let b = shard("b.tsv", "9", "tsv");
    let p = shard("p.parquet", "11", "parquet");
    let out = d.join("m.arrows");
    let o = run(&["merge", "--top", "5", "-o", out.to_str().unwrap(), &a, &b]);
    let keep = ["a.tsv", "b.tsv", "other.fa", "p.parquet"];
    assert_input_error(&o, "a.tsv is TSV, which carries no run settings", d, &keep);
    let o = run(&["merge", "--top", "5", "-o", out.to_str().unwrap(), &p, &b]);
    assert_input_error(&o, "--trust-shards", d, &keep);
    // Unchecked on request: the output says so and claims no gap costs.
    let o = run(&["merge", "--top", "5", "--trust-shards", "-o", out.to_str().unwrap(), &p, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reader = arrow::ipc::reader::StreamReader::try_new(fs::File::open(&out).unwrap(), None).unwrap();
    let meta = reader.schema().metadata().clone();
    assert!(meta.get("settings_unchecked").is_some_and(|v| v.contains("b.tsv")), "{:?}", meta);
    for key in ["gap_open", "gap_extend", "scoring", "search_space"] {
        assert!(!meta.contains_key(key), "{} claimed: {:?}", key, meta);
    }
}

// 9. Scores beyond 32 bits are refused, never wrapped.
#[test]
fn unrepresentable_scores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = |n: usize| {
        let s = "ACGT".repeat(n / 4);
        let path = d.join(format!("p{n}.tsv"));
        fs::write(&path, format!("q\t{s}\tt\t{s}\n")).unwrap();
        path
    };
    let p12 = pairs(12);
    let o = run(&[
        "align",
        "--pairs",
        p12.to_str().unwrap(),
        "--dna",
        "--match",
        "2000000000",
        "--format",
        "tsv",
        "--device",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--match and --mismatch must lie within"), "{}", stderr(&o));
    // Within the per-score bound, but 3000 x 1,000,000 does not fit in 32 bits.
    let p3000 = pairs(3000);
    let out = d.join("o.tsv");
    let o = run(&[
        "align",
        "--pairs",
        p3000.to_str().unwrap(),
        "--dna",
        "--match",
        "1000000",
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("beyond the 32-bit score range"), "{}", stderr(&o));
    assert!(!out.exists());
    // 2000 x 1,000,000 = 2e9 fits: the exact score over the whole pair.
    let p2000 = pairs(2000);
    for engine in ["scalar", "simd"] {
        let o = bin()
            .args([
                "align",
                "--pairs",
                p2000.to_str().unwrap(),
                "--dna",
                "--match",
                "1000000",
                "--format",
                "tsv",
                "--device",
                "cpu",
                "--quiet",
            ])
            .env("SWARROW_ENGINE", engine)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let row: Vec<&str> = text.lines().nth(1).unwrap().split('\t').collect();
        assert_eq!(&row[2..3], ["2000000000"], "{engine}: {text}");
        assert_eq!(&row[5..9], ["1", "2000", "1", "2000"], "{engine}: {text}");
    }
}

// 10. Ids in messages are capped and escaped.
#[test]
fn ids_in_messages_are_capped_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let long = "x".repeat(1 << 20);
    let input = d.join("q.fa");
    fs::write(&input, format!(">{long}\nMK1\n")).unwrap();
    let o = run(&[
        "search",
        "-q",
        input.to_str().unwrap(),
        "-d",
        &ex("db.fasta.gz"),
        "--format",
        "tsv",
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.len() < 1000, "{} bytes of message", err.len());
    assert!(err.contains(&format!("({}...)", "x".repeat(80))), "{}", err);
    fs::write(&input, ">evil\x1b]0;pwned\x07\x1b[2J\nMK1\n").unwrap();
    let o = run(&[
        "search",
        "-q",
        input.to_str().unwrap(),
        "-d",
        &ex("db.fasta.gz"),
        "--format",
        "tsv",
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!o.stderr.contains(&0x1b) && !o.stderr.contains(&0x07), "{:?}", stderr(&o));
    assert!(stderr(&o).contains("(evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J)"), "{}", stderr(&o));
}

// 11. Nonsense numbers are usage errors.
#[test]
fn nonsense_numbers_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("o.tsv");
    let o_arg = out.to_str().unwrap();
    for (args, needle) in [
        (vec!["--max-evalue", "NaN"], "--max-evalue must be a finite number >= 0"),
        (vec!["--max-evalue", "-1"], "--max-evalue must be a finite number >= 0"),
        (vec!["--max-evalue", "inf"], "--max-evalue must be a finite number >= 0"),
        (vec!["--db-size", "0", "--db-seqs", "5"], "--db-size must be at least 1"),
        (vec!["--db-size", "100", "--db-seqs", "0"], "--db-seqs must be at least 1"),
        (vec!["--top", "0"], "--top must be at least 1"),
        (vec!["--threads", "0"], "--threads must be at least 1"),
    ] {
        let (exq, exd) = (ex("queries.fasta"), ex("db.fasta.gz"));
        let mut all = vec!["search", "-q", &exq, "-d", &exd, "-o", o_arg, "--device", "cpu"];
        all.extend(args.iter());
        let o = run(&all);
        assert_input_error(&o, needle, d, &[]);
    }
}

// 12. The .swdb loader checks what the FASTA reader checks, and a checksum.
#[test]
fn swdb_is_validated_like_fasta() {
    use swarrow::database::Database;
    use swarrow::seq::Record;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("db.swdb");
    let o = run(&["makedb", &ex("db.fasta.gz"), "-o", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut data = fs::read(&db).unwrap();
    let last = data.len() - 1;
    data[last] = if data[last] == 0 { 1 } else { 0 }; // still a valid residue code
    fs::write(&db, &data).unwrap();
    let search = |db: &Path| {
        run(&[
            "search",
            "-q",
            &ex("queries.fasta"),
            "-d",
            db.to_str().unwrap(),
            "--format",
            "tsv",
            "--device",
            "cpu",
            "--quiet",
        ])
    };
    let o = search(&db);
    assert_input_error(&o, "checksum mismatch", d, &["db.swdb"]);
    // Databases holding what FASTA refuses, written through the library.
    let rec = |id: &str, seq: Vec<u8>| Record { id: id.into(), seq, header: String::new() };
    for (records, needle) in [
        (vec![rec("a", vec![]), rec("b", vec![1, 2])], "sequence 1 is empty"),
        (vec![rec("", vec![3]), rec("b", vec![1, 2])], "has an empty id"),
    ] {
        swarrow::io::write_swdb(&Database::from_records("x", records), swarrow::scoring::Alphabet::Protein, &db)
            .unwrap();
        assert_input_error(&search(&db), needle, d, &["db.swdb"]);
    }
}

// 13. makedb -o - is refused; a legal 250-byte output name works.
#[test]
fn odd_output_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run_in(d, &["makedb", &ex("db.fasta.gz"), "-o", "-"]);
    assert_input_error(&o, "cannot go to stdout", d, &[]);
    let name = format!("{}.tsv", "n".repeat(246));
    assert_eq!(name.len(), 250);
    let o = run_in(d, &["align", "--pairs", &ex("pairs.tsv"), "-o", &name, "--device", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let swdb = format!("{}.swdb", "m".repeat(245));
    let o = run_in(d, &["makedb", &ex("db.fasta.gz"), "-o", &swdb]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(d), [swdb, name]);
}

// 14. `recomputed` is one rule on every engine: the score exceeds 32,767.
#[test]
fn recomputed_is_the_same_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // DNA, match 1000: a self pair of n bases scores 1000 n. 32 -> 32,000 (16-bit range, but
    // near its end, where narrow engines widen), 33 -> 33,000 (beyond it).
    let mut text = String::new();
    for n in [8usize, 32, 33, 40] {
        let s = "ACGT".repeat(n / 4) + &"ACGT"[..n % 4];
        text.push_str(&format!("p{n}\t{s}\tt{n}\t{s}\n"));
    }
    // A long protein self-alignment (SIMD widens, the scalar engine never narrows).
    let protein: String = "MKVLAWHEDRSTYCNPQGFI".repeat(400);
    let pp = d.join("prot.tsv");
    fs::write(&pp, format!("long\t{protein}\tlong\t{protein}\n")).unwrap();
    let pd = d.join("dna.tsv");
    fs::write(&pd, &text).unwrap();
    let column = |engine: &str, args: &[&str]| -> Vec<(i64, String)> {
        let o = bin()
            .args(args)
            .args(["--format", "tsv", "--device", "cpu", "--quiet"])
            .env("SWARROW_ENGINE", engine)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        text.lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f[2].parse().unwrap(), f[11].to_string())
            })
            .collect()
    };
    let dna = ["align", "--pairs", pd.to_str().unwrap(), "--dna", "--match", "1000"];
    let prot = ["align", "--pairs", pp.to_str().unwrap()];
    for args in [&dna[..], &prot[..]] {
        let scalar = column("scalar", args);
        let simd = column("simd", args);
        assert_eq!(scalar, simd, "{:?}", args);
        for (score, recomputed) in &scalar {
            assert_eq!(recomputed, if *score > 32767 { "true" } else { "false" }, "score {}", score);
        }
    }
    assert_eq!(column("scalar", &dna).iter().map(|r| r.0).collect::<Vec<_>>(), [8000, 32000, 33000, 40000]);
}

/// Issue 24, item 5: under `--dna`, letters that are not nucleotides are refused with the
/// file, record and residue; a protein search warns when its input looks like nucleotides.
#[test]
fn inputs_are_checked_for_their_kind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Protein files under --dna (they ran with rc 0 and scores like 8).
    let q = d.join("q.fa");
    let t = d.join("t.fa");
    fs::write(&q, ">p1\nACGTNRYKM\n>p2 a protein\nMKTAYIAKQRQISFVK\n").unwrap();
    fs::write(&t, ">t1\nACGTACGT\n>t2\nACGTACGTACGT\n").unwrap();
    let o = run(&["align", "-q", q.to_str().unwrap(), "-t", t.to_str().unwrap(), "--dna", "--format", "tsv"]);
    // p2's first letter that is no IUPAC nucleotide code: M, K, T, A, Y are codes; I at
    // position 6 is not.
    assert_input_error(&o, "q.fa: record 2 (p2): 'I' is not a nucleotide", d, &["q.fa", "t.fa"]);
    assert!(stderr(&o).contains("at position 6 (line 4)"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    for (pairs, residue) in
        [("q1\tACGT\tt1\tACGE\n", "'E'"), ("q1\tACGF\tt1\tACGT\n", "'F'"), ("q1\tACGT\tt1\tA*GT\n", "'*'")]
    {
        let o = run_stdin(&["align", "--pairs", "-", "--dna", "--format", "tsv"], pairs.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{pairs}");
        assert!(stderr(&o).contains(&format!("<stdin>: record 1 (")), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{residue} is not a nucleotide")), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    // Every IUPAC code is still read (as a mismatch), in either case.
    let o = run_stdin(
        &["align", "--pairs", "-", "--dna", "--format", "tsv", "--columns", "score"],
        b"q\tACGTURYSWKMBDHVNacgturyswkmbdhvn\tt\tACGTU\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "score\n10\n");
    // A DNA query in a protein search: a warning naming it, and the run goes on.
    let dna = d.join("dna.fa");
    fs::write(&dna, ">read1\nACGTTGCAACGTACGGTACCAGTTGACCAGGTTAACCGGTNACG\n").unwrap();
    let o = run(&["search", "-q", dna.to_str().unwrap(), "-d", &ex("db.fasta.gz"), "--format", "tsv", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("warning: query file {} looks like nucleotides (100% A, C, G, T, N", dna.display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // ... and a nucleotide database; a protein one gets no warning.
    let o = run(&["search", "-q", &ex("queries.fasta"), "-d", dna.to_str().unwrap(), "--format", "tsv"]);
    assert!(
        stderr(&o).contains("warning: database") && stderr(&o).contains("looks like nucleotides"),
        "{}",
        stderr(&o)
    );
    let o = run(&["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--format", "tsv"]);
    assert_eq!(stderr(&o), "");
    // Pairs of nucleotides aligned as protein (--dna forgotten).
    let o = run(&["align", "-q", dna.to_str().unwrap(), "-t", dna.to_str().unwrap(), "--format", "tsv"]);
    assert!(o.status.success());
    assert!(stderr(&o).contains("warning: pair input") && stderr(&o).contains("--dna"), "{}", stderr(&o));
}

/// Issue 20, item 4: a positive DNA mismatch (BWA's penalty) is refused with the hint.
#[test]
fn a_mismatch_penalty_is_refused_with_a_hint() {
    let pairs = b"q1\tACGTACGT\tt1\tACGAACGT\n";
    let base = ["align", "--pairs", "-", "--dna", "--format", "tsv"];
    for (value, hint) in [("4", "did you mean --mismatch -4?"), ("0", "did you mean --mismatch -3?")] {
        let o = run_stdin(&[&base[..], &["--mismatch", value]].concat(), pairs);
        assert_eq!(o.status.code(), Some(2), "{value}");
        assert!(stderr(&o).contains(hint), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    let o = run_stdin(&[&base[..], &["--match", "1", "--mismatch", "-4", "--columns", "score"]].concat(), pairs);
    assert!(o.status.success(), "{}", stderr(&o));
    // ACGTACGT against ACGAACGT: end to end, 7 matches and a mismatch score 7 - 4 = 3; the
    // matching ACGT halves score 4, the best local alignment.
    assert_eq!(String::from_utf8_lossy(&o.stdout), "score\n4\n");
}

/// A candidate table (ids `a`, `b`) carrying a timestamp with a named time zone and a
/// struct column, as Parquet or as an Arrow IPC stream.
fn candidates_with_rich_columns(parquet: bool) -> Vec<u8> {
    use arrow::array::{Array, Int32Array, StructArray, TimestampSecondArray};
    let when = TimestampSecondArray::from(vec![1_714_564_800]).with_timezone("UTC");
    let inner = StructArray::from(vec![
        (Arc::new(Field::new("n", DataType::Int32, false)), Arc::new(Int32Array::from(vec![7])) as ArrayRef),
        (Arc::new(Field::new("s", DataType::Utf8, false)), Arc::new(StringArray::from(vec!["x"])) as ArrayRef),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("when", when.data_type().clone(), false),
        Field::new("info", inner.data_type().clone(), false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["a"])),
        Arc::new(StringArray::from(vec!["b"])),
        Arc::new(when),
        Arc::new(inner),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut out = Vec::new();
    if parquet {
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
    } else {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
        drop(w);
    }
    out
}

#[test]
fn carried_columns_have_one_rule_and_a_text_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let set = d.join("set.fa");
    fs::write(&set, b">a\nMKVLAW\n>b\nMKVW\n").unwrap();
    let mut texts = Vec::new();
    for (name, parquet) in [("c.parquet", true), ("c.arrows", false)] {
        let cands = d.join(name);
        fs::write(&cands, candidates_with_rich_columns(parquet)).unwrap();
        let (cands, set) = (cands.to_str().unwrap(), set.to_str().unwrap());
        // Arrow IPC and Parquet carry the same columns (a struct too), to every format.
        for format in ["arrow", "parquet", "tsv"] {
            let out = d.join(format!("out.{format}"));
            let o = run(&[
                "align",
                "--device",
                "cpu",
                "--quiet",
                "--pairs",
                cands,
                "--seqs",
                set,
                "--format",
                format,
                "-o",
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{name} as {format}: {}", stderr(&o));
        }
        let tsv = fs::read_to_string(d.join("out.tsv")).unwrap();
        let mut lines = tsv.lines();
        assert!(lines.next().unwrap().ends_with("\twhen\tinfo"), "{tsv}");
        // The instant in UTC, and the struct's fields.
        let row = lines.next().unwrap();
        assert!(row.ends_with("\t2024-05-01T12:00:00Z\t{n: 7, s: x}"), "{name}: {row}");
        texts.push(tsv);
    }
    assert_eq!(texts[0], texts[1]);
}

// After SIGKILL (no handler runs) the temporary output stays; the next run writing the same
// output removes it.
#[test]
fn the_next_run_removes_what_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("hits.tsv");
    let args = ["search", "-d", &ex("db.fasta.gz"), "-o", out.to_str().unwrap(), "--device", "cpu", "--quiet"];
    let mut child = bin().args(args).args(["-q", "-"]).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.as_mut().unwrap().write_all(b">q\nMKVLAWHE\n").unwrap();
    let start = Instant::now();
    while entries(d).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    drop(child.stdin.take());
    let left = entries(d);
    assert_eq!(left.len(), 1);
    assert!(left[0].starts_with(".hits.tsv.swarrow-tmp-"), "{left:?}");
    let queries = ex("queries.fasta");
    let o = run(&[&args[..], &["-q", &queries][..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(d), ["hits.tsv"]);
}

// Issue 44, item 1: merge keeps every query apart. Two queries with one id are refused by
// search (their hits could not be told apart), a shard holding them is refused by merge, and
// ids that differ only in bytes that are not UTF-8 stay two queries.
#[test]
fn merge_keeps_queries_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    fs::write(d.join("dup.fa"), ">q\nMKVLAWHE\n>r\nPPGGCCYY\n>q\nMKVLAW\n").unwrap();
    fs::write(d.join("db.fa"), ">t1\nMKVLAWHE\n>t2\nPPGGCCYY\n").unwrap();
    let o = run(&["search", "-q", &path("dup.fa"), "-d", &path("db.fa"), "--format", "tsv", "--device", "cpu"]);
    assert_input_error(&o, "dup.fa: record 3 (q): the same id as record 1", d, &["db.fa", "dup.fa"]);
    assert!(o.stdout.is_empty());

    // A shard written elsewhere with one id's hits in two lists (ranks start again at 1).
    let header = "query\ttarget\tscore\tbits\tevalue\tqstart\tqend\ttstart\ttend\tqlen\ttlen\trecomputed\trank\n";
    let row = |q: &str, t: &str, rank: u32| format!("{q}\t{t}\t30\t\t\t1\t6\t1\t6\t6\t6\tfalse\t{rank}\n");
    fs::write(d.join("s.tsv"), format!("{header}{}{}", row("q", "t1", 1), row("q", "t2", 1))).unwrap();
    let o = run(&["merge", "--top", "5", "--trust-shards", "--format", "tsv", &path("s.tsv")]);
    assert_input_error(&o, "s.tsv: query \"q\" has two separate lists of hits", d, &["db.fa", "dup.fa", "s.tsv"]);
    fs::write(d.join("s.tsv"), format!("{header}{}{}{}", row("q", "t1", 1), row("r", "t1", 1), row("q", "t2", 2)))
        .unwrap();
    let o = run(&["merge", "--top", "5", "--trust-shards", "--format", "tsv", &path("s.tsv")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // Ids that differ only in a byte that is not UTF-8, each with its own best target in its
    // own shard: top 1 per query keeps one hit each (by hand: the identical sequence).
    fs::write(d.join("latin1.fa"), b">\xe9a\nMKVLAWHE\n>\xe8a\nPPGGCCYY\n").unwrap();
    fs::write(d.join("db1.fa"), ">t1\nMKVLAWHE\n").unwrap();
    fs::write(d.join("db2.fa"), ">t2\nPPGGCCYY\n").unwrap();
    for (db, out) in [("db1.fa", "s1.parquet"), ("db2.fa", "s2.parquet")] {
        let o = run(&[
            "search",
            "-q",
            &path("latin1.fa"),
            "-d",
            &path(db),
            "--db-size",
            "16",
            "--db-seqs",
            "2",
            "-k",
            "1",
            "-o",
            &path(out),
            "--device",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run(&["merge", "--top", "1", "--format", "tsv", &path("s1.parquet"), &path("s2.parquet")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let ids: Vec<String> = text.lines().skip(1).map(|l| l.split('\t').take(2).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(ids, ["\\xe9a t1", "\\xe8a t2"], "{text}");
}

// Issue 44, item 2: the same shard twice (a repeated glob, a retried job's copy) is refused.
#[test]
fn merge_refuses_the_same_shard_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let o = run(&[
        "search",
        "-q",
        &ex("queries.fasta"),
        "-d",
        &ex("db.fasta.gz"),
        "-o",
        &path("s.parquet"),
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::copy(d.join("s.parquet"), d.join("copy.parquet")).unwrap();
    std::os::unix::fs::symlink(d.join("s.parquet"), d.join("link.parquet")).unwrap();
    let keep = ["copy.parquet", "link.parquet", "s.parquet"];
    let merge = |a: &str, b: &str| run(&["merge", "--top", "5", "-o", &path("m.parquet"), &path(a), &path(b)]);
    assert_input_error(&merge("s.parquet", "s.parquet"), "are the same file", d, &keep);
    assert_input_error(&merge("s.parquet", "link.parquet"), "are the same file", d, &keep);
    assert_input_error(&merge("s.parquet", "copy.parquet"), "two shards hold the same part of the database", d, &keep);
    let o = run(&["merge", "--top", "5", "-o", &path("m.parquet"), &path("s.parquet")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

// Issue 44, item 3: shards of different E-value models or E-value cuts are refused, and a
// merged top larger than the shards' own -k is refused (it would miss hits).
#[test]
fn merge_refuses_shards_cut_differently() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let parts = [">a1\nMKVLAWHEGG\n>a2\nPPGGCCYYWW\n", ">b1\nMKVLAWHEGS\n>b2\nWWHHCCMMKK\n"];
    for (i, part) in parts.iter().enumerate() {
        fs::write(d.join(format!("db{i}.fa")), part).unwrap();
    }
    let queries = ex("queries.fasta");
    let shard = |i: usize, name: &str, extra: &[&str]| {
        let mut args =
            vec!["search", "-q", &queries, "--db-size", "40", "--db-seqs", "4", "--device", "cpu", "--quiet"];
        let (db, out) = (path(&format!("db{i}.fa")), path(name));
        args.extend_from_slice(&["-d", &db, "-o", &out]);
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    shard(0, "a.parquet", &[]);
    shard(1, "b.parquet", &[]);
    shard(1, "spouge.parquet", &["--evalue-model", "spouge"]);
    shard(1, "e.parquet", &["-e", "1e-5"]);
    shard(0, "k3.parquet", &["-k", "3"]);
    shard(1, "k3b.parquet", &["-k", "3"]);
    let keep =
        ["a.parquet", "b.parquet", "db0.fa", "db1.fa", "e.parquet", "k3.parquet", "k3b.parquet", "spouge.parquet"];
    let merge =
        |top: &str, a: &str, b: &str| run(&["merge", "--top", top, "-o", &path("m.parquet"), &path(a), &path(b)]);
    assert_input_error(&merge("10", "a.parquet", "spouge.parquet"), "shards disagree on evalue_model", d, &keep);
    assert_input_error(&merge("10", "a.parquet", "e.parquet"), "shards disagree on max_evalue", d, &keep);
    assert_input_error(&merge("10", "k3.parquet", "k3b.parquet"), "kept at most 3 hits per query", d, &keep);
    let o = merge("3", "k3.parquet", "k3b.parquet");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = merge("10", "a.parquet", "b.parquet");
    assert!(o.status.success(), "{}", stderr(&o));
}

// Issue 44, item 5: a closed standard output or input is an error, never a silent success
// with the results lost (Rust's streams treat a closed descriptor as /dev/null).
#[test]
fn closed_stdout_and_stdin_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exe = std::env::var("SWARROW_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_swarrow").to_string());
    let (q, db) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let sh = |script: &str| {
        std::process::Command::new("bash")
            .current_dir(d)
            .args(["-c", script, "sh", &exe, &q, &db])
            .env_remove("SWARROW_ENGINE")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = sh(r#""$1" search -q "$2" -d "$3" --device cpu --format tsv >&-"#);
    assert_input_error(&o, "standard output is closed", d, &[]);
    let o = sh(r#""$1" search -q - -d "$3" --device cpu --format tsv -o out.tsv <&-"#);
    assert_input_error(&o, "<stdin>: standard input is closed", d, &[]);
    let o = sh(r#""$1" align --pairs - --format tsv -o out.tsv <&-"#);
    assert_input_error(&o, "standard input is closed", d, &[]);
    // A closed stdout does not matter to a run that writes a file, and the file is whole.
    let o = sh(r#""$1" search -q "$2" -d "$3" --device cpu --format tsv -o out.tsv >&-"#);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read_to_string(d.join("out.tsv")).unwrap().starts_with("query\ttarget\t"));
}

// Issue 44, item 6: merge into BLAST tabular (which needs the traceback's columns, absent from
// shards) is refused up front, whatever the spelling, and leaves no file.
#[test]
fn merge_refuses_blast_tabular_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let o = run(&[
        "search",
        "-q",
        &ex("queries.fasta"),
        "-d",
        &ex("db.fasta.gz"),
        "-o",
        &path("s.parquet"),
        "--device",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shard = path("s.parquet");
    for extra in [
        &["--format", "blast"][..],
        &["--outfmt", "6"],
        &["--outfmt", "7"],
        &["--outfmt", "6 qseqid sseqid"],
        &["--format", "m8"],
        &["-o", &path("x.m8")],
    ] {
        let o = run(&[&["merge", "--top", "5"][..], extra, &[&shard]].concat());
        assert_input_error(&o, "merge cannot write BLAST tabular", d, &["s.parquet"]);
        assert!(!stderr(&o).contains("use 6"), "{}", stderr(&o));
    }
    // Redirected into a .m8 file: the same refusal, and the file stays empty.
    let m8 = fs::File::create(d.join("y.m8")).unwrap();
    let o = bin().args(["merge", "--top", "5", &shard]).stdout(m8).output().unwrap();
    assert_input_error(&o, "merge cannot write BLAST tabular", d, &["s.parquet", "y.m8"]);
}

// Issue 44, item 7: a carried column of a type the output cannot hold is refused before the
// first byte (exit 2 naming the column), never an internal error after Parquet's magic.
#[test]
fn carried_columns_parquet_cannot_hold_are_refused_up_front() {
    use arrow::array::IntervalMonthDayNanoArray;
    use arrow::datatypes::IntervalMonthDayNano;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("set.fa"), b">a\nMKVLAW\n>b\nMKVW\n").unwrap();
    let span = IntervalMonthDayNanoArray::from(vec![IntervalMonthDayNano::new(1, 2, 3)]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("span", DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano), false),
    ]));
    let columns: Vec<ArrayRef> =
        vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(StringArray::from(vec!["b"])), Arc::new(span)];
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let mut stream = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut stream, &schema).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    fs::write(d.join("c.arrows"), stream).unwrap();
    let (cands, set) = (d.join("c.arrows"), d.join("set.fa"));
    let (cands, set) = (cands.to_str().unwrap(), set.to_str().unwrap());
    let align = |extra: &[&str]| {
        run(&[&["align", "--device", "cpu", "--quiet", "--pairs", cands, "--seqs", set][..], extra].concat())
    };
    let o = align(&["--format", "parquet"]);
    assert_input_error(
        &o,
        "carried column span has type Interval(MonthDayNano), which Parquet cannot hold",
        d,
        &["c.arrows", "set.fa"],
    );
    assert!(o.stdout.is_empty(), "{} bytes on stdout", o.stdout.len());
    let out = d.join("o.parquet");
    let o = align(&["-o", out.to_str().unwrap()]);
    assert_input_error(&o, "which Parquet cannot hold", d, &["c.arrows", "set.fa"]);
    // Arrow IPC holds it.
    let o = align(&["--format", "arrow"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

// Issue 44, item 8: a huge --threads is refused at once (it ran for minutes starting threads).
#[test]
fn huge_thread_counts_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = d.join("p.tsv");
    fs::write(&pairs, "a\tMKVLAW\tb\tMKVW\n").unwrap();
    let started = Instant::now();
    for args in [
        vec!["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--device", "cpu", "-p", "100000"],
        vec!["align", "--pairs", pairs.to_str().unwrap(), "--device", "cpu", "--threads", "100000"],
    ] {
        let o = run(&args);
        assert_input_error(&o, "--threads 100000 is more than this machine can use", d, &["p.tsv"]);
        assert!(o.stdout.is_empty());
    }
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
}

// Issue 44, item 9: replacing an output keeps its mode (a private file stays private), and a
// file the shell's `>` would refuse (read-only) is refused, left as it was.
#[test]
fn replaced_outputs_keep_their_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("p.tsv"), "a\tMKVLAW\tb\tMKVW\n").unwrap();
    let pairs = d.join("p.tsv").to_str().unwrap().to_string();
    for (name, mode) in [("private.tsv", 0o600), ("group.parquet", 0o640), ("open.tsv", 0o664)] {
        let out = d.join(name);
        fs::write(&out, "old").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(mode)).unwrap();
        let o = run(&["align", "--pairs", &pairs, "--device", "cpu", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_ne!(fs::read(&out).unwrap(), b"old");
        assert_eq!(fs::metadata(&out).unwrap().permissions().mode() & 0o7777, mode, "{name}");
    }
    // Root may write anything, as the shell's `>` may: the refusal is for other users.
    if unsafe { libc::geteuid() } != 0 {
        let out = d.join("readonly.tsv");
        fs::write(&out, "old").unwrap();
        fs::set_permissions(&out, fs::Permissions::from_mode(0o444)).unwrap();
        let o = run(&["align", "--pairs", &pairs, "--device", "cpu", "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("it is read-only"), "{}", stderr(&o));
        assert_eq!(fs::read(&out).unwrap(), b"old");
    }
}

// Issue 44, item 11: ids that are not UTF-8 survive makedb: the database made from a FASTA
// finds the same ids (as bytes) as the FASTA, none is a duplicate, and outputs and messages
// show them escaped (`\xe9`), never as U+FFFD.
#[test]
fn makedb_keeps_ids_that_are_not_utf8_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    fs::write(d.join("latin1.fa"), b">\xe9a one\nMKVLAW\n>\xe8a two\nMKVW\n").unwrap();
    fs::write(d.join("ascii.fa"), b">ea one\nMKVLAW\n>ca two\nMKVW\n").unwrap();
    fs::write(d.join("cands.tsv"), b"\xe9a\t\xe8a\n\xe8a\t\xe9a\n").unwrap();
    fs::write(d.join("oracle.tsv"), b"ea\tca\nca\tea\n").unwrap();
    let o = run(&["makedb", &path("latin1.fa"), "-o", &path("db.swdb"), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let align = |pairs: &str, seqs: &str| {
        let o = run(&["align", "--device", "cpu", "--format", "tsv", "--pairs", &path(pairs), "--seqs", &path(seqs)]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let want = align("oracle.tsv", "ascii.fa").replace("ea\t", "\\xe9a\t").replace("ca\t", "\\xe8a\t");
    assert_eq!(align("cands.tsv", "latin1.fa"), want);
    assert_eq!(align("cands.tsv", "db.swdb"), want);
    // A missing id is named escaped.
    fs::write(d.join("missing.tsv"), b"\xe9a\t\xe9b\n").unwrap();
    let o = run(&["align", "--device", "cpu", "--pairs", &path("missing.tsv"), "--seqs", &path("db.swdb")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("target_id \"\\xe9b\" not found"), "{}", stderr(&o));
    assert!(!stderr(&o).contains('\u{fffd}'), "{}", stderr(&o));
}

// Issue 44, item 13: pairhmm refuses two columns of one name it reads, as align does,
// instead of reading the first.
#[test]
fn pairhmm_refuses_ambiguous_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header = "read\tread_bases\tbase_quals\tins_quals\tdel_quals\tgcp_quals\thaplotype\thap_bases";
    for (name, extra_header, extra_field, column) in [
        ("bases.tsv", "\tread_bases", "\tTTTT", "read_bases"),
        ("gcp.tsv", "\tgcp_quals", "\t++++", "gcp_quals"),
        ("group.tsv", "\tgroup\tgroup", "\ta\tb", "group"),
    ] {
        let text = format!("{header}{extra_header}\nr\tACGT\tIIII\tNNNN\tNNNN\t++++\th\tACGT{extra_field}\n");
        fs::write(d.join(name), text).unwrap();
        let o = run(&["pairhmm", "--device", "cpu", "--format", "tsv", "--pairs", d.join(name).to_str().unwrap()]);
        let needle = format!("columns are named {column}: which one to read is ambiguous");
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(&needle), "{name}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

// Issue 44, item 14: argument errors are one line `swarrow: error: ...` and at most one hint;
// an unknown column suggests the nearest names instead of listing all; a damaged Arrow
// stream's decoder errors ("while verifying ...") come on one line.
#[test]
fn errors_are_one_line_and_a_hint() {
    let (q, db) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let base = ["search", "-q", q.as_str(), "-d", db.as_str(), "--device", "cpu"];
    for (extra, needle, hint) in [
        (&["--top", "abc"][..], "invalid value 'abc' for '--top <N>'", "swarrow search --help"),
        (&["--top", "99999999999999999999999"], "out of range", "swarrow search --help"),
        (&["--top", "3", "--top", "4"], "cannot be used multiple times", "swarrow search --help"),
        (&["--frobnicate"], "unexpected argument '--frobnicate'", "tip: "),
        (&["--matrix"], "a value is required for '--matrix", "swarrow search --help"),
        (&["--columns", "query,pidnet"], "unknown column 'pidnet'; did you mean pident?", ""),
    ] {
        let o = run(&[&base[..], extra].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert!(lines[0].starts_with("swarrow: error: ") && lines[0].contains(needle), "{extra:?}: {err}");
        assert!(lines.len() <= 2 && lines.get(1).is_none_or(|l| l.contains(hint)), "{extra:?}: {err}");
    }
    let o = run(&["search"]);
    assert_eq!(stderr(&o).lines().count(), 2, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("swarrow: error: the following required arguments were not provided: --query"));
    // Every damaged copy of a stream's schema message fails on one line.
    let good = pair_stream(3);
    let (meta, _) = messages(&good)[0].clone();
    let mut verifying = 0;
    for at in meta.clone().step_by(3) {
        let mut data = good.clone();
        data[at] ^= 0x5a;
        let o = run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet"], &data);
        if o.status.success() {
            continue;
        }
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "byte {at}: {err}");
        assert_eq!(err.lines().count(), 1, "byte {at}: {err}");
        verifying += usize::from(err.contains("while verifying"));
    }
    assert!(verifying > 0, "no damage reached the flatbuffer verifier");
}

// Issue 44, item 15: an input of the wrong kind is named for what it is, not "text before
// the first '>' header".
#[test]
fn inputs_of_the_wrong_kind_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let o = run(&["makedb", &ex("db.fasta.gz"), "-o", &path("db.swdb"), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["align", "--pairs", &ex("pairs.tsv"), "--device", "cpu", "-o", &path("p.parquet")]);
    assert!(o.status.success(), "{}", stderr(&o));
    fs::write(d.join("ids.tsv"), "query_id\ttarget_id\nq\tt\n").unwrap();
    fs::write(d.join("q.bz2"), b"BZh91AY&SY\x00\x01").unwrap();
    fs::write(d.join("q.zst"), b"\x28\xb5\x2f\xfd\x00\x58\x01").unwrap();
    fs::write(d.join("q.xz"), b"\xfd7zXZ\x00\x00\x04").unwrap();
    let queries = ex("queries.fasta");
    let db = ex("db.fasta.gz");
    let cases: [(&[&str], &str); 9] = [
        (&["search", "-q", &queries, "-d", &path("p.parquet")], "this is a Parquet file, not FASTA"),
        (&["search", "-q", &queries, "-d", &path("ids.tsv")], "this is a tab-separated table, not FASTA"),
        (&["search", "-q", &path("db.swdb"), "-d", &db], "this is a swarrow makedb database (.swdb), not FASTA"),
        (
            &["search", "-q", &path("q.bz2"), "-d", &db],
            "this is a bzip2 stream, not FASTA: swarrow reads plain text or gzip",
        ),
        (&["search", "-q", &path("q.zst"), "-d", &db], "this is a zstd stream, not FASTA"),
        (&["search", "-q", &path("q.xz"), "-d", &db], "this is an xz stream, not FASTA"),
        (&["align", "--pairs", &path("db.swdb")], "this is a swarrow makedb database (.swdb), not a pair file"),
        (&["align", "--pairs", &path("q.zst")], "this is a zstd stream, not a pair file"),
        (&["makedb", &path("q.bz2"), "-o", &path("x.swdb")], "this is a bzip2 stream, not FASTA"),
    ];
    for (args, needle) in cases {
        let o = run(&[args, &["--quiet"][..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("text before the first"), "{args:?}: {}", stderr(&o));
    }
}

/// The pairs of [`pair_stream`] as an Arrow IPC file.
fn pair_file(rows: usize) -> Vec<u8> {
    let stream = pair_stream(rows);
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(stream), None).unwrap();
    let schema = reader.schema();
    let mut out = Vec::new();
    let mut w = arrow::ipc::writer::FileWriter::try_new(&mut out, &schema).unwrap();
    for batch in reader {
        w.write(&batch.unwrap()).unwrap();
    }
    w.finish().unwrap();
    drop(w);
    out
}

// Issue 44, item 16: smaller items, each against a hand-built case.
#[test]
fn small_items_of_round_five() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    let (q, db) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let tsv = |o: &Output| {
        assert!(o.status.success(), "{}", stderr(o));
        String::from_utf8(o.stdout.clone()).unwrap()
    };
    // A UTF-8 byte order mark is accepted in FASTA, merge TSV shards and pairhmm tables.
    let plain = fs::read(&q).unwrap();
    fs::write(d.join("bom.fa"), [&b"\xef\xbb\xbf"[..], &plain].concat()).unwrap();
    let want = tsv(&run(&["search", "-q", &q, "-d", &db, "--format", "tsv", "--device", "cpu", "--quiet"]));
    let got = tsv(&run(&["search", "-q", &path("bom.fa"), "-d", &db, "--format", "tsv", "--device", "cpu", "--quiet"]));
    assert_eq!(got, want);
    fs::write(d.join("bom.tsv"), format!("\u{feff}{want}")).unwrap();
    let merged = tsv(&run(&["merge", "--top", "10", "--trust-shards", "--format", "tsv", &path("bom.tsv")]));
    assert_eq!(merged.lines().count(), want.lines().count());
    let hmm = "read\tread_bases\tbase_quals\tins_quals\tdel_quals\thaplotype\thap_bases\nr\tACGT\tIIII\tNNNN\tNNNN\th\tACGT\n";
    fs::write(d.join("hmm.tsv"), hmm).unwrap();
    fs::write(d.join("bomhmm.tsv"), format!("\u{feff}{hmm}")).unwrap();
    let pairhmm = |f: &str| tsv(&run(&["pairhmm", "--device", "cpu", "--format", "tsv", "--pairs", &path(f)]));
    assert_eq!(pairhmm("bomhmm.tsv"), pairhmm("hmm.tsv"));
    // A trailing tab on a pair-TSV header line; the pair aligns as without it (MKV x MKV:
    // BLOSUM62 5 + 5 + 4 = 14).
    fs::write(d.join("tab.tsv"), "query_id\tquery_seq\ttarget_id\ttarget_seq\t\nq\tMKV\tt\tMKV\n").unwrap();
    let out = tsv(&run(&["align", "--pairs", &path("tab.tsv"), "--format", "tsv", "--device", "cpu"]));
    assert!(out.lines().nth(1).unwrap().starts_with("q\tt\t14\t"), "{out}");
    // An Arrow IPC file through stdin, as Parquet.
    let o = run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet"], &pair_file(5));
    assert_eq!(tsv(&o).lines().count(), 6);
    // Output names that promise what the output would not be.
    let o = run(&["search", "-q", &q, "-d", &db, "-o", &path("x.tsv.gz"), "--device", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not compress its output"), "{}", stderr(&o));
    let o = run(&["search", "-q", &q, "-d", &db, "-o", &path("x.parquet"), "--format", "tsv", "--device", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("names a parquet file but --format asks for tsv"), "{}", stderr(&o));
    assert!(!d.join("x.tsv.gz").exists() && !d.join("x.parquet").exists());
    // A mistyped SWARROW_ENGINE is refused, as a mistyped SWARROW_SIMD is.
    let o = bin()
        .args(["align", "--pairs", &path("tab.tsv"), "--device", "cpu"])
        .env("SWARROW_ENGINE", "scalr")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("SWARROW_ENGINE=scalr: expected scalar or simd"), "{}", stderr(&o));
    // The search space: --db-seqs needs --db-size, and cannot exceed it.
    for (extra, needle) in [
        (&["--db-seqs", "5"][..], "--db-seqs without --db-size"),
        (&["--db-seqs", "50", "--db-size", "5"], "--db-seqs 50 is more than --db-size 5"),
    ] {
        let o = run(&[&["search", "-q", &q, "-d", &db, "--device", "cpu"][..], extra].concat());
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
    // An integer out of range in a shard says so.
    let header = "query\ttarget\tscore\tbits\tevalue\tqstart\tqend\ttstart\ttend\tqlen\ttlen\trecomputed\trank\n";
    fs::write(d.join("big.tsv"), format!("{header}q\tt\t99999999999\t\t\t1\t6\t1\t6\t6\t6\tfalse\t1\n")).unwrap();
    let o = run(&["merge", "--top", "1", "--trust-shards", "--format", "tsv", &path("big.tsv")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("column 'score': 99999999999 is out of range"), "{}", stderr(&o));
    // `--carry ''` names the empty name quoted.
    fs::write(d.join("p.arrow"), pair_file(2)).unwrap();
    let o = run(&["align", "--pairs", &path("p.arrow"), "--carry", "", "--device", "cpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--carry: no column '' in the input"), "{}", stderr(&o));
}

// Issue 60, item 11: PAF, SAM and BAM given to merge are named as what they are (told by
// content, whatever their names), with the way such shards are joined; exit 2, nothing
// written. Inputs: minimap2-style PAF and SAM written here, and swarrow's own PAF, SAM
// and BAM (BGZF), plain and gzip.
#[test]
fn merge_names_paf_sam_and_bam_and_how_to_join_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    fs::write(d.join("mm2.x"), "r1\t150\t3\t148\t-\tctg\t1000\t200\t345\t140\t145\t60\ttp:A:P\n").unwrap();
    fs::write(d.join("hand.x"), "@HD\tVN:1.6\n@SQ\tSN:ctg\tLN:1000\nr1\t0\tctg\t5\t60\t4M\t*\t0\t0\tACGT\t*\n")
        .unwrap();
    fs::write(d.join("bare.x"), "r1\t16\tctg\t5\t60\t4M\t*\t0\t0\tACGT\t*\tNM:i:0\n").unwrap();
    let align = |name: &str| {
        let o =
            run(&["align", "--dna", "--pairs", &ex("dna-pairs.tsv"), "--device", "cpu", "--quiet", "-o", &path(name)]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    for name in ["own.paf", "own.sam", "own.bam"] {
        align(name);
    }
    fs::write(d.join("own.sam.gz"), gzip(&fs::read(d.join("own.sam")).unwrap())).unwrap();
    let paf = "join PAF shards with cat";
    let sam = "join SAM/BAM shards with samtools cat (shards of one header) or samtools merge";
    let cases = [
        ("mm2.x", "PAF", paf),
        ("own.paf", "PAF", paf),
        ("hand.x", "SAM", sam),
        ("bare.x", "SAM", sam),
        ("own.sam", "SAM", sam),
        ("own.sam.gz", "SAM", sam),
        ("own.bam", "BAM", sam),
    ];
    let keep: Vec<String> = entries(d);
    let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
    for (name, format, join) in cases {
        for top in [&[][..], &["--top", "5"]] {
            let args: Vec<String> = ["merge", "-o", &path("m.parquet")]
                .iter()
                .map(|s| s.to_string())
                .chain(top.iter().map(|s| s.to_string()))
                .chain([path(name)])
                .collect();
            let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let want = format!("{}: is {format}, which merge does not read", path(name));
            assert_input_error(&o, &want, d, &keep);
            assert!(stderr(&o).contains(join) && !stderr(&o).contains("BLAST"), "{}", stderr(&o));
            assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        }
    }
}

//! End-to-end tests of the `swarrow` binary: formats round-trip, pipes, and the error
//! catalogue (message, exit status, and no output file left behind).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_swarrow"));
    c.env_remove("CUDA_VISIBLE_DEVICES");
    c
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).stdin(Stdio::null()).output().expect("run swarrow")
}

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let w = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tsv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect()
}

/// Reads TSV output into header + rows.
fn read_tsv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rows = tsv_rows(&fs::read_to_string(path).unwrap());
    let header = rows.remove(0);
    (header, rows)
}

#[test]
fn search_finds_planted_homologs_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hits.tsv");
    let o = run(&[
        "search", "-q", examples().join("queries.fasta").to_str().unwrap(),
        "-d", examples().join("db.fasta.gz").to_str().unwrap(),
        "-o", out.to_str().unwrap(), "--device", "cpu", "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (header, rows) = read_tsv(&out);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap_or_else(|| panic!("column {}", n));
    let queries: Vec<String> = fs::read_to_string(examples().join("queries.fasta"))
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix('>'))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(queries.len(), 6);
    for q in &queries {
        let best: Vec<&Vec<String>> = rows.iter().filter(|r| &r[col("query")] == q && r[col("rank")] == "1").collect();
        assert_eq!(best.len(), 1, "one rank-1 hit for {}", q);
        assert_eq!(best[0][col("target")], format!("homolog_of_{}", q));
        let evalue: f64 = best[0][col("evalue")].parse().unwrap();
        assert!(evalue < 1e-10, "planted homolog E-value {}", evalue);
    }
}

#[test]
fn every_format_round_trips_the_same_rows() {
    use arrow::array::{Array, Int32Array, StringArray};
    let dir = tempfile::tempdir().unwrap();
    let pairs = examples().join("pairs.tsv");
    let mut tables = Vec::new();
    for ext in ["tsv", "parquet", "arrow", "arrows"] {
        let out = dir.path().join(format!("out.{}", ext));
        let o = run(&["align", "--pairs", pairs.to_str().unwrap(), "-o", out.to_str().unwrap(), "--device", "cpu", "--quiet"]);
        assert!(o.status.success(), "{}: {}", ext, stderr(&o));
        let batches: Vec<arrow::record_batch::RecordBatch> = match ext {
            "parquet" => {
                let f = fs::File::open(&out).unwrap();
                let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
                let meta = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
                assert!(meta.iter().any(|kv| kv.key == "gap_open"), "parquet run metadata");
                builder.build().unwrap().map(|b| b.unwrap()).collect()
            }
            "arrow" => arrow::ipc::reader::FileReader::try_new(fs::File::open(&out).unwrap(), None).unwrap().map(|b| b.unwrap()).collect(),
            "arrows" => arrow::ipc::reader::StreamReader::try_new(fs::File::open(&out).unwrap(), None).unwrap().map(|b| b.unwrap()).collect(),
            _ => {
                let (header, rows) = read_tsv(&out);
                tables.push((header, rows));
                continue;
            }
        };
        let schema = batches[0].schema();
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let mut rows = Vec::new();
        for b in &batches {
            for r in 0..b.num_rows() {
                let row: Vec<String> = (0..b.num_columns())
                    .map(|c| {
                        let col = b.column(c);
                        if let Some(s) = col.as_any().downcast_ref::<StringArray>() {
                            s.value(r).to_string()
                        } else if let Some(i) = col.as_any().downcast_ref::<Int32Array>() {
                            i.value(r).to_string()
                        } else {
                            String::new() // floats and bools: compared through TSV below
                        }
                    })
                    .collect();
                rows.push(row);
            }
        }
        tables.push((names, rows));
    }
    let (tsv_header, tsv_rows) = &tables[0];
    assert_eq!(tsv_rows.len(), 20);
    for (names, rows) in &tables[1..] {
        assert_eq!(names, tsv_header, "same columns everywhere");
        assert_eq!(rows.len(), tsv_rows.len());
        for (a, b) in rows.iter().zip(tsv_rows) {
            for (c, v) in a.iter().enumerate() {
                if !v.is_empty() {
                    assert_eq!(v, &b[c], "column {}", names[c]);
                }
            }
        }
    }
}

#[test]
fn align_rows_match_the_reference_engine_in_input_order() {
    use swarrow::engine::scalar::align_pair;
    use swarrow::scoring::{Alphabet, Scoring};
    let pairs = fs::read_to_string(examples().join("pairs.tsv")).unwrap();
    let o = run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--batch", "3"], pairs.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    let header = &rows[0];
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let sc = Scoring::blosum62();
    let input: Vec<Vec<&str>> = pairs.lines().skip(1).map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len() - 1, input.len());
    for (row, inp) in rows[1..].iter().zip(&input) {
        let q = Alphabet::Protein.encode(inp[1].as_bytes()).unwrap();
        let t = Alphabet::Protein.encode(inp[3].as_bytes()).unwrap();
        let a = align_pair(&q, &t, &sc).unwrap();
        assert_eq!(row[col("query")], inp[0]);
        assert_eq!(row[col("target")], inp[2]);
        let got: Vec<i64> = ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"].iter().map(|c| row[col(c)].parse().unwrap()).collect();
        assert_eq!(got, vec![a.score as i64, a.qstart as i64, a.qend as i64, a.tstart as i64, a.tend as i64, q.len() as i64, t.len() as i64]);
    }
}

#[test]
fn arrow_stream_in_and_out_through_pipes() {
    // TSV pairs -> Arrow stream on stdout -> back in as --pairs - -> TSV: same scores.
    let pairs = fs::read(examples().join("pairs.tsv")).unwrap();
    let o = run_stdin(&["align", "--pairs", "-", "--device", "cpu", "--quiet"], &pairs);
    assert!(o.status.success(), "{}", stderr(&o));
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout.clone()), None).unwrap();
    let n: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(n, 20);
}

#[test]
fn two_fasta_files_pair_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.fa");
    let b = dir.path().join("b.fa");
    fs::write(&a, ">q1\nHEAGAWGHEE\n>q2\nWWWW\n").unwrap();
    fs::write(&b, ">t1\nPAWHEAE\n>t2\nAAAA\n").unwrap();
    let o = run(&["align", "--query", a.to_str().unwrap(), "--target", b.to_str().unwrap(), "--format", "tsv", "--device", "cpu", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    // Hand-checked: HEA/HEA = 8 + 5 + 4 = 17 at q1..3, t4..6; W vs A scores -3: no alignment.
    assert_eq!(rows[1][col("score")], "17");
    assert_eq!([&rows[1][col("qstart")], &rows[1][col("qend")], &rows[1][col("tstart")], &rows[1][col("tend")]], ["1", "3", "4", "6"]);
    assert_eq!(rows[2][col("score")], "0");
    assert_eq!(rows[2][col("qstart")], "0");
}

#[test]
fn dna_scoring() {
    let o = run_stdin(
        &["align", "--pairs", "-", "--dna", "--format", "tsv", "--device", "cpu", "--quiet"],
        b"r1\tAAAAAGGGGG\tc1\tAAAAATTGGGGG\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    // 10 matches * 2 - gap of 2 (5 + 2*2) = 11, spanning both sequences.
    assert_eq!(rows[1][col("score")], "11");
    assert_eq!(rows[1][col("tend")], "12");
}

#[test]
fn makedb_database_gives_the_same_hits_as_fasta() {
    let dir = tempfile::tempdir().unwrap();
    let swdb = dir.path().join("db.swdb");
    let o = run(&["makedb", examples().join("db.fasta.gz").to_str().unwrap(), "-o", swdb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let search = |db: &Path| {
        let o = run(&["search", "-q", examples().join("queries.fasta").to_str().unwrap(), "-d", db.to_str().unwrap(), "--format", "tsv", "--device", "cpu", "--quiet"]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    assert_eq!(search(&swdb), search(&examples().join("db.fasta.gz")));
}

/// One bad input: the exit status, a message fragment, and no output file.
fn assert_fails(args: &[&str], stdin: Option<&[u8]>, code: i32, fragments: &[&str], out: Option<&Path>) {
    let o = match stdin {
        Some(i) => run_stdin(args, i),
        None => run(args),
    };
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "args {:?}: {}", args, err);
    for f in fragments {
        assert!(err.contains(f), "args {:?}: expected {:?} in {:?}", args, f, err);
    }
    assert!(!err.contains("panicked"), "{}", err);
    if let Some(out) = out {
        assert!(!out.exists(), "no output file may be left: {}", out.display());
        let leftovers: Vec<_> = fs::read_dir(out.parent().unwrap()).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name()).filter(|n| n.to_string_lossy().contains("swarrow-tmp")).collect();
        assert!(leftovers.is_empty(), "temporary files left: {:?}", leftovers);
    }
}

#[test]
fn error_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = |name: &str, content: &[u8]| {
        let p = d.join(name);
        fs::write(&p, content).unwrap();
        p
    };
    let out = d.join("out.parquet");
    let o = out.to_str().unwrap();
    let db = examples().join("db.fasta.gz");
    let db = db.to_str().unwrap();

    // Invalid residue: file, record number and id, the character.
    let bad = w("bad.fa", b">ok\nACDE\n>bad1 desc\nAC1DE\n");
    assert_fails(&["search", "-q", bad.to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"], None, 2, &["bad.fa", "record 2", "bad1", "'1'"], Some(&out));
    // Empty record.
    let empty_rec = w("emptyrec.fa", b">a\nAC\n>nothing\n>c\nWW\n");
    assert_fails(&["search", "-q", empty_rec.to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"], None, 2, &["emptyrec.fa", "nothing"], Some(&out));
    // Empty file.
    let empty = w("empty.fa", b"");
    assert_fails(&["search", "-q", empty.to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"], None, 2, &["empty.fa"], Some(&out));
    assert_fails(&["search", "-q", bad.to_str().unwrap(), "-d", empty.to_str().unwrap(), "-o", o, "--device", "cpu"], None, 2, &["empty.fa"], Some(&out));
    // Missing file.
    assert_fails(&["search", "-q", d.join("missing.fa").to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"], None, 2, &["missing.fa"], Some(&out));
    // Truncated gzip.
    let gz = fs::read(examples().join("db.fasta.gz")).unwrap();
    let trunc = w("trunc.fa.gz", &gz[..gz.len() / 2]);
    assert_fails(&["search", "-q", examples().join("queries.fasta").to_str().unwrap(), "-d", trunc.to_str().unwrap(), "-o", o, "--device", "cpu"], None, 2, &["trunc.fa.gz", "gzip"], Some(&out));
    // TSV with missing columns.
    let tsv = w("short.tsv", b"q1\tACDE\tt1\n");
    assert_fails(&["align", "--pairs", tsv.to_str().unwrap(), "-o", o, "--device", "cpu"], None, 2, &["short.tsv", "line 1"], Some(&out));
    // Pair counts differ.
    let a = w("a.fa", b">a1\nAC\n>a2\nWW\n");
    let b = w("b.fa", b">b1\nAC\n");
    assert_fails(&["align", "--query", a.to_str().unwrap(), "--target", b.to_str().unwrap(), "-o", o, "--device", "cpu"], None, 2, &["a2"], Some(&out));
    // Unknown matrix.
    assert_fails(&["align", "--pairs", tsv.to_str().unwrap(), "--matrix", "BLOSUM99", "-o", o], None, 2, &["unknown matrix", "BLOSUM99"], Some(&out));
    // Output directory not writable / missing.
    let nodir = d.join("no/such/dir/out.tsv");
    assert_fails(&["align", "--pairs", examples().join("pairs.tsv").to_str().unwrap(), "-o", nodir.to_str().unwrap(), "--device", "cpu"], None, 2, &["no/such/dir"], None);
    // -o equal to an input.
    let pairs_copy = w("pairs.tsv", &fs::read(examples().join("pairs.tsv")).unwrap());
    assert_fails(&["align", "--pairs", pairs_copy.to_str().unwrap(), "-o", pairs_copy.to_str().unwrap(), "--format", "tsv", "--device", "cpu"], None, 2, &["also an input"], None);
    assert_eq!(fs::read(&pairs_copy).unwrap(), fs::read(examples().join("pairs.tsv")).unwrap(), "input untouched");
    // Bad residue on stdin names <stdin>.
    assert_fails(&["align", "--pairs", "-", "--device", "cpu", "-o", o], Some(b"q\tAC-D\tt\tACD\n"), 2, &["<stdin>", "'-'"], Some(&out));
}

#[test]
fn unsupported_gap_costs_warn_and_give_null_statistics() {
    let o = run_stdin(&["align", "--pairs", "-", "--gap-open", "3", "--gap-extend", "3", "--format", "tsv", "--device", "cpu", "--quiet"], b"q\tHEAGAWGHEE\tt\tPAWHEAE\n");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    assert_eq!(rows[1][col("bits")], "");
    // Hand-checked: gap of 1 costs 6, so AWGHE/AW-HE = 4 + 11 - 6 + 8 + 5 = 22 beats HEA (17).
    assert_eq!(rows[1][col("score")], "22");
}

#[test]
fn align_writes_results_before_its_input_ends() {
    use std::io::{BufRead, BufReader};
    let mut child = bin()
        .args(["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet", "--batch", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..4 {
        writeln!(stdin, "q{}\tHEAGAWGHEE\tt{}\tPAWHEAE", i, i).unwrap();
    }
    stdin.flush().unwrap();
    // stdin stays open: the first rows must still arrive.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let header = lines.next().unwrap().unwrap();
    assert!(header.starts_with("query\ttarget\tscore"), "{}", header);
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("q0\tt0\t17\t"), "{}", first);
    drop(stdin);
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(rest.len(), 3);
    assert!(child.wait().unwrap().success());
}

//! End-to-end tests of the `swarrow` binary: formats round-trip, pipes, and the error
//! catalogue (message, exit status, and no output file left behind).

mod common;
use common::*;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

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
        "search",
        "-q",
        examples().join("queries.fasta").to_str().unwrap(),
        "-d",
        examples().join("db.fasta.gz").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
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
        let o = run(&[
            "align",
            "--pairs",
            pairs.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--device",
            "cpu",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}: {}", ext, stderr(&o));
        let batches: Vec<arrow::record_batch::RecordBatch> = match ext {
            "parquet" => {
                let f = fs::File::open(&out).unwrap();
                let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
                let meta = builder.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
                assert!(meta.iter().any(|kv| kv.key == "gap_open"), "parquet run metadata");
                builder.build().unwrap().map(|b| b.unwrap()).collect()
            }
            "arrow" => arrow::ipc::reader::FileReader::try_new(fs::File::open(&out).unwrap(), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
            "arrows" => arrow::ipc::reader::StreamReader::try_new(fs::File::open(&out).unwrap(), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
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
    let o =
        run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--batch", "3"], pairs.as_bytes());
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
        let got: Vec<i64> = ["score", "qstart", "qend", "tstart", "tend", "qlen", "tlen"]
            .iter()
            .map(|c| row[col(c)].parse().unwrap())
            .collect();
        assert_eq!(
            got,
            vec![
                a.score as i64,
                a.qstart as i64,
                a.qend as i64,
                a.tstart as i64,
                a.tend as i64,
                q.len() as i64,
                t.len() as i64
            ]
        );
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
    let o = run(&[
        "align",
        "--query",
        a.to_str().unwrap(),
        "--target",
        b.to_str().unwrap(),
        "--format",
        "tsv",
        "--device",
        "cpu",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    let col = |n: &str| rows[0].iter().position(|h| h == n).unwrap();
    // Hand-checked: HEA/HEA = 8 + 5 + 4 = 17 at q1..3, t4..6; W vs A scores -3: no alignment.
    assert_eq!(rows[1][col("score")], "17");
    assert_eq!(
        [&rows[1][col("qstart")], &rows[1][col("qend")], &rows[1][col("tstart")], &rows[1][col("tend")]],
        ["1", "3", "4", "6"]
    );
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
        let o = run(&[
            "search",
            "-q",
            examples().join("queries.fasta").to_str().unwrap(),
            "-d",
            db.to_str().unwrap(),
            "--format",
            "tsv",
            "--device",
            "cpu",
            "--quiet",
        ]);
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
        let leftovers: Vec<_> = fs::read_dir(out.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .filter(|n| n.to_string_lossy().contains("swarrow-tmp"))
            .collect();
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
    assert_fails(
        &["search", "-q", bad.to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"],
        None,
        2,
        &["bad.fa", "record 2", "bad1", "'1'"],
        Some(&out),
    );
    // Empty record.
    let empty_rec = w("emptyrec.fa", b">a\nAC\n>nothing\n>c\nWW\n");
    assert_fails(
        &["search", "-q", empty_rec.to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"],
        None,
        2,
        &["emptyrec.fa", "nothing"],
        Some(&out),
    );
    // An empty query file is a valid input with an empty result (tests/hostile.rs); an empty
    // database is an error.
    let empty = w("empty.fa", b"");
    assert_fails(
        &["search", "-q", bad.to_str().unwrap(), "-d", empty.to_str().unwrap(), "-o", o, "--device", "cpu"],
        None,
        2,
        &["empty.fa"],
        Some(&out),
    );
    // Missing file.
    assert_fails(
        &["search", "-q", d.join("missing.fa").to_str().unwrap(), "-d", db, "-o", o, "--device", "cpu"],
        None,
        2,
        &["missing.fa"],
        Some(&out),
    );
    // Truncated gzip.
    let gz = fs::read(examples().join("db.fasta.gz")).unwrap();
    let trunc = w("trunc.fa.gz", &gz[..gz.len() / 2]);
    assert_fails(
        &[
            "search",
            "-q",
            examples().join("queries.fasta").to_str().unwrap(),
            "-d",
            trunc.to_str().unwrap(),
            "-o",
            o,
            "--device",
            "cpu",
        ],
        None,
        2,
        &["trunc.fa.gz", "gzip"],
        Some(&out),
    );
    // TSV with missing columns.
    let tsv = w("short.tsv", b"q1\tACDE\tt1\n");
    assert_fails(
        &["align", "--pairs", tsv.to_str().unwrap(), "-o", o, "--device", "cpu"],
        None,
        2,
        &["short.tsv", "line 1"],
        Some(&out),
    );
    // Pair counts differ.
    let a = w("a.fa", b">a1\nAC\n>a2\nWW\n");
    let b = w("b.fa", b">b1\nAC\n");
    assert_fails(
        &["align", "--query", a.to_str().unwrap(), "--target", b.to_str().unwrap(), "-o", o, "--device", "cpu"],
        None,
        2,
        &["a2"],
        Some(&out),
    );
    // Unknown matrix.
    assert_fails(
        &["align", "--pairs", tsv.to_str().unwrap(), "--matrix", "BLOSUM99", "-o", o],
        None,
        2,
        &["unknown matrix", "BLOSUM99"],
        Some(&out),
    );
    // Output directory not writable / missing.
    let nodir = d.join("no/such/dir/out.tsv");
    assert_fails(
        &[
            "align",
            "--pairs",
            examples().join("pairs.tsv").to_str().unwrap(),
            "-o",
            nodir.to_str().unwrap(),
            "--device",
            "cpu",
        ],
        None,
        2,
        &["no/such/dir"],
        None,
    );
    // -o equal to an input.
    let pairs_copy = w("pairs.tsv", &fs::read(examples().join("pairs.tsv")).unwrap());
    assert_fails(
        &[
            "align",
            "--pairs",
            pairs_copy.to_str().unwrap(),
            "-o",
            pairs_copy.to_str().unwrap(),
            "--format",
            "tsv",
            "--device",
            "cpu",
        ],
        None,
        2,
        &["also an input"],
        None,
    );
    assert_eq!(fs::read(&pairs_copy).unwrap(), fs::read(examples().join("pairs.tsv")).unwrap(), "input untouched");
    // Bad residue on stdin names <stdin>.
    assert_fails(
        &["align", "--pairs", "-", "--device", "cpu", "-o", o],
        Some(b"q\tAC-D\tt\tACD\n"),
        2,
        &["<stdin>", "'-'"],
        Some(&out),
    );
}

#[test]
fn unsupported_gap_costs_warn_and_give_null_statistics() {
    let o = run_stdin(
        &[
            "align",
            "--pairs",
            "-",
            "--gap-open",
            "3",
            "--gap-extend",
            "3",
            "--format",
            "tsv",
            "--device",
            "cpu",
            "--quiet",
        ],
        b"q\tHEAGAWGHEE\tt\tPAWHEAE\n",
    );
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

/// Pair tables with their own column names and extra columns, through every output format:
/// each row matches the scalar reference on its pair, and the carried columns come back
/// row for row (a result-named column renamed `input_score`).
#[test]
fn pair_tables_carry_their_other_columns_through() {
    use arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Int64Type, Schema};
    use std::sync::Arc;
    use swarrow::engine::scalar::align_pair;
    use swarrow::scoring::{Alphabet, Scoring};

    let text = fs::read_to_string(examples().join("pairs.tsv")).unwrap();
    let input: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(String::from).collect())
        .collect();
    let n = input.len();
    let schema = Arc::new(Schema::new(vec![
        Field::new("pair_key", DataType::Int64, false),
        Field::new("a_seq", DataType::Utf8, false),
        Field::new("a_id", DataType::Utf8, false),
        Field::new("b_id", DataType::Utf8, false),
        Field::new("b_seq", DataType::Utf8, false),
        Field::new("score", DataType::Utf8, true),
    ]));
    let col = |k: usize| Arc::new(StringArray::from_iter_values(input.iter().map(|r| r[k].clone())));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| 7000 + i))),
            col(1),
            col(0),
            col(2),
            col(3),
            Arc::new(StringArray::from((0..n).map(|i| (i % 2 == 0).then(|| format!("s{i}"))).collect::<Vec<_>>())),
        ],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("pairs.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(fs::File::create(&table).unwrap(), schema.clone(), None).unwrap();
    w.write(&batch.slice(0, 7)).unwrap();
    w.write(&batch.slice(7, n - 7)).unwrap();
    w.close().unwrap();
    let mut stream = Vec::new();
    let mut sw = arrow::ipc::writer::StreamWriter::try_new(&mut stream, &schema).unwrap();
    sw.write(&batch).unwrap();
    sw.finish().unwrap();
    drop(sw);
    let names = ["--query-col", "a_seq", "--target-col", "b_seq", "--query-id-col", "a_id", "--target-id-col", "b_id"];

    let check = |b: &RecordBatch, what: &str| {
        let sc = Scoring::blosum62();
        let s = b.schema();
        let fields: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(&fields[fields.len() - 2..], ["pair_key", "input_score"], "{what}");
        assert_eq!(b.num_rows(), n, "{what}");
        let key = b.column_by_name("pair_key").unwrap().as_primitive::<Int64Type>();
        let old = b.column_by_name("input_score").unwrap().as_string::<i32>();
        let score = b.column_by_name("score").unwrap().as_primitive::<arrow::datatypes::Int32Type>();
        let query = b.column_by_name("query").unwrap().as_string::<i32>();
        for (i, row) in input.iter().enumerate() {
            assert_eq!(key.value(i), 7000 + i as i64, "{what}");
            assert_eq!(old.is_null(i), i % 2 == 1, "{what}");
            assert_eq!(query.value(i), row[0], "{what}");
            let q = Alphabet::Protein.encode(row[1].as_bytes()).unwrap();
            let t = Alphabet::Protein.encode(row[3].as_bytes()).unwrap();
            assert_eq!(score.value(i), align_pair(&q, &t, &sc).unwrap().score, "{what}");
        }
    };
    // Parquet file in (small batches: the carried slices cross record batches), Parquet out.
    let out = dir.path().join("out.parquet");
    let mut args = vec![
        "align",
        "--pairs",
        table.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
        "--batch",
        "4",
    ];
    args.extend(names);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&out).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    check(&arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap(), "parquet -> parquet");
    // Arrow stream on stdin and Parquet on stdin, Arrow stream out.
    for (what, data) in [("arrow stream", stream.clone()), ("parquet on stdin", fs::read(&table).unwrap())] {
        let mut args = vec!["align", "--pairs", "-", "--format", "arrow", "--device", "cpu", "--quiet"];
        args.extend(names);
        let o = run_stdin(&args, &data);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout), None).unwrap();
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        check(&arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap(), what);
    }
    // TSV: carried columns as text after the results; --carry picks them.
    let mut args = vec![
        "align",
        "--pairs",
        table.to_str().unwrap(),
        "--format",
        "tsv",
        "--device",
        "cpu",
        "--quiet",
        "--carry",
        "pair_key",
    ];
    args.extend(names);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = tsv_rows(&String::from_utf8(o.stdout).unwrap());
    assert_eq!(rows[0].last().unwrap(), "pair_key");
    assert_eq!(rows.len(), n + 1);
    for (i, row) in rows[1..].iter().enumerate() {
        assert_eq!(row.last().unwrap(), &(7000 + i).to_string());
    }
    // A missing column is named, with the columns the table has.
    let o = run(&["align", "--pairs", table.to_str().unwrap(), "--device", "cpu", "--quiet", "--format", "tsv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing columns query_id, query_seq, target_id, target_seq"), "{}", stderr(&o));
    assert!(stderr(&o).contains("it has pair_key, a_seq, a_id, b_id, b_seq, score"), "{}", stderr(&o));
}

/// FASTA header lines come through as qheader/theader (id included, as in the file); inputs
/// without headers (TSV pairs, a makedb database) give null (empty in TSV).
#[test]
fn fasta_headers_come_through_as_qheader_and_theader() {
    use arrow::array::AsArray;
    let dir = tempfile::tempdir().unwrap();
    let (q, t) = (dir.path().join("q.fa"), dir.path().join("t.fa"));
    fs::write(&q, ">q1 first query\tTAB x\nHEAGAWGHEE\n>q2\nMKVLAAGIW\n").unwrap();
    fs::write(&t, ">t1 a target  \nPAWHEAE\n>t2 another one OS=Homo sapiens\nMKVLAW\n").unwrap();
    let out = dir.path().join("a.arrow");
    let o = run(&[
        "align",
        "-q",
        q.to_str().unwrap(),
        "-t",
        t.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
        "--columns",
        "query,qheader,theader,score",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = fs::File::open(&out).unwrap();
    let batches: Vec<_> = arrow::ipc::reader::FileReader::try_new(file, None).unwrap().map(|b| b.unwrap()).collect();
    let b = &batches[0];
    let col = |name: &str| b.column_by_name(name).unwrap().as_string::<i32>().clone();
    let (qh, th) = (col("qheader"), col("theader"));
    assert_eq!((qh.value(0), qh.value(1)), ("q1 first query\tTAB x", "q2"));
    assert_eq!((th.value(0), th.value(1)), ("t1 a target", "t2 another one OS=Homo sapiens"));
    // TSV pairs have no headers: null in Arrow, empty in TSV.
    let pairs = dir.path().join("p.tsv");
    fs::write(&pairs, "a\tHEAGAWGHEE\tb\tPAWHEAE\n").unwrap();
    let o = run(&[
        "align",
        "--pairs",
        pairs.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
        "--columns",
        "query,qheader,theader",
        "--format",
        "tsv",
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "query\tqheader\ttheader\na\t\t\n");
    // Search: the database's headers from FASTA; none from a makedb file.
    let db = dir.path().join("db.fa");
    fs::write(&db, ">t1 a target\nPAWHEAE\n>t2 another\nMKVLAW\n").unwrap();
    let o = run(&[
        "search",
        "-q",
        q.to_str().unwrap(),
        "-d",
        db.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
        "--columns",
        "qseqid,sseqid,qtitle,stitle",
        "--format",
        "tsv",
        "-k",
        "1",
    ]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("q1\tt1\tq1 first query TAB x\tt1 a target\n"), "{text}");
    let swdb = dir.path().join("db.swdb");
    assert!(run(&["makedb", db.to_str().unwrap(), "-o", swdb.to_str().unwrap(), "--quiet"]).status.success());
    let o = run(&[
        "search",
        "-q",
        q.to_str().unwrap(),
        "-d",
        swdb.to_str().unwrap(),
        "--device",
        "cpu",
        "--quiet",
        "--columns",
        "qseqid,sseqid,theader",
        "--format",
        "tsv",
        "-k",
        "1",
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("q1\tt1\t\n"));
}

/// `--stats` lines as (name, value).
fn stats_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("swarrow stats: "))
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// The seconds that follow `word` in `value` (`busy 0.012 s, ...`).
fn seconds_after(value: &str, word: &str) -> f64 {
    let rest = value.split(word).nth(1).unwrap_or_else(|| panic!("no {word:?} in {value:?}"));
    rest.split_whitespace().next().unwrap().parse().unwrap_or_else(|_| panic!("{word:?} in {value:?}"))
}

// Where a run's time went: every stage of the pipeline with its busy and waiting times, the
// stage that bounds it and the CPU of swarrow's threads by stage, on align (several batches,
// every output format's writer) and search. A stage's busy and waiting times together fit in
// the wall (compute: in its workers' walls), output time within writing.
#[test]
fn stats_say_per_stage_where_the_time_went() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = examples().join("pairs.tsv");
    let out = dir.path().join("out.parquet");
    let align = ["align", "--pairs", pairs.to_str().unwrap(), "--batch", "3", "--device", "cpu", "--stats", "--quiet"];
    let (queries, db) = (ex("queries.fasta"), ex("db.fasta.gz"));
    let search = ["search", "-q", &queries, "-d", &db, "--device", "cpu", "--stats", "--quiet"];
    let runs: [(&[&str], &[&str], u64); 3] = [
        (&align, &["-o", out.to_str().unwrap()], 7),
        (&align, &["--format", "arrow", "-o", "-"], 7),
        (&search, &["--format", "tsv", "-o", "-"], 1),
    ];
    for (args, output, batches) in runs {
        let args: Vec<&str> = args.iter().chain(output).copied().collect();
        let started = std::time::Instant::now();
        let o = run(&args);
        let process = started.elapsed().as_secs_f64();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let lines = stats_lines(&stderr(&o));
        let get = |name: &str| {
            lines
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("{args:?}: no {name}: {lines:?}"))
        };
        let secs = |v: &str| v.trim_end_matches(" s").parse::<f64>().unwrap();
        let wall = secs(&get("pipeline wall"));
        let slack = 0.005;
        let counts = get("pipeline batches");
        assert!(counts.starts_with(&format!("{batches} (")), "{counts}");
        let workers: f64 = counts.split('(').nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
        let read = get("stage read");
        assert!(seconds_after(&read, "busy") + seconds_after(&read, "blocked on compute") <= wall + slack, "{read}");
        let compute = get("stage compute");
        let busy = seconds_after(&compute, "busy");
        assert!(busy > 0.0, "{compute}");
        let total =
            busy + seconds_after(&compute, "waiting for input") + seconds_after(&compute, "blocked on the writer");
        assert!(total <= workers * wall + slack, "{compute} over {workers} x {wall}");
        let write = get("stage write");
        let writing = seconds_after(&write, "busy");
        assert!(writing + seconds_after(&write, "waiting for results") <= wall + slack, "{write}");
        assert!(seconds_after(&write, "output") <= writing + slack, "{write}");
        assert!(["read", "compute", "write"].contains(&get("bound by").as_str()));
        // The time before the first pair: within the process's.
        let before = get("before the first pair");
        let before = secs(before.split(" (").next().unwrap());
        assert!(before > 0.0 && before <= process, "{before} of {process} s");
        // The reader's and the engine's threads, by stage; each thread's CPU within the wall.
        for stage in ["cpu sw-read", "cpu sw-simd"] {
            let v = get(stage);
            let (cpu, threads) = v.split_once(" in ").unwrap();
            let threads: f64 = threads.split_whitespace().next().unwrap().parse().unwrap();
            // CPU time read from /proc comes in clock ticks (10 ms).
            assert!(secs(cpu) <= threads * (wall + 0.02), "{stage}: {v}");
        }
    }
}

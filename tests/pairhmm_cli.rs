//! `swarrow pairhmm` from the command line: every input format gives the rows the TSV input
//! gives, every output format carries the same rows, streaming in small batches keeps input
//! order, and bad input is a clear error (file, record, problem; exit 2; no output left).
//! Likelihood values themselves are checked against GKL in tests/pairhmm_gkl.rs; here the
//! oracle for values is the scalar reference's formula checked by hand for one case.

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Float64Type, Schema};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const PAIR_COLUMNS: [&str; 9] =
    ["read", "read_bases", "base_quals", "ins_quals", "del_quals", "gcp_quals", "haplotype", "hap_bases", "group"];

fn rows() -> Vec<[String; 9]> {
    let mut out = Vec::new();
    let haps = ["ACGTACGTTAGCATCGATCGATTACG", "ACGTACGTTAGCATCGTTCGATTACGA", "NCGTACG"];
    let reads = ["ACGTTAGCAT", "GATCGATTAC", "A", "TTTTTTTTTTTTTTTTTTTT"];
    for (g, hs) in [(0usize, &haps[..2]), (1, &haps[..])] {
        for (r, read) in reads.iter().enumerate() {
            for (h, hap) in hs.iter().enumerate() {
                let n = read.len();
                let q = |c: char| std::iter::repeat(c).take(n).collect::<String>();
                out.push([
                    format!("g{g}r{r}"),
                    read.to_string(),
                    q('I'),
                    q('5'),
                    q('9'),
                    q('+'),
                    format!("g{g}h{h}"),
                    hap.to_string(),
                    format!("g{g}"),
                ]);
            }
        }
    }
    out
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pairhmm_cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tsv(rows: &[[String; 9]]) -> String {
    let mut s = PAIR_COLUMNS.join("\t") + "\n";
    for r in rows {
        s += &(r.join("\t") + "\n");
    }
    s
}

fn record_batch(rows: &[[String; 9]]) -> RecordBatch {
    let fields: Vec<Field> = PAIR_COLUMNS.iter().map(|c| Field::new(*c, DataType::Utf8, false)).collect();
    let columns = (0..9)
        .map(|c| Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r[c].clone()))) as Arc<dyn Array>)
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn swarrow(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_swarrow"))
        .arg("pairhmm")
        .args(args)
        .args(["--quiet", "--device", "cpu"])
        .output()
        .unwrap()
}

/// (read, haplotype, group, log10 bits, recomputed) from a TSV output.
fn parse_tsv(text: &str) -> Vec<(String, String, String, u64, bool)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("read\thaplotype\tgroup\tlog10_likelihood\trecomputed"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].into(), f[1].into(), f[2].into(), f[3].parse::<f64>().unwrap().to_bits(), f[4] == "true")
        })
        .collect()
}

fn run_tsv(args: &[&str]) -> Vec<(String, String, String, u64, bool)> {
    let out = swarrow(&[args, &["--format", "tsv"]].concat());
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    parse_tsv(&String::from_utf8(out.stdout).unwrap())
}

fn write(name: &str, data: &[u8]) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, data).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_input_format_gives_the_same_rows_in_input_order() {
    let rows = rows();
    let tsv_path = write("pairs.tsv", tsv(&rows).as_bytes());
    let want = run_tsv(&["--pairs", s(&tsv_path)]);
    assert_eq!(want.len(), rows.len());
    for (w, r) in want.iter().zip(&rows) {
        assert_eq!((&w.0, &w.1, &w.2), (&r[0], &r[6], &r[8]));
    }
    // Arrow IPC stream and file, Parquet (two record batches each).
    let batches = [record_batch(&rows[..5]), record_batch(&rows[5..])];
    let schema = batches[0].schema();
    let mut stream = Vec::new();
    {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut stream, &schema).unwrap();
        batches.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    }
    let mut file = Vec::new();
    {
        let mut w = arrow::ipc::writer::FileWriter::try_new(&mut file, &schema).unwrap();
        batches.iter().for_each(|b| w.write(b).unwrap());
        w.finish().unwrap();
    }
    let mut pq = Vec::new();
    {
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, schema.clone(), None).unwrap();
        batches.iter().for_each(|b| w.write(b).unwrap());
        w.close().unwrap();
    }
    for (name, data) in [("pairs.arrows", stream), ("pairs.arrow", file), ("pairs.parquet", pq)] {
        let p = write(name, &data);
        assert_eq!(run_tsv(&["--pairs", s(&p)]), want, "{name}");
    }
    // Grouped tables: the reads and haplotypes of the same pairs; tiny batches split groups.
    let mut reads = String::from("group\tread\tread_bases\tbase_quals\tins_quals\tdel_quals\tgcp_quals\n");
    let mut haps = String::from("group\thaplotype\thap_bases\n");
    let mut seen_reads = std::collections::HashSet::new();
    let mut seen_haps = std::collections::HashSet::new();
    for r in &rows {
        if seen_haps.insert(r[6].clone()) {
            haps += &format!("{}\t{}\t{}\n", r[8], r[6], r[7]);
        }
        if seen_reads.insert(r[0].clone()) {
            reads += &format!("{}\t{}\t{}\t{}\t{}\t{}\t{}\n", r[8], r[0], r[1], r[2], r[3], r[4], r[5]);
        }
    }
    let reads = write("reads.tsv", reads.as_bytes());
    let haps = write("haps.tsv", haps.as_bytes());
    for batch in ["1", "3", "1000"] {
        assert_eq!(
            run_tsv(&["--reads", s(&reads), "--haplotypes", s(&haps), "--batch-pairs", batch]),
            want,
            "batch {batch}"
        );
    }
    // GATK test-data text: the same pairs, ids by record number.
    let mut gatk = String::from("# hap read qual ins del gcp expected\n");
    for r in &rows {
        gatk += &format!("{} {} {} {} {} {} -1.0\n", r[7], r[1], r[2], r[3], r[4], r[5]);
    }
    let gatk = write("pairs.txt", gatk.as_bytes());
    let got = run_tsv(&["--pairs", s(&gatk)]);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            (g.0.as_str(), g.1.as_str(), g.2.as_str()),
            (format!("r{}", i + 1).as_str(), format!("h{}", i + 1).as_str(), (i + 1).to_string().as_str())
        );
        assert_eq!((g.3, g.4), (w.3, w.4));
    }
    // A missing gcp_quals column takes --gcp for every base ('+' is 10, the default).
    let no_gcp: String = tsv(&rows)
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split('\t').collect();
            f.remove(5);
            f.join("\t") + "\n"
        })
        .collect();
    let p = write("nogcp.tsv", no_gcp.as_bytes());
    assert_eq!(run_tsv(&["--pairs", s(&p)]), want);
}

// Hand-checked: a 1-base read 'A' (quality 40) against haplotype 'A', insertion/deletion 45,
// gcp 10: one path matters, M[1][1] = (1 - 1e-4) * (1 - 10^-1) * 1 (D0 = 1/1) and
// I[1][1] = 0, so log10 = log10(0.9999 * 0.9) = -0.04580...
#[test]
fn one_base_case_matches_the_hand_computed_value() {
    let p = write("one.tsv", b"read\tread_bases\tbase_quals\tins_quals\tdel_quals\tgcp_quals\thaplotype\thap_bases\nr\tA\tI\tN\tN\t+\th\tA\n");
    let got = run_tsv(&["--pairs", s(&p)]);
    let want = (0.9999f64 * 0.9).log10();
    assert!((f64::from_bits(got[0].3) - want).abs() < 1e-6, "{} vs {want}", f64::from_bits(got[0].3));
}

#[test]
fn every_output_format_carries_the_same_rows() {
    let p = write("fmt.tsv", tsv(&rows()).as_bytes());
    let want = run_tsv(&["--pairs", s(&p)]);
    for (format, ext) in [("arrow", "arrows"), ("arrow-file", "arrow"), ("parquet", "parquet")] {
        let out = dir().join(format!("out.{ext}"));
        let o = swarrow(&["--pairs", s(&p), "--format", format, "-o", s(&out)]);
        assert!(o.status.success(), "{format}: {}", String::from_utf8_lossy(&o.stderr));
        let data = std::fs::read(&out).unwrap();
        let batches: Vec<RecordBatch> = match format {
            "arrow" => {
                arrow::ipc::reader::StreamReader::try_new(&data[..], None).unwrap().map(|b| b.unwrap()).collect()
            }
            "arrow-file" => arrow::ipc::reader::FileReader::try_new(std::io::Cursor::new(data), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
            _ => {
                let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                    std::fs::File::open(&out).unwrap(),
                )
                .unwrap();
                assert_eq!(builder.schema().metadata().get("mode").map(String::as_str), Some("pairhmm"));
                builder.build().unwrap().map(|b| b.unwrap()).collect()
            }
        };
        let mut got = Vec::new();
        for b in &batches {
            assert_eq!(b.schema().field(3).data_type(), &DataType::Float64);
            if format != "parquet" {
                assert_eq!(b.schema().metadata().get("mode").map(String::as_str), Some("pairhmm"), "{format}");
            }
            for i in 0..b.num_rows() {
                let str_at = |c: usize| b.column(c).as_string::<i32>().value(i).to_string();
                got.push((
                    str_at(0),
                    str_at(1),
                    str_at(2),
                    b.column(3).as_primitive::<Float64Type>().value(i).to_bits(),
                    b.column(4).as_boolean().value(i),
                ));
            }
        }
        assert_eq!(got, want, "{format}");
    }
    let o = swarrow(&["--pairs", s(&p), "--format", "blast"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2_and_no_output() {
    let header = "read\tread_bases\tbase_quals\tins_quals\tdel_quals\tgcp_quals\thaplotype\thap_bases\n";
    let good = "r1\tACGT\tIIII\tIIII\tIIII\t++++\th1\tACGT\n";
    let cases = [
        ("r2\tACGT\tIII\tIIII\tIIII\t++++\th2\tACGT\n", "3 base qualities for 4 bases"),
        ("r2\tACGT\tII\x7fI\tIIII\tIIII\t++++\th2\tACGT\n", "base quality 3 is byte 0x7f"),
        ("r2\tACGT\tIIII\tII I\tIIII\t++++\th2\tACGT\n", "insertion quality 3"),
        ("r2\tACXT\tIIII\tIIII\tIIII\t++++\th2\tACGT\n", "read base 3 is 'X'"),
        ("r2\tACGT\tIIII\tIIII\tIIII\t++++\th2\tAC-T\n", "haplotype base 3 is '-'"),
        ("r2\t\t\t\t\t\th2\tACGT\n", "empty read"),
        ("r2\tACGT\tIIII\n", "3 fields, expected 8"),
    ];
    for (i, (line, problem)) in cases.iter().enumerate() {
        let p = write(&format!("bad{i}.tsv"), format!("{header}{good}{line}").as_bytes());
        let out = dir().join(format!("bad{i}.parquet"));
        let o = swarrow(&["--pairs", s(&p), "-o", s(&out)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{problem}: {err}");
        assert!(err.contains(s(&p)) && err.contains("record 2") && err.contains(problem), "{problem}: {err}");
        assert!(!out.exists(), "{problem}: output left behind");
    }
    // Grouped: a group without haplotypes, and a missing column.
    let reads = write("g_reads.tsv", b"group\tread\tread_bases\tbase_quals\tins_quals\tdel_quals\na\tr1\tACGT\tIIII\tIIII\tIIII\nb\tr2\tACGT\tIIII\tIIII\tIIII\n");
    let haps = write("g_haps.tsv", b"group\thaplotype\thap_bases\na\th1\tACGT\n");
    let o = swarrow(&["--reads", s(&reads), "--haplotypes", s(&haps), "--format", "tsv"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("group 'b' has no haplotypes") && err.contains("record 2"), "{err}");
    let nocol = write("g_nocol.tsv", b"group\thaplotype\na\th1\n");
    let o = swarrow(&["--reads", s(&reads), "--haplotypes", s(&nocol), "--format", "tsv"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no column 'hap_bases'"), "{err}");
    // GATK text with a wrong field count.
    let g = write("bad_gatk.txt", b"ACGT ACGT IIII IIII IIII\n");
    let o = swarrow(&["--pairs", s(&g), "--format", "tsv"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("record 1") && err.contains("5 fields"), "{err}");
}

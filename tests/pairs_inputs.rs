//! Every pair input path against an independent oracle: the same pairs as plain TSV (or,
//! where columns are carried, as a plain utf8 Parquet table) through `align --pairs` on the
//! CPU engine. Outputs must be byte-identical: gzip and BGZF TSV, two FASTA files (plain and
//! BGZF), Parquet of several row groups, Arrow IPC stream and file, and tables whose pair
//! columns are large_utf8, binary, large_binary or dictionary-encoded. Corrupt compressed
//! or Parquet input fails with a message naming the file, and leaves no output behind.

mod common;
use common::pairs::*;
use common::*;

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, DictionaryArray, LargeBinaryArray, LargeStringArray, RecordBatch};
use arrow::datatypes::{Int16Type, Int32Type};

/// Every output column but the FASTA headers (the TSV oracle has none), traceback included.
const COLUMNS: &str = "query,target,score,evalue,qstart,qend,tstart,tend,qlen,tlen,pident,gaps,cigar";

fn large_utf8(v: Vec<&str>) -> ArrayRef {
    Arc::new(LargeStringArray::from(v))
}

fn binary(v: Vec<&str>) -> ArrayRef {
    Arc::new(BinaryArray::from_iter_values(v))
}

fn large_binary(v: Vec<&str>) -> ArrayRef {
    Arc::new(LargeBinaryArray::from_iter_values(v))
}

fn dict32(v: Vec<&str>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<DictionaryArray<Int32Type>>())
}

fn dict16(v: Vec<&str>) -> ArrayRef {
    Arc::new(v.into_iter().collect::<DictionaryArray<Int16Type>>())
}

/// TSV output of `align` on the CPU engine; panics with stderr when it fails.
fn align(input: &[&str]) -> Vec<u8> {
    align_ok(&[&["--format", "tsv", "--columns", COLUMNS], input].concat()).stdout
}

#[test]
fn every_input_path_matches_plain_tsv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = pairs(600);
    let text = tsv(&pairs);
    let want = align(&["--pairs", &write(d, "pairs.tsv", text.as_bytes())]);
    assert_eq!(String::from_utf8_lossy(&want).lines().count(), pairs.len() + 1);
    let bgzf_text = bgzf(text.as_bytes());
    assert!(bgzf_text.len() > 3 * 65536 / 4, "several BGZF blocks");
    let plain = table(&pairs, [&utf8, &utf8, &utf8, &utf8]);
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("gzip", vec![write(d, "pairs.tsv.gz", &gzip(text.as_bytes()))]),
        ("bgzf", vec![write(d, "pairs.bgzf", &bgzf_text)]),
        ("fasta", vec![write(d, "q.fa", fasta(&pairs, 0).as_bytes()), write(d, "t.fa", fasta(&pairs, 2).as_bytes())]),
        (
            "bgzf fasta",
            vec![
                write(d, "q.fa.gz", &bgzf(fasta(&pairs, 0).as_bytes())),
                write(d, "t.fa.gz", &gzip(fasta(&pairs, 2).as_bytes())),
            ],
        ),
        ("parquet", vec![write(d, "pairs.parquet", &parquet(&plain))]),
        ("arrow stream", vec![write(d, "pairs.arrows", &arrow_ipc(&plain, false))]),
        ("arrow file", vec![write(d, "pairs.arrow", &arrow_ipc(&plain, true))]),
    ];
    for (tag, files) in &cases {
        let args: Vec<&str> = match files.as_slice() {
            // Tables hold further columns; TSV pair files carry none.
            [one] if one.ends_with(".parquet") || one.contains(".arrow") => vec!["--pairs", one, "--carry", "none"],
            [one] => vec!["--pairs", one],
            [q, t] => vec!["-q", q, "-t", t],
            _ => unreachable!(),
        };
        let got = align(&args);
        if got != want {
            let (g, w) = (String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
            let diff: Vec<_> = g.lines().zip(w.lines()).filter(|(a, b)| a != b).take(3).collect();
            panic!(
                "{tag}: output differs from the plain TSV's ({} vs {} lines): {diff:?}",
                g.lines().count(),
                w.lines().count()
            );
        }
    }
    // Through stdin too: BGZF TSV.
    let mut args = vec!["align", "--device", "cpu", "--quiet", "--format", "tsv", "--columns", COLUMNS];
    args.extend_from_slice(&["--pairs", "-"]);
    let o = run_stdin(&args, &bgzf_text);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "stdin BGZF differs");
}

#[test]
fn binary_large_and_dictionary_columns_read_as_utf8_with_carried_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = pairs(400);
    let oracle = write(d, "plain.parquet", &parquet(&table(&pairs, [&utf8, &utf8, &utf8, &utf8])));
    let want = align(&["--pairs", &oracle]);
    let header = String::from_utf8_lossy(&want).lines().next().unwrap().to_string();
    assert!(header.ends_with("key\tnote"), "carried columns in the output: {header}");
    let typed: [[&dyn Fn(Vec<&str>) -> ArrayRef; 4]; 3] = [
        [&dict32, &large_utf8, &binary, &large_binary],
        [&large_utf8, &dict16, &dict32, &binary],
        [&binary, &binary, &large_binary, &dict32],
    ];
    for (k, make) in typed.into_iter().enumerate() {
        let batch = table(&pairs, make);
        for (tag, data) in
            [("parquet", parquet(&batch)), ("stream", arrow_ipc(&batch, false)), ("file", arrow_ipc(&batch, true))]
        {
            let path = write(d, &format!("typed{k}.{tag}"), &data);
            assert!(align(&["--pairs", &path]) == want, "typed columns {k} as {tag}: output differs");
        }
    }
    // A dictionary-encoded id column for candidates by id, and for a sequence set.
    let ids: Vec<&str> = pairs.iter().map(|p| p[0].as_str()).collect();
    let targets: Vec<&str> = pairs.iter().map(|p| p[2].as_str()).collect();
    let cands =
        RecordBatch::try_from_iter([("query_id", dict32(ids.clone())), ("target_id", dict16(targets))]).unwrap();
    let set_ids: Vec<&str> = pairs.iter().flat_map(|p| [p[0].as_str(), p[2].as_str()]).collect();
    let set_seqs: Vec<&str> = pairs.iter().flat_map(|p| [p[1].as_str(), p[3].as_str()]).collect();
    let set = RecordBatch::try_from_iter([("id", dict32(set_ids)), ("sequence", large_binary(set_seqs))]).unwrap();
    let cands = write(d, "cands.arrows", &arrow_ipc(&cands, false));
    let set = write(d, "set.parquet", &parquet(&set));
    let oracle = align(&["--pairs", &write(d, "pairs.tsv", tsv(&pairs).as_bytes())]);
    assert!(align(&["--pairs", &cands, "--seqs", &set]) == oracle, "dictionary candidates and set differ");
}

/// Runs `align --pairs FILE -o out`: exit 2, the message on stderr, no output left.
fn fails(dir: &Path, file: &str, message: &str) {
    let out = dir.join("out.parquet");
    align_fails(&["align", "--device", "cpu", "--pairs", file, "-o", out.to_str().unwrap()], &out, message);
}

#[test]
fn corrupt_compressed_and_parquet_inputs_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pairs = pairs(600);
    let text = tsv(&pairs);
    let gz = gzip(text.as_bytes());
    let cut = write(d, "cut.tsv.gz", &gz[..gz.len() / 2]);
    fails(d, &cut, &format!("{cut}: truncated or corrupt gzip data"));
    let bz = bgzf(text.as_bytes());
    let cut = write(d, "cut.bgzf", &bz[..bz.len() / 2]);
    fails(d, &cut, &format!("{cut}: truncated or corrupt BGZF data"));
    let mut flipped = bz.clone();
    flipped[bz.len() / 3] ^= 0x5a;
    let flipped = write(d, "flipped.bgzf", &flipped);
    fails(d, &flipped, &format!("{flipped}: truncated or corrupt BGZF data"));
    let pq = parquet(&table(&pairs, [&utf8, &utf8, &utf8, &utf8]));
    let mut bad = pq.clone();
    for i in (bad.len() / 4..bad.len() / 2).step_by(97) {
        bad[i] ^= 0xff;
    }
    let bad = write(d, "bad.parquet", &bad);
    fails(d, &bad, &format!("{bad}: bad Parquet data"));
}

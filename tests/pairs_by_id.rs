//! Pairs by id (`align --pairs CANDIDATES --seqs SEQS [--target-seqs SEQS2]`) against an
//! independent oracle: the same pairs written out with their sequences (TSV, or a Parquet
//! pair table where columns are carried, or two FASTA files where FASTA headers matter) and
//! run through the existing `align --pairs` paths on the CPU engine. Outputs must be
//! byte-identical, in every output format; bad inputs fail with messages that name the file,
//! the record and the id, and leave no output file behind.

mod common;
use common::*;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

/// Every output column but the FASTA headers (the TSV oracle has none), traceback included.
const COLUMNS: &str = "query,target,score,bits,evalue,qstart,qend,tstart,tend,qlen,tlen,recomputed,\
                       pident,nident,length,mismatch,gapopen,gaps,qcov,tcov,cigar,qaln,taln";

/// One sequence of a set: id, FASTA header (id included), residues as letters.
#[derive(Clone)]
struct Seq {
    id: String,
    header: String,
    letters: String,
}

/// `n` proteins named `{prefix}{i}` (with characters ids really have), some related.
fn proteins(rng: &mut Rng, prefix: &str, n: usize) -> Vec<Seq> {
    const AA: &[u8] = b"ACDEFGHIKLMNPQRSTVWYX";
    let mut out: Vec<Seq> = Vec::new();
    for i in 0..n {
        let len = 1 + rng.below(180);
        let letters: String = if i > 0 && rng.below(3) == 0 {
            // A mutated copy of an earlier sequence: real alignments with gaps.
            let base = out[rng.below(out.len())].letters.clone();
            let mut out = String::new();
            for c in base.chars() {
                if rng.below(12) == 0 {
                    continue;
                }
                out.push(if rng.below(8) == 0 { AA[rng.below(20)] as char } else { c });
            }
            out + "W"
        } else {
            (0..len).map(|_| AA[rng.below(AA.len())] as char).collect()
        };
        let id = format!("{prefix}|P{i:05}|{prefix}_{i}");
        let header = if i % 4 == 0 { id.clone() } else { format!("{id} protein {i} OS=Some species") };
        out.push(Seq { id, header, letters });
    }
    out
}

fn fasta(seqs: &[Seq], lowercase_every: usize) -> String {
    let mut text = String::new();
    for (i, s) in seqs.iter().enumerate() {
        text.push_str(&format!(">{}\n", s.header));
        let letters =
            if lowercase_every > 0 && i % lowercase_every == 1 { s.letters.to_lowercase() } else { s.letters.clone() };
        for chunk in letters.as_bytes().chunks(60) {
            text.push_str(std::str::from_utf8(chunk).unwrap());
            text.push('\n');
        }
    }
    text
}

fn parquet_bytes(batch: &RecordBatch) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    // Small row groups and batches: the readers cross their boundaries.
    for start in (0..batch.num_rows()).step_by(37) {
        w.write(&batch.slice(start, 37.min(batch.num_rows() - start))).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
    out
}

fn strings(values: impl IntoIterator<Item = String>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// A Parquet sequence set with columns `seq_name`, `residues` (and a column to ignore).
fn parquet_set(seqs: &[Seq]) -> Vec<u8> {
    let schema = Schema::new(vec![
        Field::new("length", DataType::Int64, false),
        Field::new("residues", DataType::Utf8, false),
        Field::new("seq_name", DataType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(seqs.iter().map(|s| s.letters.len() as i64))),
            strings(seqs.iter().map(|s| s.letters.clone())),
            strings(seqs.iter().map(|s| s.id.clone())),
        ],
    )
    .unwrap();
    parquet_bytes(&batch)
}

struct Case {
    dir: tempfile::TempDir,
    queries: Vec<Seq>,
    targets: Vec<Seq>,
    /// (query index, target index) of every candidate pair.
    pairs: Vec<(usize, usize)>,
}

impl Case {
    fn new(seed: u64, one_set: bool, n_pairs: usize) -> Case {
        let mut rng = Rng(seed);
        let queries = proteins(&mut rng, "sp", 40);
        let targets = if one_set { queries.clone() } else { proteins(&mut rng, "tr", 55) };
        let pairs = (0..n_pairs).map(|_| (rng.below(queries.len()), rng.below(targets.len()))).collect();
        Case { dir: tempfile::tempdir().unwrap(), queries, targets, pairs }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, data: &[u8]) -> String {
        let path = self.path(name);
        fs::write(&path, data).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// The oracle's input: the pairs with their sequences, as TSV.
    fn pairs_tsv(&self) -> String {
        let mut text = String::from("query_id\tquery_seq\ttarget_id\ttarget_seq\n");
        for &(q, t) in &self.pairs {
            let (q, t) = (&self.queries[q], &self.targets[t]);
            text.push_str(&format!("{}\t{}\t{}\t{}\n", q.id, q.letters, t.id, t.letters));
        }
        text
    }

    fn candidates_tsv(&self, header: bool) -> String {
        let mut text = if header { String::from("query_id\ttarget_id\tprefilter_score\n") } else { String::new() };
        for (k, &(q, t)) in self.pairs.iter().enumerate() {
            text.push_str(&format!("{}\t{}\t{}\n", self.queries[q].id, self.targets[t].id, k * 3));
            if k % 50 == 7 {
                text.push_str("\r\n"); // blank lines are skipped
            }
        }
        text
    }

    /// Candidate (or, with sequences, pair) table with carried columns around the ids.
    fn table(&self, with_seqs: bool) -> RecordBatch {
        let mut fields = vec![
            Field::new("key", DataType::Int64, false),
            Field::new("a", DataType::Utf8, false),
            Field::new("score", DataType::Utf8, false),
            Field::new("b", DataType::Utf8, false),
            Field::new("sample", DataType::Utf8, true),
        ];
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values((0..self.pairs.len() as i64).map(|i| 7000 + i))),
            strings(self.pairs.iter().map(|&(q, _)| self.queries[q].id.clone())),
            strings(self.pairs.iter().map(|_| "input score".to_string())),
            strings(self.pairs.iter().map(|&(_, t)| self.targets[t].id.clone())),
            Arc::new(StringArray::from_iter(
                (0..self.pairs.len()).map(|i| (i % 5 != 0).then(|| format!("sample{}", i % 3))),
            )),
        ];
        if with_seqs {
            fields.push(Field::new("sa", DataType::Utf8, false));
            fields.push(Field::new("sb", DataType::Utf8, false));
            columns.push(strings(self.pairs.iter().map(|&(q, _)| self.queries[q].letters.clone())));
            columns.push(strings(self.pairs.iter().map(|&(_, t)| self.targets[t].letters.clone())));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }
}

/// Runs a by-id align of the candidates on stdin against the set at `set` (CPU engine,
/// TSV out).
fn by_id_from_stdin(set: &str, candidates: &[u8]) -> std::process::Output {
    let args = ["align", "--device", "cpu", "--quiet", "--pairs", "-", "--seqs", set, "--format", "tsv"];
    let mut all = args.to_vec();
    all.extend_from_slice(&["--columns", COLUMNS]);
    run_stdin(&all, candidates)
}

/// The output file `out` of a run with `args`, as bytes.
fn output_of(args: &[&str], out: &Path) -> Vec<u8> {
    let mut all = args.to_vec();
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    align_ok(&all);
    fs::read(out).unwrap()
}

/// Record batches of a Parquet file, concatenated.
fn read_parquet(path: &Path) -> RecordBatch {
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// Record batches of an Arrow IPC stream, concatenated.
fn read_stream(data: &[u8]) -> RecordBatch {
    let reader = arrow::ipc::reader::StreamReader::try_new(data, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    arrow::compute::concat_batches(&schema, &batches).unwrap()
}

/// By-id output equals the oracle's, as TSV bytes and as Parquet read back, for these
/// candidate and set arguments and the oracle's pair input.
fn check_against(case: &Case, by_id: &[&str], oracle: &[&str], columns: &str, tag: &str) {
    for ext in ["tsv", "parquet", "arrows"] {
        let want_path = case.path(&format!("want-{tag}.{ext}"));
        let got_path = case.path(&format!("got-{tag}.{ext}"));
        let mut o = oracle.to_vec();
        o.extend_from_slice(&["--columns", columns]);
        let mut b = by_id.to_vec();
        b.extend_from_slice(&["--columns", columns]);
        let want = output_of(&o, &want_path);
        // Small batches too: batch boundaries cross the candidate rows.
        for batch in [None, Some("7")] {
            let mut b = b.clone();
            if let Some(n) = batch {
                b.extend_from_slice(&["--batch", n]);
            }
            let got = output_of(&b, &got_path);
            // Arrow and Parquet frame their batches as the engine's batches fall: with other
            // batch sizes, the same table read back.
            match (ext, batch) {
                ("parquet", _) => assert_eq!(read_parquet(&got_path), read_parquet(&want_path), "{tag}: parquet"),
                ("arrows", Some(_)) => assert_eq!(read_stream(&got), read_stream(&want), "{tag}: arrow stream"),
                _ => assert!(got == want, "{tag}: {ext} output differs from the oracle's"),
            }
        }
        if ext == "tsv" {
            let rows = String::from_utf8(want).unwrap().lines().count();
            assert_eq!(rows, case.pairs.len() + 1, "{tag}: one row per pair");
        }
    }
}

#[test]
fn one_set_in_every_set_format_matches_the_tsv_oracle() {
    let case = Case::new(0x5eed_0001, true, 300);
    let oracle = case.write("pairs.tsv", case.pairs_tsv().as_bytes());
    let candidates = case.write("cand.tsv", case.candidates_tsv(true).as_bytes());
    let plain = case.write("set.fa", fasta(&case.queries, 7).as_bytes());
    let gz = case.write("set.fa.gz", &gzip(fasta(&case.queries, 0).as_bytes()));
    let pq = case.write("set.parquet", &parquet_set(&case.queries));
    let swdb = case.path("set.swdb");
    let o = run(&["makedb", &plain, "-o", swdb.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let swdb = swdb.to_str().unwrap().to_string();
    let set_cols = ["--seqs-id-col", "seq_name", "--seqs-col", "residues"];
    for (tag, set, extra) in
        [("fa", &plain, &[][..]), ("gz", &gz, &[][..]), ("swdb", &swdb, &[][..]), ("pq", &pq, &set_cols[..])]
    {
        // The header names a further column, carried unless --carry says otherwise.
        let mut by_id = vec!["--pairs", candidates.as_str(), "--seqs", set.as_str(), "--carry", "none"];
        by_id.extend_from_slice(extra);
        check_against(&case, &by_id, &["--pairs", &oracle], COLUMNS, tag);
    }
    // Without a header line, from stdin, gzip-compressed: the same rows.
    let want = align_ok(&["--pairs", &oracle, "--format", "tsv", "--columns", COLUMNS]).stdout;
    let bare = gzip(case.candidates_tsv(false).as_bytes());
    let o = by_id_from_stdin(&plain, &bare);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == want, "stdin gzip candidates differ");
}

#[test]
fn two_sets_match_the_tsv_oracle() {
    let case = Case::new(0x5eed_0002, false, 250);
    let oracle = case.write("pairs.tsv", case.pairs_tsv().as_bytes());
    let candidates = case.write("cand.tsv", case.candidates_tsv(true).as_bytes());
    let q = case.write("q.fa", fasta(&case.queries, 3).as_bytes());
    let t_gz = case.write("t.fa.gz", &gzip(fasta(&case.targets, 5).as_bytes()));
    let t_pq = case.write("t.parquet", &parquet_set(&case.targets));
    let t_fa = case.write("t.fa", fasta(&case.targets, 0).as_bytes());
    let swdb = case.path("t.swdb");
    let o = run(&["makedb", &t_fa, "-o", swdb.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let swdb = swdb.to_str().unwrap().to_string();
    let base = ["--pairs", candidates.as_str(), "--carry", "none", "--seqs", q.as_str(), "--target-seqs"];
    let mut gz_args = base.to_vec();
    gz_args.push(&t_gz);
    check_against(&case, &gz_args, &["--pairs", &oracle], COLUMNS, "gz");
    let mut swdb_args = base.to_vec();
    swdb_args.push(&swdb);
    check_against(&case, &swdb_args, &["--pairs", &oracle], COLUMNS, "swdb");
    let mut pq_args = base.to_vec();
    pq_args.extend_from_slice(&[&t_pq, "--seqs-id-col", "seq_name", "--seqs-col", "residues"]);
    check_against(&case, &pq_args, &["--pairs", &oracle], COLUMNS, "pq");
    // Ids of one set are not looked up in the other.
    let swapped = case.write("swapped.tsv", format!("{}\t{}\n", case.targets[0].id, case.queries[0].id).as_bytes());
    let o = run(&["align", "--device", "cpu", "--pairs", &swapped, "--seqs", &q, "--target-seqs", &t_fa]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("query_id \"{}\" not found in {q}", case.targets[0].id)), "{}", stderr(&o));
}

#[test]
fn table_candidates_carry_their_columns_like_a_pair_table() {
    let case = Case::new(0x5eed_0003, false, 200);
    let oracle = case.write("pairs.parquet", &parquet_bytes(&case.table(true)));
    let cands = case.write("cand.parquet", &parquet_bytes(&case.table(false)));
    let q = case.write("q.fa", fasta(&case.queries, 0).as_bytes());
    let t = case.write("t.fa", fasta(&case.targets, 0).as_bytes());
    let names = ["--query-id-col", "a", "--target-id-col", "b"];
    let mut oracle_args = vec!["--pairs", oracle.as_str(), "--query-col", "sa", "--target-col", "sb"];
    oracle_args.extend_from_slice(&names);
    let mut by_id = vec!["--pairs", cands.as_str(), "--seqs", q.as_str(), "--target-seqs", t.as_str()];
    by_id.extend_from_slice(&names);
    check_against(&case, &by_id, &oracle_args, COLUMNS, "carry-all");
    for carry in ["none", "sample,key"] {
        let mut o = oracle_args.clone();
        o.extend_from_slice(&["--carry", carry]);
        let mut b = by_id.clone();
        b.extend_from_slice(&["--carry", carry]);
        check_against(&case, &b, &o, "query,target,score,cigar", carry);
    }
    // An Arrow IPC stream of candidates through stdin.
    let mut stream = Vec::new();
    let batch = case.table(false);
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut stream, &batch.schema()).unwrap();
    w.write(&batch.slice(0, 50)).unwrap();
    w.write(&batch.slice(50, batch.num_rows() - 50)).unwrap();
    w.finish().unwrap();
    drop(w);
    let mut o = oracle_args.clone();
    o.extend_from_slice(&["--format", "tsv", "--columns", COLUMNS]);
    let want = align_ok(&o).stdout;
    let mut args = vec!["align", "--device", "cpu", "--quiet", "--pairs", "-", "--seqs", &q, "--target-seqs", &t];
    args.extend_from_slice(&names);
    args.extend_from_slice(&["--format", "tsv", "--columns", COLUMNS]);
    let got = run_stdin(&args, &stream);
    assert!(got.status.success(), "{}", stderr(&got));
    assert!(got.stdout == want, "arrow stream candidates differ");
}

#[test]
fn tsv_candidates_carry_the_columns_their_header_names() {
    // Oracle: a Parquet pair table holding the same further column, as text.
    let case = Case::new(0x5eed_0007, false, 150);
    let tsv = case.candidates_tsv(true);
    let scores: Vec<String> = tsv
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').nth(2).unwrap().to_string())
        .collect();
    let schema = Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("prefilter_score", DataType::Utf8, false),
        Field::new("query_seq", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("target_seq", DataType::Utf8, false),
    ]);
    let pairs = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            strings(case.pairs.iter().map(|&(q, _)| case.queries[q].id.clone())),
            strings(scores),
            strings(case.pairs.iter().map(|&(q, _)| case.queries[q].letters.clone())),
            strings(case.pairs.iter().map(|&(_, t)| case.targets[t].id.clone())),
            strings(case.pairs.iter().map(|&(_, t)| case.targets[t].letters.clone())),
        ],
    )
    .unwrap();
    let oracle = case.write("pairs.parquet", &parquet_bytes(&pairs));
    let cands = case.write("cand.tsv", tsv.as_bytes());
    let q = case.write("q.fa", fasta(&case.queries, 0).as_bytes());
    let t = case.write("t.fa", fasta(&case.targets, 0).as_bytes());
    let by_id = ["--pairs", cands.as_str(), "--seqs", q.as_str(), "--target-seqs", t.as_str()];
    check_against(&case, &by_id, &["--pairs", &oracle], COLUMNS, "tsv-carry");
    let mut named = by_id.to_vec();
    named.extend_from_slice(&["--carry", "prefilter_score"]);
    check_against(&case, &named, &["--pairs", &oracle, "--carry", "prefilter_score"], "query,target,score", "named");
    // A row whose column count differs from the header's is refused with its line.
    let short = case.write("short.tsv", b"query_id\ttarget_id\tnote\nsp|P00000|sp_0\ttr|P00000|tr_0\n");
    fails(
        &case,
        &["--pairs", &short, "--seqs", &q, "--target-seqs", &t],
        &format!(
            "{short}: record 1 (sp|P00000|sp_0): line 2: expected 3 tab-separated columns (query_id, target_id, note), found 2"
        ),
    );
}

#[test]
fn fasta_headers_come_from_the_sets() {
    // Oracle: two FASTA files holding the pairs' records in pair order, headers included.
    let case = Case::new(0x5eed_0004, false, 120);
    let qs: Vec<Seq> = case.pairs.iter().map(|&(q, _)| case.queries[q].clone()).collect();
    let ts: Vec<Seq> = case.pairs.iter().map(|&(_, t)| case.targets[t].clone()).collect();
    let oq = case.write("oq.fa", fasta(&qs, 0).as_bytes());
    let ot = case.write("ot.fa", fasta(&ts, 0).as_bytes());
    let candidates = case.write("cand.tsv", case.candidates_tsv(false).as_bytes());
    let q = case.write("q.fa", fasta(&case.queries, 0).as_bytes());
    let t = case.write("t.fa.gz", &gzip(fasta(&case.targets, 0).as_bytes()));
    let columns = format!("{COLUMNS},qheader,theader");
    check_against(
        &case,
        &["--pairs", &candidates, "--seqs", &q, "--target-seqs", &t],
        &["-q", &oq, "-t", &ot],
        &columns,
        "hdr",
    );
    // A set without headers (Parquet) beside one with them: null headers there.
    let t_pq = case.write("t.parquet", &parquet_set(&case.targets));
    let out = case.path("mixed.parquet");
    output_of(
        &[
            "--pairs",
            &candidates,
            "--seqs",
            &q,
            "--target-seqs",
            &t_pq,
            "--seqs-id-col",
            "seq_name",
            "--seqs-col",
            "residues",
            "--columns",
            "query,qheader,theader",
        ],
        &out,
    );
    let got = read_parquet(&out);
    let qh = got.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let th = got.column(2).as_any().downcast_ref::<StringArray>().unwrap();
    for (i, &(qi, _)) in case.pairs.iter().enumerate() {
        assert_eq!(qh.value(i), case.queries[qi].header);
        assert!(th.is_null(i));
    }
}

/// Runs a by-id align expected to fail: exit 2, the message on stderr, no output file.
fn fails(case: &Case, args: &[&str], message: &str) {
    let out = case.path("out.parquet");
    let all = [&["align", "--device", "cpu", "-o", out.to_str().unwrap()], args].concat();
    align_fails(&all, &out, message);
}

#[test]
fn missing_and_duplicate_ids_name_file_record_and_id() {
    let case = Case::new(0x5eed_0005, true, 10);
    let set = case.write("set.fa", b">a desc\nMKV\n>b\nWWA\n>c\nKKL\n");
    let cands = case.write("cand.tsv", b"query_id\ttarget_id\na\tb\n\nb\tc\na\tzz\n");
    fails(
        &case,
        &["--pairs", &cands, "--seqs", &set],
        &format!("{cands}: record 3 (a): line 5: target_id \"zz\" not found in {set} (3 sequences)"),
    );
    let cands2 = case.write("cand2.tsv", b"a\tb\nq9\tc\n");
    fails(
        &case,
        &["--pairs", &cands2, "--seqs", &set],
        &format!("{cands2}: record 2 (q9): line 2: query_id \"q9\" not found in {set}"),
    );
    // Duplicates: FASTA, Parquet set, makedb file.
    let dup = case.write("dup.fa", b">a\nMKV\n>b\nWW\n>c\nK\n>b other\nA\n");
    fails(
        &case,
        &["--pairs", &cands2, "--seqs", &dup],
        &format!("{dup}: record 4 (b): duplicate id: record 2 has the same id"),
    );
    let swdb = case.path("dup.swdb");
    assert!(run(&["makedb", &dup, "-o", swdb.to_str().unwrap(), "--quiet"]).status.success());
    let swdb = swdb.to_str().unwrap().to_string();
    fails(
        &case,
        &["--pairs", &cands2, "--seqs", &set, "--target-seqs", &swdb],
        &format!("{swdb}: record 4 (b): duplicate id: record 2 has the same id"),
    );
    let mut seqs = case.queries[..5].to_vec();
    seqs.push(case.queries[2].clone());
    let pq = case.write("dup.parquet", &parquet_set(&seqs));
    let pq_cols = ["--seqs-id-col", "seq_name", "--seqs-col", "residues"];
    let mut args = vec!["--pairs", cands2.as_str(), "--seqs", pq.as_str()];
    args.extend_from_slice(&pq_cols);
    fails(&case, &args, &format!("{pq}: record 6 ({}): duplicate id: record 3 has the same id", case.queries[2].id));
    // A set table without the named columns, or with a bad residue.
    fails(&case, &["--pairs", &cands2, "--seqs", &pq], &format!("{pq}: missing columns id, sequence (a sequence set needs id, sequence; it has length, residues, seq_name; name others with --seqs-id-col, --seqs-col)"));
    let mut bad = case.queries[..3].to_vec();
    bad[1].letters = "MK1V".into();
    let bad_pq = case.write("bad.parquet", &parquet_set(&bad));
    let mut args = vec!["--pairs", cands2.as_str(), "--seqs", bad_pq.as_str()];
    args.extend_from_slice(&pq_cols);
    fails(&case, &args, &format!("{bad_pq}: record 2 ({}): residues: invalid residue '1' at position 3", bad[1].id));
}

#[test]
fn malformed_candidates_are_refused_with_their_line() {
    let case = Case::new(0x5eed_0006, true, 10);
    let set = case.write("set.fa", b">a\nMKV\n>b\nWWA\n");
    let one = case.write("one.tsv", b"a\tb\nab\n");
    fails(
        &case,
        &["--pairs", &one, "--seqs", &set],
        &format!(
            "{one}: record 2 (ab): line 2: expected at least 2 tab-separated columns (query_id, target_id), found 1"
        ),
    );
    let empty_id = case.write("empty.tsv", b"a\tb\n\tb\n");
    fails(
        &case,
        &["--pairs", &empty_id, "--seqs", &set],
        &format!("{empty_id}: record 2 (no id): line 2: query_id is empty"),
    );
    let empty_t = case.write("empty_t.tsv", b"a\t\tx\n");
    fails(
        &case,
        &["--pairs", &empty_t, "--seqs", &set],
        &format!("{empty_t}: record 1 (a): line 1: target_id is empty"),
    );
    let fa = case.write("swapped.fa", b">a\nMKV\n");
    fails(&case, &["--pairs", &fa, "--seqs", &set], &format!("{fa}: line 1: looks like FASTA, not candidate pairs"));
    let with_seqs = case.write("pairs.tsv", b"query_id\tquery_seq\ttarget_id\ttarget_seq\na\tMKV\tb\tWW\n");
    fails(&case, &["--pairs", &with_seqs, "--seqs", &set], &format!("{with_seqs}: line 1: a pair file with sequences"));
    let binary = case.write("bin.tsv", &[0u8, 159, 146, 150, b'\t', 1, 2, b'\n']);
    fails(&case, &["--pairs", &binary, "--seqs", &set], &format!("{binary}: record 1"));
    // Table candidates: a null id, a missing id column, column options on TSV.
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, true),
        Field::new("target_id", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![Some("a"), Some("b")])),
            Arc::new(StringArray::from(vec![Some("b"), None])),
        ],
    )
    .unwrap();
    let nulls = case.write("nulls.parquet", &parquet_bytes(&batch));
    fails(&case, &["--pairs", &nulls, "--seqs", &set], &format!("{nulls}: record 2 (b): target_id is null"));
    fails(
        &case,
        &["--pairs", &nulls, "--seqs", &set, "--query-id-col", "qq"],
        &format!("{nulls}: missing column qq (candidate pairs need qq, target_id;"),
    );
    fails(
        &case,
        &["--pairs", &one, "--seqs", &set, "--carry", "x"],
        &format!("{one}: --carry: no column 'x' in the input"),
    );
    fails(
        &case,
        &["--pairs", &one, "--seqs", &set, "--query-col", "x"],
        "--query-col and --target-col name sequence columns",
    );
    // A set given as a pair file, and the sets both from stdin.
    fails(&case, &["--pairs", &one, "--seqs", &with_seqs], &with_seqs.to_string());
    fails(
        &case,
        &["--pairs", &one, "--seqs", "-", "--target-seqs", "-"],
        "only one of --pairs, --seqs and --target-seqs can be read from stdin",
    );
    let o = run(&["align", "--pairs", &one, "--target-seqs", &set]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn empty_candidates_give_a_complete_empty_output() {
    let case = Case::new(0x5eed_0007, true, 10);
    let set = case.write("set.fa", b">a\nMKV\n>b\nWWA\n");
    let empty_set = case.write("none.fa", b"");
    let header_only = case.write("h.tsv", b"query_id\ttarget_id\n\n");
    let nothing = case.write("n.tsv", b"");
    let schema = Arc::new(Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("key", DataType::Int64, false),
    ]));
    let empty_pq = case.write("e.parquet", &parquet_bytes(&RecordBatch::new_empty(schema)));
    for (cands, seqs) in [(&header_only, &set), (&nothing, &set), (&nothing, &empty_set), (&empty_pq, &set)] {
        let out = case.path("empty.parquet");
        let o = run(&["align", "--device", "cpu", "--pairs", cands, "--seqs", seqs, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("swarrow: note: {cands}: no pairs; wrote an empty result")),
            "{}",
            stderr(&o)
        );
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(fs::File::open(&out).unwrap())
                .unwrap();
        let names: Vec<String> = reader.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names[0], "query");
        assert_eq!(names.last().map(String::as_str) == Some("key"), cands == &empty_pq);
        assert_eq!(reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum::<usize>(), 0);
        let o = run(&["align", "--device", "cpu", "--quiet", "--pairs", cands, "--seqs", seqs, "--format", "tsv"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1, "the header line alone");
    }
    // Pairs against an empty set: the id is not found, and the message says the set is empty.
    let one = case.write("one.tsv", b"a\tb\n");
    fails(
        &case,
        &["--pairs", &one, "--seqs", &empty_set],
        &format!("query_id \"a\" not found in {empty_set} (it has no sequences)"),
    );
}

/// Thousands of candidate lines go through the parallel block lookup: the same rows as the
/// oracle, and a bad line deep in a block still names its record and line.
#[test]
fn candidate_blocks_match_the_oracle_and_name_a_bad_line_deep_inside() {
    let case = Case::new(0x5eed_0009, false, 3000);
    let oracle = case.write("pairs.tsv", case.pairs_tsv().as_bytes());
    let candidates = case.write("cand.tsv", case.candidates_tsv(true).as_bytes());
    let queries = case.write("q.fa", fasta(&case.queries, 0).as_bytes());
    let targets = case.write("t.fa", fasta(&case.targets, 0).as_bytes());
    let by_id = [
        "--pairs",
        candidates.as_str(),
        "--carry",
        "none",
        "--seqs",
        queries.as_str(),
        "--target-seqs",
        targets.as_str(),
    ];
    check_against(&case, &by_id, &["--pairs", &oracle], COLUMNS, "blocks");
    // Line 1 is the header, so pair k (1-based) is on line k + 1.
    let mut text = String::from("query_id\ttarget_id\n");
    for (k, &(q, t)) in case.pairs.iter().enumerate() {
        let target = if k == 2199 { "no_such_target" } else { case.targets[t].id.as_str() };
        text.push_str(&format!("{}\t{}\n", case.queries[q].id, target));
    }
    let bad = case.write("bad.tsv", text.as_bytes());
    let query = &case.queries[case.pairs[2199].0].id;
    fails(
        &case,
        &["--pairs", &bad, "--seqs", &queries, "--target-seqs", &targets],
        &format!("{bad}: record 2200 ({query}): line 2201: target_id \"no_such_target\" not found in {targets}"),
    );
    // The same from a Parquet table (rows looked up ahead, a record batch at a time): an
    // unknown id and an empty one deep inside, each named by its record.
    let table = |bad_row: usize, bad_id: &str| {
        let id = |k: usize, id: &str| if k == bad_row { bad_id.to_string() } else { id.to_string() };
        let schema = Schema::new(vec![
            Field::new("query_id", DataType::Utf8, false),
            Field::new("target_id", DataType::Utf8, false),
            Field::new("key", DataType::Int64, false),
        ]);
        let columns: Vec<ArrayRef> = vec![
            strings(case.pairs.iter().enumerate().map(|(k, &(q, _))| id(k + 5000, &case.queries[q].id))),
            strings(case.pairs.iter().enumerate().map(|(k, &(_, t))| id(k, &case.targets[t].id))),
            Arc::new(Int64Array::from_iter_values(0..case.pairs.len() as i64)),
        ];
        parquet_bytes(&RecordBatch::try_new(Arc::new(schema), columns).unwrap())
    };
    let bad = case.write("bad.parquet", &table(2199, "no_such_target"));
    fails(
        &case,
        &["--pairs", &bad, "--seqs", &queries, "--target-seqs", &targets],
        &format!("{bad}: record 2200 ({query}): target_id \"no_such_target\" not found in {targets}"),
    );
    let empty = case.write("empty.parquet", &table(1500, ""));
    let query = &case.queries[case.pairs[1500].0].id;
    fails(
        &case,
        &["--pairs", &empty, "--seqs", &queries, "--target-seqs", &targets, "--batch", "7"],
        &format!("{empty}: record 1501 ({query}): target_id is empty"),
    );
}

/// Candidates over several of the reader's pieces (256 KiB reads cut at newlines): lines
/// crossing reads, a line longer than a read, CRLF and blank lines, no newline at the end;
/// the same rows as the oracle, in any batch size, from a file and from a pipe; a bad line
/// deep inside still names its record and line, counted here line by line.
#[test]
fn candidates_across_reads_match_the_oracle_and_name_a_bad_line_deep_inside() {
    let case = Case::new(0x5eed_000a, true, 6000);
    let oracle = case.write("pairs.tsv", case.pairs_tsv().as_bytes());
    let set = case.write("set.fa", fasta(&case.queries, 0).as_bytes());
    // (text, line number of pair k) with the target of pair `bad` replaced.
    let candidates = |bad: Option<usize>| {
        let mut rng = Rng(17);
        let (mut text, mut line, mut lines_of) = (String::new(), 0, Vec::new());
        for (k, &(q, t)) in case.pairs.iter().enumerate() {
            let target = if Some(k) == bad { "no_such_target" } else { case.queries[t].id.as_str() };
            // Further columns are ignored without a header: padding of any length.
            let pad = if k == 2500 { 700 << 10 } else { rng.below(120) };
            let end = if rng.below(4) == 0 { "\r\n" } else { "\n" };
            text.push_str(&format!("{}\t{target}\t{}{end}", case.queries[q].id, "x".repeat(pad)));
            line += 1;
            lines_of.push(line);
            if rng.below(40) == 0 {
                text.push_str(["\n", "\r\n", " \t \n"][rng.below(3)]);
                line += 1;
            }
        }
        text.pop(); // no newline after the last line
        if text.ends_with('\r') {
            text.pop();
        }
        (text, lines_of)
    };
    let (text, _) = candidates(None);
    assert!(text.len() > 4 * (256 << 10), "spans several reads");
    let cands = case.write("cand.tsv", text.as_bytes());
    let out = case.path("out.tsv");
    let want = output_of(&["--pairs", &oracle, "--columns", COLUMNS], &out);
    for batch in ["100000", "1000", "7"] {
        let got = output_of(&["--pairs", &cands, "--seqs", &set, "--columns", COLUMNS, "--batch", batch], &out);
        assert!(got == want, "batch {batch}: output differs from the oracle's");
    }
    let piped = by_id_from_stdin(&set, text.as_bytes());
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert!(piped.stdout == want, "from a pipe: output differs from the oracle's");
    for k in [4321, 5999] {
        let (text, lines_of) = candidates(Some(k));
        let bad = case.write("bad.tsv", text.as_bytes());
        let query = &case.queries[case.pairs[k].0].id;
        fails(
            &case,
            &["--pairs", &bad, "--seqs", &set],
            &format!("{bad}: record {} ({query}): line {}: target_id \"no_such_target\" not found", k + 1, lines_of[k]),
        );
    }
}

/// The TSV result lines of a run, without the header and without the two id columns (the
/// output's ids are text: bytes that are not UTF-8 read there as U+FFFD).
fn rows_without_ids(o: &std::process::Output) -> Vec<String> {
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines().skip(1).map(|l| l.split('\t').skip(2).collect::<Vec<_>>().join("\t")).collect()
}

#[test]
fn ids_that_are_not_utf8_are_looked_up_and_compared_as_bytes() {
    let case = Case::new(0x5eed_0011, true, 1);
    // Two ids that differ only in a byte that is not UTF-8: lossy text made them one.
    let set = case.write("latin1.fa", b">\xe9a one\nMKVLAW\n>\xe8a two\nMKVW\n");
    let ascii = case.write("ascii.fa", b">ea one\nMKVLAW\n>ca two\nMKVW\n");
    let cands = case.write("cands.tsv", b"\xe9a\t\xe8a\n\xe8a\t\xe9a\n");
    let oracle_cands = case.write("oracle.tsv", b"ea\tca\nca\tea\n");
    let cols = ["--format", "tsv", "--columns", COLUMNS];
    let mut args = vec!["--pairs", cands.as_str(), "--seqs", set.as_str()];
    args.extend_from_slice(&cols);
    let got = align_ok(&args);
    let mut oracle = vec!["--pairs", oracle_cands.as_str(), "--seqs", ascii.as_str()];
    oracle.extend_from_slice(&cols);
    let want = align_ok(&oracle);
    assert_eq!(rows_without_ids(&got), rows_without_ids(&want));
    assert_eq!(rows_without_ids(&got).len(), 2);
    // The same from a Parquet set whose id column is binary (no internal error).
    let schema =
        Schema::new(vec![Field::new("id", DataType::Binary, false), Field::new("sequence", DataType::Utf8, false)]);
    let ids: ArrayRef = Arc::new(arrow::array::BinaryArray::from(vec![&b"\xe9a"[..], &b"\xe8a"[..]]));
    let batch =
        RecordBatch::try_new(Arc::new(schema), vec![ids, Arc::new(StringArray::from(vec!["MKVLAW", "MKVW"]))]).unwrap();
    let pq = case.write("binary.parquet", &parquet_bytes(&batch));
    let mut args = vec!["--pairs", cands.as_str(), "--seqs", pq.as_str()];
    args.extend_from_slice(&cols);
    assert_eq!(rows_without_ids(&align_ok(&args)), rows_without_ids(&want));
    // Messages show such bytes escaped, and ids quoted (a trailing space shows).
    let missing = case.write("missing.tsv", b"\xe9a\t\xe9b\n");
    fails(
        &case,
        &["--pairs", &missing, "--seqs", &set],
        &format!("{missing}: record 1 (\\xe9a): line 1: target_id \"\\xe9b\" not found in {set}"),
    );
    let spaced = case.write("spaced.tsv", b"\xe9a\t\xe8a \n");
    fails(&case, &["--pairs", &spaced, "--seqs", &set], "target_id \"\\xe8a \" not found");
    let dup = case.write("dup.fa", b">\xe9a\nMKV\n>\xe9a\nWW\n");
    fails(
        &case,
        &["--pairs", &cands, "--seqs", &dup],
        &format!("{dup}: record 2 (\\xe9a): duplicate id: record 1 has the same id"),
    );
}

#[test]
fn tsv_candidates_skip_a_byte_order_mark_and_a_trailing_header_tab() {
    let case = Case::new(0x5eed_0012, true, 1);
    let set = case.write("set.fa", b">a\nMKVLAW\n>b\nMKVW\n");
    let plain = case.write("plain.tsv", b"query_id\ttarget_id\na\tb\n");
    let want = align_ok(&["--pairs", &plain, "--seqs", &set, "--format", "tsv"]);
    // A spreadsheet's byte order mark before the header, or before a first candidate.
    for (name, text) in [
        ("bom-header.tsv", &b"\xef\xbb\xbfquery_id\ttarget_id\na\tb\n"[..]),
        ("bom-row.tsv", &b"\xef\xbb\xbfa\tb\n"[..]),
        ("trailing-tab.tsv", &b"query_id\ttarget_id\t\na\tb\n"[..]),
    ] {
        let path = case.write(name, text);
        let got = align_ok(&["--pairs", &path, "--seqs", &set, "--format", "tsv"]);
        assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&want.stdout), "{name}");
    }
    // An empty name inside a header is named.
    let gap = case.write("gap.tsv", b"query_id\ttarget_id\t\tnote\na\tb\tx\ty\n");
    fails(&case, &["--pairs", &gap, "--seqs", &set], &format!("{gap}: line 1: header column 3 has no name"));
}

#[test]
fn options_that_do_not_apply_are_refused() {
    let case = Case::new(0x5eed_0013, true, 1);
    let set = case.write("set.fa", b">a\nMKVLAW\n>b\nMKVW\n");
    let cands = case.write("cands.tsv", b"a\tb\n");
    // Column names of a table set, given for a FASTA or makedb set.
    fails(
        &case,
        &["--pairs", &cands, "--seqs", &set, "--seqs-col", "residues"],
        &format!("--seqs-id-col and --seqs-col name the columns of an Arrow or Parquet sequence set; {set} is not one"),
    );
    let swdb = case.path("set.swdb");
    assert!(run(&["makedb", &set, "-o", swdb.to_str().unwrap(), "--quiet"]).status.success());
    let swdb = swdb.to_str().unwrap().to_string();
    fails(
        &case,
        &["--pairs", &cands, "--seqs", &set, "--target-seqs", &swdb, "--seqs-id-col", "name"],
        &format!("neither {set} nor {swdb} is one"),
    );
    // Two columns of the same name: which to read is ambiguous.
    let schema = Schema::new(vec![
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("query_id", DataType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![strings(["a".to_string()]), strings(["b".to_string()]), strings(["b".to_string()])],
    )
    .unwrap();
    let twice = case.write("twice.parquet", &parquet_bytes(&batch));
    fails(&case, &["--pairs", &twice, "--seqs", &set], &format!("{twice}: 2 columns are named query_id"));
    // --seqs beside -q/-t.
    let o = run(&["align", "--device", "cpu", "-q", &set, "-t", &set, "--seqs", &set]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seqs"), "{}", stderr(&o));
    // Candidate ids without --seqs: the message says what is missing.
    let o = run(&["align", "--device", "cpu", "--pairs", &cands]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give their sequences with --seqs"), "{}", stderr(&o));
}

#[test]
fn the_nucleotide_warning_names_the_set() {
    let case = Case::new(0x5eed_0014, true, 1);
    let dna = "ACGTTGCAACGTAGCTAGCTAGGATCCATGCATGCAAGT";
    let set = case.write("reads.fa", format!(">a\n{dna}\n>b\n{dna}\n").as_bytes());
    let cands = case.write("cands.tsv", b"a\tb\n");
    let o = run(&["align", "--device", "cpu", "--pairs", &cands, "--seqs", &set, "--format", "tsv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&format!("warning: sequence set {set} looks like nucleotides")), "{err}");
    assert!(!err.contains(&cands), "{err}");
}

#[test]
fn candidates_through_a_pipe_answer_before_the_producer_closes() {
    use std::io::BufRead;
    use std::process::Stdio;
    let case = Case::new(0x5eed_0015, true, 1);
    let set = case.write("set.fa", b">a\nMKVLAW\n>b\nMKVW\n");
    // A producer that writes one short line (fewer bytes than format sniffing looks at) and
    // then pauses, keeping the pipe open.
    let mut child = bin()
        .args(["align", "--device", "cpu", "--quiet", "--pairs", "-", "--seqs", &set, "--format", "tsv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"a\tb\n").unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    // Generous: a cold start on a busy machine takes seconds, not minutes.
    let wait = std::time::Duration::from_secs(120);
    let header = rx.recv_timeout(wait).expect("no header while the producer keeps the pipe open");
    assert!(header.starts_with("query\ttarget\tscore"), "{header}");
    let row = rx.recv_timeout(wait).expect("no result while the producer keeps the pipe open");
    assert!(row.starts_with("a\tb\t"), "{row}");
    // Only now does the producer close.
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_err(), "one row only");
}

//! Issue 51's input side: PAF candidates with their regions, strands and windows, region
//! and strand columns of candidate tables, and FASTQ wherever FASTA is read. Oracles: the
//! test's own slicing of each whole sequence by region ± margin (frames and windowed
//! residues), the existing TSV candidate path (PAF with whole windows on the plus strand),
//! and the same sequences written as FASTA (FASTQ input gives byte-identical output).

mod common;
use common::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use swarrow::io::pairs::{open_pairs_by_id, BatchLimits, PairColumns, PairOptions, SeqSet, SetColumns};
use swarrow::io::CandidateFormat;
use swarrow::scoring::Alphabet;
use swarrow::seq::{Frame, PairBatch, Strand};

const DNA: Alphabet = Alphabet::Dna;

fn dna(rng: &mut Rng, len: usize) -> String {
    (0..len).map(|_| b"ACGT"[rng.below(4)] as char).collect()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, data).unwrap();
    path
}

/// Contigs and reads: (id, letters).
struct Sets {
    contigs: Vec<(String, String)>,
    reads: Vec<(String, String)>,
}

fn sets(seed: u64) -> Sets {
    let mut rng = Rng(seed);
    let contigs = (0..4).map(|i| (format!("ctg{i}"), dna(&mut rng, 300 + 97 * i))).collect();
    let reads = (0..30)
        .map(|i| {
            let len = 20 + rng.below(60);
            (format!("read{i}"), dna(&mut rng, len))
        })
        .collect();
    Sets { contigs, reads }
}

fn fasta(seqs: &[(String, String)]) -> String {
    seqs.iter().map(|(id, s)| format!(">{id} some description\n{s}\n")).collect()
}

/// FASTQ of `seqs`, qualities derived from the position (any byte of Phred+33, '@' and
/// '+' included, so that quality lines start with them).
fn fastq(seqs: &[(String, String)]) -> String {
    let mut text = String::new();
    for (k, (id, s)) in seqs.iter().enumerate() {
        let quals: String = (0..s.len()).map(|i| (b'!' + ((i * 7 + k * 13) % 94) as u8) as char).collect();
        let plus = if k % 2 == 0 { "+".to_string() } else { format!("+{id}") };
        text.push_str(&format!("@{id} some description\n{s}\n{plus}\n{quals}\n"));
    }
    text
}

/// One candidate as the test places it: read, contig, regions, strand.
struct Cand {
    read: usize,
    contig: usize,
    q: (usize, usize),
    t: (usize, usize),
    minus: bool,
}

fn candidates(s: &Sets, seed: u64, n: usize) -> Vec<Cand> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let (read, contig) = (rng.below(s.reads.len()), rng.below(s.contigs.len()));
            let (ql, tl) = (s.reads[read].1.len(), s.contigs[contig].1.len());
            let qs = rng.below(ql + 1);
            let qe = qs + rng.below(ql - qs + 1);
            let ts = rng.below(tl + 1);
            let te = ts + rng.below(tl - ts + 1);
            Cand { read, contig, q: (qs, qe), t: (ts, te), minus: rng.below(2) == 1 }
        })
        .collect()
}

fn paf(s: &Sets, cands: &[Cand]) -> String {
    cands
        .iter()
        .map(|c| {
            let (q, t) = (&s.reads[c.read], &s.contigs[c.contig]);
            format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t60\ttp:A:P\tcm:i:7\n",
                q.0,
                q.1.len(),
                c.q.0,
                c.q.1,
                if c.minus { '-' } else { '+' },
                t.0,
                t.1.len(),
                c.t.0,
                c.t.1,
                (c.q.1 - c.q.0).min(c.t.1 - c.t.0),
                (c.q.1 - c.q.0).max(c.t.1 - c.t.0)
            )
        })
        .collect()
}

/// The window the test expects: the region widened by `margin` each side, cut to the
/// sequence; the whole sequence without a margin.
#[allow(clippy::implicit_saturating_sub)]
fn expected_window(region: (usize, usize), len: usize, margin: Option<usize>) -> (usize, usize) {
    match margin {
        None => (0, len),
        Some(m) => (if region.0 > m { region.0 - m } else { 0 }, if region.1 + m < len { region.1 + m } else { len }),
    }
}

fn load(path: &Path, quals: bool) -> Arc<SeqSet> {
    let columns = SetColumns { quals, ..SetColumns::default() };
    Arc::new(SeqSet::load(path, DNA, &columns).unwrap())
}

/// Every batch of the candidates at `path`, read with `options`.
fn read_batches(
    path: &Path,
    reads: &Arc<SeqSet>,
    contigs: &Arc<SeqSet>,
    options: &PairOptions,
    limits: BatchLimits,
) -> swarrow::error::Result<Vec<PairBatch>> {
    let mut reader = open_pairs_by_id(path, reads.clone(), contigs.clone(), &PairColumns::default(), limits, options)?;
    let mut out = Vec::new();
    loop {
        let mut batch = PairBatch::default();
        if !reader.fill(&mut batch)? {
            return Ok(out);
        }
        out.push(batch);
    }
}

const SMALL: BatchLimits = BatchLimits { pairs: 7, residues: 1 << 20 };

/// Checks each row's frame and windowed residues against the test's own slicing.
fn check_windows(s: &Sets, cands: &[Cand], batches: &[PairBatch], margin: Option<usize>, strands: bool) {
    let mut row = 0;
    for batch in batches {
        assert_eq!(batch.frames.len(), batch.len(), "a frame per row");
        for i in 0..batch.len() {
            let c = &cands[row];
            let (q, t) = (&s.reads[c.read].1, &s.contigs[c.contig].1);
            let (qw, tw) = (expected_window(c.q, q.len(), margin), expected_window(c.t, t.len(), margin));
            let strand = strands.then_some(if c.minus { Strand::Minus } else { Strand::Plus });
            let want =
                Frame { query_offset: qw.0, target_offset: tw.0, query_len: q.len(), target_len: t.len(), strand };
            assert_eq!(batch.frames[i], want, "row {row}");
            let (gq, gt) = batch.seqs.view().pair(i);
            assert_eq!(DNA.decode(gq), q.as_bytes()[qw.0..qw.1].to_vec(), "row {row}: query window");
            assert_eq!(DNA.decode(gt), t.as_bytes()[tw.0..tw.1].to_vec(), "row {row}: target window");
            assert_eq!(batch.query_ids.get(i), s.reads[c.read].0);
            assert_eq!(batch.target_ids.get(i), s.contigs[c.contig].0);
            row += 1;
        }
    }
    assert_eq!(row, cands.len());
}

#[test]
fn paf_frames_and_windows_equal_the_regions_sliced_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x51);
    let cands = candidates(&s, 0x52, 200);
    let reads = load(&write(dir.path(), "reads.fa", fasta(&s.reads).as_bytes()), false);
    let contigs = load(&write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes()), false);
    let text = paf(&s, &cands);
    // Told by content (a neutral name), by name, gzip-compressed, and named by the option.
    let plain = write(dir.path(), "cands.txt", text.as_bytes());
    let named = write(dir.path(), "cands.paf", text.as_bytes());
    let gz = write(dir.path(), "cands.paf.gz", &gzip(text.as_bytes()));
    let bgz = write(dir.path(), "cands.bin", &bgzf(text.as_bytes()));
    for margin in [Some(0), Some(5), Some(200), None] {
        let options = PairOptions { window: margin, ..PairOptions::default() };
        for path in [&plain, &named, &gz, &bgz] {
            for limits in [SMALL, BatchLimits { pairs: 1000, residues: 150 }] {
                let batches = read_batches(path, &reads, &contigs, &options, limits).unwrap();
                check_windows(&s, &cands, &batches, margin, true);
            }
        }
    }
    let options = PairOptions { format: CandidateFormat::Paf, ..PairOptions::default() };
    let batches = read_batches(&plain, &reads, &contigs, &options, SMALL).unwrap();
    check_windows(&s, &cands, &batches, Some(200), true);
}

#[test]
fn region_and_strand_columns_place_tsv_and_parquet_candidates_as_paf_does() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x53);
    let cands = candidates(&s, 0x54, 120);
    let reads = load(&write(dir.path(), "reads.fa", fasta(&s.reads).as_bytes()), false);
    let contigs = load(&write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes()), false);
    let mut tsv = String::from("query_id\ttarget_id\tqs\tqe\tts\tte\tstrand\tnote\n");
    for c in &cands {
        let sign = if c.minus { '-' } else { '+' };
        let (q, t) = (&s.reads[c.read].0, &s.contigs[c.contig].0);
        tsv.push_str(&format!("{q}\t{t}\t{}\t{}\t{}\t{}\t{sign}\tx\n", c.q.0, c.q.1, c.t.0, c.t.1));
    }
    let tsv = write(dir.path(), "cands.tsv", tsv.as_bytes());
    let int = |f: &dyn Fn(&Cand) -> usize| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(cands.iter().map(|c| f(c) as i64)))
    };
    let text =
        |f: &dyn Fn(&Cand) -> String| -> ArrayRef { Arc::new(StringArray::from_iter_values(cands.iter().map(f))) };
    let schema = Schema::new(vec![
        Field::new("qs", DataType::Int64, false),
        Field::new("query_id", DataType::Utf8, false),
        Field::new("target_id", DataType::Utf8, false),
        Field::new("qe", DataType::Int64, false),
        Field::new("ts", DataType::Int64, false),
        Field::new("te", DataType::Int64, false),
        Field::new("strand", DataType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            int(&|c| c.q.0),
            text(&|c| s.reads[c.read].0.clone()),
            text(&|c| s.contigs[c.contig].0.clone()),
            int(&|c| c.q.1),
            int(&|c| c.t.0),
            int(&|c| c.t.1),
            text(&|c| if c.minus { "-".into() } else { "+".into() }),
        ],
    )
    .unwrap();
    let mut pq = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut pq, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let pq = write(dir.path(), "cands.parquet", &pq);
    let mut stream = Vec::new();
    let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut stream, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    let arrows = write(dir.path(), "cands.arrows", &stream);
    let region_cols = Some(["qs", "qe", "ts", "te"].map(String::from));
    for margin in [Some(3), None] {
        let options = PairOptions {
            window: margin,
            region_cols: region_cols.clone(),
            strand_col: Some("strand".into()),
            ..PairOptions::default()
        };
        for path in [&tsv, &pq, &arrows] {
            let batches = read_batches(path, &reads, &contigs, &options, SMALL).unwrap();
            check_windows(&s, &cands, &batches, margin, true);
        }
        // Regions without a strand column: frames without a strand.
        let options = PairOptions { window: margin, region_cols: region_cols.clone(), ..PairOptions::default() };
        let batches = read_batches(&tsv, &reads, &contigs, &options, SMALL).unwrap();
        check_windows(&s, &cands, &batches, margin, false);
    }
    // Candidates without regions keep whole sequences and no frames (as before).
    let batches = read_batches(&tsv, &reads, &contigs, &PairOptions::default(), SMALL).unwrap();
    assert!(batches.iter().all(|b| b.frames.is_empty()));
    let got: usize = batches.iter().map(|b| b.seqs.view().residues().len()).sum();
    let whole: usize = cands.iter().map(|c| s.reads[c.read].1.len() + s.contigs[c.contig].1.len()).sum();
    assert_eq!(got, whole);
    // A missing column is named.
    let options =
        PairOptions { region_cols: Some(["qs", "qe", "ts", "nope"].map(String::from)), ..PairOptions::default() };
    for path in [&tsv, &pq, &arrows] {
        let msg = read_batches(path, &reads, &contigs, &options, SMALL).err().unwrap().to_string();
        assert!(msg.contains("--region-cols: no column 'nope'"), "{msg}");
    }
}

// Issue 59: PAF is read in pieces of whole lines parsed in parallel. Many pieces' worth of
// candidates (with blank lines and CRLF line ends) come out in input order, and a damaged
// line deep in the input is named by its own line number.
#[test]
fn paf_read_in_parallel_pieces_keeps_order_and_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x59);
    let cands = candidates(&s, 0x5a, 30_000);
    let reads = load(&write(dir.path(), "reads.fa", fasta(&s.reads).as_bytes()), false);
    let contigs = load(&write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes()), false);
    let lines: Vec<String> = paf(&s, &cands).lines().map(String::from).collect();
    let mut text = String::new();
    for (k, line) in lines.iter().enumerate() {
        text.push_str(line);
        text.push_str(if k % 3 == 0 { "\r\n" } else { "\n" });
        if k % 1000 == 999 {
            text.push('\n');
        }
    }
    assert!(text.len() > 1 << 20, "several pieces of 256 KiB");
    let path = write(dir.path(), "many.paf", text.as_bytes());
    for limits in [SMALL, BatchLimits { pairs: 4096, residues: 1 << 30 }] {
        let batches = read_batches(&path, &reads, &contigs, &PairOptions::default(), limits).unwrap();
        check_windows(&s, &cands, &batches, Some(200), true);
    }
    // Line 25,000 of the candidates (blank lines before it counted) damaged: column 5.
    let bad = 24_999;
    let mut text = String::new();
    let mut number = 0;
    for (k, line) in lines.iter().enumerate() {
        let line =
            if k == bad { line.replacen("\t+\t", "\t*\t", 1).replacen("\t-\t", "\t*\t", 1) } else { line.clone() };
        text.push_str(&line);
        text.push('\n');
        number += 1;
        if k == bad {
            break;
        }
        if k % 1000 == 999 {
            text.push('\n');
            number += 1;
        }
    }
    let path = write(dir.path(), "bad.paf", text.as_bytes());
    let msg = read_batches(&path, &reads, &contigs, &PairOptions::default(), SMALL).err().unwrap().to_string();
    let name = &s.reads[cands[bad].read].0;
    let want = format!("{}: record {} ({name}): line {number}: column 5 (strand) is \"*\"", path.display(), bad + 1);
    assert!(msg.starts_with(&want), "got {msg}\nwant {want}");
}

#[test]
fn damaged_paf_lines_are_errors_naming_file_line_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let reads = load(&write(dir.path(), "r.fa", b">r1\nACGTACGTAC\n>r2\nGGGG\n"), false);
    let contigs = load(&write(dir.path(), "c.fa", b">c1\nACGTACGTACGTACGTACGT\n"), false);
    let good = "r1\t10\t0\t10\t+\tc1\t20\t0\t10\t10\t10\t60\n";
    let cases: [(&str, String); 7] = [
        (
            "r2\t5\t0\t4\t+\tc1\t20\t0\t4\t4\t4\t60\n",
            "record 2 (r2): line 2: query length 5 in the PAF, 4 in {dir}/r.fa".into(),
        ),
        (
            "r2\t4\t0\t4\t+\tc1\t21\t0\t4\t4\t4\t60\n",
            "record 2 (r2): line 2: target length 21 in the PAF, 20 in {dir}/c.fa".into(),
        ),
        (
            "r2\t4\t0\t4\t.\tc1\t20\t0\t4\t4\t4\t60\n",
            "record 2 (r2): line 2: column 5 (strand) is \".\", not + or -".into(),
        ),
        (
            "r2\t4\t0\t4\t+\tc1\t20\n",
            "record 2 (r2): line 2: expected at least 12 tab-separated PAF columns, found 7".into(),
        ),
        (
            "r2\t4\t0\t5\t+\tc1\t20\t0\t4\t4\t4\t60\n",
            "record 2 (r2): line 2: query region 0..5 is not within its 4 residues".into(),
        ),
        (
            "r9\t4\t0\t4\t+\tc1\t20\t0\t4\t4\t4\t60\n",
            "record 2 (r9): line 2: query name (column 1) \"r9\" not found".into(),
        ),
        (
            "r2\t4\t0\t4\t+\tc1\t20\t0\t4",
            "record 2 (r2): line 2: expected at least 12 tab-separated PAF columns, found 9".into(),
        ),
    ];
    let d = dir.path().display().to_string();
    for (k, (line, want)) in cases.iter().enumerate() {
        let path = write(dir.path(), &format!("bad{k}.paf"), format!("{good}{line}").as_bytes());
        let msg = read_batches(&path, &reads, &contigs, &PairOptions::default(), SMALL).err().unwrap().to_string();
        let want = format!("{}: {}", path.display(), want.replace("{dir}", &d));
        assert!(msg.starts_with(&want), "got {msg}\nwant {want}");
    }
}

/// TSV output of `align --dna` on the CPU engine; panics with stderr on failure.
fn align_tsv(args: &[&str]) -> Vec<u8> {
    align_ok(&[&["--format", "tsv", "--dna"], args].concat()).stdout
}

#[test]
fn paf_on_the_plus_strand_with_whole_windows_aligns_as_tsv_candidates_do() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x55);
    let mut cands = candidates(&s, 0x56, 60);
    cands.iter_mut().for_each(|c| c.minus = false);
    let reads = write(dir.path(), "reads.fa", fasta(&s.reads).as_bytes());
    let contigs = write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes());
    let tsv: String = cands.iter().map(|c| format!("{}\t{}\n", s.reads[c.read].0, s.contigs[c.contig].0)).collect();
    let tsv = write(dir.path(), "cands.tsv", tsv.as_bytes());
    let paf_text = paf(&s, &cands);
    let paf_path = write(dir.path(), "cands.paf", paf_text.as_bytes());
    let (r, c) = (reads.to_str().unwrap(), contigs.to_str().unwrap());
    let columns = "query,target,score,qstart,qend,tstart,tend,qlen,tlen,cigar";
    let want = align_tsv(&["--pairs", tsv.to_str().unwrap(), "--seqs", r, "--target-seqs", c, "--columns", columns]);
    let got = align_tsv(&[
        "--pairs",
        paf_path.to_str().unwrap(),
        "--seqs",
        r,
        "--target-seqs",
        c,
        "--window",
        "full",
        "--columns",
        columns,
    ]);
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    // From stdin, named by --pairs-format.
    let args = [
        "align",
        "--device",
        "cpu",
        "--quiet",
        "--format",
        "tsv",
        "--dna",
        "--pairs",
        "-",
        "--pairs-format",
        "paf",
        "--seqs",
        r,
        "--target-seqs",
        c,
        "--window",
        "full",
        "--columns",
        columns,
    ];
    let o = run_stdin(&args, paf_text.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&want));
    // A bad --window is refused in one line.
    let o = run(&["align", "--dna", "--pairs", paf_path.to_str().unwrap(), "--seqs", r, "--window", "wide"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--window: 'wide' is neither a margin"), "{}", stderr(&o));
}

#[test]
fn fastq_gives_what_the_same_sequences_as_fasta_give() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x57);
    let cands = candidates(&s, 0x58, 50);
    let tsv: String = cands.iter().map(|c| format!("{}\t{}\n", s.reads[c.read].0, s.contigs[c.contig].0)).collect();
    let tsv = write(dir.path(), "cands.tsv", tsv.as_bytes());
    let fa = write(dir.path(), "reads.fa", fasta(&s.reads).as_bytes());
    let fq_text = fastq(&s.reads);
    let fq = write(dir.path(), "reads.fq", fq_text.as_bytes());
    let fq_gz = write(dir.path(), "reads.fq.gz", &gzip(fq_text.as_bytes()));
    let fq_bgz = write(dir.path(), "reads.fq.bgz", &bgzf(fq_text.as_bytes()));
    let contigs = write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes());
    let contigs_fq = write(dir.path(), "contigs.fq", fastq(&s.contigs).as_bytes());
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    let columns = "query,target,score,qstart,qend,tstart,tend,qlen,tlen,cigar,qheader";
    let want =
        align_tsv(&["--pairs", &p(&tsv), "--seqs", &p(&fa), "--target-seqs", &p(&contigs), "--columns", columns]);
    assert!(want.len() > 100);
    for reads in [&fq, &fq_gz, &fq_bgz] {
        let got = align_tsv(&[
            "--pairs",
            &p(&tsv),
            "--seqs",
            &p(reads),
            "--target-seqs",
            &p(&contigs_fq),
            "--columns",
            columns,
        ]);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{}", reads.display());
    }
    // Two files paired record by record.
    let firsts: Vec<(String, String)> = s.contigs.iter().cloned().chain(s.reads[..4].iter().cloned()).collect();
    let a_fa = write(dir.path(), "a.fa", fasta(&s.reads[..8]).as_bytes());
    let b_fa = write(dir.path(), "b.fa", fasta(&firsts).as_bytes());
    let a_fq = write(dir.path(), "a.fq", fastq(&s.reads[..8]).as_bytes());
    let b_fq = write(dir.path(), "b.fq.gz", &bgzf(fastq(&firsts).as_bytes()));
    let want = align_tsv(&["-q", &p(&a_fa), "-t", &p(&b_fa), "--columns", columns]);
    let got = align_tsv(&["-q", &p(&a_fq), "-t", &p(&b_fq), "--columns", columns]);
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    // search: FASTQ queries against a FASTQ database (protein letters in FASTQ records).
    let mut rng = Rng(0x5b);
    let proteins: Vec<(String, String)> = (0..12)
        .map(|i| {
            let len = 30 + rng.below(40);
            (format!("p{i}"), (0..len).map(|_| b"ACDEFGHIKLMNPQRSTVWY"[rng.below(20)] as char).collect())
        })
        .collect();
    let q_fa = write(dir.path(), "q.fa", fasta(&proteins[..5]).as_bytes());
    let q_fq = write(dir.path(), "q.fq", fastq(&proteins[..5]).as_bytes());
    let d_fa = write(dir.path(), "d.fa", fasta(&proteins).as_bytes());
    let d_fq = write(dir.path(), "d.fq.gz", &gzip(fastq(&proteins).as_bytes()));
    let search = |q: &PathBuf, d: &PathBuf| {
        let o = run(&["search", "--device", "cpu", "--quiet", "--format", "tsv", "-q", &p(q), "-d", &p(d)]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    let want = search(&q_fa, &d_fa);
    assert!(String::from_utf8_lossy(&want).lines().count() > 5);
    assert_eq!(String::from_utf8_lossy(&search(&q_fq, &d_fq)), String::from_utf8_lossy(&want));
}

/// FASTQ wrapped over several lines: sequences every `width` residues, qualities every
/// `width + 3` (so quality lines that start with '@' and '+' fall where a header or a '+'
/// line could be), CRLF on odd records, as minimap2, samtools and racon read it.
fn fastq_wrapped(seqs: &[(String, String)], width: usize) -> String {
    let wrap = |s: &str, w: usize, eol: &str| -> String {
        s.as_bytes().chunks(w).map(|c| format!("{}{eol}", std::str::from_utf8(c).unwrap())).collect()
    };
    let mut text = String::new();
    for (k, (id, s)) in seqs.iter().enumerate() {
        let quals: String = (0..s.len()).map(|i| (b'!' + ((i * 7 + k * 13) % 94) as u8) as char).collect();
        let quals: String = quals.chars().enumerate().map(|(i, c)| if i % 5 == 0 { '@' } else { c }).collect();
        let eol = if k % 2 == 1 { "\r\n" } else { "\n" };
        text.push_str(&format!(
            "@{id} some description{eol}{}+{eol}{}",
            wrap(s, width, eol),
            wrap(&quals, width + 3, eol)
        ));
    }
    text
}

/// Issue 60 item 9: multi-line FASTQ, plain, gzip and BGZF, gives what the same records on
/// single lines give (the oracle: the same qualities, four lines a record, through the same
/// paths; and FASTA for the sequences), on every reader path: sets of pairs by id, two
/// files paired record by record, search queries and database.
#[test]
fn multi_line_fastq_gives_what_single_line_fastq_gives() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x5c);
    let cands = candidates(&s, 0x5d, 50);
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    let single_quals = |seqs: &[(String, String)]| -> String {
        // The wrapped file's records on one line each.
        let text = fastq_wrapped(seqs, usize::MAX / 4);
        text.replace("\r\n", "\n")
    };
    let tsv: String = cands.iter().map(|c| format!("{}\t{}\n", s.reads[c.read].0, s.contigs[c.contig].0)).collect();
    let tsv = write(dir.path(), "cands.tsv", tsv.as_bytes());
    let columns = "query,target,score,qstart,qend,tstart,tend,qlen,tlen,cigar,qheader";
    let reads_one = write(dir.path(), "one.fq", single_quals(&s.reads).as_bytes());
    let contigs_one = write(dir.path(), "contigs_one.fq", single_quals(&s.contigs).as_bytes());
    let want = align_tsv(&[
        "--pairs",
        &p(&tsv),
        "--seqs",
        &p(&reads_one),
        "--target-seqs",
        &p(&contigs_one),
        "--columns",
        columns,
    ]);
    assert!(String::from_utf8_lossy(&want).lines().count() > 40);
    // SAM carries the qualities: they must come through whole.
    let sam = |reads: &PathBuf, contigs: &PathBuf| {
        let out = dir.path().join("out.sam");
        let args = ["--dna", "--pairs", &p(&tsv), "--seqs", &p(reads), "--target-seqs", &p(contigs), "-o", &p(&out)];
        align_ok(&args);
        fs::read_to_string(&out).unwrap().lines().filter(|l| !l.starts_with("@PG")).collect::<Vec<_>>().join("\n")
    };
    let want_sam = sam(&reads_one, &contigs_one);
    for width in [1, 7, 60] {
        let text = fastq_wrapped(&s.reads, width);
        let contigs = write(dir.path(), &format!("contigs{width}.fq"), fastq_wrapped(&s.contigs, width).as_bytes());
        for (name, data) in
            [("fq", text.clone().into_bytes()), ("fq.gz", gzip(text.as_bytes())), ("fq.bgz", bgzf(text.as_bytes()))]
        {
            let reads = write(dir.path(), &format!("reads{width}.{name}"), &data);
            let got = align_tsv(&[
                "--pairs",
                &p(&tsv),
                "--seqs",
                &p(&reads),
                "--target-seqs",
                &p(&contigs),
                "--columns",
                columns,
            ]);
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "width {width} {name}");
            assert_eq!(sam(&reads, &contigs), want_sam, "SAM, width {width} {name}");
        }
        // Two files paired record by record.
        let firsts: Vec<(String, String)> = s.contigs.iter().cloned().chain(s.reads[..4].iter().cloned()).collect();
        let a_one = write(dir.path(), "a_one.fq", single_quals(&s.reads[..8]).as_bytes());
        let b_one = write(dir.path(), "b_one.fq", single_quals(&firsts).as_bytes());
        let a = write(dir.path(), "a.fq", fastq_wrapped(&s.reads[..8], width).as_bytes());
        let b = write(dir.path(), "b.fq.gz", &bgzf(fastq_wrapped(&firsts, width).as_bytes()));
        let want2 = align_tsv(&["-q", &p(&a_one), "-t", &p(&b_one), "--columns", columns]);
        let got2 = align_tsv(&["-q", &p(&a), "-t", &p(&b), "--columns", columns]);
        assert_eq!(String::from_utf8_lossy(&got2), String::from_utf8_lossy(&want2), "two files, width {width}");
    }
    // search: multi-line FASTQ queries and database (protein letters in FASTQ records).
    let mut rng = Rng(0x5e);
    let proteins: Vec<(String, String)> = (0..12)
        .map(|i| {
            let len = 30 + rng.below(40);
            (format!("p{i}"), (0..len).map(|_| b"ACDEFGHIKLMNPQRSTVWY"[rng.below(20)] as char).collect())
        })
        .collect();
    let search = |q: &PathBuf, d: &PathBuf| {
        let o = run(&["search", "--device", "cpu", "--quiet", "--format", "tsv", "-q", &p(q), "-d", &p(d)]);
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    let q_one = write(dir.path(), "q_one.fq", single_quals(&proteins[..5]).as_bytes());
    let d_one = write(dir.path(), "d_one.fq", single_quals(&proteins).as_bytes());
    let want = search(&q_one, &d_one);
    assert!(String::from_utf8_lossy(&want).lines().count() > 5);
    let q = write(dir.path(), "q.fq", fastq_wrapped(&proteins[..5], 9).as_bytes());
    let d = write(dir.path(), "d.fq.gz", &gzip(fastq_wrapped(&proteins, 11).as_bytes()));
    assert_eq!(String::from_utf8_lossy(&search(&q, &d)), String::from_utf8_lossy(&want));
}

#[test]
fn damaged_fastq_is_an_error_naming_file_and_record() {
    let dir = tempfile::tempdir().unwrap();
    let contigs = write(dir.path(), "c.fa", b">c1\nACGTACGT\n");
    let tsv = write(dir.path(), "cands.tsv", b"r1\tc1\n");
    let cases: [(&[u8], &str); 5] = [
        (
            b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n@r3\n+\nI\n",
            "record 2 (r2): line 7: expected the '+' line after the sequence lines, found a header",
        ),
        (b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\nII\n", "record 2 (r2): line 9: 5 qualities for 4 residues"),
        (
            b"@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\n",
            "record 2 (r2): truncated FASTQ record: the input ends before its quality line",
        ),
        (b"@r1\nACGT\nAC\n+\nIIII\nIII\n", "record 1 (r1): line 6: 7 qualities for 6 residues"),
        (b"@r1\nAC1T\n+\nIIII\n", "record 1 (r1): invalid residue '1' at position 3 (line 2)"),
    ];
    for (k, (text, problem)) in cases.iter().enumerate() {
        let reads = write(dir.path(), &format!("bad{k}.fq"), text);
        let o = run(&[
            "align",
            "--device",
            "cpu",
            "--dna",
            "--pairs",
            tsv.to_str().unwrap(),
            "--seqs",
            reads.to_str().unwrap(),
            "--target-seqs",
            contigs.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let want = format!("{}: {problem}", reads.display());
        assert!(stderr(&o).contains(&want), "got {}\nwant {want}", stderr(&o));
        // The same through BGZF.
        let bgz = write(dir.path(), &format!("bad{k}.fq.gz"), &bgzf(text));
        let o =
            run(&["align", "--device", "cpu", "--dna", "-q", bgz.to_str().unwrap(), "-t", contigs.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let want = format!("{}: {problem}", bgz.display());
        assert!(stderr(&o).contains(&want), "got {}\nwant {want}", stderr(&o));
    }
}

#[test]
fn qualities_and_whole_queries_are_filled_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let s = sets(0x59);
    let cands = candidates(&s, 0x5a, 40);
    let fq_path = write(dir.path(), "reads.fq", fastq(&s.reads).as_bytes());
    let contigs = load(&write(dir.path(), "contigs.fa", fasta(&s.contigs).as_bytes()), false);
    let paf_path = write(dir.path(), "c.paf", paf(&s, &cands).as_bytes());
    // The qualities as the test wrote them, per read.
    let fq_text = fs::read_to_string(&fq_path).unwrap();
    let quals: Vec<&str> = fq_text.lines().skip(3).step_by(4).collect();
    for keep in [false, true] {
        let reads = load(&fq_path, keep);
        let options = PairOptions { query_text: true, window: Some(4), ..PairOptions::default() };
        let batches = read_batches(&paf_path, &reads, &contigs, &options, SMALL).unwrap();
        let mut row = 0;
        for b in &batches {
            assert_eq!(b.query_text.len(), b.len());
            assert_eq!(b.query_quals.len(), b.len());
            for i in 0..b.len() {
                let c = &cands[row];
                assert_eq!(b.query_text.get(i), s.reads[c.read].1, "whole query, not its window");
                assert_eq!(b.query_quals.get(i), if keep { quals[c.read] } else { "" });
                row += 1;
            }
        }
        let batches = read_batches(&paf_path, &reads, &contigs, &PairOptions::default(), SMALL).unwrap();
        assert!(batches.iter().all(|b| b.query_text.is_empty() && b.query_quals.is_empty()));
    }
}

#[test]
fn bad_region_and_strand_cells_name_file_record_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let reads = load(&write(dir.path(), "r.fa", b">r1\nACGTACGTAC\n>r2\nGGGG\n"), false);
    let contigs = load(&write(dir.path(), "c.fa", b">c1\nACGTACGTACGTACGTACGT\n"), false);
    let options = PairOptions {
        region_cols: Some(["qs", "qe", "ts", "te"].map(String::from)),
        strand_col: Some("st".into()),
        ..PairOptions::default()
    };
    let head = "query_id\ttarget_id\tqs\tqe\tts\tte\tst\nr1\tc1\t0\t10\t0\t20\t+\n";
    let cases = [
        ("r2\tc1\t0\tx\t0\t4\t+\n", "record 2 (r2): line 3: qe is not a 0-based position: \"x\""),
        ("r2\tc1\t3\t5\t0\t4\t+\n", "record 2 (r2): line 3: query region 3..5 is not within its 4 residues"),
        ("r2\tc1\t0\t4\t9\t4\t+\n", "record 2 (r2): line 3: target region 9..4 is not within its 20 residues"),
        ("r2\tc1\t0\t4\t0\t4\t*\n", "record 2 (r2): line 3: st is \"*\", not + or -"),
        ("r2\tc1\t0\t4\t0\t4\n", "record 2 (r2): line 3: expected 7 tab-separated columns"),
    ];
    for (k, (line, want)) in cases.iter().enumerate() {
        let path = write(dir.path(), &format!("bad{k}.tsv"), format!("{head}{line}").as_bytes());
        let msg = read_batches(&path, &reads, &contigs, &options, SMALL).err().unwrap().to_string();
        let want = format!("{}: {want}", path.display());
        assert!(msg.starts_with(&want), "got {msg}\nwant {want}");
    }
    // Region columns need a header to name them.
    let path = write(dir.path(), "bare.tsv", b"r1\tc1\t0\t10\t0\t20\t+\n");
    let msg = read_batches(&path, &reads, &contigs, &options, SMALL).err().unwrap().to_string();
    assert!(msg.contains("--region-cols names columns of the candidates' header line"), "{msg}");
}

//! `--strand` (issue 51) against the test's own reverse complement: a pair on the minus
//! strand is the plus-strand alignment of the reverse-complemented query (reverse-complemented
//! here, letter by letter), with the query's coordinates read back on the query as given;
//! `both` keeps the better of the two, a tie going to plus. Every mode and free-end set, and
//! every level of columns.

mod common;
use common::*;

/// The test's own reverse complement (`common::revcomp`) of a string.
fn revcomp(s: &str) -> String {
    String::from_utf8(common::revcomp(s.as_bytes())).unwrap()
}

/// Pairs whose targets hold the query's either strand, with errors, some Ns, and some
/// palindromes (ties between the strands).
fn pairs(seed: u64, n: usize) -> Vec<(String, String)> {
    let mut rng = Rng(seed);
    let base = |rng: &mut Rng| b"ACGT"[rng.below(4)] as char;
    (0..n)
        .map(|i| {
            let len = 1 + rng.below(60);
            let mut q: String = (0..len).map(|_| base(&mut rng)).collect();
            if i % 13 == 0 {
                q = format!("{q}{}", revcomp(&q)); // its own reverse complement
            }
            if i % 7 == 0 {
                q.insert(rng.below(q.len()), 'N');
            }
            let inner = if rng.below(2) == 0 { revcomp(&q) } else { q.clone() };
            let mut t: String = inner.chars().filter(|_| rng.below(20) != 0).collect();
            let flank = |rng: &mut Rng| (0..rng.below(30)).map(|_| base(rng)).collect::<String>();
            t = format!("{}{t}{}", flank(&mut rng), flank(&mut rng));
            if t.is_empty() {
                t.push('A');
            }
            (q, t)
        })
        .collect()
}

fn tsv(pairs: &[(String, String)]) -> String {
    pairs.iter().enumerate().map(|(i, (q, t))| format!("q{i}\t{q}\tt{i}\t{t}\n")).collect()
}

fn align(dir: &std::path::Path, name: &str, input: &str, args: &[&str], columns: &str) -> Vec<Vec<String>> {
    let path = dir.join(name);
    std::fs::write(&path, input).unwrap();
    let mut all = vec!["align", "--dna", "--pairs", path.to_str().unwrap(), "--format", "tsv", "--columns", columns];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "{:?}: {}", all, stderr(&o));
    String::from_utf8(o.stdout).unwrap().lines().skip(1).map(|l| l.split('\t').map(String::from).collect()).collect()
}

const MODES: [&[&str]; 5] = [
    &["--mode", "local"],
    &["--mode", "global"],
    &["--mode", "semi-global"],
    &["--mode", "semi-global", "--free-ends", "target-start,target-end"],
    &["--mode", "semi-global", "--free-ends", "query-end,target-start"],
];

#[test]
fn minus_and_both_equal_the_plus_alignment_of_the_reverse_complement() {
    let dir = tempfile::tempdir().unwrap();
    let ps = pairs(11, 300);
    let flipped: Vec<(String, String)> = ps.iter().map(|(q, t)| (revcomp(q), t.clone())).collect();
    let cols = "score,qstart,qend,tstart,tend,qlen,tlen,cigar,qaln,taln,nident,strand";
    for mode in MODES {
        let plus = align(dir.path(), "p.tsv", &tsv(&ps), &[mode, &["--strand", "plus"]].concat(), cols);
        let minus = align(dir.path(), "p.tsv", &tsv(&ps), &[mode, &["--strand", "minus"]].concat(), cols);
        let both = align(dir.path(), "p.tsv", &tsv(&ps), &[mode, &["--strand", "both"]].concat(), cols);
        let oracle = align(dir.path(), "f.tsv", &tsv(&flipped), mode, cols);
        for i in 0..ps.len() {
            let (o, m) = (&oracle[i], &minus[i]);
            let qlen: i64 = o[5].parse().unwrap();
            // The oracle's query coordinates are on the reverse complement: read back on
            // the query as given, start and end swap.
            let back = |x: &str| {
                let x: i64 = x.parse().unwrap();
                if x == 0 {
                    0
                } else {
                    qlen + 1 - x
                }
            };
            let want_q = (back(&o[2]), back(&o[1]));
            let got_q: (i64, i64) = (m[1].parse().unwrap(), m[2].parse().unwrap());
            assert_eq!(got_q, want_q, "{mode:?} pair {i} minus: {m:?} vs {o:?}");
            assert_eq!((&m[0], &m[3..11], m[11].as_str()), (&o[0], &o[3..11], "-"), "{mode:?} pair {i}");
            assert_eq!(plus[i][11], "+");
            let (ps_, ms) = (plus[i][0].parse::<i64>().unwrap(), m[0].parse::<i64>().unwrap());
            let want = if ms > ps_ { m } else { &plus[i] };
            assert_eq!(&both[i], want, "{mode:?} pair {i} both");
        }
    }
}

/// The score-and-end level (no start pass asked) gives the same ends as the full run: on the
/// minus strand the query's end is the start pass's cell, so the run computes it.
#[test]
fn query_ends_on_minus_need_no_start_column() {
    let dir = tempfile::tempdir().unwrap();
    let ps = pairs(5, 200);
    for mode in MODES {
        let args = [mode, &["--strand", "both"]].concat();
        let full = align(dir.path(), "p.tsv", &tsv(&ps), &args, "score,qstart,qend,tend,strand");
        let ends = align(dir.path(), "p.tsv", &tsv(&ps), &args, "score,qend,tend,strand");
        for (f, e) in full.iter().zip(&ends) {
            assert_eq!((&f[0], &f[2], &f[3], &f[4]), (&e[0], &e[1], &e[2], &e[3]), "{mode:?}");
        }
    }
}

#[test]
fn protein_refuses_minus_and_both_in_one_line() {
    for s in ["minus", "both"] {
        let o = run_stdin(&["align", "--pairs", "-", "--strand", s], b"q\tMKV\tt\tMKV\n");
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(err.contains("need DNA scoring") && err.trim().lines().count() == 1, "{err}");
    }
    let o = run_stdin(&["align", "--pairs", "-", "--strand", "plus", "--format", "tsv"], b"q\tMKV\tt\tMKV\n");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 60 items 1-2: a protein candidate on `-` (PAF's column 5, a strand column of a
/// TSV, Arrow or Parquet table) is refused where it is read, in one line naming the file,
/// the record and both ids, exit 2, whatever the output format, with no output file left;
/// the same candidates on `+` run.
#[test]
fn protein_candidates_on_minus_are_refused_naming_them() {
    use arrow::array::{ArrayRef, RecordBatch, StringArray};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let q = "MKVLAAGIVQNSFHSKVFSIQW";
    let t = "PPMKVLAAGIVQNSFHSKVFSIQWPP";
    let seqs = common::pairs::write(d, "seqs.fa", format!(">q0\n{q}\n>q1\n{q}\n>t1\n{t}\n").as_bytes());
    let paf = |sign: char| {
        format!(
            "q0\t{ql}\t0\t{ql}\t+\tt1\t{tl}\t0\t{tl}\t1\t1\t0\nq1\t{ql}\t0\t{ql}\t{sign}\tt1\t{tl}\t0\t{tl}\t1\t1\t0\n",
            ql = q.len(),
            tl = t.len()
        )
    };
    let tsv = |sign: char| format!("query_id\ttarget_id\tst\nq0\tt1\t+\nq1\tt1\t{sign}\n");
    let table = |sign: &str| {
        let col = |v: [&str; 2]| -> ArrayRef { Arc::new(StringArray::from(v.to_vec())) };
        RecordBatch::try_from_iter([
            ("query_id", col(["q0", "q1"])),
            ("target_id", col(["t1", "t1"])),
            ("st", col(["+", sign])),
        ])
        .unwrap()
    };
    let arrows = |sign: &str| {
        let mut out = Vec::new();
        let b = table(sign);
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &b.schema()).unwrap();
        w.write(&b).unwrap();
        w.finish().unwrap();
        drop(w);
        out
    };
    // (file name, candidates on minus, the same on plus, the options that read them)
    type Input<'a> = (String, Vec<u8>, Vec<u8>, &'a [&'a str]);
    let inputs: Vec<Input> = vec![
        ("c.paf".into(), paf('-').into_bytes(), paf('+').into_bytes(), &[]),
        ("c.tsv".into(), tsv('-').into_bytes(), tsv('+').into_bytes(), &["--strand-col", "st"]),
        ("c.arrows".into(), arrows("-"), arrows("+"), &["--strand-col", "st"]),
        (
            "c.parquet".into(),
            common::pairs::parquet(&table("-")),
            common::pairs::parquet(&table("+")),
            &["--strand-col", "st"],
        ),
    ];
    for (name, minus, plus, extra) in &inputs {
        for out in ["out.tsv", "out.sam", "out.paf"] {
            let out = d.join(out);
            let _ = std::fs::remove_file(&out);
            let path = common::pairs::write(d, name, minus);
            let mut args = vec!["align", "--pairs", &path, "--seqs", &seqs, "-o", out.to_str().unwrap()];
            args.extend_from_slice(extra);
            let o = run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{name} {}: {err}", out.display());
            let want = format!(
                "{path}: record 2 (q1): {}candidate of query \"q1\" on target \"t1\" names strand -: proteins have no minus strand",
                if name.ends_with(".paf") || name.ends_with(".tsv") { "line 2: " } else { "" }
            );
            let want = if name.ends_with(".tsv") { want.replace("line 2", "line 3") } else { want };
            assert!(err.contains(&want), "{name}: got {err}\nwant {want}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(!out.exists(), "{name}: {} left behind", out.display());
            // The same candidates on plus align.
            let path = common::pairs::write(d, name, plus);
            let mut args = vec!["align", "--pairs", &path, "--seqs", &seqs, "-o", out.to_str().unwrap()];
            args.extend_from_slice(extra);
            let o = run(&args);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
        }
    }
}

/// Issue 60 item 10: `qaln`/`taln` print each DNA ambiguity code as the input had it, on
/// both strands. Oracle: the aligned strings rebuilt here from the CIGAR, the coordinates
/// and the input sequences (the query reverse-complemented here on `-`).
#[test]
fn aligned_strings_keep_the_ambiguity_letters_of_the_input() {
    const CODES: &[u8] = b"ACGTNRYSWKMBDHV";
    let mut rng = Rng(0x600a);
    let mut text = String::new();
    let mut seqs = Vec::new();
    for i in 0..60 {
        let t: Vec<u8> = (0..40 + rng.below(40))
            .map(|_| if rng.below(4) == 0 { CODES[4 + rng.below(11)] } else { rng.base() })
            .collect();
        let mut q: Vec<u8> = t[5..t.len() - 5].iter().filter(|_| rng.below(15) != 0).copied().collect();
        if i % 2 == 1 {
            q = common::revcomp(&q);
        }
        text.push_str(&format!("q{i}\t{}\tt{i}\t{}\n", String::from_utf8_lossy(&q), String::from_utf8_lossy(&t)));
        seqs.push((q, t));
    }
    let dir = tempfile::tempdir().unwrap();
    let columns = "query,strand,qstart,qend,tstart,tend,cigar,qaln,taln";
    let mut ambiguous = 0;
    for strand in ["plus", "minus"] {
        let rows = align(dir.path(), "amb.tsv", &text, &["--strand", strand], columns);
        assert_eq!(rows.len(), seqs.len());
        for r in &rows {
            let (q, t) = &seqs[r[0][1..].parse::<usize>().unwrap()];
            let n = |k: usize| r[k].parse::<usize>().unwrap();
            let (qs, qe, ts) = (n(2), n(3), n(4));
            if qs == 0 {
                continue; // no alignment
            }
            // The query as aligned: its forward residues qs..qe, reverse-complemented on '-'.
            let qa = if r[1] == "-" { common::revcomp(&q[qs - 1..qe]) } else { q[qs - 1..qe].to_vec() };
            let (mut i, mut j, mut qaln, mut taln, mut len) = (0, ts - 1, Vec::new(), Vec::new(), 0);
            for c in r[6].bytes() {
                if c.is_ascii_digit() {
                    len = 10 * len + (c - b'0') as usize;
                    continue;
                }
                for _ in 0..len {
                    let (x, y) = match c {
                        b'I' => (qa[i], b'-'),
                        b'D' => (b'-', t[j]),
                        _ => (qa[i], t[j]),
                    };
                    i += (x != b'-') as usize;
                    j += (y != b'-') as usize;
                    qaln.push(x);
                    taln.push(y);
                }
                len = 0;
            }
            assert_eq!(r[7].as_bytes(), qaln, "{strand} {r:?}");
            assert_eq!(r[8].as_bytes(), taln, "{strand} {r:?}");
            ambiguous += qaln.iter().chain(&taln).filter(|b| b"RYSWKMBDHV".contains(b)).count();
        }
    }
    assert!(ambiguous > 100, "the pairs align ambiguity codes other than N: {ambiguous}");
}

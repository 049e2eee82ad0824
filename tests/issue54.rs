//! Issue 54 (round six of users and hostile bytes): thresholds in the user's units, DNA
//! ambiguity codes in paths, search thresholds before top-k, headers in other words, merges
//! that cannot lie, and the messages. Each test is checked against a hand-worked value or a
//! filter over the full output (the independent oracle of a threshold).

mod common;

use common::{bin, ex, run, run_stdin, stderr};
use std::path::Path;
use std::process::Stdio;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// TSV rows (header dropped) split at tabs.
fn rows(o: &std::process::Output) -> Vec<Vec<String>> {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o).lines().skip(1).map(|l| l.split('\t').map(String::from).collect()).collect()
}

/// A protein of `n` residues without long repeats (every prefix aligns to itself whole).
fn protein(n: usize) -> String {
    let letters = b"ACDEFGHIKLMNPQRSTVWY";
    let mut x = 7u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            letters[(x % 20) as usize] as char
        })
        .collect()
}

// Item 1: a percent threshold keeps a row whose written value equals it. The pair aligns
// the whole target, P residues of a query of 100: qcov P/100 exactly as written.
#[test]
fn percent_coverage_thresholds_keep_rows_exactly_on_them() {
    let full = protein(100);
    for p in [35, 41, 47, 57, 69, 70, 82, 83, 94, 95] {
        let part = &full[..p];
        let pairs = format!("q\t{full}\tt\t{part}\n");
        let cols = ["--columns", "query,qcov,tcov", "--format", "tsv"];
        let kept = |args: &[&str], input: &str| {
            rows(&run_stdin(&[&["align", "--pairs", "-"], args, &cols].concat(), input.as_bytes()))
        };
        let pct = p.to_string();
        let frac = format!("0.{p}");
        let by_percent = kept(&["--query-cover", &pct], &pairs);
        assert_eq!(by_percent.len(), 1, "--query-cover {p} dropped qcov {p}%");
        assert_eq!(by_percent[0][1].parse::<f64>().unwrap(), p as f64 / 100.0);
        assert_eq!(kept(&["--min-qcov", &frac], &pairs).len(), 1);
        assert_eq!(kept(&["-qcov_hsp_perc", &pct], &pairs).len(), 1);
        // The same pair the other way round: tcov P/100.
        let swapped = format!("t\t{part}\tq\t{full}\n");
        assert_eq!(kept(&["--subject-cover", &pct], &swapped).len(), 1, "--subject-cover {p}");
        // Just above the written value, the row goes.
        let above = format!("{}.001", p);
        assert_eq!(kept(&["--query-cover", &above], &pairs).len(), 0);
    }
}

// Item 1: MMseqs2's fraction against pident: k identities over n columns of a global DNA
// alignment without gaps (a mismatch costs 3, a gap pair at least 14).
#[test]
fn identity_fractions_keep_rows_exactly_on_them() {
    for (k, n, fraction) in [(11, 20, "0.55"), (7, 100, "0.07"), (7, 50, "0.14"), (7, 25, "0.28"), (14, 25, "0.56")] {
        let pairs = format!("q\t{}\tt\t{}{}\n", "A".repeat(n), "A".repeat(k), "C".repeat(n - k));
        let args =
            ["align", "--pairs", "-", "--dna", "--mode", "global", "--columns", "query,pident", "--format", "tsv"];
        let kept = rows(&run_stdin(&[&args[..], &["--min-seq-id", fraction]].concat(), pairs.as_bytes()));
        assert_eq!(kept.len(), 1, "--min-seq-id {fraction} dropped {k}/{n}");
        let percent = format!("{}", 100.0 * k as f64 / n as f64);
        assert_eq!(rows(&run_stdin(&[&args[..], &["--min-pident", &percent]].concat(), pairs.as_bytes())).len(), 1);
    }
}

// Item 1: the metadata shows the threshold as typed.
#[test]
fn metadata_shows_thresholds_as_typed() {
    let o = run(&[
        "align",
        "--pairs",
        &ex("pairs.tsv"),
        "--query-cover",
        "70",
        "--min-seq-id",
        "0.55",
        "--format",
        "arrow",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout), None).unwrap();
    let meta = reader.schema().metadata().clone();
    let t = meta.get("thresholds").expect("thresholds recorded");
    assert!(t.contains("qcov >= 70%") && t.contains("pident >= 0.55 as a fraction"), "{t}");
}

// Item 1: search's --query-cover too, against a filter of the full output.
#[test]
fn search_query_cover_equals_a_filter_of_the_full_output() {
    let base = ["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--format", "tsv"];
    let cols = ["--columns", "query,target,qcovhsp,qstart,qend,qlen"];
    let all = rows(&run(&[&base[..], &cols, &["-k", "200"]].concat()));
    for p in ["35", "50", "70"] {
        // -k 3 after -k 200: the thresholds apply before the cut (item 3).
        let got = rows(&run(&[&base[..], &cols, &["--query-cover", p, "-k", "3"]].concat()));
        let mut want: Vec<Vec<String>> = Vec::new();
        for r in all.iter().filter(|r| {
            let span = r[4].parse::<f64>().unwrap() - r[3].parse::<f64>().unwrap() + 1.0;
            // Exact in integers: span / qlen >= p / 100.
            (span * 100.0) >= p.parse::<f64>().unwrap() * r[5].parse::<f64>().unwrap()
        }) {
            if want.iter().filter(|w| w[0] == r[0]).count() < 3 {
                want.push(r.clone());
            }
        }
        assert_eq!(got, want, "--query-cover {p}");
    }
}

// Item 2: an ambiguity code scores as a mismatch, so the path columns count it as one.
#[test]
fn dna_ambiguity_codes_are_mismatches_in_every_path_column() {
    let input = b"q1\tAAAARRRRAAAA\tt1\tAAAAYYYYAAAA\n";
    let args = ["align", "--pairs", "-", "--dna", "--mode", "global", "--format", "tsv"];
    let cols = ["--columns", "score,cigar,pident,nident,mismatch,length"];
    let got = rows(&run_stdin(&[&args[..], &cols].concat(), input));
    assert_eq!(got, [["4", "4=4X4=", "66.667", "8", "4", "12"]]);
    assert!(rows(&run_stdin(&[&args[..], &cols, &["--min-pident", "100"]].concat(), input)).is_empty());
    // Local mode and N against N: the same.
    let got = rows(&run_stdin(
        &["align", "--pairs", "-", "--dna", "--format", "tsv", "--columns", "score,cigar,nident,mismatch"],
        b"q\tACGTNACGT\tt\tACGTNACGT\n",
    ));
    assert_eq!(got, [["13", "4=1X4=", "8", "1"]]);
}

/// `swarrow-shard fasta DB 3 dir/part`: the database split in order.
fn shards(dir: &Path) -> (String, String, Vec<String>) {
    let shard = Path::new(env!("CARGO_MANIFEST_DIR")).join("workflows/bin/swarrow-shard");
    let stats = std::process::Command::new(&shard).args(["stats", &ex("db.fasta.gz")]).output().unwrap();
    let text = String::from_utf8(stats.stdout).unwrap();
    let mut numbers = text.split_whitespace();
    let (residues, seqs) = (numbers.next().unwrap().to_string(), numbers.next().unwrap().to_string());
    let prefix = dir.join("part");
    let o = std::process::Command::new(&shard)
        .args(["fasta", &ex("db.fasta.gz"), "3", prefix.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let parts = (0..3).map(|i| dir.join(format!("part-{i:03}.fasta")).to_str().unwrap().to_string()).collect();
    (residues, seqs, parts)
}

// Item 3: every threshold applies before top-k, so the shards merge into the unsharded run,
// which is the full output filtered, then cut to k per query.
#[test]
fn search_thresholds_apply_before_top_k_and_shards_merge_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (residues, seqs, parts) = shards(dir.path());
    let cols = "query,target,score,evalue,qcov,pident,rank";
    let whole = |extra: &[&str]| {
        let base =
            ["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--format", "tsv", "--columns", cols];
        rows(&run(&[&base[..], extra].concat()))
    };
    let all = whole(&["-k", "156"]);
    for (threshold, value, k, column) in [("--min-pident", "30", 3, 5), ("--min-qcov", "0.5", 5, 4)] {
        let k_text = k.to_string();
        let got = whole(&["-k", &k_text, threshold, value]);
        // The oracle: the full output filtered, at most k per query, ranks renumbered.
        let mut want: Vec<Vec<String>> = Vec::new();
        for r in all.iter().filter(|r| r[column].parse::<f64>().unwrap() >= value.parse::<f64>().unwrap()) {
            let rank = want.iter().filter(|w| w[0] == r[0]).count() + 1;
            if rank <= k {
                let mut r = r.clone();
                r[6] = rank.to_string();
                want.push(r);
            }
        }
        assert_eq!(got, want, "{threshold} {value} -k {k}");
        // Shards of the database, each searched with the whole one's size, merged.
        let mut outs = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let out = dir.path().join(format!("s{i}-{column}.parquet")).to_str().unwrap().to_string();
            let o = run(&[
                "search",
                "-q",
                &ex("queries.fasta"),
                "-d",
                part,
                "--db-size",
                &residues,
                "--db-seqs",
                &seqs,
                "-k",
                &k_text,
                threshold,
                value,
                "-o",
                &out,
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            outs.push(out);
        }
        let merged = run(&[
            &["merge", "--top", &k_text, "--format", "tsv"][..],
            &outs.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat());
        let unsharded = run(&[
            "search",
            "-q",
            &ex("queries.fasta"),
            "-d",
            &ex("db.fasta.gz"),
            "-k",
            &k_text,
            threshold,
            value,
            "--format",
            "tsv",
        ]);
        // The same rows and ranks (merge orders queries it sees in no shard by first sight).
        let sorted = |o: &std::process::Output| {
            assert!(o.status.success(), "{}", stderr(o));
            let mut lines: Vec<String> = stdout(o).lines().map(String::from).collect();
            lines.sort();
            lines
        };
        assert_eq!(sorted(&merged), sorted(&unsharded), "{threshold} {value}");
    }
}

// Item 4: a header in other words is a header.
#[test]
fn header_lines_in_other_words_are_not_aligned() {
    let input = b"query\tsequence\ttarget\tsequence\nq1\tMKVLA\tt1\tMKVLA\n";
    let got = rows(&run_stdin(&["align", "--pairs", "-", "--format", "tsv", "--columns", "query,target"], input));
    assert_eq!(got, [["q1", "t1"]]);
}

/// An align shard of the bundled pairs with `extra` options, as Parquet in `dir`.
fn align_shard(dir: &Path, name: &str, extra: &[&str]) -> String {
    let out = dir.join(name).to_str().unwrap().to_string();
    let o = run(&[&["align", "--pairs", &ex("pairs.tsv"), "-o", &out][..], extra].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

// Items 5 and 6: shards that differ in thresholds or mode are refused, naming both.
#[test]
fn merge_refuses_shards_of_other_thresholds_or_modes() {
    let dir = tempfile::tempdir().unwrap();
    let with = align_shard(dir.path(), "with.parquet", &["--min-score", "5"]);
    let without = align_shard(dir.path(), "without.parquet", &[]);
    let global = align_shard(dir.path(), "global.parquet", &["--mode", "global"]);
    for (a, b, key) in [
        (&with, &without, "thresholds"),
        (&without, &with, "thresholds"),
        (&without, &global, "alignment_mode"),
        (&global, &without, "alignment_mode"),
    ] {
        let o = run(&["merge", "--format", "tsv", a, b]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a} {b}: {e}");
        assert!(e.contains(&format!("disagree on {key}")), "{e}");
        let name = |p: &str| Path::new(p).file_name().unwrap().to_str().unwrap().to_string();
        assert!(e.contains(&name(a)) && e.contains(&name(b)), "{e}");
        assert!(o.stdout.is_empty());
    }
    // Shards that agree still merge.
    let again = align_shard(dir.path(), "again.parquet", &[]);
    assert!(run(&["merge", "--format", "tsv", &without, &again]).status.success());
}

// Search shards: one with thresholds, one without.
#[test]
fn merge_refuses_search_shards_with_and_without_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let (residues, seqs, parts) = shards(dir.path());
    let shard = |i: usize, extra: &[&str]| {
        let out = dir.path().join(format!("s{i}.parquet")).to_str().unwrap().to_string();
        let base = [
            "search",
            "-q",
            &ex("queries.fasta"),
            "-d",
            &parts[i],
            "--db-size",
            &residues,
            "--db-seqs",
            &seqs,
            "-o",
            &out,
        ];
        assert!(run(&[&base[..], extra].concat()).status.success());
        out
    };
    let (a, b) = (shard(0, &["--min-score", "50"]), shard(1, &[]));
    let o = run(&["merge", "--top", "10", "--format", "tsv", &a, &b]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("thresholds") && stderr(&o).contains("none"), "{}", stderr(&o));
}

// Items 7 and 8: E-values outside local mode; negative score thresholds where scores can be
// negative (the oracle: a filter over the full output).
#[test]
fn statistics_need_local_mode_and_negative_scores_filter_outside_it() {
    for args in [&["--mode", "global", "-e", "1"][..], &["--mode", "semi-global", "--min-bits", "5"]] {
        let o = run(&[&["align", "--pairs", &ex("pairs.tsv"), "--format", "tsv"][..], args].concat());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2));
        assert!(e.contains("need local mode") && !e.contains("has not"), "{e}");
    }
    let base = [
        "align",
        "--pairs",
        &ex("pairs.tsv"),
        "--mode",
        "global",
        "--format",
        "tsv",
        "--columns",
        "query,target,score",
    ];
    let all = rows(&run(&base));
    let got = rows(&run(&[&base[..], &["--min-score", "-50"]].concat()));
    let want: Vec<Vec<String>> = all.iter().filter(|r| r[2].parse::<i64>().unwrap() >= -50).cloned().collect();
    assert_eq!(got, want);
    assert!(want.len() < all.len() && !want.is_empty(), "the bundled pairs have scores on both sides of -50");
    // Local scores are never negative: a negative bound there is refused, naming it.
    let o = run(&["align", "--pairs", &ex("pairs.tsv"), "--min-score", "-50"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--min-score") && stderr(&o).contains("local mode"), "{}", stderr(&o));
}

// Items 10 to 13: options and names are answered in the user's terms.
#[test]
fn messages_name_what_the_user_typed() {
    let q = ex("queries.fasta");
    let db = ex("db.fasta.gz");
    let cases: [(&[&str], &[&str]); 8] = [
        (&["search", "-q", &q, "-d", &db, "-db_soft_mask", "1"], &["-db_soft_mask is not an option of swarrow"]),
        (&["search", "-q", &q, "-d", &db, "-query_gencode", "1"], &["-query_gencode is not an option"]),
        (&["search", "-q", &q, "-d", &db, "-db_gencode", "1"], &["-db_gencode is not an option"]),
        (&["search", "-q", &q, "-d", &db, "-out_fmt", "6"], &["-out_fmt is not an option", "-outfmt"]),
        (&["search", "-q", &q, "-d", &db, "-id", "40"], &["'-id'", "--id"]),
        (&["search", "-q", &q, "-d", &db, "-top", "5"], &["'-top'", "--top"]),
        (&["align", "--pairs", &ex("pairs.tsv"), "--gap-open", "5000"], &["--gap-open 5000", "1000"]),
        (&["align", "--pairs", &ex("pairs.tsv"), "--gap-extend", "1001"], &["--gap-extend 1001", "1000"]),
    ];
    for (args, wanted) in cases {
        let o = run(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        for w in wanted {
            assert!(e.contains(w), "{args:?}: {e}");
        }
        assert!(!e.contains("glued") && !e.contains("unexpected argument"), "{e}");
    }
    let dir = tempfile::tempdir().unwrap();
    for ext in ["cram", "vcf", "gff", "json", "xml"] {
        let out = dir.path().join(format!("x.{ext}"));
        let o = run(&["align", "--pairs", &ex("pairs.tsv"), "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("does not write") && stderr(&o).contains("Parquet"), "{}", stderr(&o));
        assert!(!out.exists());
    }
}

// Item 14: the pipe note never comes with an input error; small percentages are warned of.
#[test]
fn pipe_note_stays_away_from_errors_and_small_percents_warn() {
    // stdout is a pipe here (captured): the note comes with results ...
    let o = run(&["align", "--pairs", &ex("pairs.tsv")]);
    assert!(o.status.success() && stderr(&o).contains("stdout is a pipe"), "{}", stderr(&o));
    // ... but not with an input error found before them.
    let o = bin()
        .args(["align", "--pairs", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"q1\tMK1\tt1\tMKV\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("stdout is a pipe") && e.lines().count() == 1, "{e}");
    for (option, value) in [("--id", "0.9"), ("--query-cover", "0.8"), ("--subject-cover", "1")] {
        let o = run(&["align", "--pairs", &ex("pairs.tsv"), "--format", "tsv", option, value]);
        assert!(o.status.success());
        assert!(stderr(&o).contains(&format!("{value} is read as {value}%")), "{option}: {}", stderr(&o));
    }
    let o = run(&["align", "--pairs", &ex("pairs.tsv"), "--format", "tsv", "--id", "90"]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

// Item 9: a large mismatch score on long pairs in global mode gives its path columns.
#[test]
fn global_paths_take_a_mismatch_of_a_million() {
    let mut x = 5u64;
    let mut dna = |n: usize| -> String {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"ACGT"[(x % 4) as usize] as char
            })
            .collect()
    };
    let pairs = format!("q\t{}\tt\t{}\n", dna(300), dna(300));
    let args = ["align", "--pairs", "-", "--dna", "--mismatch", "-1000000", "--mode", "global", "--format", "tsv"];
    let got = rows(&run_stdin(&[&args[..], &["--columns", "score,cigar,mismatch,length"]].concat(), pairs.as_bytes()));
    assert_eq!(got.len(), 1);
    // The path re-scores to the score (2 a match, gaps 5 + 2 per position) without mismatches.
    let (mut score, mut number, mut length) = (0i64, 0i64, 0i64);
    for c in got[0][1].chars() {
        match c.to_digit(10) {
            Some(d) => number = number * 10 + d as i64,
            None => {
                score += match c {
                    '=' => 2 * number,
                    'X' => -1_000_000 * number,
                    _ => -(5 + 2 * number),
                };
                length += number;
                number = 0;
            }
        }
    }
    assert_eq!(got[0][0].parse::<i64>().unwrap(), score);
    assert_eq!((got[0][2].as_str(), got[0][3].parse::<i64>().unwrap()), ("0", length));
}

// Item 14: a 1 x 2.2M pair at gap cost 1000 in local mode (one pair is the whole alignment).
#[test]
fn local_mode_takes_one_residue_against_millions_at_gap_cost_1000() {
    let long = "W".repeat(2_200_000);
    let input = format!("q\tW\tt\tAAAA{long}\nq2\t{long}\tt2\tW\n");
    let args = ["align", "--pairs", "-", "--gap-open", "1000", "--gap-extend", "1000", "--format", "tsv"];
    let got = rows(&run_stdin(
        &[&args[..], &["--columns", "query,score,qstart,qend,tstart,tend,cigar"]].concat(),
        input.as_bytes(),
    ));
    assert_eq!(got, [["q", "11", "1", "1", "5", "5", "1="], ["q2", "11", "1", "1", "1", "1", "1="]]);
    // Global mode cannot: the gaps across 2.2M residues leave the 32-bit range.
    let o = run_stdin(&[&args[..], &["--mode", "global"]].concat(), input.as_bytes());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

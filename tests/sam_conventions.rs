//! A mapper's conventions in PAF, SAM and BAM (issue 60): the read's best record primary,
//! secondary or supplementary by query overlap with `SA:Z`, MAPQ from the read's scores, one
//! length a target name. Checked against the test's own account of the README's rules,
//! computed here from the TSV rows of the same run (score, coordinates, identity), and by
//! samtools (`quickcheck`, `view -q`, `flagstat`, `sort`, `depth`, `calmd`) on hand-made
//! groups: a tie, a read whose worse candidate comes first, a chimera, a repeat, a read with
//! one candidate, and a read whose candidates are split across batches.

mod common;
use common::*;

use std::path::Path;
use std::process::Command;

fn have(tool: &str) -> bool {
    let found = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").is_err(), "{tool} is missing in CI (scripts/install-test-deps.sh installs it)");
        eprintln!("\n*** SKIPPED sam_conventions: {tool} is not installed ***\n");
    }
    found
}

fn swarrow(dir: &Path, args: &[&str]) -> String {
    let out = run_in(dir, args);
    assert!(out.status.success(), "swarrow {args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn samtools(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("samtools").current_dir(dir).args(args).output().expect("run samtools");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "samtools {args:?}: {err}");
    assert!(!err.contains("different NM") && !err.contains("different MD"), "samtools {args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

struct Rng(u64);

impl Rng {
    fn base(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        b"ACGT"[(self.0 % 4) as usize]
    }
    fn seq(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.base()).collect()
    }
}

fn fasta(records: &[(&str, &[u8])]) -> String {
    records.iter().map(|(id, s)| format!(">{id}\n{}\n", String::from_utf8_lossy(s))).collect()
}

/// The hand-made groups: contigs c1, c2 and c3 (c3 holds a copy of c1's 1000..1300), the
/// reads, and the candidates in the order written (a read's candidates adjacent).
fn write_data(dir: &Path) -> Vec<(&'static str, &'static str)> {
    let mut rng = Rng(0x5eed_1234_abcd);
    let c1 = rng.seq(2000);
    let c2 = rng.seq(2000);
    let mut c3 = rng.seq(500);
    c3.extend_from_slice(&c1[1000..1300]);
    c3.extend(rng.seq(500));
    let mut worse_first = c1[400..550].to_vec();
    worse_first[30] = if worse_first[30] == b'A' { b'C' } else { b'A' };
    worse_first[90] = if worse_first[90] == b'G' { b'T' } else { b'G' };
    // 100 bases of c1, then 110 of c2: two placements of two parts of the read.
    let mut chimera = c1[1500..1600].to_vec();
    chimera.extend_from_slice(&c2[1700..1810]);
    let reads: Vec<(&str, Vec<u8>)> = vec![
        ("single", c2[100..250].to_vec()),
        ("worse_first", worse_first),
        ("tie", c1[1050..1200].to_vec()),
        ("chimera", chimera),
        ("split", c2[600..750].to_vec()),
    ];
    let contigs: Vec<(&str, &[u8])> = vec![("c1", &c1), ("c2", &c2), ("c3", &c3)];
    let read_refs: Vec<(&str, &[u8])> = reads.iter().map(|(n, s)| (*n, s.as_slice())).collect();
    std::fs::write(dir.join("reads.fa"), fasta(&read_refs)).unwrap();
    std::fs::write(dir.join("contigs.fa"), fasta(&contigs)).unwrap();
    let candidates = vec![
        ("single", "c2"),
        ("worse_first", "c2"),
        ("worse_first", "c1"),
        ("tie", "c1"),
        ("tie", "c3"),
        ("chimera", "c1"),
        ("chimera", "c2"),
        ("split", "c1"),
        ("split", "c3"),
        ("split", "c1"),
        ("split", "c2"),
        ("split", "c3"),
    ];
    let ids: String = candidates.iter().map(|(q, t)| format!("{q}\t{t}\n")).collect();
    std::fs::write(dir.join("cands.tsv"), ids).unwrap();
    let seq = |name: &str| -> String {
        let all = read_refs.iter().chain(&contigs);
        String::from_utf8_lossy(all.clone().find(|(n, _)| *n == name).unwrap().1).into_owned()
    };
    let pairs: String = candidates.iter().map(|(q, t)| format!("{q}\t{}\t{t}\t{}\n", seq(q), seq(t))).collect();
    std::fs::write(dir.join("pairs.tsv"), format!("query_id\tquery_seq\ttarget_id\ttarget_seq\n{pairs}")).unwrap();
    candidates
}

/// One row as the TSV gives it.
#[derive(Debug, Clone)]
struct Row {
    query: String,
    target: String,
    score: i32,
    qstart: i32,
    qend: i32,
    identity: f64,
    minus: bool,
}

/// The test's account of the README's rules: (FLAG, MAPQ) of each row, in order.
fn expected(rows: &[Row]) -> Vec<(u32, u32)> {
    let over = |a: &Row, b: &Row| {
        let overlap = (a.qend.min(b.qend) - a.qstart.max(b.qstart) + 1).max(0);
        let shorter = (a.qend - a.qstart + 1).min(b.qend - b.qstart + 1);
        2 * overlap > shorter
    };
    let mut out = vec![(0, 0); rows.len()];
    let mut start = 0;
    while start < rows.len() {
        let end = (start..rows.len()).find(|&k| rows[k].query != rows[start].query).unwrap_or(rows.len());
        let group: Vec<usize> = (start..end).collect();
        // By score, ties in order: selection by hand rather than a sort.
        let mut left = group.clone();
        let mut taken: Vec<usize> = Vec::new();
        while !left.is_empty() {
            let best = *left.iter().max_by(|&&a, &&b| rows[a].score.cmp(&rows[b].score).then(b.cmp(&a))).unwrap();
            left.retain(|&k| k != best);
            let strand = if rows[best].minus { 16 } else { 0 };
            if taken.iter().any(|&t| over(&rows[best], &rows[t])) {
                out[best] = (0x100 | strand, 0);
            } else {
                out[best] = (if taken.is_empty() { 0 } else { 0x800 } | strand, 0);
                taken.push(best);
            }
        }
        for &t in &taken {
            let s1 = rows[t].score as f64;
            let s2 = group.iter().filter(|&&k| k != t && over(&rows[t], &rows[k])).map(|&k| rows[k].score).max();
            let s2 = s2.unwrap_or(0).clamp(0, rows[t].score) as f64;
            let id = rows[t].identity;
            let w = if id >= 0.95 { 1.0 } else { id * id };
            let q = if s1 <= 1.0 { 0.0 } else { (40.0 * (1.0 - s2 / s1) * s1.ln() * w).clamp(0.0, 60.0) };
            out[t].1 = (q + 0.5).floor() as u32;
        }
        start = end;
    }
    out
}

fn tsv_rows(text: &str) -> Vec<Row> {
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |k: usize| f[k].parse::<i32>().unwrap();
            Row {
                query: f[0].into(),
                target: f[1].into(),
                score: n(2),
                qstart: n(3),
                qend: n(4),
                identity: n(5) as f64 / n(6) as f64,
                minus: f[7] == "-",
            }
        })
        .collect()
}

const ROW_COLUMNS: &str = "query,target,score,qstart,qend,nident,length,strand,flag,mapq";

#[test]
fn records_follow_the_read_rules_in_every_format_and_batch_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let candidates = write_data(d);
    let by_id = ["align", "--dna", "--pairs", "cands.tsv", "--seqs", "reads.fa", "--target-seqs", "contigs.fa"];
    let tsv = swarrow(d, &[&by_id[..], &["--columns", ROW_COLUMNS, "--format", "tsv"]].concat());
    let rows = tsv_rows(&tsv);
    assert_eq!(rows.len(), candidates.len());
    let want = expected(&rows);
    // The table's own flag and mapq columns.
    let table: Vec<(u32, u32)> = tsv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[8].parse().unwrap(), f[9].parse().unwrap())
        })
        .collect();
    assert_eq!(table, want, "flag and mapq columns");

    // The hand-made groups, as the rules say they come out.
    let at = |q: &str, t: &str, nth: usize| {
        (0..rows.len()).filter(|&k| rows[k].query == q && rows[k].target == t).nth(nth).unwrap()
    };
    assert_eq!(want[at("single", "c2", 0)], (0, 60), "one candidate: primary, unique");
    assert_eq!(want[at("worse_first", "c1", 0)].0, 0, "the best row is primary, not the first");
    assert_eq!(want[at("worse_first", "c2", 0)], (0x100, 0));
    assert_eq!(rows[at("tie", "c1", 0)].score, rows[at("tie", "c3", 0)].score, "the repeat is no tie");
    assert_eq!(want[at("tie", "c1", 0)], (0, 0), "a tie: the first is primary, MAPQ 0");
    assert_eq!(want[at("tie", "c3", 0)], (0x100, 0));
    assert_eq!(want[at("chimera", "c2", 0)], (0, 60), "the longer part of the chimera is primary");
    assert_eq!(want[at("chimera", "c1", 0)], (0x800, 60), "the other part is supplementary");
    assert_eq!(want[at("split", "c2", 0)], (0, 60), "the 4th of 5 candidates, split over batches");

    // SAM and BAM: FLAG and MAPQ as the account says, in every batch size (the read `split`
    // spans batches of 1, 2 and 3 rows), from targets known up front and spooled.
    if !have("samtools") {
        return;
    }
    swarrow(d, &[&by_id[..], &["-o", "ids.sam"]].concat());
    let reference = samtools(d, &["view", "ids.sam"]);
    let records: Vec<Vec<&str>> = reference.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(records.len(), rows.len());
    for (k, r) in records.iter().enumerate() {
        assert_eq!((r[0], r[2]), (rows[k].query.as_str(), rows[k].target.as_str()));
        assert_eq!((r[1].parse::<u32>().unwrap(), r[4].parse::<u32>().unwrap()), want[k], "{}", r.join("\t"));
    }
    for batch in ["1", "2", "3"] {
        let name = format!("b{batch}.bam");
        swarrow(d, &[&by_id[..], &["--batch", batch, "-o", &name]].concat());
        assert_eq!(samtools(d, &["view", &name]), reference, "--batch {batch}");
    }
    swarrow(d, &["align", "--dna", "--pairs", "pairs.tsv", "--batch", "2", "-o", "inline.bam"]);
    assert_eq!(samtools(d, &["view", "inline.bam"]), reference, "targets spooled");

    // SA:Z: on the chimera's two records, each naming the other as SAM defines it; no
    // other record has one.
    let sa = |r: &Vec<&str>| r[11..].iter().find_map(|t| t.strip_prefix("SA:Z:")).map(String::from);
    let tag = |r: &Vec<&str>, name: &str| r[11..].iter().find_map(|t| t.strip_prefix(name)).unwrap().to_string();
    for (k, r) in records.iter().enumerate() {
        if r[0] != "chimera" {
            assert_eq!(sa(r), None, "{}", r.join("\t"));
            continue;
        }
        let other = &records[if rows[k].target == "c1" { at("chimera", "c2", 0) } else { at("chimera", "c1", 0) }];
        let strand = if other[1].parse::<u32>().unwrap() & 16 != 0 { '-' } else { '+' };
        let element = format!("{},{},{strand},{},{},{};", other[2], other[3], other[5], other[4], tag(other, "NM:i:"));
        assert_eq!(sa(r), Some(element), "{}", r.join("\t"));
    }

    // samtools: valid; flagstat counts the roles; -q 20 drops the repeat's placements and
    // the secondary records; depth counts both parts of the chimera; calmd agrees on NM/MD.
    samtools(d, &["quickcheck", "-v", "ids.sam", "b1.bam", "inline.bam"]);
    let flagstat = samtools(d, &["flagstat", "b2.bam"]);
    let count = |mask: u32| want.iter().filter(|w| w.0 & mask != 0).count();
    assert!(flagstat.contains(&format!("{} + 0 secondary", count(0x100))), "{flagstat}");
    assert!(flagstat.contains(&format!("{} + 0 supplementary", count(0x800))), "{flagstat}");
    assert!(count(0x800) >= 1);
    let kept = samtools(d, &["view", "-q", "20", "b2.bam"]);
    let kept: Vec<(String, String)> = kept
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[2].to_string())
        })
        .collect();
    let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(
        kept,
        pairs(&[("single", "c2"), ("worse_first", "c1"), ("chimera", "c1"), ("chimera", "c2"), ("split", "c2")])
    );
    samtools(d, &["sort", "-o", "sorted.bam", "b2.bam"]);
    samtools(d, &["index", "sorted.bam"]);
    let depth = samtools(d, &["depth", "-r", "c1:1520-1580", "sorted.bam"]);
    assert!(!depth.is_empty() && depth.lines().all(|l| l.ends_with("\t1")), "supplementary part counted: {depth}");
    samtools(d, &["calmd", "sorted.bam", "contigs.fa"]);

    // PAF: the same primary; tp:A:S for secondary rows, P for the others; MAPQ in column 12.
    let paf = swarrow(d, &[&by_id[..], &["--batch", "2", "--format", "paf"]].concat());
    let lines: Vec<Vec<&str>> = paf.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), rows.len());
    for (k, f) in lines.iter().enumerate() {
        let tp = if want[k].0 & 0x100 != 0 { "tp:A:S" } else { "tp:A:P" };
        assert_eq!(
            (f[0], f[5], f[11], f[12]),
            (rows[k].query.as_str(), rows[k].target.as_str(), &*want[k].1.to_string(), tp)
        );
    }
}

/// A read whose candidates are not adjacent makes one group per run (README): each run has
/// its own primary.
#[test]
fn a_reads_runs_that_are_not_adjacent_are_groups_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_data(d);
    std::fs::write(d.join("apart.tsv"), "tie\tc1\nsingle\tc2\ntie\tc3\n").unwrap();
    let out = swarrow(
        d,
        &[
            "align",
            "--dna",
            "--pairs",
            "apart.tsv",
            "--seqs",
            "reads.fa",
            "--target-seqs",
            "contigs.fa",
            "--columns",
            ROW_COLUMNS,
            "--format",
            "tsv",
        ],
    );
    let flags: Vec<&str> = out.lines().skip(1).map(|l| l.split('\t').nth(8).unwrap()).collect();
    assert_eq!(flags, ["0", "0", "0"], "{out}");
}

/// One target name with two lengths is refused on every path writing PAF, SAM or BAM,
/// naming it and both lengths, with no output left; the same name and length is one target.
#[test]
fn a_target_name_with_two_lengths_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(99);
    let (short, long) = (rng.seq(10), rng.seq(54));
    std::fs::write(d.join("A.fa"), fasta(&[("q1", &short), ("q2", &long[20..50])])).unwrap();
    std::fs::write(d.join("B.fa"), fasta(&[("x", &short), ("x", &long)])).unwrap();
    let pairs = format!(
        "query_id\tquery_seq\ttarget_id\ttarget_seq\nq1\t{0}\tx\t{0}\nq2\t{1}\tx\t{2}\n",
        String::from_utf8_lossy(&short),
        String::from_utf8_lossy(&long[20..50]),
        String::from_utf8_lossy(&long)
    );
    std::fs::write(d.join("pairs.tsv"), pairs).unwrap();
    for out in ["o.sam", "o.bam", "o.paf"] {
        for input in
            [&["-q", "A.fa", "-t", "B.fa"][..], &["--pairs", "pairs.tsv"], &["--pairs", "pairs.tsv", "--batch", "1"]]
        {
            let o = run_in(d, &[&["align", "--dna"][..], input, &["-o", out]].concat());
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{input:?} {out}: {err}");
            assert!(err.contains("target \"x\" has two lengths, 10 and 54"), "{err}");
            let left: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("o."))
                .collect();
            assert!(left.is_empty(), "{left:?}");
        }
    }
    // A search database with the name twice: SAM's header would list it twice.
    std::fs::write(d.join("prot.fa"), ">p1\nMKVLAAGIVGLLLAQ\n").unwrap();
    std::fs::write(d.join("db.fa"), ">x\nMKVLAAGIVG\n>x\nMKVLAAGIVGLLLAQWWHH\n").unwrap();
    let o = run_in(d, &["search", "-q", "prot.fa", "-d", "db.fa", "-o", "s.sam"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("target \"x\" has two lengths, 10 and 19"), "{}", stderr(&o));
    assert!(!d.join("s.sam").exists());
    // Same name, same length: one target.
    std::fs::write(d.join("B2.fa"), fasta(&[("x", &short), ("x", &short)])).unwrap();
    std::fs::write(d.join("A2.fa"), fasta(&[("q1", &short), ("q2", &short)])).unwrap();
    let sam = swarrow(d, &["align", "--dna", "-q", "A2.fa", "-t", "B2.fa", "--format", "sam"]);
    assert_eq!(sam.matches("@SQ\tSN:x\tLN:10\n").count(), 1, "{sam}");
    assert_eq!(sam.lines().filter(|l| !l.starts_with('@')).count(), 2, "{sam}");
}

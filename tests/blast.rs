//! `--format blast` against NCBI BLAST+ itself (Debian's `ncbi-blast+`, installed by
//! scripts/install-test-deps.sh in CI; skipped loudly elsewhere when missing): real queries
//! against the real 20,000-sequence database, `blastp -comp_based_stats 0` with `OLD_FSC=1`
//! (classic E-values, the statistics swarrow reproduces). For every hit both report with the
//! same score, the twelve outfmt 6 fields must be identical, except where BLAST's traceback
//! took another co-optimal path (same score, coordinates and E-value; other identity,
//! length or gaps):
//! those are counted and reported. Biopython's `blast-tab` parser must read our file.

mod common;
use common::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn data() -> Option<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    d.join("DB.fasta.gz").exists().then_some(d)
}

const FIELDS: &str = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore";

#[test]
fn blast_tabular_lines_equal_blastp_outfmt_6() {
    if !have("blastp", "-version") && skip("blast", "blastp (ncbi-blast+) is not installed") {
        return;
    }
    let Some(data) = data() else {
        if skip("blast", "../shared/data/DB.fasta.gz is missing") {
            return;
        }
        unreachable!()
    };
    let dir = tempfile::tempdir().unwrap();
    let gunzip = |gz: &str, out: &Path, records: Option<usize>| {
        let mut text = String::new();
        let f = std::fs::File::open(data.join(gz)).unwrap();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(f), &mut text).unwrap();
        if let Some(n) = records {
            let cut = text.match_indices('>').nth(n).map_or(text.len(), |(i, _)| i);
            text.truncate(cut);
        }
        std::fs::write(out, text).unwrap();
    };
    let (db, q) = (dir.path().join("db.fa"), dir.path().join("q.fa"));
    gunzip("DB.fasta.gz", &db, None);
    gunzip("QUERY.fasta.gz", &q, Some(12));
    let mk = Command::new("makeblastdb").args(["-dbtype", "prot", "-in"]).arg(&db).output().unwrap();
    assert!(mk.status.success(), "{}", String::from_utf8_lossy(&mk.stderr));
    let blast = Command::new("blastp")
        .env("OLD_FSC", "1")
        .args(["-comp_based_stats", "0", "-max_target_seqs", "10", "-evalue", "10", "-outfmt"])
        .arg(format!("6 {FIELDS} score"))
        .arg("-query")
        .arg(&q)
        .arg("-db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(blast.status.success(), "{}", String::from_utf8_lossy(&blast.stderr));
    let ours_path = dir.path().join("hits.m8");
    let o = run(&[
        "search",
        "-q",
        q.to_str().unwrap(),
        "-d",
        db.to_str().unwrap(),
        "-k",
        "10",
        "--device",
        "cpu",
        "--quiet",
        "-o",
        ours_path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The score for matching hits: from a second run with the score appended.
    let scored = run(&[
        "search",
        "-q",
        q.to_str().unwrap(),
        "-d",
        db.to_str().unwrap(),
        "-k",
        "10",
        "--device",
        "cpu",
        "--quiet",
        "--outfmt",
        &format!("6 {FIELDS} score"),
    ]);
    assert!(scored.status.success());
    let ours = std::fs::read_to_string(&ours_path).unwrap();
    let scored = String::from_utf8(scored.stdout).unwrap();
    assert_eq!(ours.lines().count(), scored.lines().count());
    let mut theirs: HashMap<(String, String), Vec<String>> = HashMap::new();
    for line in String::from_utf8(blast.stdout).unwrap().lines() {
        let f: Vec<String> = line.split('\t').map(String::from).collect();
        // BLAST may list several HSPs of one target: its best (first) one is the comparable.
        theirs.entry((f[0].clone(), f[1].clone())).or_insert(f);
    }
    let (mut same, mut co_optimal) = (0, 0);
    for (line, with_score) in ours.lines().zip(scored.lines()) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 12, "{line}");
        let score = with_score.rsplit('\t').next().unwrap();
        let Some(b) = theirs.get(&(f[0].to_string(), f[1].to_string())) else { continue };
        if b[12] != score {
            continue;
        }
        if b[..12] == f[..] {
            same += 1;
        } else {
            // Another co-optimal path: same coordinates, E-value and bit score (its identity,
            // length and gaps may differ).
            for k in [6, 7, 8, 9, 10, 11] {
                assert_eq!(b[k], f[k], "field {k} of {line} against BLAST's {b:?}");
            }
            co_optimal += 1;
        }
    }
    eprintln!(
        "blast: {} equal-score hits; {same} lines identical, {co_optimal} on another co-optimal path",
        same + co_optimal
    );
    assert!(same + co_optimal >= 40, "too few hits compared");
    assert!(co_optimal * 10 <= same + co_optimal, "co-optimal differences should be rare");

    // BLAST's default E-values (Spouge's finite-size correction, no OLD_FSC) against
    // `--evalue-model spouge`: every equal-score hit's E-value as printed.
    let fields = format!("6 {FIELDS} score");
    let blast = Command::new("blastp")
        .env_remove("OLD_FSC")
        .args(["-comp_based_stats", "0", "-max_target_seqs", "10", "-evalue", "10", "-outfmt", &fields, "-query"])
        .arg(&q)
        .arg("-db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(blast.status.success(), "{}", String::from_utf8_lossy(&blast.stderr));
    let (qs, ds) = (q.to_str().unwrap(), db.to_str().unwrap());
    let spouge = run(&[
        "search",
        "-q",
        qs,
        "-d",
        ds,
        "-k",
        "10",
        "--device",
        "cpu",
        "--quiet",
        "--evalue-model",
        "spouge",
        "--outfmt",
        &fields,
    ]);
    assert!(spouge.status.success(), "{}", String::from_utf8_lossy(&spouge.stderr));
    let mut theirs: HashMap<(String, String), Vec<String>> = HashMap::new();
    for line in String::from_utf8(blast.stdout).unwrap().lines() {
        let f: Vec<String> = line.split('\t').map(String::from).collect();
        theirs.entry((f[0].clone(), f[1].clone())).or_insert(f);
    }
    let mut compared = 0;
    for line in String::from_utf8(spouge.stdout).unwrap().lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let Some(b) = theirs.get(&(f[0].to_string(), f[1].to_string())) else { continue };
        if b[12] == f[12] {
            assert_eq!((b[10].as_str(), b[11].as_str()), (f[10], f[11]), "Spouge E-value and bits of {line}");
            compared += 1;
        }
    }
    eprintln!("blast: Spouge E-values of {compared} equal-score hits identical");
    assert!(compared >= 40);

    // Biopython reads it as BLAST tabular (Debian's python3-biopython).
    // Debian's interpreter, where python3-biopython installs (not a pyenv on the PATH).
    let python = if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" };
    let py = Command::new(python)
        .arg("-c")
        .arg("import sys\nfrom Bio import SearchIO\nn = sum(len(h.hsps) for r in SearchIO.parse(sys.argv[1], 'blast-tab') for h in r)\nprint(n)")
        .arg(&ours_path)
        .output()
        .unwrap();
    if !py.status.success() && String::from_utf8_lossy(&py.stderr).contains("No module named 'Bio'") {
        skip("blast", "python3-biopython is not installed");
        return;
    }
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    assert_eq!(String::from_utf8_lossy(&py.stdout).trim(), ours.lines().count().to_string());
}

/// Issue 35, item 10: `--outfmt 7` writes the comment lines `blastp -outfmt 7` writes, in the
/// same order, for the bundled queries (and one without hits) against the bundled database:
/// `# BLASTP <version>`, `# Query: <defline>`, `# Database: <name>`, `# Fields: ...` where the
/// query has hits, `# N hits found` with N its lines, and `# BLAST processed N queries`. The
/// program's version and the hit counts (BLAST counts HSPs, and ranks by its own search) are
/// compared by form; everything else must be identical.
#[test]
fn outfmt_7_comment_lines_are_blastps() {
    if !have("blastp", "-version") && skip("blast", "blastp (ncbi-blast+) is not installed") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut db = String::new();
    let gz = std::fs::File::open(examples().join("db.fasta.gz")).unwrap();
    std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(gz), &mut db).unwrap();
    std::fs::write(dir.path().join("db.fa"), db).unwrap();
    let mut queries = std::fs::read_to_string(examples().join("queries.fasta")).unwrap();
    queries.push_str(">no_hit a query like nothing in the database\nWWWWWWWWWWWW\n");
    std::fs::write(dir.path().join("q.fa"), queries).unwrap();
    let mk = Command::new("makeblastdb")
        .args(["-dbtype", "prot", "-in", "db.fa", "-out", "db.fa"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(mk.status.success(), "{}", String::from_utf8_lossy(&mk.stderr));
    for fields in ["", " qseqid sseqid pident length qlen slen qcovhsp score"] {
        let blast = Command::new("blastp")
            .env("OLD_FSC", "1")
            .args(["-comp_based_stats", "0", "-evalue", "1e-5", "-query", "q.fa", "-db", "db.fa", "-outfmt"])
            .arg(format!("7{fields}"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(blast.status.success(), "{}", String::from_utf8_lossy(&blast.stderr));
        let ours = bin()
            .args(["search", "-q", "q.fa", "-d", "db.fa", "--device", "cpu", "-e", "1e-5", "--outfmt"])
            .arg(format!("7{fields}"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
        let (theirs, ours) = (String::from_utf8(blast.stdout).unwrap(), String::from_utf8(ours.stdout).unwrap());
        assert_eq!(comment_lines(&ours), comment_lines(&theirs), "outfmt 7{fields}:\n{ours}\nblastp:\n{theirs}");
        assert!(
            ours.contains("# Query: no_hit a query like nothing in the database\n# Database: db.fa\n# 0 hits found\n")
        );
    }
}

/// The comment lines of `-outfmt 7` text, the program line and hit counts checked and then
/// masked: `# BLASTP` followed by a version; `# N hits found` where N data lines follow.
fn comment_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if !line.starts_with('#') {
            continue;
        }
        if let Some(version) = line.strip_prefix("# BLASTP ") {
            assert!(!version.trim().is_empty(), "{line}");
            out.push("# BLASTP <version>".to_string());
        } else if let Some(n) = line.strip_prefix("# ").and_then(|l| l.strip_suffix(" hits found")) {
            let following = lines[k + 1..].iter().take_while(|l| !l.starts_with('#')).count();
            assert_eq!(n.parse::<usize>().unwrap(), following, "{line}");
            out.push(format!("# {} hits found", if following > 0 { "N" } else { "0" }));
        } else {
            out.push(line.to_string());
        }
    }
    out
}

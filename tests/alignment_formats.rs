//! PAF, SAM and BAM output (issue 51), checked by tools no one here wrote and by the test's
//! own account of the alignments:
//! - PAF: every line's 12 columns and its NM/de recomputed here from `cg:Z` and the
//!   sequences the test generated (identical pairs walked column by column).
//! - SAM/BAM: samtools (`scripts/install-test-deps.sh` installs it; CI has it, so the tests
//!   skip only outside CI): `quickcheck`; `view` of every record; `sort` and `index`;
//!   `flagstat` against the records written; `calmd` against the contigs finds no NM or MD
//!   disagreement; `depth` after sorting equals the aligned pairs of the primary records.
//!   Each record's SEQ against the test's own read (whole with soft clips, or the aligned
//!   part with hard clips), reverse-complemented by the test on the minus strand.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Contigs, reads drawn from them with substitutions and small indels, and the candidates:
/// each read against its contig of origin, and every fifth read against a second contig
/// too (its second record secondary or supplementary, by the read rules).
struct Data {
    contigs: Vec<(String, Vec<u8>)>,
    reads: Vec<(String, Vec<u8>)>,
    candidates: Vec<(usize, usize)>,
}

fn data(seed: u64, n_reads: usize) -> Data {
    let mut rng = Rng(seed);
    let contigs: Vec<(String, Vec<u8>)> =
        (0..4).map(|c| (format!("ctg{c}"), (0..1500 + 700 * c).map(|_| rng.base()).collect())).collect();
    let mut reads = Vec::new();
    let mut candidates = Vec::new();
    for r in 0..n_reads {
        let c = rng.below(contigs.len());
        let contig = &contigs[c].1;
        let len = 80 + rng.below(80);
        let at = rng.below(contig.len() - len);
        let mut read = Vec::new();
        for &b in &contig[at..at + len] {
            match rng.below(100) {
                0 => read.push(rng.base()),        // substitution (or the same base)
                1 => {}                            // deletion
                2 => read.extend([b, rng.base()]), // insertion
                _ => read.push(b),
            }
        }
        // Unrelated ends on some reads: local alignment clips them.
        if r % 3 == 0 {
            let mut head: Vec<u8> = (0..5 + rng.below(10)).map(|_| rng.base()).collect();
            head.extend(read);
            read = head;
        }
        if r % 4 == 0 {
            read.extend((0..3 + rng.below(10)).map(|_| rng.base()));
        }
        reads.push((format!("read{r}"), read));
        candidates.push((r, c));
        if r % 5 == 0 {
            candidates.push((r, (c + 1) % contigs.len()));
        }
    }
    Data { contigs, reads, candidates }
}

fn fasta(records: &[(String, Vec<u8>)]) -> String {
    records.iter().map(|(id, s)| format!(">{id}\n{}\n", String::from_utf8_lossy(s))).collect()
}

impl Data {
    /// The files of a run: reads, contigs, candidates by id and the same pairs with residues.
    fn write(&self, dir: &Path) {
        std::fs::write(dir.join("reads.fa"), fasta(&self.reads)).unwrap();
        std::fs::write(dir.join("contigs.fa"), fasta(&self.contigs)).unwrap();
        let ids: String =
            self.candidates.iter().map(|&(r, c)| format!("{}\t{}\n", self.reads[r].0, self.contigs[c].0)).collect();
        std::fs::write(dir.join("cands.tsv"), ids).unwrap();
        let pairs: String = self
            .candidates
            .iter()
            .map(|&(r, c)| {
                let (q, t) = (&self.reads[r], &self.contigs[c]);
                format!("{}\t{}\t{}\t{}\n", q.0, String::from_utf8_lossy(&q.1), t.0, String::from_utf8_lossy(&t.1))
            })
            .collect();
        std::fs::write(dir.join("pairs.tsv"), format!("query_id\tquery_seq\ttarget_id\ttarget_seq\n{pairs}")).unwrap();
    }

    fn seq<'a>(&'a self, id: &str) -> &'a [u8] {
        let all = self.reads.iter().chain(&self.contigs);
        all.clone().find(|(n, _)| n == id).map(|(_, s)| s.as_slice()).unwrap_or_else(|| panic!("no sequence {id}"))
    }
}

fn swarrow(dir: &Path, args: &[&str]) {
    let out = run_in(dir, args);
    assert!(out.status.success(), "swarrow {args:?}: {}", stderr(&out));
}

/// CIGAR operations (`10M2I`) as (length, letter).
fn ops(cigar: &str) -> Vec<(usize, u8)> {
    let mut out = Vec::new();
    let mut n = 0usize;
    for b in cigar.bytes() {
        if b.is_ascii_digit() {
            n = n * 10 + (b - b'0') as usize;
        } else {
            out.push((n, b));
            n = 0;
        }
    }
    out
}

/// Every PAF line's fields recomputed from `cg:Z` and the sequences; returns the lines.
fn check_paf(text: &str, d: &Data, eqx: bool) -> usize {
    let mut lines = 0;
    for line in text.lines() {
        lines += 1;
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() >= 16, "{line}");
        let num = |k: usize| f[k].parse::<usize>().unwrap_or_else(|_| panic!("column {}: {line}", k + 1));
        let (query, target) = (d.seq(f[0]), d.seq(f[5]));
        assert_eq!(num(1), query.len(), "{line}");
        assert_eq!(num(6), target.len(), "{line}");
        // MAPQ and tp:A: the read rules are checked in tests/sam_conventions.rs.
        assert!(num(11) <= 60, "{line}");
        assert!(f[12] == "tp:A:P" || (f[12] == "tp:A:S" && num(11) == 0), "{line}");
        let tag =
            |name: &str| f[12..].iter().find_map(|t| t.strip_prefix(name)).unwrap_or_else(|| panic!("{name}: {line}"));
        let (qs, qe, ts, te) = (num(2), num(3), num(7), num(8));
        assert!(qs < qe && qe <= query.len() && ts < te && te <= target.len(), "{line}");
        let q = match f[4] {
            "+" => query[qs..qe].to_vec(),
            "-" => revcomp(&query[qs..qe]),
            s => panic!("strand {s}: {line}"),
        };
        let t = &target[ts..te];
        let (mut i, mut j, mut nident, mut columns, mut opens) = (0, 0, 0, 0, 0);
        for (n, op) in ops(tag("cg:Z:")) {
            columns += n;
            match op {
                b'M' | b'=' | b'X' => {
                    assert!(eqx || op == b'M', "M/I/D expected: {line}");
                    for k in 0..n {
                        let same = q[i + k] == t[j + k];
                        nident += same as usize;
                        assert!(op == b'M' || (op == b'=') == same, "{op} on a {} pair: {line}", same);
                    }
                    i += n;
                    j += n;
                }
                b'I' => {
                    i += n;
                    opens += 1;
                }
                b'D' => {
                    j += n;
                    opens += 1;
                }
                _ => panic!("operation {op}: {line}"),
            }
        }
        assert_eq!((i, j), (q.len(), t.len()), "cg:Z does not span the coordinates: {line}");
        assert_eq!(num(9), nident, "column 10 (identical pairs): {line}");
        assert_eq!(num(10), columns, "column 11 (alignment columns): {line}");
        assert_eq!(tag("NM:i:").parse::<usize>().unwrap(), columns - nident, "{line}");
        // pairs = M columns = columns - I - D; I = columns - t.len(), D = columns - q.len().
        let pairs = t.len() + q.len() - columns;
        let de = 1.0 - nident as f64 / (pairs + opens) as f64;
        let written: f64 = tag("de:f:").parse().unwrap();
        assert!((written - de).abs() < 0.00006, "de:f {written} vs {de}: {line}");
    }
    lines
}

#[test]
fn paf_columns_match_the_sequences_and_cigar() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(7, 120);
    d.write(dir.path());
    let by_id = ["align", "--dna", "--pairs", "cands.tsv", "--seqs", "reads.fa", "--target-seqs", "contigs.fa"];
    swarrow(dir.path(), &[&by_id[..], &["-o", "cg.paf", "--columns", "cigar"]].concat());
    swarrow(dir.path(), &[&by_id[..], &["-o", "eqx.paf", "--eqx"]].concat());
    swarrow(dir.path(), &[&by_id[..], &["--format", "paf", "-o", "plain.out"]].concat());
    swarrow(
        dir.path(),
        &[&by_id[..], &["-o", "rows.tsv", "--columns", "query,target,score,qstart,qend,tstart,tend"]].concat(),
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let (cg, eqx, plain) = (read("cg.paf"), read("eqx.paf"), read("plain.out"));
    assert_eq!(check_paf(&cg, &d, false), d.candidates.len());
    assert_eq!(check_paf(&eqx, &d, true), d.candidates.len());
    // Without a path: the same 12 columns and tags, no cg:Z.
    let no_cg: Vec<String> = cg.lines().map(|l| l.rsplit_once("\tcg:Z:").unwrap().0.to_string()).collect();
    assert_eq!(plain.lines().collect::<Vec<_>>(), no_cg);
    // Coordinates and score as the TSV output has them (1-based inclusive there).
    let rows = read("rows.tsv");
    for (paf, tsv) in cg.lines().zip(rows.lines().skip(1)) {
        let p: Vec<&str> = paf.split('\t').collect();
        let t: Vec<&str> = tsv.split('\t').collect();
        let one = |s: &str| (s.parse::<i64>().unwrap() + 1).to_string();
        assert_eq!([p[0], p[5], &one(p[2]), p[3], &one(p[7]), p[8]], [t[0], t[1], t[3], t[4], t[5], t[6]]);
        assert_eq!(p.iter().find_map(|f| f.strip_prefix("AS:i:")).unwrap(), t[2]);
    }
    // A column PAF has no field for is refused, naming it.
    let out = run_in(dir.path(), &[&by_id[..], &["-o", "x.paf", "--columns", "evalue"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no field for 'evalue'"), "{}", stderr(&out));
}

fn samtools(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("samtools").current_dir(dir).args(args).output().expect("run samtools");
    assert!(out.status.success(), "samtools {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("different NM") && !err.contains("different MD"), "samtools {args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every check of a SAM or BAM file `name` in `dir` holding alignments of `d`'s pairs;
/// returns its records as text (`samtools view`).
fn check_sam(dir: &Path, name: &str, d: &Data) -> String {
    samtools(dir, &["quickcheck", "-v", name]);
    let header = samtools(dir, &["view", "-H", name]);
    assert!(header.starts_with("@HD\tVN:1.6\tSO:unsorted\n"), "{header}");
    assert!(header.contains("@PG\tID:swarrow\tPN:swarrow\tVN:"), "{header}");
    let records = samtools(dir, &["view", name]);
    let mut primary_pairs: u64 = 0;
    let mut primaries = std::collections::HashMap::new();
    let mut secondary = 0;
    for line in records.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let flag: u32 = f[1].parse().unwrap();
        // One primary record a read (the read rules: tests/sam_conventions.rs).
        *primaries.entry(f[0].to_string()).or_insert(0) += (flag & 0x900 == 0) as usize;
        secondary += (flag & 0x100 != 0) as usize;
        let mapq: u32 = f[4].parse().unwrap();
        assert!(mapq <= 60 && (flag & 0x100 == 0 || mapq == 0), "MAPQ: {line}");
        let read = d.seq(f[0]);
        let read = if flag & 0x10 != 0 { revcomp(read) } else { read.to_vec() };
        let cigar = ops(f[5]);
        let clip = |k: usize| cigar.get(k).filter(|(_, op)| matches!(op, b'S' | b'H')).map_or(0, |c| c.0);
        let (lead, trail) = (clip(0), clip(cigar.len() - 1));
        let soft = cigar.iter().any(|c| c.1 == b'S');
        let whole: usize = cigar.iter().filter(|c| matches!(c.1, b'M' | b'I' | b'S' | b'=' | b'X')).map(|c| c.0).sum();
        let hard: usize = cigar.iter().filter(|c| c.1 == b'H').map(|c| c.0).sum();
        assert_eq!(whole + hard, read.len(), "CIGAR does not cover the read: {line}");
        let want = if soft || hard == 0 { &read[..] } else { &read[lead..read.len() - trail] };
        assert_eq!(f[9].as_bytes(), want, "SEQ: {line}");
        if flag & 0x100 == 0 {
            primary_pairs +=
                cigar.iter().filter(|c| matches!(c.1, b'M' | b'=' | b'X')).map(|c| c.0 as u64).sum::<u64>();
        }
    }
    assert!(primaries.values().all(|&n| n == 1), "a read without one primary record: {primaries:?}");
    let n = records.lines().count();
    samtools(dir, &["sort", "-o", "sorted.bam", name]);
    samtools(dir, &["index", "sorted.bam"]);
    let flagstat = samtools(dir, &["flagstat", "sorted.bam"]);
    assert!(flagstat.starts_with(&format!("{n} + 0 in total")), "{flagstat}");
    assert!(flagstat.contains(&format!("{secondary} + 0 secondary")), "{flagstat}");
    assert!(flagstat.contains(&format!("{n} + 0 mapped")), "{flagstat}");
    // calmd recomputes NM and MD from the contigs and says where they differ (checked by
    // `samtools` above: no "different NM/MD" on its stderr); its records must equal ours.
    let calmd = samtools(dir, &["calmd", "sorted.bam", "contigs.fa"]);
    let ours = samtools(dir, &["view", "sorted.bam"]);
    assert_eq!(calmd.lines().filter(|l| !l.starts_with('@')).collect::<Vec<_>>(), ours.lines().collect::<Vec<_>>());
    let depth = samtools(dir, &["depth", "sorted.bam"]);
    let total: u64 = depth.lines().map(|l| l.rsplit('\t').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(total, primary_pairs, "depth over the contigs against the primary records' aligned pairs");
    records
}

#[test]
fn sam_and_bam_pass_samtools_with_targets_known_up_front_and_spooled() {
    if !have("samtools", "--version") && skip("alignment_formats", "samtools is not installed") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = data(11, 150);
    d.write(dir.path());
    let by_id = ["align", "--dna", "--pairs", "cands.tsv", "--seqs", "reads.fa", "--target-seqs", "contigs.fa"];
    swarrow(dir.path(), &[&by_id[..], &["-o", "ids.sam"]].concat());
    swarrow(dir.path(), &[&by_id[..], &["-o", "ids.bam"]].concat());
    swarrow(dir.path(), &[&by_id[..], &["--format", "sam", "--eqx", "-o", "eqx.out"]].concat());
    // Pairs with their residues: the targets arrive inline, the records are spooled.
    swarrow(dir.path(), &["align", "--dna", "--pairs", "pairs.tsv", "-o", "inline.sam"]);
    swarrow(dir.path(), &["align", "--dna", "--pairs", "pairs.tsv", "-o", "inline.bam"]);
    let sam = check_sam(dir.path(), "ids.sam", &d);
    assert_eq!(sam.lines().count(), d.candidates.len());
    assert_eq!(check_sam(dir.path(), "ids.bam", &d), sam, "BAM and SAM records differ");
    let eqx = check_sam(dir.path(), "eqx.out", &d);
    assert!(eqx.contains('=') && !eqx.lines().any(|l| l.split('\t').nth(5).unwrap().contains('M')));
    // Tiny batches: a query's records spread over batches keep their secondary flags.
    swarrow(dir.path(), &[&by_id[..], &["--batch", "7", "-o", "small.sam"]].concat());
    assert_eq!(check_sam(dir.path(), "small.sam", &d), sam, "records differ across batch sizes");
    let inline = check_sam(dir.path(), "inline.sam", &d);
    assert_eq!(inline, sam, "records differ with targets spooled");
    // Standard output and a device given as -o spool in the temporary directory.
    for out in [&["--format", "sam"][..], &["--format", "sam", "-o", "/dev/stdout"]] {
        let o = run_in(dir.path(), &[&["align", "--dna", "--pairs", "pairs.tsv"][..], out].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let file = std::fs::read_to_string(dir.path().join("inline.sam")).unwrap();
        let records = |t: &str| t.lines().filter(|l| !l.starts_with("@PG")).map(String::from).collect::<Vec<_>>();
        assert_eq!(records(&text), records(&file));
    }
    assert_eq!(check_sam(dir.path(), "inline.bam", &d), sam);
    // Headers: every target of the set up front; the targets seen, in order, when spooled.
    let header = samtools(dir.path(), &["view", "-H", "ids.bam"]);
    let sq: Vec<&str> = header.lines().filter(|l| l.starts_with("@SQ")).collect();
    let want: Vec<String> = d.contigs.iter().map(|(n, s)| format!("@SQ\tSN:{n}\tLN:{}", s.len())).collect();
    assert_eq!(sq, want);
    let header = samtools(dir.path(), &["view", "-H", "inline.sam"]);
    let mut order: Vec<&str> = Vec::new();
    for &(_, c) in &d.candidates {
        if !order.contains(&d.contigs[c].0.as_str()) {
            order.push(&d.contigs[c].0);
        }
    }
    let sq: Vec<&str> =
        header.lines().filter_map(|l| l.strip_prefix("@SQ\tSN:")).map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(sq, order);
    // No spool or temporary file is left beside the outputs.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("swarrow-tmp") || n.contains(".records"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_failed_run_leaves_no_output_and_no_spool() {
    let dir = tempfile::tempdir().unwrap();
    let d = data(5, 30);
    d.write(dir.path());
    let mut pairs = std::fs::read_to_string(dir.path().join("pairs.tsv")).unwrap();
    pairs.push_str("bad\tAC1GT\tctg0\tACGT\n");
    std::fs::write(dir.path().join("bad.tsv"), pairs).unwrap();
    for out in ["x.sam", "x.bam"] {
        let o = run_in(dir.path(), &["align", "--dna", "--pairs", "bad.tsv", "-o", out]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| n.ends_with(".fa") || n.ends_with(".tsv")), "{names:?}");
    }
}

#[test]
fn protein_sam_is_written_and_bam_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = ex("pairs.tsv");
    let o = run_in(dir.path(), &["align", "--pairs", &pairs, "-o", "p.bam"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("BAM cannot hold protein"), "{err}");
    assert!(!dir.path().join("p.bam").exists());
    swarrow(dir.path(), &["align", "--pairs", &pairs, "-o", "p.sam"]);
    swarrow(dir.path(), &["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "-o", "s.sam"]);
    swarrow(dir.path(), &["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "-o", "s.paf"]);
    let paf = std::fs::read_to_string(dir.path().join("s.paf")).unwrap();
    assert!(paf.lines().count() > 0 && paf.lines().all(|l| l.split('\t').count() == 16), "{paf}");
    if !have("samtools", "--version") && skip("alignment_formats", "samtools is not installed") {
        return;
    }
    for name in ["p.sam", "s.sam"] {
        samtools(dir.path(), &["quickcheck", "-v", name]);
        let records = samtools(dir.path(), &["view", name]);
        assert!(records.lines().count() > 0);
        let flagstat = samtools(dir.path(), &["flagstat", name]);
        assert!(flagstat.starts_with(&format!("{} + 0 in total", records.lines().count())), "{flagstat}");
    }
    // Search's header lists the whole database.
    let header = samtools(dir.path(), &["view", "-H", "s.sam"]);
    let mut db = String::new();
    use std::io::Read;
    flate2::read::GzDecoder::new(std::fs::File::open(ex("db.fasta.gz")).unwrap()).read_to_string(&mut db).unwrap();
    assert_eq!(header.lines().filter(|l| l.starts_with("@SQ")).count(), db.matches('>').count());
}

/// A pair without an alignment (local mode, no positive cell: score 0) has no PAF line and
/// no SAM record; the others are written.
#[test]
fn pairs_without_an_alignment_have_no_line_or_record() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = "query_id\tquery_seq\ttarget_id\ttarget_seq\nnone\tAAAAAAAA\tt1\tCCCCCCCC\nsome\tACGTACGTAC\tt2\tTTACGTACGTACTT\n";
    std::fs::write(dir.path().join("p.tsv"), tsv).unwrap();
    swarrow(dir.path(), &["align", "--dna", "--pairs", "p.tsv", "-o", "p.paf"]);
    swarrow(dir.path(), &["align", "--dna", "--pairs", "p.tsv", "-o", "p.sam"]);
    swarrow(dir.path(), &["align", "--dna", "--pairs", "p.tsv", "--columns", "query,score", "-o", "p.tsv.out"]);
    let scores = std::fs::read_to_string(dir.path().join("p.tsv.out")).unwrap();
    assert!(scores.contains("none\t0\n") && scores.contains("some\t20\n"), "{scores}");
    let paf = std::fs::read_to_string(dir.path().join("p.paf")).unwrap();
    assert_eq!(paf.lines().map(|l| l.split('\t').next().unwrap()).collect::<Vec<_>>(), ["some"]);
    let sam = std::fs::read_to_string(dir.path().join("p.sam")).unwrap();
    let records: Vec<&str> = sam.lines().filter(|l| !l.starts_with('@')).collect();
    assert_eq!(records.len(), 1, "{sam}");
    assert!(records[0].starts_with("some\t0\tt2\t3\t60\t10M\t"), "{sam}");
    // The header lists the targets of the records (spooled): t2 only.
    assert!(sam.contains("@SQ\tSN:t2\tLN:14\n") && !sam.contains("SN:t1"), "{sam}");
}

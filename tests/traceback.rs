//! Traceback columns through the command line against an independent oracle: a naive
//! full-matrix traceback written here (the path rule of the README: pairs before gaps, a
//! gap in the query before one in the target, gaps as short as the values allow), on the
//! coordinates of the scalar reference engine; every CIGAR re-scored to its score.

mod common;
use common::*;
use swarrow::engine::scalar::align_pair;
use swarrow::engine::Alignment;
use swarrow::scoring::{Alphabet, Matrix, Scoring};

/// The path of `a` as (CIGAR, aligned query, aligned target, nident, mismatch, gap opens,
/// gap positions), by full H/E/F matrices and a walk back from the end.
fn naive(q: &[u8], t: &[u8], sc: &Scoring, a: &Alignment, alphabet: Alphabet) -> (String, String, String, [u32; 4]) {
    if a.score <= 0 {
        return (String::new(), String::new(), String::new(), [0; 4]);
    }
    let qs = &q[a.qstart as usize - 1..a.qend as usize];
    let ts = &t[a.tstart as usize - 1..a.tend as usize];
    let (m, n) = (qs.len(), ts.len());
    let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
    let neg = i32::MIN / 4;
    let mut h = vec![vec![neg; n + 1]; m + 1];
    let (mut e, mut f) = (h.clone(), h.clone());
    h[0][0] = 0;
    for i in 1..=m {
        for j in 1..=n {
            e[i][j] = (h[i][j - 1] - oe).max(e[i][j - 1] - ext);
            f[i][j] = (h[i - 1][j] - oe).max(f[i - 1][j] - ext);
            h[i][j] = (h[i - 1][j - 1] + sc.score(qs[i - 1], ts[j - 1])).max(e[i][j]).max(f[i][j]);
        }
    }
    assert_eq!(h[m][n], a.score, "the rectangle scores the alignment end to end");
    let (mut i, mut j, mut state) = (m, n, 'H');
    let mut ops = Vec::new();
    while i > 0 || j > 0 {
        match state {
            'H' if i > 0 && j > 0 && h[i][j] == h[i - 1][j - 1] + sc.score(qs[i - 1], ts[j - 1]) => {
                ops.push(if qs[i - 1] == ts[j - 1] { '=' } else { 'X' });
                i -= 1;
                j -= 1;
            }
            'H' => state = if h[i][j] == e[i][j] { 'E' } else { 'F' },
            'E' => {
                ops.push('D');
                if e[i][j] == h[i][j - 1] - oe {
                    state = 'H';
                }
                j -= 1;
            }
            _ => {
                ops.push('I');
                if f[i][j] == h[i - 1][j] - oe {
                    state = 'H';
                }
                i -= 1;
            }
        }
    }
    ops.reverse();
    let (mut cigar, mut qa, mut ta) = (String::new(), String::new(), String::new());
    let mut c = [0u32; 4];
    let (mut qi, mut tj) = (0, 0);
    let mut k = 0;
    while k < ops.len() {
        let run = ops[k..].iter().take_while(|&&o| o == ops[k]).count();
        cigar += &format!("{}{}", run, ops[k]);
        if matches!(ops[k], 'I' | 'D') {
            c[2] += 1;
            c[3] += run as u32;
        }
        for &o in &ops[k..k + run] {
            let letter = |x: u8| alphabet.letter(x) as char;
            match o {
                '=' | 'X' => {
                    c[if o == '=' { 0 } else { 1 }] += 1;
                    qa.push(letter(qs[qi]));
                    ta.push(letter(ts[tj]));
                    qi += 1;
                    tj += 1;
                }
                'I' => {
                    qa.push(letter(qs[qi]));
                    ta.push('-');
                    qi += 1;
                }
                _ => {
                    qa.push('-');
                    ta.push(letter(ts[tj]));
                    tj += 1;
                }
            }
        }
        k += run;
    }
    (cigar, qa, ta, c)
}

/// Re-scores an aligned pair of strings: substitutions minus open + k * extend per gap.
fn rescore(qa: &str, ta: &str, sc: &Scoring, alphabet: Alphabet) -> i32 {
    let (qa, ta) = (qa.as_bytes(), ta.as_bytes());
    let mut score = 0;
    let mut k = 0;
    while k < qa.len() {
        if qa[k] == b'-' || ta[k] == b'-' {
            let in_query = qa[k] == b'-';
            let run =
                (k..qa.len()).take_while(|&x| (qa[x] == b'-') == in_query && (qa[x] == b'-' || ta[x] == b'-')).count();
            score -= sc.gap_open + run as i32 * sc.gap_extend;
            k += run;
        } else {
            let code = |c: u8| alphabet.encode(&[c]).unwrap()[0];
            score += sc.score(code(qa[k]), code(ta[k]));
            k += 1;
        }
    }
    score
}

/// Related pairs: a target and a mutated copy of a window of it, over `letters`.
fn related_pairs(letters: &[u8], n: usize, seed: u64) -> Vec<(String, String)> {
    let mut x = seed;
    let mut rnd = |k: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % k
    };
    (0..n)
        .map(|_| {
            let len = 20 + rnd(300) as usize;
            let t: Vec<u8> = (0..len).map(|_| letters[rnd(letters.len() as u64) as usize]).collect();
            let mut q = Vec::new();
            for &c in &t[rnd(10) as usize..] {
                match rnd(14) {
                    0 => {}
                    1 => q.extend([c, letters[rnd(letters.len() as u64) as usize]]),
                    2 => q.push(letters[rnd(letters.len() as u64) as usize]),
                    _ => q.push(c),
                }
            }
            if q.is_empty() {
                q.push(t[0]);
            }
            (String::from_utf8(q).unwrap(), String::from_utf8(t).unwrap())
        })
        .collect()
}

const COLUMNS: &str = "query,target,score,qstart,qend,tstart,tend,qlen,tlen,pident,nident,length,mismatch,gapopen,gaps,qcov,tcov,cigar,qaln,taln";

fn check_align(pairs: &[(String, String)], sc: &Scoring, alphabet: Alphabet, extra: &[&str]) {
    let mut tsv = String::new();
    for (k, (q, t)) in pairs.iter().enumerate() {
        tsv += &format!("q{k}\t{q}\tt{k}\t{t}\n");
    }
    let mut args = vec!["align", "--pairs", "-", "--format", "tsv", "--device", "cpu", "--quiet", "--columns", COLUMNS];
    args.extend(extra);
    let o = run_stdin(&args, tsv.as_bytes());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), COLUMNS.replace(',', "\t"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), pairs.len());
    let mut gapped = 0;
    for (k, (row, (q, t))) in rows.iter().zip(pairs).enumerate() {
        let (qc, tc) = (alphabet.encode(q.as_bytes()).unwrap(), alphabet.encode(t.as_bytes()).unwrap());
        let a = align_pair(&qc, &tc, sc).unwrap();
        let (cigar, qa, ta, c) = naive(&qc, &tc, sc, &a, alphabet);
        let int = |i: usize| row[i].parse::<i64>().unwrap();
        assert_eq!(row[0], format!("q{k}"));
        assert_eq!(
            [int(2), int(3), int(4), int(5), int(6)],
            [a.score as i64, a.qstart as i64, a.qend as i64, a.tstart as i64, a.tend as i64]
        );
        assert_eq!((row[17], row[18], row[19]), (cigar.as_str(), qa.as_str(), ta.as_str()), "pair {k}");
        let length = (c[0] + c[1] + c[3]) as i64;
        assert_eq!(
            [int(10), int(11), int(12), int(13), int(14)],
            [c[0] as i64, length, c[1] as i64, c[2] as i64, c[3] as i64]
        );
        let pident = if length > 0 { 100.0 * c[0] as f64 / length as f64 } else { 0.0 };
        assert_eq!(row[9], format!("{pident:.3}"));
        let qcov = if a.score > 0 { (a.qend - a.qstart + 1) as f64 / q.len() as f64 } else { 0.0 };
        assert_eq!(row[15], format!("{qcov:.3}"));
        if a.score > 0 {
            assert_eq!(rescore(row[18], row[19], sc, alphabet), a.score, "pair {k}: the aligned strings re-score");
        }
        gapped += (c[2] > 0) as usize;
    }
    assert!(gapped >= pairs.len() / 4, "the set must exercise gaps ({gapped} gapped)");
}

#[test]
fn protein_traceback_columns_equal_a_naive_traceback() {
    let pairs = related_pairs(b"ARNDCQEGHILKMFPSTWYVBZX", 150, 7);
    check_align(&pairs, &Scoring::blosum62(), Alphabet::Protein, &[]);
    let sc = Scoring::new(Matrix::protein("BLOSUM62").unwrap(), 6, 1).unwrap();
    check_align(&pairs, &sc, Alphabet::Protein, &["--gap-open", "6", "--gap-extend", "1"]);
}

#[test]
fn dna_traceback_columns_equal_a_naive_traceback_free_gap_open_included() {
    let pairs = related_pairs(b"ACGT", 150, 11);
    let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
    check_align(&pairs, &sc, Alphabet::Dna, &["--dna"]);
    let sc = Scoring::new(Matrix::dna(2, -3), 0, 2).unwrap();
    check_align(&pairs, &sc, Alphabet::Dna, &["--dna", "--gap-open", "0", "--gap-extend", "2"]);
}

#[test]
fn search_blast_tabular_agrees_with_traceback_columns() {
    // `--format blast` is outfmt 6; the same search with named columns gives the same
    // numbers (one traceback, two spellings).
    let base =
        ["search", "-q", &ex("queries.fasta"), "-d", &ex("db.fasta.gz"), "--device", "cpu", "--quiet", "-k", "5"];
    let blast = run(&[&base[..], &["--format", "blast"]].concat());
    assert!(blast.status.success(), "{}", String::from_utf8_lossy(&blast.stderr));
    let named = run(&[
        &base[..],
        &[
            "--format",
            "tsv",
            "--columns",
            "qseqid,sseqid,pident,alnlen,mismatch,gapopen,qstart,qend,sstart,send,evalue,bitscore",
        ],
    ]
    .concat());
    assert!(named.status.success());
    let blast = String::from_utf8(blast.stdout).unwrap();
    let named = String::from_utf8(named.stdout).unwrap();
    let mut named_rows = named.lines();
    assert_eq!(
        named_rows.next().unwrap(),
        "query\ttarget\tpident\tlength\tmismatch\tgapopen\tqstart\tqend\ttstart\ttend\tevalue\tbits"
    );
    assert!(!blast.is_empty());
    for (b, n) in blast.lines().zip(named_rows) {
        let (b, n): (Vec<&str>, Vec<&str>) = (b.split('\t').collect(), n.split('\t').collect());
        assert_eq!(b.len(), 12);
        assert_eq!(b[..11], n[..11], "all but the bit score's formatting");
        let (bb, nb): (f64, f64) = (b[11].parse().unwrap(), n[11].parse().unwrap());
        assert!((bb - nb).abs() <= 1.0, "{bb} {nb}: BLAST truncates bit scores above 99.9");
    }
}

//! Global and semi-global alignment (issue 42): the scalar reference against parasail
//! (Debian's `python3-parasail`, an independent implementation) and against a naive walk of
//! full matrices written here.
//!
//! parasail's gap open includes the first gap position: our open 11 / extend 1 is its 12 / 1.
//! In parasail s1 is the query and s2 the database (target) sequence; `qb`/`qe` free the
//! query's begin/end (its residues may stay unaligned), `db`/`de` the target's, `x` both.
//! The mapping was checked on hand-computed tiny cases before it was trusted (the unit tests
//! of `engine::scalar_modes` hold those cases, and parasail gives the same scores).
//!
//! On the same pairs as the scores: the ends that are not free sit at the sequences' ends,
//! and the aligned strings of the traceback, re-scored here by naive code, give the score.
//!
//! Pairs per scoring scheme: `SWARROW_PARASAIL_PAIRS` (default 2,500, under two minutes on two
//! cores; issue 42's full check is `SWARROW_PARASAIL_PAIRS=100000`: 53 minutes of one core of
//! the 2-vCPU machine with `--release`, 2026-11-27). Each pair is aligned in
//! all ten parasail modes. Without parasail the test fails in CI (env `CI` set) and is skipped
//! loudly elsewhere.

use rayon::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use swarrow::engine::mode::{AlignMode, FreeEnds};
use swarrow::engine::scalar_modes::align_pair_mode;
use swarrow::engine::traceback::trace_mode;
use swarrow::engine::Alignment;
use swarrow::scoring::{Alphabet, Matrix, Scoring};

const PYTHON: &str = "/usr/bin/python3";
const DEFAULT_PAIRS: usize = 2_500;

fn parasail_available() -> bool {
    Command::new(PYTHON).args(["-c", "import parasail"]).output().map(|o| o.status.success()).unwrap_or(false)
}

fn prerequisites() -> bool {
    if parasail_available() {
        return true;
    }
    let msg = "modes_parasail needs /usr/bin/python3 with parasail (apt-get install python3-parasail)";
    if std::env::var_os("CI").is_some() {
        panic!("{}", msg);
    }
    eprintln!("\n*** SKIPPED: {} ***\n", msg);
    false
}

/// parasail's function family for each free-end set it has, by (query start, query end,
/// target start, target end); `nw` is global.
const PARASAIL: [(&str, [bool; 4]); 10] = [
    ("nw", [false, false, false, false]),
    ("sg", [true, true, true, true]),
    ("sg_qb", [true, false, false, false]),
    ("sg_qe", [false, true, false, false]),
    ("sg_qx", [true, true, false, false]),
    ("sg_db", [false, false, true, false]),
    ("sg_de", [false, false, false, true]),
    ("sg_dx", [false, false, true, true]),
    ("sg_qb_de", [true, false, false, true]),
    ("sg_qe_db", [false, true, true, false]),
];

fn mode_of(flags: [bool; 4]) -> AlignMode {
    if flags.iter().any(|&f| f) {
        AlignMode::SemiGlobal(FreeEnds::from_flags(flags))
    } else {
        AlignMode::Global
    }
}

/// xorshift64*: the pairs are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A length in 1..=max, log-uniform: short and long pairs alike.
    fn length(&mut self, max: usize) -> usize {
        ((self.unit() * ((max + 1) as f64).ln()).exp() as usize).clamp(1, max)
    }
}

/// The residues pairs are drawn from (codes of the scheme's alphabet) and the scheme.
struct Scheme {
    name: &'static str,
    alphabet: Alphabet,
    codes: Vec<u8>,
    /// parasail's matrix argument of `scripts/parasail_modes.py`.
    parasail_matrix: &'static str,
    sc: Scoring,
}

fn schemes() -> Vec<Scheme> {
    // 20 amino acids, with B, Z and X now and then.
    let mut protein: Vec<u8> = Alphabet::Protein.encode(b"ARNDCQEGHILKMFPSTWYV").unwrap().repeat(30);
    protein.extend(Alphabet::Protein.encode(b"BZX").unwrap());
    vec![
        Scheme {
            name: "protein BLOSUM62 11/1",
            alphabet: Alphabet::Protein,
            codes: protein,
            parasail_matrix: "blosum62",
            sc: Scoring::blosum62(),
        },
        Scheme {
            name: "DNA +2/-3 5/2",
            alphabet: Alphabet::Dna,
            codes: Alphabet::Dna.encode(b"ACGT").unwrap(),
            parasail_matrix: "dna:2:-3",
            sc: Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap(),
        },
    ]
}

fn random_seq(rng: &mut Rng, codes: &[u8], len: usize) -> Vec<u8> {
    (0..len).map(|_| codes[rng.below(codes.len())]).collect()
}

/// A copy of `s` with substitutions and short indels at rates drawn per pair.
fn mutate(rng: &mut Rng, codes: &[u8], s: &[u8]) -> Vec<u8> {
    let (sub, indel) = (rng.unit() * 0.3, rng.unit() * 0.08);
    let mut out = Vec::with_capacity(s.len() + 8);
    for &c in s {
        let x = rng.unit();
        if x < indel / 2.0 {
            continue; // deletion
        } else if x < indel {
            for _ in 0..1 + rng.below(4) {
                out.push(codes[rng.below(codes.len())]);
            }
            out.push(c);
        } else if x < indel + sub {
            out.push(codes[rng.below(codes.len())]);
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push(codes[rng.below(codes.len())]);
    }
    out
}

/// Seeded pairs of lengths 1..=max: unrelated, mutated copies, overlaps (dovetails either
/// way), containments (either way) and tandem repeats (many equal paths: ties).
fn pairs(seed: u64, n: usize, codes: &[u8], max: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = Rng(seed | 1);
    let cut = |v: Vec<u8>| -> Vec<u8> { v.into_iter().take(max).collect() };
    (0..n)
        .map(|k| {
            let (q, t) = match k % 6 {
                0 => {
                    let (a, b) = (rng.length(max), rng.length(max));
                    (random_seq(&mut rng, codes, a), random_seq(&mut rng, codes, b))
                }
                1 => {
                    let t = {
                        let len = rng.length(max);
                        random_seq(&mut rng, codes, len)
                    };
                    (mutate(&mut rng, codes, &t), t)
                }
                2 => {
                    // Dovetail: the query's end overlaps the target's start, or the other way.
                    let core = {
                        let len = rng.length(max);
                        random_seq(&mut rng, codes, len)
                    };
                    let (a, b) = (rng.length(max / 2), rng.length(max / 2));
                    let mut q = random_seq(&mut rng, codes, a);
                    q.extend(&core);
                    let mut t = mutate(&mut rng, codes, &core);
                    t.extend(random_seq(&mut rng, codes, b));
                    if rng.below(2) == 0 {
                        (q, t)
                    } else {
                        (t, q)
                    }
                }
                3 | 4 => {
                    // Containment: a mutated window of one inside the other.
                    let outer = {
                        let len = rng.length(max);
                        random_seq(&mut rng, codes, len)
                    };
                    let len = 1 + rng.below(outer.len());
                    let at = rng.below(outer.len() - len + 1);
                    let inner = mutate(&mut rng, codes, &outer[at..at + len]);
                    if k % 6 == 3 {
                        (inner, outer)
                    } else {
                        (outer, inner)
                    }
                }
                _ => {
                    let unit = {
                        let len = 1 + rng.below(4);
                        random_seq(&mut rng, codes, len)
                    };
                    let (a, b) = (rng.length(max), rng.length(max));
                    let q: Vec<u8> = unit.iter().cycle().take(a).copied().collect();
                    let t: Vec<u8> = unit.iter().cycle().skip(rng.below(4)).take(b).copied().collect();
                    (mutate(&mut rng, codes, &q), t)
                }
            };
            (cut(q), cut(t))
        })
        .collect()
}

/// parasail's scores of every pair in the ten modes, in [`PARASAIL`] order, computed by a
/// Python process while the caller works.
fn spawn_parasail(scheme: &Scheme, pairs: Arc<Vec<(Vec<u8>, Vec<u8>)>>) -> std::thread::JoinHandle<Vec<[i64; 10]>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/parasail_modes.py");
    let funcs: Vec<&str> = PARASAIL.iter().map(|p| p.0).collect();
    let mut child = Command::new(PYTHON)
        .args([
            script,
            scheme.parasail_matrix,
            &(scheme.sc.gap_open + scheme.sc.gap_extend).to_string(),
            &scheme.sc.gap_extend.to_string(),
            &funcs.join(","),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut stdin = std::io::BufWriter::new(child.stdin.take().unwrap());
    let alphabet = scheme.alphabet;
    let writer = std::thread::spawn(move || {
        for (q, t) in pairs.iter() {
            stdin.write_all(&alphabet.decode(q)).unwrap();
            stdin.write_all(b" ").unwrap();
            stdin.write_all(&alphabet.decode(t)).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
    });
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let scores: Vec<[i64; 10]> = BufReader::new(stdout)
            .lines()
            .map(|l| {
                let l = l.expect("parasail output");
                let v: Vec<i64> = l.split(' ').map(|x| x.parse().expect("a score")).collect();
                v.try_into().expect("ten scores a line")
            })
            .collect();
        writer.join().unwrap();
        assert!(child.wait().unwrap().success(), "parasail script failed");
        scores
    })
}

/// The aligned strings re-scored by naive code: pairs by the matrix, each maximal run of
/// '-' in one row a gap of open + k * extend. Also checks that the strings without gaps are
/// the aligned ranges.
fn rescore(q: &[u8], t: &[u8], a: &Alignment, sc: &Scoring, alphabet: Alphabet, qaln: &[u8], taln: &[u8]) -> i64 {
    assert_eq!(qaln.len(), taln.len());
    let range = |s: &[u8], start: u32, end: u32| -> Vec<u8> {
        if start == 0 {
            Vec::new()
        } else {
            alphabet.decode(&s[start as usize - 1..end as usize])
        }
    };
    let strip = |s: &[u8]| -> Vec<u8> { s.iter().copied().filter(|&c| c != b'-').collect() };
    assert_eq!(strip(qaln), range(q, a.qstart, a.qend), "query row is the aligned query range");
    assert_eq!(strip(taln), range(t, a.tstart, a.tend), "target row is the aligned target range");
    let enc = |c: u8| alphabet.encode(&[c]).unwrap()[0];
    let mut score = 0i64;
    for k in 0..qaln.len() {
        let (x, y) = (qaln[k], taln[k]);
        assert!(!(x == b'-' && y == b'-'), "a column of two gaps");
        if x == b'-' {
            score -= sc.gap_extend as i64;
            if k == 0 || qaln[k - 1] != b'-' {
                score -= sc.gap_open as i64;
            }
        } else if y == b'-' {
            score -= sc.gap_extend as i64;
            if k == 0 || taln[k - 1] != b'-' {
                score -= sc.gap_open as i64;
            }
        } else {
            score += sc.matrix.score(enc(x), enc(y)) as i64;
        }
    }
    score
}

/// Everything checked of one pair in one mode except parasail's score; returns the score.
fn check_pair(q: &[u8], t: &[u8], scheme: &Scheme, mode: AlignMode) -> Result<i64, String> {
    let sc = &scheme.sc;
    let a = align_pair_mode(q, t, sc, mode).map_err(|e| e.to_string())?;
    let ends = mode.free_ends();
    let (m, n) = (q.len() as u32, t.len() as u32);
    // Ends that are not free sit at the sequences' ends. A sequence may hold no residue of
    // the alignment (start and end 0) only when all of it is in its free start (the walk
    // stops on a border row or column at or past the end cell's); never both sequences.
    let side_bad = |start: u32, end: u32, len: u32, start_free: bool, end_free: bool| {
        if start == 0 {
            end != 0 || !start_free
        } else {
            (!start_free && start != 1) || (!end_free && end != len) || start > end || end > len
        }
    };
    let bad = side_bad(a.qstart, a.qend, m, ends.query_start, ends.query_end)
        || side_bad(a.tstart, a.tend, n, ends.target_start, ends.target_end)
        || (a.qstart == 0 && a.tstart == 0);
    if bad {
        return Err(format!("{mode}: coordinates {a:?} for lengths {m}, {n}"));
    }
    let tb = trace_mode(q, t, sc, &a, mode).map_err(|e| e.to_string())?;
    let (mut qa, mut ta) = (Vec::new(), Vec::new());
    tb.write_aligned(q, t, &a, |c| scheme.alphabet.letter(c), &mut qa, &mut ta);
    let rescored = rescore(q, t, &a, sc, scheme.alphabet, &qa, &ta);
    if rescored != a.score as i64 {
        return Err(format!("{mode}: {a:?} cigar {} re-scores to {rescored}", tb.cigar()));
    }
    let cols = qa.len() as u32;
    // Identical letters; a DNA ambiguity code (shown N) mismatches everything, itself too.
    let dna_n = |x: &u8| scheme.alphabet == Alphabet::Dna && *x == b'N';
    let ident = qa.iter().zip(&ta).filter(|(x, y)| x == y && !dna_n(x)).count() as u32;
    if tb.stats.length != cols || tb.stats.nident != ident {
        return Err(format!("{mode}: {a:?} statistics {:?} against {cols} columns, {ident} identical", tb.stats));
    }
    Ok(a.score as i64)
}

fn pairs_per_scheme() -> usize {
    std::env::var("SWARROW_PARASAIL_PAIRS")
        .ok()
        .map(|v| v.parse().expect("SWARROW_PARASAIL_PAIRS: a number"))
        .unwrap_or(DEFAULT_PAIRS)
}

#[test]
fn scores_coordinates_and_paths_match_parasail_in_every_mode() {
    if !prerequisites() {
        return;
    }
    let n = pairs_per_scheme();
    for (k, scheme) in schemes().iter().enumerate() {
        let started = std::time::Instant::now();
        let pairs = Arc::new(pairs(0x42 + k as u64, n, &scheme.codes, 2000));
        let theirs = spawn_parasail(scheme, pairs.clone());
        let ours: Vec<Result<[i64; 10], String>> = pairs
            .par_iter()
            .map(|(q, t)| {
                let mut s = [0i64; 10];
                for (x, (_, flags)) in PARASAIL.iter().enumerate() {
                    s[x] = check_pair(q, t, scheme, mode_of(*flags))?;
                }
                Ok(s)
            })
            .collect();
        let theirs = theirs.join().expect("parasail");
        assert_eq!(theirs.len(), pairs.len(), "parasail answered every pair");
        let mut failures = Vec::new();
        for (i, (o, p)) in ours.iter().zip(&theirs).enumerate() {
            match o {
                Err(e) => failures.push(format!("pair {i}: {e}")),
                Ok(o) => {
                    for x in 0..10 {
                        if o[x] != p[x] {
                            failures.push(format!(
                                "pair {i} (lengths {}, {}): {} ours {} parasail {}",
                                pairs[i].0.len(),
                                pairs[i].1.len(),
                                PARASAIL[x].0,
                                o[x],
                                p[x]
                            ));
                        }
                    }
                }
            }
        }
        let cells: f64 = pairs.iter().map(|(q, t)| q.len() as f64 * t.len() as f64).sum();
        eprintln!(
            "modes_parasail: {}: {} pairs x 10 modes (lengths 1..=2000, {:.2e} cells a mode) in {:.1} s: {} failures",
            scheme.name,
            pairs.len(),
            cells,
            started.elapsed().as_secs_f64(),
            failures.len()
        );
        assert!(
            failures.is_empty(),
            "{}: {} failures, first: {:#?}",
            scheme.name,
            failures.len(),
            &failures[..failures.len().min(10)]
        );
    }
}

/// Full H, E ('D') and F ('I') matrices of `q` against `t`, borders free (0) or gaps.
struct Dp {
    h: Vec<Vec<i64>>,
    ee: Vec<Vec<i64>>,
    ff: Vec<Vec<i64>>,
}

fn dp(q: &[u8], t: &[u8], sc: &Scoring, left_free: bool, top_free: bool) -> Dp {
    const NEG: i64 = i64::MIN / 4;
    let (m, n) = (q.len(), t.len());
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    let mut h = vec![vec![NEG; n + 1]; m + 1];
    let mut ee = h.clone();
    let mut ff = h.clone();
    h[0][0] = 0;
    for j in 1..=n {
        h[0][j] = if top_free { 0 } else { -(o + j as i64 * e) };
        ee[0][j] = h[0][j];
    }
    for i in 1..=m {
        h[i][0] = if left_free { 0 } else { -(o + i as i64 * e) };
        ff[i][0] = h[i][0];
    }
    for i in 1..=m {
        for j in 1..=n {
            ee[i][j] = (h[i][j - 1] - o - e).max(ee[i][j - 1] - e);
            ff[i][j] = (h[i - 1][j] - o - e).max(ff[i - 1][j] - e);
            h[i][j] = (h[i - 1][j - 1] + sc.score(q[i - 1], t[j - 1]) as i64).max(ee[i][j]).max(ff[i][j]);
        }
    }
    Dp { h, ee, ff }
}

/// The path rule's walk back from the corner of a rectangle aligned end to end (gap
/// borders) to (0, 0), as letters.
fn walk(d: &Dp, q: &[u8], t: &[u8], sc: &Scoring) -> String {
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    let (Dp { h, ee, ff }, mut i, mut j, mut st) = (d, q.len(), t.len(), 'H');
    let mut ops = Vec::new();
    while i > 0 || j > 0 {
        if i == 0 {
            ops.push('D');
            j -= 1;
            continue;
        }
        if j == 0 {
            ops.push('I');
            i -= 1;
            continue;
        }
        match st {
            'H' if h[i][j] == h[i - 1][j - 1] + sc.score(q[i - 1], t[j - 1]) as i64 => {
                ops.push(if q[i - 1] == t[j - 1] { '=' } else { 'X' });
                i -= 1;
                j -= 1;
            }
            'H' => st = if h[i][j] == ee[i][j] { 'E' } else { 'F' },
            'E' => {
                ops.push('D');
                if ee[i][j] == h[i][j - 1] - o - e {
                    st = 'H';
                }
                j -= 1;
            }
            _ => {
                ops.push('I');
                if ff[i][j] == h[i - 1][j] - o - e {
                    st = 'H';
                }
                i -= 1;
            }
        }
    }
    ops.reverse();
    ops.into_iter().collect()
}

/// The naive oracle of every free-end set (the six parasail lacks too), straight from the
/// mode's definition (`engine::mode`): full matrices, the end by its tie rule; the start by
/// brute force over every free start corner, each rectangle to the end aligned end to end
/// on its own (the best; ties to the largest target start, then the largest query start);
/// the path by the path rule's walk in that rectangle. Returns (score, qstart, qend, tstart,
/// tend, operations as letters).
fn naive(q: &[u8], t: &[u8], sc: &Scoring, f: [bool; 4]) -> (i64, [u32; 4], String) {
    let (m, n) = (q.len(), t.len());
    let h = dp(q, t, sc, f[0], f[2]).h;
    // End: candidates sorted by (target end, query end); the first best wins.
    let mut cands = vec![(m, n)];
    if f[1] {
        cands.extend((1..=m).map(|i| (i, n)));
    }
    if f[3] {
        cands.extend((1..=n).map(|j| (m, j)));
    }
    cands.sort_by_key(|&(i, j)| (j, i));
    let best = cands.iter().map(|&(i, j)| h[i][j]).max().unwrap();
    let (ie, je) = *cands.iter().find(|&&(i, j)| h[i][j] == best).unwrap();
    // Start corners: (0, 0), (i, 0) with a free query start, (0, j) with a free target start.
    let mut corners = vec![(0, 0)];
    if f[0] {
        corners.extend((1..=ie).map(|i| (i, 0)));
    }
    if f[2] {
        corners.extend((1..=je).map(|j| (0, j)));
    }
    let scored: Vec<(i64, usize, usize, Dp)> = corners
        .into_iter()
        .map(|(i0, j0)| {
            let d = dp(&q[i0..ie], &t[j0..je], sc, false, false);
            (d.h[ie - i0][je - j0], i0, j0, d)
        })
        .collect();
    let (v, i0, j0, d) = scored.iter().max_by_key(|(v, i0, j0, _)| (*v, *j0, *i0)).unwrap();
    assert_eq!(*v, best, "the best start corner scores the end's score");
    let ops = walk(d, &q[*i0..ie], &t[*j0..je], sc);
    let side = |stop: usize, end: usize| if stop >= end { (0, 0) } else { (stop as u32 + 1, end as u32) };
    let ((qs, qe), (ts, te)) = (side(*i0, ie), side(*j0, je));
    (best, [qs, qe, ts, te], ops)
}

/// A CIGAR expanded to one letter an operation.
fn expand(cigar: &str) -> String {
    let mut out = String::new();
    let mut num = 0usize;
    for c in cigar.chars() {
        if let Some(d) = c.to_digit(10) {
            num = num * 10 + d as usize;
        } else {
            out.extend(std::iter::repeat_n(c, num));
            num = 0;
        }
    }
    out
}

#[test]
fn every_free_end_set_matches_the_naive_definition() {
    let sc_dna0 = Scoring::new(Matrix::dna(1, -9), 0, 1).unwrap();
    for scheme in schemes() {
        for (k, sc) in [&scheme.sc, &sc_dna0].into_iter().enumerate() {
            if k == 1 && scheme.alphabet != Alphabet::Dna {
                continue;
            }
            let pairs = pairs(7 + k as u64, 600, &scheme.codes, 40);
            for flags in 0..16u8 {
                let f = [flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0];
                let mode = mode_of(f);
                for (q, t) in &pairs {
                    let (score, coords, ops) = naive(q, t, sc, f);
                    let a = align_pair_mode(q, t, sc, mode).unwrap();
                    let tb = trace_mode(q, t, sc, &a, mode).unwrap();
                    assert_eq!(
                        (a.score as i64, [a.qstart, a.qend, a.tstart, a.tend], expand(&tb.cigar())),
                        (score, coords, ops),
                        "{} {mode}: q {:?} t {:?}",
                        scheme.name,
                        scheme.alphabet.decode(q),
                        scheme.alphabet.decode(t)
                    );
                }
            }
        }
    }
}

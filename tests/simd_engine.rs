//! The SIMD engine against the scalar reference, on every instruction set this CPU runs:
//! random inputs (proptest), real proteins, and scores that saturate 8 and 16 bits.

use proptest::prelude::*;
use std::io::Read;
use swarrow::database::Database;
use swarrow::engine::scalar::ScalarEngine;
use swarrow::engine::simd::{Isa, SimdEngine};
use swarrow::engine::{Alignment, Engine, Hit, Level};
use swarrow::progress::Work;
use swarrow::scoring::{Alphabet, Matrix, Scoring};
use swarrow::seq::Record;

fn isas() -> Vec<Isa> {
    Isa::ALL.into_iter().filter(|i| i.supported()).collect()
}

fn database(seqs: &[Vec<u8>]) -> Database {
    let recs = seqs
        .iter()
        .enumerate()
        .map(|(i, s)| Record { id: format!("t{}", i), seq: s.clone(), header: String::new() })
        .collect();
    Database::from_records("test", recs)
}

/// Hits as (target, score).
fn scores(hits: Vec<Vec<Hit>>) -> Vec<Vec<(u32, i32)>> {
    hits.into_iter().map(|l| l.into_iter().map(|h| (h.target, h.score)).collect()).collect()
}

fn check_search(sc: &Scoring, queries: &[Vec<u8>], targets: &[Vec<u8>], top: usize) {
    let db = database(targets);
    let qs: Vec<&[u8]> = queries.iter().map(|q| q.as_slice()).collect();
    let want = scores(ScalarEngine::new(sc.clone(), 2).unwrap().search(&qs, &db, top, &Work::new()).unwrap());
    for isa in isas() {
        let got = SimdEngine::with_isa(sc.clone(), 2, isa).unwrap().search(&qs, &db, top, &Work::new()).unwrap();
        assert_eq!(scores(got), want, "search on {}", isa.name());
    }
}

fn check_align(sc: &Scoring, pairs: &[(Vec<u8>, Vec<u8>)]) {
    let ps: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (q.as_slice(), t.as_slice())).collect();
    let want = ScalarEngine::new(sc.clone(), 2).unwrap().align_slices(&ps, Level::Coordinates).unwrap();
    for isa in isas() {
        let got = SimdEngine::with_isa(sc.clone(), 2, isa).unwrap().align_slices(&ps, Level::Coordinates).unwrap();
        // `recomputed` is one rule on every engine: the score exceeds the 16-bit range.
        for a in &got {
            assert_eq!(a.recomputed, a.score > 32767, "score {} on {}", a.score, isa.name());
        }
        assert_eq!(got, want, "align on {}", isa.name());
        // The levels: score and end alone are the reference's without starts, and the start
        // pass from those ends gives the reference's whole alignments.
        let e = SimdEngine::with_isa(sc.clone(), 2, isa).unwrap();
        let ends = e.align_slices(&ps, Level::ScoreEnd).unwrap();
        let want_ends: Vec<Alignment> = want.iter().map(|a| Alignment { qstart: 0, tstart: 0, ..*a }).collect();
        assert_eq!(ends, want_ends, "score and end on {}", isa.name());
        let seqs = swarrow::seq::SeqPairs::from_slices(&ps);
        assert_eq!(e.starts(seqs.view(), &ends).unwrap(), want, "starts from ends on {}", isa.name());
    }
    let scalar = ScalarEngine::new(sc.clone(), 2).unwrap();
    let ends = scalar.align_slices(&ps, Level::ScoreEnd).unwrap();
    let seqs = swarrow::seq::SeqPairs::from_slices(&ps);
    assert_eq!(scalar.starts(seqs.view(), &ends).unwrap(), want, "scalar starts from ends");
}

/// A sequence of `len` codes below `size`, or a mutated copy of `base` when given.
fn seq(size: u8, max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0..size, 0..max_len)
}

fn mutate(base: &[u8], edits: &[(u8, u8)], size: u8) -> Vec<u8> {
    let mut out = base.to_vec();
    for &(pos, what) in edits {
        if out.is_empty() {
            break;
        }
        let p = pos as usize % out.len();
        match what % 4 {
            0 => out[p] = what % size,
            1 => {
                out.remove(p);
            }
            2 => out.insert(p, what % size),
            _ => {}
        }
    }
    out
}

fn scorings() -> Vec<Scoring> {
    vec![
        Scoring::blosum62(),
        Scoring::new(Matrix::protein("PAM30").unwrap(), 9, 1).unwrap(),
        Scoring::new(Matrix::protein("BLOSUM45").unwrap(), 0, 3).unwrap(),
        Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap(),
        Scoring::new(Matrix::dna(1, -1), 300, 1).unwrap(),
    ]
}

/// `scorings()` and every protein matrix at gap open 11, extend 1.
fn scorings_and_every_matrix() -> Vec<Scoring> {
    let mut schemes = scorings();
    for name in swarrow::scoring::matrix::protein_matrix_names() {
        schemes.push(Scoring::new(Matrix::protein(name).unwrap(), 11, 1).unwrap());
    }
    schemes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn search_matches_scalar(
        which in 0usize..5,
        query in seq(24, 120),
        targets in prop::collection::vec(seq(24, 150), 0..140),
        related in prop::collection::vec((any::<u8>(), any::<u8>()), 0..20),
        top in 1usize..200,
    ) {
        let sc = &scorings()[which];
        let size = sc.matrix.size() as u8;
        let query: Vec<u8> = query.iter().map(|c| c % size).collect();
        let mut targets: Vec<Vec<u8>> = targets.iter().map(|t| t.iter().map(|c| c % size).collect()).collect();
        // Some targets homologous to the query, so scores are high as well as low.
        targets.push(mutate(&query, &related, size));
        let queries = vec![query.clone(), mutate(&query, &related[..related.len() / 2], size)];
        check_search(sc, &queries, &targets, top);
    }

    #[test]
    fn align_matches_scalar(
        which in 0usize..5,
        pairs in prop::collection::vec((seq(24, 300), seq(24, 300), prop::collection::vec((any::<u8>(), any::<u8>()), 0..30), any::<bool>()), 1..30),
    ) {
        let sc = &scorings()[which];
        let size = sc.matrix.size() as u8;
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = pairs
            .into_iter()
            .map(|(q, t, edits, related)| {
                let q: Vec<u8> = q.iter().map(|c| c % size).collect();
                let t = if related { mutate(&q, &edits, size) } else { t.iter().map(|c| c % size).collect() };
                (q, t)
            })
            .collect();
        check_align(sc, &pairs);
    }
}

#[test]
fn scores_beyond_8_and_16_bits_are_exact() {
    let sc = Scoring::blosum62();
    let w = Alphabet::Protein.encode(b"W").unwrap()[0];
    let a = Alphabet::Protein.encode(b"A").unwrap()[0];
    // 300 Ws score 3300 (beyond 8 bits); 6000 Ws score 66000 (beyond 16 bits).
    let mid = vec![w; 300];
    let huge = vec![w; 6000];
    let mut mixed = vec![a; 100];
    mixed.extend_from_slice(&mid);
    let targets = vec![mid.clone(), huge.clone(), mixed.clone(), vec![a; 50]];
    check_search(&sc, &[huge.clone(), mid.clone()], &targets, 10);
    check_align(&sc, &[(huge.clone(), huge.clone()), (mid.clone(), mixed.clone()), (mixed, huge.clone())]);
    // The 32-bit recomputation is flagged.
    let db = database(&targets);
    for isa in isas() {
        let e = SimdEngine::with_isa(sc.clone(), 1, isa).unwrap();
        let hits = e.search(&[&huge], &db, 10, &Work::new()).unwrap();
        assert_eq!((hits[0][0].score, hits[0][0].recomputed), (66000, true), "{}", isa.name());
        assert!(!hits[0][1].recomputed);
        let al = e.align_slices(&[(&huge, &huge)], Level::Coordinates).unwrap();
        assert_eq!((al[0].score, al[0].recomputed), (66000, true));
    }
}

/// Codes of `sc`'s alphabet that score positively against themselves (only the best one
/// when `top_only`), cycled to `len`.
fn positive_run(sc: &Scoring, len: usize, top_only: bool) -> Vec<u8> {
    let size = sc.matrix.size() as u8;
    let top = (0..size).map(|c| sc.score(c, c)).max().unwrap_or(0);
    let good: Vec<u8> = (0..size).filter(|&c| sc.score(c, c) > 0 && (!top_only || sc.score(c, c) == top)).collect();
    good.iter().copied().cycle().take(len).collect()
}

/// Lengths of `positive_run` whose self-score lies in `lo..=hi`.
fn lengths_scoring_within(sc: &Scoring, lo: i64, hi: i64, top_only: bool) -> Vec<usize> {
    let run = positive_run(sc, (hi.max(0) as usize + 64) * 2, top_only);
    let mut total = 0i64;
    let mut out = Vec::new();
    for (i, &c) in run.iter().enumerate() {
        total += sc.score(c, c) as i64;
        if (lo..=hi).contains(&total) {
            out.push(i + 1);
        }
        if total > hi {
            break;
        }
    }
    out
}

/// Scores around which a lane of `max` may stop holding a pass exactly, wherever an
/// engine puts its zero: from `max` less the top score, the gap costs and the least score
/// (the most headroom a lane layout keeps) to `max` less the least score alone.
fn lane_limit_window(sc: &Scoring, max: i64) -> (i64, i64) {
    let bias = -sc.matrix.min_score().min(0) as i64;
    let top = sc.matrix.max_score().max(0) as i64;
    let headroom = (sc.gap_first() as i64 + sc.gap_extend as i64).max(bias);
    (max - top - headroom - 12, max - bias + 12)
}

/// Pairs whose scores cross the limits of 8- and 16-bit lanes (255 and 65535 less the
/// headroom a layout keeps): the 8-bit pass must widen or finish exactly at every score
/// around its limit.
#[test]
fn scores_around_lane_limits_are_exact() {
    let schemes = scorings_and_every_matrix();
    for sc in &schemes {
        let size = sc.matrix.size() as u8;
        let flank: Vec<u8> = (0..57u32).map(|i| ((i * 7 + 3) % size as u32) as u8).collect();
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let (lo, hi) = lane_limit_window(sc, 255);
        for len in lengths_scoring_within(sc, lo, hi, false) {
            let core = positive_run(sc, len, false);
            let mut far = flank.repeat(3);
            far.extend_from_slice(&core);
            far.extend_from_slice(&flank);
            let mut gapped = core.clone();
            gapped.insert(len / 2, core[0]);
            pairs.push((core.clone(), core.clone()));
            pairs.push((core.clone(), far)); // widening mid-target
            pairs.push((gapped, core));
        }
        assert!(pairs.len() >= 6, "{}: no lengths near the 8-bit limit", sc.describe());
        pairs.push((Vec::new(), flank.clone()));
        pairs.push((flank[..1].to_vec(), flank[..1].to_vec()));
        pairs.push((flank[..1].to_vec(), flank.clone()));
        check_align(sc, &pairs);
    }
    // Across the 16-bit limit, for two protein matrices (DNA would need 30,000-base pairs).
    for sc in [Scoring::blosum62(), Scoring::new(Matrix::protein("PAM30").unwrap(), 9, 1).unwrap()] {
        let (lo, hi) = lane_limit_window(&sc, 65535);
        let lens = lengths_scoring_within(&sc, lo, hi, true);
        let pairs: Vec<(Vec<u8>, Vec<u8>)> =
            lens.iter().map(|&len| (positive_run(&sc, len, true), positive_run(&sc, len, true))).collect();
        assert!(pairs.len() >= 2);
        check_align(&sc, &pairs);
    }
}

/// Search lanes whose scores cross the 8-bit lanes' exact range wherever a scheme puts it
/// (it shrinks by the top score and the gap costs' headroom), in numbers that fill several
/// 16-bit batches, mixed in each 8-bit batch with lanes that stay exact; and lanes around
/// the 16-bit range's end, where the scalar reference takes over.
#[test]
fn search_lanes_across_their_range_are_exact() {
    let schemes = scorings_and_every_matrix();
    for sc in &schemes {
        let size = sc.matrix.size() as u8;
        let flank: Vec<u8> = (0..40u32).map(|i| ((i * 7 + 3) % size as u32) as u8).collect();
        let query = positive_run(sc, 400, false);
        let mut targets: Vec<Vec<u8>> = Vec::new();
        for (k, len) in (1..400)
            .filter(|&len| {
                let s: i64 = query[..len].iter().map(|&c| sc.score(c, c) as i64).sum();
                (100..=320).contains(&s)
            })
            .enumerate()
        {
            let mut t = flank[..k % flank.len()].to_vec();
            t.extend_from_slice(&query[..len]);
            targets.push(t);
            targets.push(flank.repeat(1 + k % 5)); // low scores beside them
        }
        assert!(targets.len() >= 40, "{}: few targets", sc.describe());
        let reversed: Vec<u8> = query.iter().rev().copied().collect();
        check_search(sc, &[query.clone(), reversed], &targets, targets.len());
    }
    let sc = Scoring::blosum62();
    let w = Alphabet::Protein.encode(b"W").unwrap()[0];
    let targets: Vec<Vec<u8>> = (5950..5961).map(|len| vec![w; len]).chain([vec![w; 30], vec![w; 3000]]).collect();
    check_search(&sc, &[vec![w; 5960]], &targets, targets.len());
}

/// Many fixed pseudo-random pairs (half of them related) for every scoring scheme: the
/// same inputs every run, beside the proptest's fresh ones. Gap open 0 (BLOSUM45 0/3) lets
/// vertical gaps carry far across the striped lanes.
#[test]
fn fixed_random_pairs_match_scalar() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    for sc in scorings() {
        let size = sc.matrix.size() as u64;
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..400)
            .map(|k| {
                let q: Vec<u8> = (0..1 + next(300)).map(|_| next(size) as u8).collect();
                let t: Vec<u8> = if k % 2 == 0 {
                    (0..1 + next(400)).map(|_| next(size) as u8).collect()
                } else {
                    let edits: Vec<(u8, u8)> = (0..next(40)).map(|_| (next(256) as u8, next(256) as u8)).collect();
                    mutate(&q, &edits, size as u8)
                };
                (q, t)
            })
            .collect();
        check_align(&sc, &pairs);
    }
}

/// Records of a FASTA file, plain or gzipped, encoded as proteins.
fn read_fasta(path: &str, limit: usize) -> Vec<Vec<u8>> {
    let mut raw = Vec::new();
    let file = std::fs::File::open(path).unwrap();
    if path.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(file).read_to_end(&mut raw).unwrap();
    } else {
        std::io::BufReader::new(file).read_to_end(&mut raw).unwrap();
    }
    let mut out: Vec<Vec<u8>> = Vec::new();
    for line in raw.split(|&b| b == b'\n') {
        if line.starts_with(b">") {
            if out.len() == limit {
                break;
            }
            out.push(Vec::new());
        } else if let Some(s) = out.last_mut() {
            let line: Vec<u8> = line.iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
            s.extend(Alphabet::Protein.encode(&line).unwrap());
        }
    }
    out
}

const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/DB.fasta.gz");
const QUERIES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/allqueries.fasta");

#[test]
fn real_proteins_match_scalar() {
    if !std::path::Path::new(DB).exists() {
        eprintln!("skipped: {} not found", DB);
        return;
    }
    let sc = Scoring::blosum62();
    let targets = read_fasta(DB, 400);
    let queries: Vec<Vec<u8>> = read_fasta(QUERIES, 20).into_iter().filter(|q| q.len() < 400).take(3).collect();
    // Real queries as targets too: their own hits saturate 8 bits.
    let mut all = targets.clone();
    all.extend(queries.iter().cloned());
    check_search(&sc, &queries, &all, 50);
    let pairs: Vec<(Vec<u8>, Vec<u8>)> =
        targets.iter().zip(targets.iter().skip(1)).take(150).map(|(a, b)| (a.clone(), b.clone())).collect();
    check_align(&sc, &pairs);
    let self_pairs: Vec<(Vec<u8>, Vec<u8>)> = queries.iter().map(|q| (q.clone(), q.clone())).collect();
    check_align(&sc, &self_pairs);
}

#[test]
fn instruction_set_is_chosen_by_name() {
    assert_eq!(Isa::parse("AVX2"), Some(Isa::Avx2));
    assert_eq!(Isa::parse("neon"), None);
    assert!(Isa::Portable.supported());
    // The only test that touches SWARROW_SIMD.
    std::env::set_var("SWARROW_SIMD", "portable");
    let e = SimdEngine::new(Scoring::blosum62(), 1).unwrap();
    std::env::set_var("SWARROW_SIMD", "mmx");
    let bad = SimdEngine::new(Scoring::blosum62(), 1);
    std::env::remove_var("SWARROW_SIMD");
    assert_eq!(e.isa(), Isa::Portable);
    assert_eq!(bad.err().map(|e| e.exit_code()), Some(2));
}

//! The scalar reference engine against a deliberately naive full-matrix Gotoh written here,
//! and its start cells against an exhaustive search over all start cells.

use proptest::prelude::*;
use swarrow::engine::scalar::{align_pair, ScalarEngine};
use swarrow::engine::Engine;
use swarrow::progress::Work;
use swarrow::scoring::{Matrix, Scoring};

const NEG: i64 = i64::MIN / 4;

/// Full H matrix of local Gotoh, (m+1) x (n+1), no cleverness.
fn naive_local(q: &[u8], t: &[u8], sc: &Scoring) -> Vec<Vec<i64>> {
    let (m, n) = (q.len(), t.len());
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    let mut h = vec![vec![0i64; n + 1]; m + 1];
    let mut ee = vec![vec![NEG; n + 1]; m + 1];
    let mut ff = vec![vec![NEG; n + 1]; m + 1];
    for i in 1..=m {
        for j in 1..=n {
            ee[i][j] = (ee[i][j - 1] - e).max(h[i][j - 1] - o - e);
            ff[i][j] = (ff[i - 1][j] - e).max(h[i - 1][j] - o - e);
            let d = h[i - 1][j - 1] + sc.score(q[i - 1], t[j - 1]) as i64;
            h[i][j] = 0.max(d).max(ee[i][j]).max(ff[i][j]);
        }
    }
    h
}

/// Best global alignment score of q and t (both non-empty) that starts and ends with an
/// aligned pair of residues (so leading/trailing gaps are not allowed).
fn naive_global_anchored(q: &[u8], t: &[u8], sc: &Scoring) -> i64 {
    let (m, n) = (q.len(), t.len());
    let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
    let mut h = vec![vec![NEG; n + 1]; m + 1];
    let mut ee = vec![vec![NEG; n + 1]; m + 1];
    let mut ff = vec![vec![NEG; n + 1]; m + 1];
    h[0][0] = 0;
    for i in 1..=m {
        for j in 1..=n {
            ee[i][j] = (ee[i][j - 1] - e).max(h[i][j - 1] - o - e);
            ff[i][j] = (ff[i - 1][j] - e).max(h[i - 1][j] - o - e);
            h[i][j] = (h[i - 1][j - 1] + sc.score(q[i - 1], t[j - 1]) as i64).max(ee[i][j]).max(ff[i][j]);
        }
    }
    // Must end with the pair (m, n): recompute the last cell from its diagonal only.
    h[m - 1][n - 1] + sc.score(q[m - 1], t[n - 1]) as i64
}

/// (score, qend, tend) by the tie rule: max score, smallest tend, then smallest qend.
fn naive_end(q: &[u8], t: &[u8], sc: &Scoring) -> (i64, usize, usize) {
    let h = naive_local(q, t, sc);
    let mut best = (0, 0, 0);
    for j in 1..=t.len() {
        for i in 1..=q.len() {
            if h[i][j] > best.0 {
                best = (h[i][j], i, j);
            }
        }
    }
    best
}

/// Start by exhaustive search: the largest tstart, then the largest qstart, whose anchored
/// global alignment to the end cell reaches the best score.
fn naive_start(q: &[u8], t: &[u8], sc: &Scoring, best: (i64, usize, usize)) -> (usize, usize) {
    let (score, qe, te) = best;
    for ts in (1..=te).rev() {
        for qs in (1..=qe).rev() {
            if naive_global_anchored(&q[qs - 1..qe], &t[ts - 1..te], sc) == score {
                return (qs, ts);
            }
        }
    }
    panic!("no start reaches the best score");
}

fn scorings() -> Vec<Scoring> {
    vec![
        Scoring::blosum62(),
        Scoring::new(Matrix::protein("PAM30").unwrap(), 9, 1).unwrap(),
        Scoring::new(Matrix::protein("BLOSUM45").unwrap(), 0, 1).unwrap(),
        Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap(),
        Scoring::new(Matrix::dna(1, -1), 0, 3).unwrap(),
    ]
}

/// Residue codes for scoring `k`, biased towards few letters so that ties are common.
fn seq(k: usize, max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    let size = scorings()[k].matrix.size() as u8;
    prop_oneof![
        prop::collection::vec(0..size, 0..max_len),
        prop::collection::vec(0..3u8.min(size), 0..max_len),
        (0..size, 1..max_len).prop_map(|(c, n)| vec![c; n]),
    ]
}

fn case(max_len: usize) -> impl Strategy<Value = (usize, Vec<u8>, Vec<u8>)> {
    (0..scorings().len()).prop_flat_map(move |k| (Just(k), seq(k, max_len), seq(k, max_len)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn score_end_and_start_match_exhaustive_search((k, q, t) in case(14)) {
        let sc = &scorings()[k];
        let a = align_pair(&q, &t, sc).unwrap();
        let best = naive_end(&q, &t, sc);
        prop_assert_eq!((a.score as i64, a.qend as usize, a.tend as usize), best);
        if best.0 > 0 {
            prop_assert_eq!((a.qstart as usize, a.tstart as usize), naive_start(&q, &t, sc, best));
        } else {
            prop_assert_eq!((a.qstart, a.tstart), (0, 0));
        }
    }

    #[test]
    fn longer_sequences_match_full_matrix((k, q, t) in case(300)) {
        let sc = &scorings()[k];
        let a = align_pair(&q, &t, sc).unwrap();
        let best = naive_end(&q, &t, sc);
        prop_assert_eq!((a.score as i64, a.qend as usize, a.tend as usize), best);
        if best.0 > 0 {
            // The reported region re-scores to the score.
            let (qs, ts) = (a.qstart as usize, a.tstart as usize);
            prop_assert_eq!(naive_global_anchored(&q[qs - 1..best.1], &t[ts - 1..best.2], sc), best.0);
        }
    }
}

#[test]
fn long_runs_and_all_x() {
    let sc = Scoring::blosum62();
    let x = 22u8; // X
    let w = 17u8; // W
                  // All-X never aligns (X:X = -1).
    assert_eq!(align_pair(&vec![x; 500], &vec![x; 700], &sc).unwrap().score, 0);
    // 3,000 Ws against 2,000 Ws: 2,000 * 11, ending at the first place the full run fits.
    let a = align_pair(&vec![w; 3000], &vec![w; 2000], &sc).unwrap();
    assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (22_000, 1, 2000, 1, 2000));
    // Length 1 both sides.
    let a = align_pair(&[w], &[w], &sc).unwrap();
    assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (11, 1, 1, 1, 1));
}

#[test]
fn engine_search_ranks_like_pairwise_scores() {
    use swarrow::database::Database;
    use swarrow::seq::Record;
    let sc = Scoring::blosum62();
    let mut rng = 12345u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let recs: Vec<Record> = (0..200)
        .map(|i| Record {
            id: format!("t{}", i),
            seq: (0..(next() % 120 + 1)).map(|_| (next() % 20) as u8).collect(),
            header: String::new(),
        })
        .collect();
    let query: Vec<u8> = (0..90).map(|_| (next() % 20) as u8).collect();
    let db = Database::from_records("rand", recs.clone());
    let engine = ScalarEngine::new(sc.clone(), 2).unwrap();
    let hits = engine.search(&[&query], &db, 15, &Work::new()).unwrap();
    // Oracle: naive scores of every target, ranked by (score desc, input position asc).
    let mut expect: Vec<(i64, usize)> =
        recs.iter().enumerate().map(|(i, r)| (naive_end(&query, &r.seq, &sc).0, i)).filter(|x| x.0 > 0).collect();
    expect.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    expect.truncate(15);
    let got: Vec<(i64, usize)> =
        hits[0].iter().map(|h| (h.score as i64, db.original[h.target as usize] as usize)).collect();
    assert_eq!(got, expect);
}

//! The scalar reference engine: exact 32-bit Gotoh. It is the oracle the fast engines are
//! tested against, so it favours plainness over speed; threads come from rayon.
//!
//! Recurrences (a gap of length k costs open + k * extend):
//!   E(i,j) = max(E(i,j-1), H(i,j-1) - open) - extend      gap in the query
//!   F(i,j) = max(F(i-1,j), H(i-1,j) - open) - extend      gap in the target
//!   H(i,j) = max(0, E(i,j), F(i,j), H(i-1,j-1) + s(q_i, t_j))
//! Columns (target positions j) are the outer loop, so the first strictly greater cell is
//! the one the tie rule wants: smallest target end, then smallest query end.

use super::{topk::TopK, Alignment, Engine, Hit, Level};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::PairSeqs;
use rayon::prelude::*;

/// Far below any reachable score, yet safe to subtract gap costs from.
const NEG: i32 = i32::MIN / 4;

/// Best score and its end cell (1-based; 0 when the score is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScoreEnd {
    pub score: i32,
    pub qend: u32,
    pub tend: u32,
}

/// Query profile: for each residue code c, the scores s(q_i, c) for all i, so the inner
/// loop reads one contiguous row.
pub struct Profile {
    rows: Vec<i32>,
    qlen: usize,
}

impl Profile {
    pub fn new(query: &[u8], sc: &Scoring) -> Profile {
        let n = sc.matrix.size();
        let mut rows = Vec::with_capacity(n * query.len());
        for c in 0..n as u8 {
            rows.extend(query.iter().map(|&q| sc.score(q, c)));
        }
        Profile { rows, qlen: query.len() }
    }

    #[inline]
    pub(crate) fn row(&self, c: u8) -> &[i32] {
        &self.rows[c as usize * self.qlen..(c as usize + 1) * self.qlen]
    }

    /// Query rows.
    pub(crate) fn len(&self) -> usize {
        self.qlen
    }
}

/// One cell of the recurrences: E(i,j) from the cell to its left (`e_left`, `h_left`),
/// and H(i,j) before the floor at 0 (local passes apply it, the anchored start pass not).
#[inline(always)]
pub(crate) fn cell(e_left: i32, h_left: i32, diag: i32, s: i32, f: i32, sc: &Scoring) -> (i32, i32) {
    let e = e_left.max(h_left - sc.gap_open) - sc.gap_extend;
    (e, (diag + s).max(e).max(f))
}

/// One column j down rows `0..prow.len()`: `hcol`/`ecol` hold H(i, j-1) and E(i, j) on
/// entry and H(i, j), E(i, j+1) on return; `diag` is H(-1, j-1) and `f` F(0, j). H is
/// floored at 0 when `local`. Returns the column's best H (above 0 or 0), its first row,
/// and F below the last row.
#[inline(always)]
pub(crate) fn column(
    prow: &[i32],
    hcol: &mut [i32],
    ecol: &mut [i32],
    mut diag: i32,
    mut f: i32,
    local: bool,
    sc: &Scoring,
) -> (i32, usize, i32) {
    let (mut col_best, mut col_best_i) = (0, 0);
    for i in 0..prow.len() {
        let (e, mut h) = cell(ecol[i], hcol[i], diag, prow[i], f, sc);
        if local {
            h = h.max(0);
        }
        diag = hcol[i];
        hcol[i] = h;
        ecol[i] = e;
        f = f.max(h - sc.gap_open) - sc.gap_extend;
        if h > col_best {
            col_best = h;
            col_best_i = i;
        }
    }
    (col_best, col_best_i, f)
}

/// Reusable column buffers, so scanning a database allocates once per thread.
#[derive(Default)]
pub struct Scratch {
    h: Vec<i32>,
    e: Vec<i32>,
}

/// Best local score of the profiled query against `target`, with its end cell.
pub fn score_end(profile: &Profile, target: &[u8], sc: &Scoring, scratch: &mut Scratch) -> ScoreEnd {
    let m = profile.qlen;
    scratch.h.clear();
    scratch.h.resize(m, 0);
    scratch.e.clear();
    scratch.e.resize(m, NEG);
    let (hcol, ecol) = (&mut scratch.h[..], &mut scratch.e[..]);
    let mut best = ScoreEnd::default();
    for (j, &t) in target.iter().enumerate() {
        // The row above the first is 0 (local), and no F comes from above it.
        let (col_best, col_best_i, _) = column(profile.row(t), hcol, ecol, 0, NEG, true, sc);
        if col_best > best.score {
            best = ScoreEnd { score: col_best, qend: col_best_i as u32 + 1, tend: j as u32 + 1 };
        }
    }
    best
}

/// Start cell of the best alignment ending at `end`: a pass over the reversed prefixes
/// that must begin at the end cell (no restarts), stopping at the first column, counted
/// back from the end, that reaches the score. Returns 1-based (qstart, tstart).
pub fn start_from_end(query: &[u8], target: &[u8], sc: &Scoring, end: ScoreEnd) -> Result<(u32, u32)> {
    if end.score <= 0 {
        return Ok((0, 0));
    }
    let (qe, te) = (end.qend as usize, end.tend as usize);
    let (open, ext) = (sc.gap_open, sc.gap_extend);
    // hcol[i] = H(i, j-1) over the reversed query prefix; row 0 is the anchor row.
    let mut hcol = vec![NEG; qe + 1];
    let mut ecol = vec![NEG; qe + 1];
    hcol[0] = 0;
    for j in 1..=te {
        let t = target[te - j];
        let mut diag = hcol[0];
        hcol[0] = NEG; // only H(0,0) may start the alignment
        let mut f = NEG;
        for i in 1..=qe {
            let (e, h) = cell(ecol[i], hcol[i], diag, sc.score(query[qe - i], t), f, sc);
            diag = hcol[i];
            hcol[i] = h;
            ecol[i] = e;
            f = f.max(h - open) - ext;
            if h == end.score {
                return Ok(((qe - i + 1) as u32, (te - j + 1) as u32));
            }
            if h > end.score {
                return Err(Error::Internal(format!(
                    "reverse pass found score {} above the forward best {}",
                    h, end.score
                )));
            }
        }
    }
    Err(Error::Internal(format!("reverse pass did not reach score {}", end.score)))
}

/// Score, end and start of one pair.
pub fn align_pair(query: &[u8], target: &[u8], sc: &Scoring) -> Result<Alignment> {
    let profile = Profile::new(query, sc);
    let end = score_end(&profile, target, sc, &mut Scratch::default());
    let (qstart, tstart) = start_from_end(query, target, sc, end)?;
    Ok(Alignment {
        score: end.score,
        qstart,
        qend: end.qend,
        tstart,
        tend: end.tend,
        recomputed: super::recomputed(end.score),
        internal: false,
    })
}

/// Score and end of one pair, and with [`Level::Coordinates`] its start.
pub fn align_pair_at(query: &[u8], target: &[u8], sc: &Scoring, level: Level) -> Result<Alignment> {
    if level == Level::Coordinates {
        return align_pair(query, target, sc);
    }
    let end = score_end(&Profile::new(query, sc), target, sc, &mut Scratch::default());
    Ok(Alignment::from_end(end))
}

/// The start of one alignment whose score and end `end` holds.
pub fn start_of(query: &[u8], target: &[u8], sc: &Scoring, end: &Alignment) -> Result<Alignment> {
    let (qstart, tstart) =
        start_from_end(query, target, sc, ScoreEnd { score: end.score, qend: end.qend, tend: end.tend })?;
    Ok(Alignment { qstart, tstart, ..*end })
}

/// Every query against every target, threads from the current rayon pool: the reference
/// search, and the fallback of faster engines for scoring schemes they cannot hold.
pub fn search_all(sc: &Scoring, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Vec<Vec<Hit>> {
    queries
        .iter()
        .map(|q| {
            let profile = Profile::new(q, sc);
            (0..db.len())
                .into_par_iter()
                .fold(
                    || (TopK::new(top, db), Scratch::default()),
                    |(mut tk, mut scratch), t| {
                        let s = score_end(&profile, db.seq(t), sc, &mut scratch).score;
                        work.add((q.len() * db.seq_len(t)) as u64);
                        tk.push(Hit { target: t as u32, score: s, recomputed: crate::engine::recomputed(s) });
                        (tk, scratch)
                    },
                )
                .map(|(tk, _)| tk)
                .reduce(
                    || TopK::new(top, db),
                    |mut a, b| {
                        a.merge(b);
                        a
                    },
                )
                .into_sorted()
        })
        .collect()
}

pub struct ScalarEngine {
    scoring: Scoring,
    pool: rayon::ThreadPool,
}

impl ScalarEngine {
    pub fn new(scoring: Scoring, threads: usize) -> Result<ScalarEngine> {
        let pool = crate::threads::pool("sw-scalar", threads)?;
        Ok(ScalarEngine { scoring, pool })
    }

    /// `f(i, query, target)` for every pair on the engine's threads, in input order.
    fn each_pair(
        &self,
        pairs: PairSeqs<'_>,
        f: impl Fn(usize, &[u8], &[u8]) -> Result<Alignment> + Sync,
    ) -> Result<Vec<Alignment>> {
        self.pool.install(|| {
            (0..pairs.len())
                .into_par_iter()
                .map(|i| {
                    let (q, t) = pairs.pair(i);
                    f(i, q, t)
                })
                .collect()
        })
    }
}

impl Engine for ScalarEngine {
    fn name(&self) -> String {
        format!("cpu-scalar ({} threads)", self.pool.current_num_threads())
    }

    fn search(&self, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>> {
        Ok(self.pool.install(|| search_all(&self.scoring, queries, db, top, work)))
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<super::traceback::Traceback>> {
        self.pool.install(|| super::traceback::trace_all(pairs, alignments, &self.scoring, path))
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        self.each_pair(pairs, |_, q, t| align_pair_at(q, t, &self.scoring, level))
    }

    fn starts(&self, pairs: PairSeqs<'_>, ends: &[Alignment]) -> Result<Vec<Alignment>> {
        if ends.len() != pairs.len() {
            return Err(Error::Internal(format!("{} ends for {} pairs", ends.len(), pairs.len())));
        }
        self.each_pair(pairs, |i, q, t| start_of(q, t, &self.scoring, &ends[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::{Alphabet, Matrix};

    fn enc(s: &str) -> Vec<u8> {
        Alphabet::Protein.encode(s.as_bytes()).unwrap()
    }

    #[test]
    fn hand_checked_protein_alignment() {
        // BLOSUM62 11/1, checked by hand: HEA/HEA scores H8 + E5 + A4 = 17; the gapped
        // AWGHE/AW-HE scores 4 + 11 - 12 + 8 + 5 = 16.
        let sc = Scoring::blosum62();
        let a = align_pair(&enc("HEAGAWGHEE"), &enc("PAWHEAE"), &sc).unwrap();
        assert_eq!(a.score, 17);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 3, 4, 6));
    }

    #[test]
    fn gap_costs_open_plus_k_extend() {
        // DNA +2/-3, gap 5/2: AAAAAAAAAA vs AAAAACAAAAA... use an insertion of 2 bases:
        // 10 matches (20) minus a gap of 2 (5 + 2*2 = 9) = 11; ungapped halves score 10.
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        let q = Alphabet::Dna.encode(b"AAAAAGGGGG").unwrap();
        let t = Alphabet::Dna.encode(b"AAAAATTGGGGG").unwrap();
        let a = align_pair(&q, &t, &sc).unwrap();
        assert_eq!(a.score, 11);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 10, 1, 12));
    }

    #[test]
    fn no_alignment_gives_zero_coordinates() {
        let sc = Scoring::blosum62();
        let a = align_pair(&enc("XXXX"), &enc("XXX"), &sc).unwrap();
        assert_eq!(a, Alignment::default());
        assert_eq!(align_pair(&[], &enc("W"), &sc).unwrap(), Alignment::default());
    }

    #[test]
    fn ties_take_smallest_target_end_then_query_end() {
        // One W against two: equal cells at target 2 and 4; the smaller target end wins.
        let sc = Scoring::blosum62();
        let a = align_pair(&enc("W"), &enc("AWAW"), &sc).unwrap();
        assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (11, 1, 1, 2, 2));
        // Two Ws in the query against one: equal cells at query 1 and 5; the smaller wins.
        let a = align_pair(&enc("WCCCW"), &enc("W"), &sc).unwrap();
        assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (11, 1, 1, 1, 1));
    }
}

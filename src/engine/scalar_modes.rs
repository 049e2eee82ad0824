//! The scalar reference of every mode ([`super::mode`]): local mode is [`super::scalar`];
//! global and semi-global are one pass of exact Gotoh here, the oracle the fast engines of
//! those modes are tested against; the overlap mode is its two alignments (semi-global,
//! local) and [`mode::overlap_choice`]. Plain rather than fast.
//!
//! Scores are computed at 64 bits (global scores fall far below zero; no overflow whatever
//! the lengths) and reported at 32: a score outside i32 is an input error. The start is
//! found by the mode's reverse pass ([`AlignMode::reverse_pass`]): the same pass over the
//! reversed prefixes, anchored at the end cell.

use super::mode::{self, AlignMode};
use super::scalar::{self, Profile};
use super::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use crate::seq::PairSeqs;

/// Far below any reachable score, yet safe to subtract gap costs from.
const NEG: i64 = i64::MIN / 4;

/// Score, start and end of one pair in `mode` (local: [`scalar::align_pair`]).
pub fn align_pair_mode(query: &[u8], target: &[u8], sc: &Scoring, mode: AlignMode) -> Result<Alignment> {
    if mode.is_local() {
        return scalar::align_pair(query, target, sc);
    }
    if let AlignMode::Overlap(penalty) = mode {
        let semi = align_pair_mode(query, target, sc, mode::OVERLAP_SEMI_GLOBAL)?;
        return Ok(mode::overlap_choice(semi, scalar::align_pair(query, target, sc)?, penalty));
    }
    let ends = mode.free_ends();
    let (m, n) = (query.len(), target.len());
    if m > u32::MAX as usize || n > u32::MAX as usize {
        return Err(Error::Input(format!("a pair of {m} and {n} residues is too long to align")));
    }
    let gap = |k: usize| -(sc.gap_open as i64 + k as i64 * sc.gap_extend as i64);
    let finish = |score: i64, qstart: u32, qend: u32, tstart: u32, tend: u32| -> Result<Alignment> {
        let score = i32::try_from(score).map_err(|_| {
            Error::Input(format!("the {mode} score of a pair of {m} and {n} residues, {score}, exceeds 32 bits"))
        })?;
        Ok(Alignment { score, qstart, qend, tstart, tend, recomputed: mode.recomputed(score), internal: false })
    };
    // An empty side: the other sequence against one gap, or nothing when one of its ends is free.
    if m == 0 || n == 0 {
        return match (m, n) {
            (0, 0) => finish(0, 0, 0, 0, 0),
            (0, _) if ends.target_start || ends.target_end => finish(0, 0, 0, 0, 0),
            (0, _) => finish(gap(n), 0, 0, 1, n as u32),
            _ if ends.query_start || ends.query_end => finish(0, 0, 0, 0, 0),
            _ => finish(gap(m), 1, m as u32, 0, 0),
        };
    }
    let end = end_cell(query, target, sc, mode)?;
    let rev = match mode.reverse_pass() {
        Some(rm) => {
            let rq: Vec<u8> = query[..end.qend as usize].iter().rev().copied().collect();
            let rt: Vec<u8> = target[..end.tend as usize].iter().rev().copied().collect();
            Some(end_cell(&rq, &rt, sc, rm)?)
        }
        None => None,
    };
    mode::with_start(&end, rev.as_ref(), sc, mode)
}

/// The score and end cell (`qend`, `tend`: row and column, both >= 1; starts 0) of two
/// non-empty sequences in a non-local `mode`: the mode's dynamic programme, one column at a
/// time, the end cell by the end rule (the first strictly better in column-major order).
pub(crate) fn end_cell(query: &[u8], target: &[u8], sc: &Scoring, mode: AlignMode) -> Result<Alignment> {
    let ends = mode.free_ends();
    let (m, n) = (query.len(), target.len());
    let (open, ext) = (sc.gap_open as i64, sc.gap_extend as i64);
    let gap = |k: usize| -(open + k as i64 * ext);
    let profile = Profile::new(query, sc);
    // Row 0 and column 0: free (0) or a gap back to (0, 0).
    let top = |j: usize| if j > 0 && !ends.target_start { gap(j) } else { 0 };
    // h[i]: H(i, j-1); e[i]: E(i, j-1).
    let mut h: Vec<i64> = (0..=m).map(|i| if i > 0 && !ends.query_start { gap(i) } else { 0 }).collect();
    let mut e = vec![NEG; m + 1];
    let mut best: Option<(i64, usize, usize)> = None;
    let mut consider = |v: i64, i: usize, j: usize| {
        if best.is_none_or(|b| v > b.0) {
            best = Some((v, i, j));
        }
    };
    for j in 1..=n {
        let prow = profile.row(target[j - 1]);
        let mut diag = h[0]; // H(0, j-1)
        h[0] = top(j);
        let mut up = h[0]; // H(i-1, j)
        let mut f = NEG; // F(i-1, j): none in row 0
        for i in 1..=m {
            e[i] = (h[i] - open - ext).max(e[i] - ext);
            f = (up - open - ext).max(f - ext);
            let v = (diag + prow[i - 1] as i64).max(e[i]).max(f);
            diag = h[i];
            h[i] = v;
            up = v;
        }
        if j < n {
            if ends.target_end {
                consider(h[m], m, j);
            }
        } else if ends.query_end {
            for (i, &v) in h.iter().enumerate().skip(1) {
                consider(v, i, n);
            }
        } else {
            consider(h[m], m, n);
        }
    }
    let (score, qend, tend) = best.ok_or_else(|| Error::Internal("no end cell".into()))?;
    let score = i32::try_from(score).map_err(|_| {
        Error::Input(format!("the {mode} score of a pair of {m} and {n} residues, {score}, exceeds 32 bits"))
    })?;
    Ok(Alignment {
        score,
        qend: qend as u32,
        tend: tend as u32,
        recomputed: mode.recomputed(score),
        ..Default::default()
    })
}

/// [`align_pair_mode`] of every pair, in input order, on the current rayon pool.
pub fn align_all_mode(pairs: PairSeqs<'_>, sc: &Scoring, mode: AlignMode) -> Result<Vec<Alignment>> {
    use rayon::prelude::*;
    (0..pairs.len())
        .into_par_iter()
        .map(|i| {
            let (q, t) = pairs.pair(i);
            align_pair_mode(q, t, sc, mode)
        })
        .collect()
}

/// The scalar reference as an engine of the non-local modes (`SWARROW_ENGINE=scalar`; the
/// default is `simd::SimdModeEngine`), one pair a task on its own rayon pool. Aligns pairs
/// only (`search` is local).
pub struct ModeEngine {
    scoring: Scoring,
    mode: AlignMode,
    pool: rayon::ThreadPool,
}

impl ModeEngine {
    pub fn new(scoring: Scoring, mode: AlignMode, threads: usize) -> Result<ModeEngine> {
        let pool = crate::threads::pool("sw-scalar", threads)?;
        Ok(ModeEngine { scoring, mode, pool })
    }
}

impl super::Engine for ModeEngine {
    fn name(&self) -> String {
        format!("cpu-scalar {} ({} threads)", self.mode, self.pool.current_num_threads())
    }

    fn search(
        &self,
        _queries: &[&[u8]],
        _db: &crate::database::Database,
        _top: usize,
        _work: &crate::progress::Work,
    ) -> Result<Vec<Vec<super::Hit>>> {
        Err(crate::engine::mode::search_refused(self.mode))
    }

    /// Both levels run both passes (the reference is plain, not fast).
    fn align(&self, pairs: PairSeqs<'_>, level: super::Level) -> Result<Vec<Alignment>> {
        let all = self.pool.install(|| align_all_mode(pairs, &self.scoring, self.mode))?;
        Ok(match level {
            super::Level::Coordinates => all,
            super::Level::ScoreEnd => all.into_iter().map(Alignment::end_only).collect(),
        })
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn mode(&self) -> AlignMode {
        self.mode
    }

    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<super::traceback::Traceback>> {
        self.pool.install(|| super::traceback::trace_all_mode(pairs, alignments, &self.scoring, self.mode, path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mode::FreeEnds;
    use crate::engine::traceback::trace_mode;
    use crate::scoring::{Alphabet, Matrix};

    fn dna(s: &str) -> Vec<u8> {
        Alphabet::Dna.encode(s.as_bytes()).unwrap()
    }

    fn semi(names: &str) -> AlignMode {
        AlignMode::SemiGlobal(FreeEnds::parse(names).unwrap())
    }

    /// Score, (qstart, qend, tstart, tend) and CIGAR of one pair.
    fn run(q: &str, t: &str, sc: &Scoring, mode: AlignMode) -> (i32, (u32, u32, u32, u32), String) {
        let (q, t) = (dna(q), dna(t));
        let a = align_pair_mode(&q, &t, sc, mode).unwrap();
        let tb = trace_mode(&q, &t, sc, &a, mode).unwrap();
        (a.score, (a.qstart, a.qend, a.tstart, a.tend), tb.cigar())
    }

    /// A seeded xorshift: each call a number below its argument.
    fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    /// DNA +2/-3, gap 5/2: a gap of k costs 5 + 2k (the first position 7).
    fn dna_sc() -> Scoring {
        Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap()
    }

    #[test]
    fn global_hand_checked() {
        let sc = dna_sc();
        assert_eq!(run("ACGT", "ACGT", &sc, AlignMode::Global), (8, (1, 4, 1, 4), "4=".into()));
        // A-GT against ACGT: 6 - 7 = -1 (any mismatch instead costs more).
        assert_eq!(run("ACGT", "AGT", &sc, AlignMode::Global), (-1, (1, 4, 1, 3), "1=1I2=".into()));
        // Leading gaps cost: --A against CCA, 2 - 9.
        assert_eq!(run("A", "CCA", &sc, AlignMode::Global), (-7, (1, 1, 1, 3), "2D1=".into()));
        // A- and -A tie at 2 - 7: walking back, the pair is taken first, so the gap leads.
        assert_eq!(run("A", "AA", &sc, AlignMode::Global), (-5, (1, 1, 1, 2), "1D1=".into()));
        assert_eq!(run("AA", "A", &sc, AlignMode::Global), (-5, (1, 2, 1, 1), "1I1=".into()));
        // All mismatches: 3 x -3.
        assert_eq!(run("AAA", "CCC", &sc, AlignMode::Global), (-9, (1, 3, 1, 3), "3X".into()));
        // Empty sides: one gap of the other sequence.
        assert_eq!(run("", "ACG", &sc, AlignMode::Global), (-11, (0, 0, 1, 3), "3D".into()));
        assert_eq!(run("AC", "", &sc, AlignMode::Global), (-9, (1, 2, 0, 0), "2I".into()));
        assert_eq!(run("", "", &sc, AlignMode::Global), (0, (0, 0, 0, 0), "".into()));
    }

    #[test]
    fn semi_global_hand_checked() {
        let sc = dna_sc();
        // Overlap: TTTT free before the query's ACGT, CCCC free after the target's.
        assert_eq!(run("TTTTACGT", "ACGTCCCC", &sc, semi("query-start,target-end")), (8, (5, 8, 1, 4), "4=".into()));
        assert_eq!(
            run("TTTTACGT", "ACGTCCCC", &sc, AlignMode::SemiGlobal(FreeEnds::ALL)),
            (8, (5, 8, 1, 4), "4=".into())
        );
        // Query inside the target, the whole query aligned: ACGTT against ACGTG, 8 - 3.
        let inside = semi("target-start,target-end");
        assert_eq!(run("ACGT", "GGACGTGG", &sc, inside), (8, (1, 4, 3, 6), "4=".into()));
        assert_eq!(run("ACGTT", "GGACGTGG", &sc, inside), (5, (1, 5, 3, 7), "4=1X".into()));
        // Target inside the query.
        assert_eq!(run("GGACGTGG", "ACGT", &sc, semi("query-start,query-end")), (8, (3, 6, 1, 4), "4=".into()));
        // End ties: the smallest target end.
        assert_eq!(run("A", "AA", &sc, semi("target-end")), (2, (1, 1, 1, 1), "1=".into()));
        assert_eq!(run("A", "AA", &sc, AlignMode::SemiGlobal(FreeEnds::ALL)), (2, (1, 1, 1, 1), "1=".into()));
        // ... then the smallest query end.
        assert_eq!(run("AA", "A", &sc, semi("query-end")), (2, (1, 1, 1, 1), "1=".into()));
        // Start: the target end is not free, so the query's A meets the target's second A.
        assert_eq!(run("A", "AA", &sc, semi("target-start")), (2, (1, 1, 2, 2), "1=".into()));
        // A start that is not free costs: the target's start must be aligned.
        assert_eq!(run("A", "CA", &sc, semi("query-start,query-end")), (-5, (1, 1, 1, 2), "1D1=".into()));
        // The whole query in free ends: the path is a gap in the query only (0, 0).
        let sc01 = Scoring::new(Matrix::dna(1, -9), 0, 1).unwrap();
        assert_eq!(run("A", "C", &sc01, semi("query-start")), (-1, (0, 0, 1, 1), "1D".into()));
        assert_eq!(run("C", "A", &sc01, semi("target-start")), (-1, (1, 1, 0, 0), "1I".into()));
        // Cells of row 0 never end an alignment: with the target end free, C still meets A.
        assert_eq!(run("C", "A", &sc01, semi("target-end")), (-2, (1, 1, 1, 1), "1I1D".into()));
        // No free end at all is global.
        assert_eq!(run("ACGT", "AGT", &sc, AlignMode::SemiGlobal(FreeEnds::NONE)), (-1, (1, 4, 1, 3), "1=1I2=".into()));
        // Empty sides: nothing at score 0 when the other sequence has a free end.
        assert_eq!(run("", "ACG", &sc, semi("target-end")), (0, (0, 0, 0, 0), "".into()));
        assert_eq!(run("", "ACG", &sc, semi("query-start,query-end")), (-11, (0, 0, 1, 3), "3D".into()));
        assert_eq!(run("ACG", "", &sc, semi("query-start")), (0, (0, 0, 0, 0), "".into()));
    }

    #[test]
    fn protein_global_hand_checked() {
        // BLOSUM62 11/1: HEAG against HEA-: 8 + 5 + 4 - 12 = 5; W against HEAGW: 11 - 15 = -4.
        let sc = Scoring::blosum62();
        let p = |s: &str| Alphabet::Protein.encode(s.as_bytes()).unwrap();
        let a = align_pair_mode(&p("HEAG"), &p("HEA"), &sc, AlignMode::Global).unwrap();
        assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (5, 1, 4, 1, 3));
        assert_eq!(trace_mode(&p("HEAG"), &p("HEA"), &sc, &a, AlignMode::Global).unwrap().cigar(), "3=1I");
        let a = align_pair_mode(&p("W"), &p("HEAGW"), &sc, AlignMode::Global).unwrap();
        assert_eq!(a.score, -4);
        // Local mode is the local reference.
        let a = align_pair_mode(&p("HEAGAWGHEE"), &p("PAWHEAE"), &sc, AlignMode::Local).unwrap();
        assert_eq!((a.score, a.qstart, a.qend, a.tstart, a.tend), (17, 1, 3, 4, 6));
    }

    #[test]
    fn traces_in_blocks_equal_whole_traces_in_every_mode() {
        use crate::engine::traceback::{trace_mode_with, Scratch};
        let sc = dna_sc();
        let mut rnd = xorshift(0x9e3779b97f4a7c15);
        for _ in 0..150 {
            let t: Vec<u8> = (0..1 + rnd(50)).map(|_| rnd(4) as u8).collect();
            let q: Vec<u8> = match rnd(2) {
                0 => (0..1 + rnd(50)).map(|_| rnd(4) as u8).collect(),
                _ => {
                    let mut q = Vec::new();
                    for &c in &t {
                        match rnd(8) {
                            0 => {}
                            1 => q.push(rnd(4) as u8),
                            _ => q.push(c),
                        }
                    }
                    q
                }
            };
            for flags in 0..16u8 {
                let f = FreeEnds::from_flags([flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0]);
                let mode = if f.any() { AlignMode::SemiGlobal(f) } else { AlignMode::Global };
                let a = align_pair_mode(&q, &t, &sc, mode).unwrap();
                let whole = trace_mode_with(&q, &t, &sc, &a, mode, &mut Scratch::default(), usize::MAX).unwrap();
                for block in [1, 7, 64] {
                    let blocked = trace_mode_with(&q, &t, &sc, &a, mode, &mut Scratch::default(), block).unwrap();
                    assert_eq!(blocked, whole, "{mode} block {block}: q {q:?} t {t:?}");
                }
            }
        }
    }

    /// Global score of `q` against `t` with every gap costing (leading and trailing), by
    /// plain three-matrix Gotoh: the oracle of the start rule below.
    fn naive_global(q: &[u8], t: &[u8], sc: &Scoring) -> i64 {
        let (o, e) = (sc.gap_open as i64, sc.gap_extend as i64);
        let (m, n) = (q.len(), t.len());
        let ninf = i64::MIN / 4;
        let mut h = vec![vec![ninf; n + 1]; m + 1];
        let mut d = vec![vec![ninf; n + 1]; m + 1];
        let mut ins = vec![vec![ninf; n + 1]; m + 1];
        h[0][0] = 0;
        for i in 0..=m {
            for j in 0..=n {
                if i == 0 && j == 0 {
                    continue;
                }
                if j > 0 {
                    d[i][j] = (h[i][j - 1] - o - e).max(d[i][j - 1] - e);
                }
                if i > 0 {
                    ins[i][j] = (h[i - 1][j] - o - e).max(ins[i - 1][j] - e);
                }
                let diag =
                    if i > 0 && j > 0 { h[i - 1][j - 1] + sc.matrix.score(q[i - 1], t[j - 1]) as i64 } else { ninf };
                h[i][j] = diag.max(d[i][j]).max(ins[i][j]);
            }
        }
        h[m][n]
    }

    #[test]
    fn starts_follow_the_reverse_rule_against_brute_force() {
        // Every start corner the mode frees, each rectangle to the end cell aligned end to
        // end by naive Gotoh: the best, the largest target start then the largest query
        // start on ties, is the reported start.
        let sc = dna_sc();
        let mut rnd = xorshift(0x2545f4914f6cdd1d);
        for round in 0..400 {
            let alpha = if round % 2 == 0 { 2 } else { 4 };
            let q: Vec<u8> = (0..1 + rnd(9)).map(|_| rnd(alpha) as u8).collect();
            let t: Vec<u8> = (0..1 + rnd(9)).map(|_| rnd(alpha) as u8).collect();
            for flags in 1..16u8 {
                let f = FreeEnds::from_flags([flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0]);
                let mode = AlignMode::SemiGlobal(f);
                let a = align_pair_mode(&q, &t, &sc, mode).unwrap();
                // A side with no residue reports end 0: any of its cells may be the end's.
                let cells: Vec<(usize, usize)> = match (a.qend as usize, a.tend as usize) {
                    (0, 0) => continue,
                    (0, te) => (1..=q.len()).map(|i| (i, te)).collect(),
                    (qe, 0) => (1..=t.len()).map(|j| (qe, j)).collect(),
                    (qe, te) => vec![(qe, te)],
                };
                let mut found = false;
                for (qe, te) in cells {
                    let mut corners = vec![(0usize, 0usize)];
                    if f.query_start {
                        corners.extend((1..=qe).map(|i| (i, 0)));
                    }
                    if f.target_start {
                        corners.extend((1..=te).map(|j| (0, j)));
                    }
                    let mut best: Option<(i64, usize, usize)> = None;
                    for (i0, j0) in corners {
                        let v = naive_global(&q[i0..qe], &t[j0..te], &sc);
                        if best.is_none_or(|b| v > b.0 || (v == b.0 && (j0, i0) > (b.2, b.1))) {
                            best = Some((v, i0, j0));
                        }
                    }
                    let (v, i0, j0) = best.unwrap();
                    let side = |k: usize, e: usize| if k == e { (0, 0) } else { (k as u32 + 1, e as u32) };
                    let ((qs, qe2), (ts, te2)) = (side(i0, qe), side(j0, te));
                    if v == a.score as i64 && (qs, qe2, ts, te2) == (a.qstart, a.qend, a.tstart, a.tend) {
                        found = true;
                    }
                }
                assert!(found, "{mode}: q {q:?} t {t:?} gave {a:?}");
            }
        }
    }

    #[test]
    fn far_below_zero_is_exact_and_recomputed() {
        // 11,000 mismatches: -33,000, below 16 bits (recomputed) and exact.
        let sc = dna_sc();
        let (q, t) = (vec![0u8; 11_000], vec![1u8; 11_000]);
        let a = align_pair_mode(&q, &t, &sc, AlignMode::Global).unwrap();
        assert_eq!((a.score, a.recomputed), (-33_000, true));
        let a = align_pair_mode(&q[..10], &t[..10], &sc, AlignMode::Global).unwrap();
        assert_eq!((a.score, a.recomputed), (-30, false));
    }
}

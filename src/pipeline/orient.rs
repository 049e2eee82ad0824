//! Strands and windows of a batch of pairs, in one place for every engine: the query of a
//! pair on the minus strand is aligned as its reverse complement (`--strand`, or the strand
//! a PAF candidate names), `both` aligns each query both ways and keeps the better, and the
//! coordinates the engine finds on the aligned windows are reported on the whole sequences
//! (target on its forward strand, query on the query as given). CIGAR and aligned strings
//! stay as the engine traces them: in target order, the query reverse-complemented on `-`.

use crate::engine::mode::AlignMode;
use crate::engine::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Alphabet;
use crate::seq::{Frame, PairSeqs, SeqPairs, Strand};

/// Which strands of the query a run aligns on (`--strand`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StrandRule {
    /// The strand the input names for a pair (PAF's column 5), else plus.
    #[default]
    AsGiven,
    Plus,
    Minus,
    /// Both strands; the better score is kept, a tie going to plus.
    Both,
}

impl StrandRule {
    pub fn parse(text: &str) -> Option<StrandRule> {
        match text {
            "plus" | "+" => Some(StrandRule::Plus),
            "minus" | "-" => Some(StrandRule::Minus),
            "both" => Some(StrandRule::Both),
            _ => None,
        }
    }

    /// What this rule does with a pair whose input names `given`: one strand, or both.
    pub fn pick(self, given: Option<Strand>) -> Option<Strand> {
        match self {
            StrandRule::AsGiven => Some(given.unwrap_or_default()),
            StrandRule::Plus => Some(Strand::Plus),
            StrandRule::Minus => Some(Strand::Minus),
            StrandRule::Both => None,
        }
    }

    /// Whether a run under this rule can place a query on the minus strand without its
    /// input naming one.
    pub fn may_be_minus(self) -> bool {
        matches!(self, StrandRule::Minus | StrandRule::Both)
    }
}

/// The pairs of a batch as the engine aligns them: each pair once on its strand, or twice
/// (plus, then minus) under `both`. `entries[k]` names the batch's pair and strand of the
/// engine's pair `k`.
pub struct Oriented {
    pub seqs: SeqPairs,
    entries: Vec<(usize, Strand)>,
}

/// The batch's pairs oriented by `rule` and the pairs' `frames` (empty: no strand given);
/// `None` when every pair is aligned on plus once, so that the batch is aligned as it is.
pub fn orient(pairs: PairSeqs<'_>, frames: &[Frame], rule: StrandRule) -> Option<Oriented> {
    let given = |i: usize| frames.get(i).and_then(|f| f.strand);
    let n = pairs.len();
    if (0..n).all(|i| rule.pick(given(i)) == Some(Strand::Plus)) {
        return None;
    }
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        match rule.pick(given(i)) {
            Some(s) => entries.push((i, s)),
            None => entries.extend([(i, Strand::Plus), (i, Strand::Minus)]),
        }
    }
    let mut seqs = SeqPairs::default();
    let residues: usize = entries.iter().map(|&(i, _)| pairs.pair(i).0.len() + pairs.pair(i).1.len()).sum();
    seqs.residues.reserve(residues);
    seqs.bounds.reserve(2 * entries.len());
    let mut query = Vec::new();
    for &(i, strand) in &entries {
        let (q, t) = pairs.pair(i);
        match strand {
            Strand::Plus => seqs.push(q, t),
            Strand::Minus => {
                query.clear();
                Alphabet::reverse_complement_into(q, &mut query);
                seqs.push(&query, t);
            }
        }
    }
    Some(Oriented { seqs, entries })
}

impl Oriented {
    /// One engine pair per batch pair: under `both`, the strand with the better score (the
    /// mode's objective, [`AlignMode::objective`]; a tie goes to plus). Returns the kept
    /// engine pairs' residues, their alignments and each batch pair's strand.
    pub fn choose(
        self,
        alignments: Vec<Alignment>,
        mode: AlignMode,
    ) -> Result<(SeqPairs, Vec<Alignment>, Vec<Strand>)> {
        if alignments.len() != self.entries.len() {
            return Err(Error::Internal(format!(
                "engine returned {} alignments for {} oriented pairs",
                alignments.len(),
                self.entries.len()
            )));
        }
        if self.entries.windows(2).all(|w| w[0].0 != w[1].0) {
            let strands = self.entries.iter().map(|e| e.1).collect();
            return Ok((self.seqs, alignments, strands));
        }
        let mut keep = vec![true; self.entries.len()];
        let mut k = 0;
        while k < self.entries.len() {
            // Both strands of a pair come together, plus first.
            if k + 1 < self.entries.len() && self.entries[k + 1].0 == self.entries[k].0 {
                let minus_wins = mode.objective(&alignments[k + 1]) > mode.objective(&alignments[k]);
                keep[k] = !minus_wins;
                keep[k + 1] = minus_wins;
                k += 2;
            } else {
                k += 1;
            }
        }
        let strands = self.entries.iter().zip(&keep).filter(|(_, &k)| k).map(|(e, _)| e.1).collect();
        let (seqs, kept) = super::subset(self.seqs.view(), &alignments, &keep)?;
        Ok((seqs, kept, strands))
    }
}

/// Coordinates on the whole sequences of an alignment found on a pair's aligned windows:
/// `window` the lengths of the windows the engine saw, `frame` where they sit (`None`: the
/// whole sequences), `strand` the query's. A side with no residue in the alignment (end 0)
/// stays 0; an unknown start (0, score-and-end level) stays unknown on plus.
pub fn report(a: &Alignment, window: (usize, usize), frame: Option<&Frame>, strand: Strand) -> Alignment {
    let (qoff, toff) = frame.map_or((0, 0), |f| (f.query_offset, f.target_offset));
    let mut out = *a;
    if a.qend > 0 {
        let (qs, qe) = match strand {
            Strand::Plus => (a.qstart, a.qend),
            Strand::Minus => {
                let w = window.0 as u32;
                // The start on the window's reverse complement is the end as given.
                let end = if a.qstart > 0 { w + 1 - a.qstart } else { 0 };
                (w + 1 - a.qend, end)
            }
        };
        out.qstart = if qs > 0 { qs + qoff as u32 } else { 0 };
        out.qend = if qe > 0 { qe + qoff as u32 } else { 0 };
    }
    if a.tend > 0 {
        out.tstart = if a.tstart > 0 { a.tstart + toff as u32 } else { 0 };
        out.tend = a.tend + toff as u32;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn al(score: i32, q: (u32, u32), t: (u32, u32)) -> Alignment {
        Alignment { score, qstart: q.0, qend: q.1, tstart: t.0, tend: t.1, ..Alignment::default() }
    }

    /// The test's own reverse complement, letter by letter.
    fn revcomp(codes: &[u8]) -> Vec<u8> {
        codes.iter().rev().map(|&c| if c < 4 { 3 - c } else { c }).collect()
    }

    #[test]
    fn orient_builds_each_strand_the_rule_asks() {
        let pairs = SeqPairs::from_slices(&[(&[0, 0, 1], &[2, 3]), (&[3, 4], &[1])]);
        assert!(orient(pairs.view(), &[], StrandRule::AsGiven).is_none());
        assert!(orient(pairs.view(), &[], StrandRule::Plus).is_none());
        let minus = orient(pairs.view(), &[], StrandRule::Minus).unwrap();
        assert_eq!(minus.seqs.view().pair(0).0, revcomp(&[0, 0, 1]));
        assert_eq!(minus.seqs.view().pair(1), (revcomp(&[3, 4]).as_slice(), &[1u8][..]));
        let both = orient(pairs.view(), &[], StrandRule::Both).unwrap();
        assert_eq!(both.seqs.len(), 4);
        assert_eq!(both.seqs.view().pair(2), pairs.view().pair(1));
        // A frame's strand is followed under AsGiven, overridden by an explicit rule.
        let frames = [Frame { strand: Some(Strand::Minus), ..Frame::default() }, Frame::default()];
        let given = orient(pairs.view(), &frames, StrandRule::AsGiven).unwrap();
        assert_eq!(given.entries, vec![(0, Strand::Minus), (1, Strand::Plus)]);
        assert!(orient(pairs.view(), &frames, StrandRule::Plus).is_none());
    }

    #[test]
    fn both_keeps_the_better_strand_and_plus_on_ties() {
        let pairs = SeqPairs::from_slices(&[(&[0], &[0]), (&[1], &[1]), (&[2], &[2])]);
        let both = orient(pairs.view(), &[], StrandRule::Both).unwrap();
        let scores = [5, 7, 4, 4, 3, 1];
        let als: Vec<Alignment> = scores.iter().map(|&s| al(s, (1, 1), (1, 1))).collect();
        let (seqs, kept, strands) = both.choose(als, AlignMode::Local).unwrap();
        assert_eq!(strands, vec![Strand::Minus, Strand::Plus, Strand::Plus]);
        assert_eq!(kept.iter().map(|a| a.score).collect::<Vec<_>>(), vec![7, 4, 3]);
        assert_eq!(seqs.view().pair(0).0, revcomp(&[0]));
        // The overlap mode compares score + P for an overlap that reaches the ends against
        // an internal match's score: plus (10 + 20) beats minus's internal 25 and loses to
        // an internal 31; local mode compares scores.
        let pairs = SeqPairs::from_slices(&[(&[0], &[0]), (&[1], &[1])]);
        let internal = |s: i32| Alignment { internal: true, ..al(s, (1, 1), (1, 1)) };
        let als = vec![al(10, (1, 1), (1, 1)), internal(25), al(10, (1, 1), (1, 1)), internal(31)];
        let both = orient(pairs.view(), &[], StrandRule::Both).unwrap();
        let (_, kept, strands) = both.choose(als.clone(), AlignMode::Overlap(20)).unwrap();
        assert_eq!(strands, vec![Strand::Plus, Strand::Minus]);
        assert_eq!(kept.iter().map(|a| a.score).collect::<Vec<_>>(), vec![10, 31]);
        let both = orient(pairs.view(), &[], StrandRule::Both).unwrap();
        let (_, _, strands) = both.choose(als, AlignMode::Local).unwrap();
        assert_eq!(strands, vec![Strand::Minus, Strand::Minus]);
    }

    /// Reported coordinates against the test's own account: a window cut from a whole
    /// query, reverse-complemented, aligned at [s, e]; on the whole forward query that is
    /// the residues the alignment used.
    #[test]
    fn report_maps_windows_and_minus_strands_back() {
        let (qlen, qoff, w) = (50usize, 7usize, 20usize);
        let frame = Frame { query_offset: qoff, target_offset: 100, query_len: qlen, target_len: 500, strand: None };
        for s in 1..=w as u32 {
            for e in s..=w as u32 {
                // Window residue k (1-based) of the reverse complement is forward window
                // residue w + 1 - k, whole-query residue qoff + w + 1 - k.
                let used: Vec<u32> = (s..=e).map(|k| (qoff + w) as u32 + 1 - k).collect();
                let got = report(&al(3, (s, e), (2, 9)), (w, 30), Some(&frame), Strand::Minus);
                assert_eq!((got.qstart, got.qend), (*used.iter().min().unwrap(), *used.iter().max().unwrap()));
                assert_eq!((got.tstart, got.tend), (102, 109));
                let plus = report(&al(3, (s, e), (2, 9)), (w, 30), Some(&frame), Strand::Plus);
                assert_eq!((plus.qstart, plus.qend), (s + qoff as u32, e + qoff as u32));
            }
        }
        // No residue of a side: 0 stays 0.
        let none = report(&al(0, (0, 0), (0, 0)), (w, 30), Some(&frame), Strand::Minus);
        assert_eq!((none.qstart, none.qend, none.tstart, none.tend), (0, 0, 0, 0));
        // Without a frame, the window is the whole sequence.
        let whole = report(&al(3, (2, 4), (1, 1)), (10, 5), None, Strand::Minus);
        assert_eq!((whole.qstart, whole.qend), (7, 9));
    }
}

//! The overlap mode's engine (issue 57; the mode's definition is in [`super::mode`], "The
//! overlap mode"): two engines of one device, one local and one semi-global with all four
//! ends free, composed pair by pair. Both give every pair's score and end; the rule
//! [`mode::overlap_choice`] picks one; starts and paths then run on each pair's chosen engine
//! only (the pairs split into two sub-batches and back in order). The semi-global engine
//! computes starts in the same call where they are asked (its start pass alone would run
//! the forward pass again), the local engine only for the internal matches. Every engine of those two
//! modes is exact, so the overlap mode is exact, and identical on every device, by
//! construction.

use super::mode::{self, AlignMode};
use super::{Alignment, Engine, Hit, Level};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::{PairSeqs, SeqPairs};
use std::sync::Arc;

pub struct OverlapEngine {
    local: Arc<dyn Engine>,
    semi: Arc<dyn Engine>,
    clip_penalty: u32,
}

impl OverlapEngine {
    /// From a local engine and a semi-global one with all four ends free, of one scoring.
    pub fn new(local: Arc<dyn Engine>, semi: Arc<dyn Engine>, clip_penalty: u32) -> Result<OverlapEngine> {
        if !local.mode().is_local() || semi.mode() != mode::OVERLAP_SEMI_GLOBAL {
            return Err(Error::Internal(format!(
                "the overlap engine composes local and semi-global engines, not {} and {}",
                local.mode(),
                semi.mode()
            )));
        }
        Ok(OverlapEngine { local, semi, clip_penalty })
    }

    /// `run` on each engine with the pairs whose alignments it gave (the local engine: the
    /// internal matches), results back in the pairs' order. A side without pairs is not
    /// called; one with every pair gets them without a copy.
    fn by_choice<T>(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        run: impl Fn(&dyn Engine, PairSeqs<'_>, &[Alignment]) -> Result<Vec<T>>,
    ) -> Result<Vec<T>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("overlap: alignments and pairs differ in number".into()));
        }
        let internal = alignments.iter().filter(|a| a.internal).count();
        if internal == 0 {
            return run(self.semi.as_ref(), pairs, alignments);
        }
        if internal == alignments.len() {
            return run(self.local.as_ref(), pairs, alignments);
        }
        let mut out: Vec<Option<T>> = (0..pairs.len()).map(|_| None).collect();
        for (engine, want) in [(self.semi.as_ref(), false), (self.local.as_ref(), true)] {
            let at: Vec<usize> = (0..pairs.len()).filter(|&i| alignments[i].internal == want).collect();
            let mut sub = SeqPairs::default();
            sub.extend_par_with(at.len(), |k| pairs.pair(at[k]))?;
            let sub_al: Vec<Alignment> = at.iter().map(|&i| alignments[i]).collect();
            let got = run(engine, sub.view(), &sub_al)?;
            if got.len() != at.len() {
                return Err(Error::Internal(format!("overlap: {} results for {} pairs", got.len(), at.len())));
            }
            for (i, r) in at.into_iter().zip(got) {
                out[i] = Some(r);
            }
        }
        out.into_iter().map(|r| r.ok_or_else(|| Error::Internal("overlap: a pair without a result".into()))).collect()
    }
}

impl Engine for OverlapEngine {
    fn name(&self) -> String {
        format!("{} and {}", self.semi.name(), self.local.name())
    }

    fn search(&self, _queries: &[&[u8]], _db: &Database, _top: usize, _work: &Work) -> Result<Vec<Vec<Hit>>> {
        Err(mode::search_refused(self.mode()))
    }

    /// The semi-global alignments at `level` (most pairs keep theirs: one call, no second
    /// forward pass for their starts) and the local score and end, the choice, then the
    /// local engine's starts of the internal matches.
    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let semi = self.semi.align(pairs, level)?;
        let local = self.local.align(pairs, Level::ScoreEnd)?;
        if semi.len() != pairs.len() || local.len() != pairs.len() {
            return Err(Error::Internal("overlap: an engine returned too few alignments".into()));
        }
        let mut chosen: Vec<Alignment> =
            semi.into_iter().zip(local).map(|(s, l)| mode::overlap_choice(s, l, self.clip_penalty)).collect();
        let internal: Vec<usize> = (0..chosen.len()).filter(|&i| chosen[i].internal).collect();
        if level == Level::ScoreEnd || internal.is_empty() {
            return Ok(chosen);
        }
        let mut sub = SeqPairs::default();
        sub.extend_par_with(internal.len(), |k| pairs.pair(internal[k]))?;
        let ends: Vec<Alignment> = internal.iter().map(|&i| chosen[i]).collect();
        let full = self.local.starts(sub.view(), &ends)?;
        if full.len() != internal.len() {
            return Err(Error::Internal(format!("overlap: {} starts for {} pairs", full.len(), internal.len())));
        }
        for (i, a) in internal.into_iter().zip(full) {
            chosen[i] = Alignment { internal: true, ..a };
        }
        Ok(chosen)
    }

    fn starts(&self, pairs: PairSeqs<'_>, ends: &[Alignment]) -> Result<Vec<Alignment>> {
        let full = self.by_choice(pairs, ends, |engine, p, e| engine.starts(p, e))?;
        // The engines know nothing of the choice: it comes back from the ends.
        Ok(full.into_iter().zip(ends).map(|(a, e)| Alignment { internal: e.internal, ..a }).collect())
    }

    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<super::traceback::Traceback>> {
        self.by_choice(pairs, alignments, |engine, p, a| engine.traceback(p, a, path))
    }

    fn statistics(&self) -> Vec<(String, String)> {
        let mut out = self.semi.statistics();
        out.extend(self.local.statistics().into_iter().map(|(k, v)| (format!("local {k}"), v)));
        out
    }

    fn scoring(&self) -> &Scoring {
        self.semi.scoring()
    }

    fn mode(&self) -> AlignMode {
        AlignMode::Overlap(self.clip_penalty)
    }

    fn align_batch_pairs(&self) -> usize {
        self.semi.align_batch_pairs()
    }

    fn align_calls_in_flight(&self) -> usize {
        self.semi.align_calls_in_flight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scalar_modes::align_pair_mode;
    use crate::engine::traceback::trace_mode;
    use crate::scoring::Matrix;

    /// Random DNA codes of `n` residues (a small LCG: no dependency).
    fn random(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (*seed >> 33) as u8 & 3
            })
            .collect()
    }

    /// `s` with about one edit in `every` residues (substitution, insertion, deletion).
    fn mutate(seed: &mut u64, s: &[u8], every: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for &c in s {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = *seed >> 33;
            match (r % every, r / every % 3) {
                (0, 0) => out.push((c + 1) & 3),
                (0, 1) => out.extend([c, (r / 7) as u8 & 3]),
                (0, _) => {}
                _ => out.push(c),
            }
        }
        out
    }

    /// Dovetails, containments, shared repeats and unrelated pairs: the engine (SIMD engines
    /// of both modes) against the scalar reference of the mode (both alignments and the
    /// rule, pair by pair), at each level and penalty; paths by the chosen mode's trace.
    #[test]
    fn the_overlap_engine_is_the_reference_composition() {
        let sc = Scoring::new(Matrix::dna(2, -4), 4, 2).unwrap();
        let mut seed = 57u64;
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for k in 0..120 {
            let genome = random(&mut seed, 900);
            let repeat = random(&mut seed, 120);
            let every = [8, 20, 100][k % 3];
            let (q, t) = match k % 4 {
                // A dovetail: the query's suffix is the target's prefix.
                0 => (genome[..500].to_vec(), genome[300..800].to_vec()),
                // A containment.
                1 => (genome[200..400].to_vec(), genome[100..700].to_vec()),
                // A shared repeat inside unrelated sequences.
                2 => {
                    let mut q = random(&mut seed, 200);
                    q.extend(&repeat);
                    q.extend(random(&mut seed, 200));
                    let mut t = random(&mut seed, 300);
                    t.extend(&repeat);
                    t.extend(random(&mut seed, 100));
                    (q, t)
                }
                _ => (random(&mut seed, 150), random(&mut seed, 170)),
            };
            pairs.push((mutate(&mut seed, &q, every), mutate(&mut seed, &t, every)));
        }
        let slices: Vec<(&[u8], &[u8])> = pairs.iter().map(|(q, t)| (&q[..], &t[..])).collect();
        let owned = SeqPairs::from_slices(&slices);
        let mut internal = 0;
        for penalty in [0, 10, 40] {
            let local: Arc<dyn Engine> = Arc::new(crate::engine::simd::SimdEngine::new(sc.clone(), 2).unwrap());
            let semi: Arc<dyn Engine> =
                Arc::new(crate::engine::simd::SimdModeEngine::new(sc.clone(), mode::OVERLAP_SEMI_GLOBAL, 2).unwrap());
            let engine = OverlapEngine::new(local, semi, penalty).unwrap();
            let m = AlignMode::Overlap(penalty);
            let want: Vec<Alignment> = slices.iter().map(|(q, t)| align_pair_mode(q, t, &sc, m).unwrap()).collect();
            // The rule by hand on the two reference alignments.
            for (i, (q, t)) in slices.iter().enumerate() {
                let s = align_pair_mode(q, t, &sc, mode::OVERLAP_SEMI_GLOBAL).unwrap();
                let l = crate::engine::scalar::align_pair(q, t, &sc).unwrap();
                let semi_wins = s.score as i64 + penalty as i64 >= l.score as i64;
                assert_eq!(want[i].internal, !semi_wins, "pair {i}");
                assert_eq!(want[i].score, if semi_wins { s.score } else { l.score }, "pair {i}");
                internal += want[i].internal as usize;
            }
            assert_eq!(engine.align(owned.view(), Level::Coordinates).unwrap(), want);
            let ends = engine.align(owned.view(), Level::ScoreEnd).unwrap();
            let ends_want: Vec<Alignment> = want.iter().map(|a| a.end_only()).collect();
            assert_eq!(ends, ends_want);
            assert_eq!(engine.starts(owned.view(), &ends).unwrap(), want);
            let traced = engine.traceback(owned.view(), &want, true).unwrap();
            for (i, (q, t)) in slices.iter().enumerate() {
                let mode_of = if want[i].internal { AlignMode::Local } else { mode::OVERLAP_SEMI_GLOBAL };
                let tb = trace_mode(q, t, &sc, &want[i], mode_of).unwrap();
                assert_eq!(traced[i].ops, tb.ops, "pair {i}");
                assert_eq!(traced[i].stats, tb.stats, "pair {i}");
            }
        }
        // Both choices were made, on every kind of pair.
        assert!(internal > 30 && internal < 3 * 120 - 30, "{internal} internal matches");
    }

    /// An internal match never reaches a start border and an end border (P >= 0); a choice
    /// of the semi-global alignment always does (or holds no residue of a side).
    #[test]
    fn internal_matches_never_reach_both_borders() {
        let sc = Scoring::new(Matrix::dna(2, -4), 4, 2).unwrap();
        let mut seed = 7u64;
        for k in 0..300 {
            let (m, n) = (20 + k % 50, 30 + k % 70);
            let q = random(&mut seed, m);
            let t = if k % 2 == 0 { mutate(&mut seed, &q, 10) } else { random(&mut seed, n) };
            let a = align_pair_mode(&q, &t, &sc, AlignMode::Overlap(k as u32 % 7)).unwrap();
            let starts = a.qstart == 1 || a.tstart == 1;
            let ends = a.qend as usize == q.len() || a.tend as usize == t.len();
            if a.internal {
                assert!(!(starts && ends), "{a:?}");
            } else {
                assert!((starts && ends) || a.qend == 0 || a.tend == 0, "{a:?}");
            }
        }
    }
}

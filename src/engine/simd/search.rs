//! Search: the database in batches of one target per 8-bit lane (consecutive in length
//! order, so a batch pads little), every query against each batch; threads take batches.
//! The one partial batch holds the shortest targets, where its empty lanes cost least (at
//! the long end, 32 targets of 4,262-8,081 residues filled half a batch of the test
//! database: 1.8% of all cells).
//!
//! Lanes that may have wrapped at 8 bits wait, per query, until they fill a whole 16-bit
//! batch (or the thread's share of the database ends): rescoring them batch by batch
//! instead ran a 16-bit pass of the batch's length for one or two lanes at a time, which
//! on the longest query cost a third of the search.

use super::intersequence::{fits, Columns, Lookup, Scratch};
use super::vector::Vector;
use super::Kernels;
use crate::database::Database;
use crate::engine::scalar::{self, Profile};
use crate::engine::topk::TopK;
use crate::engine::{recomputed, Hit};
use crate::error::Result;
use crate::progress::Work;
use crate::scoring::Scoring;
use rayon::prelude::*;

/// What every thread reads: the queries and both widths' tables.
struct Shared<'a, K: Kernels> {
    sc: &'a Scoring,
    queries: &'a [&'a [u8]],
    used: Vec<Vec<u8>>,
    db: &'a Database,
    narrow: Lookup<K::Narrow>,
    wide: Lookup<K::Wide>,
}

/// One thread's buffers, its best hits per query and the targets waiting for a wide pass.
struct Worker<'a, K: Kernels> {
    tops: Vec<TopK<'a>>,
    waiting: Vec<Vec<u32>>,
    narrow_cols: Columns,
    wide_cols: Columns,
    narrow: Scratch<K::Narrow>,
    wide: Scratch<K::Wide>,
    scalar: scalar::Scratch,
}

pub(super) fn search<K: Kernels>(
    sc: &Scoring,
    queries: &[&[u8]],
    db: &Database,
    top: usize,
    work: &Work,
) -> Result<Vec<Vec<Hit>>> {
    if !fits(sc) {
        return scalar_search(sc, queries, db, top, work);
    }
    // Safe: the engine checked at construction that this CPU runs K's instruction set.
    let (narrow, wide) = unsafe { (Lookup::<K::Narrow>::new(sc), Lookup::<K::Wide>::new(sc)) };
    if !wide.usable() {
        return scalar_search(sc, queries, db, top, work);
    }
    let used = queries
        .iter()
        .map(|q| {
            let mut seen = [false; 32];
            q.iter().for_each(|&c| seen[c as usize] = true);
            (0..32u8).filter(|&c| seen[c as usize]).collect()
        })
        .collect();
    let shared = Shared::<K> { sc, queries, used, db, narrow, wide };
    let lanes = K::Narrow::LANES;
    let batches = db.len().div_ceil(lanes);
    let short = db.len() - (batches.max(1) - 1) * lanes; // targets of batch 0
    let new_worker = || Worker::<K> {
        tops: queries.iter().map(|_| TopK::new(top, db)).collect(),
        waiting: queries.iter().map(|_| Vec::new()).collect(),
        narrow_cols: Columns::default(),
        wide_cols: Columns::default(),
        narrow: Scratch::default(),
        wide: Scratch::default(),
        scalar: scalar::Scratch::default(),
    };
    let merged = (0..batches)
        .into_par_iter()
        .fold(new_worker, |mut w, b| {
            let first = if b == 0 { 0 } else { short + (b - 1) * lanes };
            let range = first..if b == 0 { short } else { first + lanes };
            let batch_residues: usize = range.clone().map(|t| db.seq_len(t)).sum();
            if shared.narrow.usable() {
                let targets: Vec<&[u8]> = range.clone().map(|t| db.seq(t)).collect();
                w.narrow_cols.fill::<K::Narrow>(&targets, K::BLOCK_NARROW);
            }
            for (qi, q) in queries.iter().enumerate() {
                if shared.narrow.usable() {
                    w.score_narrow(&shared, qi, first, range.len());
                } else {
                    w.waiting[qi].extend(range.clone().map(|t| t as u32));
                }
                while w.waiting[qi].len() >= K::Wide::LANES {
                    w.score_wide(&shared, qi);
                }
                work.add((q.len() * batch_residues) as u64);
            }
            w
        })
        .map(|mut w| {
            for qi in 0..queries.len() {
                while !w.waiting[qi].is_empty() {
                    w.score_wide(&shared, qi);
                }
            }
            w.tops
        })
        .reduce(
            || queries.iter().map(|_| TopK::new(top, db)).collect(),
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    x.merge(y);
                }
                a
            },
        );
    Ok(merged.into_iter().map(TopK::into_sorted).collect())
}

impl<K: Kernels> Worker<'_, K> {
    /// Query `qi` against the batch in `narrow_cols` (targets `first..first + n`): exact
    /// lanes become hits, the others wait for a wide pass.
    fn score_narrow(&mut self, shared: &Shared<K>, qi: usize, first: usize, n: usize) {
        let look = &shared.narrow;
        let best = unsafe {
            K::score_narrow(shared.queries[qi], &shared.used[qi], look, &self.narrow_cols, &mut self.narrow).lanes()
        };
        for (l, &lane) in best[..n].iter().enumerate() {
            let target = (first + l) as u32;
            let score = look.score(lane);
            if score <= look.exact_limit() {
                let score = score as i32;
                self.tops[qi].push(Hit { target, score, recomputed: recomputed(score) });
            } else {
                self.waiting[qi].push(target);
            }
        }
    }

    /// Up to one wide batch of the targets waiting for query `qi`; those that pass the
    /// wide lanes' range go to the scalar reference.
    fn score_wide(&mut self, shared: &Shared<K>, qi: usize) {
        let q = shared.queries[qi];
        let take = self.waiting[qi].len().min(K::Wide::LANES);
        let batch: Vec<u32> = self.waiting[qi].drain(..take).collect();
        let targets: Vec<&[u8]> = batch.iter().map(|&t| shared.db.seq(t as usize)).collect();
        self.wide_cols.fill::<K::Wide>(&targets, K::BLOCK_WIDE);
        let look = &shared.wide;
        let best = unsafe { K::score_wide(q, &shared.used[qi], look, &self.wide_cols, &mut self.wide).lanes() };
        for (k, &target) in batch.iter().enumerate() {
            let score = look.score(best[k]);
            let score = if score <= look.exact_limit() {
                score as i32
            } else {
                let profile = Profile::new(q, shared.sc);
                scalar::score_end(&profile, targets[k], shared.sc, &mut self.scalar).score
            };
            self.tops[qi].push(Hit { target, score, recomputed: recomputed(score) });
        }
    }
}

/// Scores the byte tables cannot hold (huge DNA scores, say): the scalar reference.
fn scalar_search(sc: &Scoring, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>> {
    Ok(scalar::search_all(sc, queries, db, top, work))
}

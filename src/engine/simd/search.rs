//! Search: the database in batches of one target per 8-bit lane (consecutive in length
//! order, so a batch pads little), every query against each batch; threads take batches.

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

/// One thread's buffers and its best hits per query.
struct Worker<'a, K: Kernels> {
    tops: Vec<TopK<'a>>,
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
    let (look_n, look_w) = unsafe { (Lookup::<K::Narrow>::new(sc), Lookup::<K::Wide>::new(sc)) };
    let used: Vec<Vec<u8>> = queries
        .iter()
        .map(|q| {
            let mut seen = [false; 32];
            q.iter().for_each(|&c| seen[c as usize] = true);
            (0..32u8).filter(|&c| seen[c as usize]).collect()
        })
        .collect();
    let lanes = K::Narrow::LANES;
    let batches = db.len().div_ceil(lanes);
    let new_worker = || Worker::<K> {
        tops: queries.iter().map(|_| TopK::new(top, db)).collect(),
        narrow_cols: Columns::default(),
        wide_cols: Columns::default(),
        narrow: Scratch::default(),
        wide: Scratch::default(),
        scalar: scalar::Scratch::default(),
    };
    let merged = (0..batches)
        .into_par_iter()
        .fold(new_worker, |mut w, b| {
            let first = b * lanes;
            let targets: Vec<&[u8]> = (first..db.len().min(first + lanes)).map(|t| db.seq(t)).collect();
            w.narrow_cols.fill::<K::Narrow>(&targets, K::BLOCK_NARROW);
            let batch_residues: usize = targets.iter().map(|t| t.len()).sum();
            for (qi, q) in queries.iter().enumerate() {
                let best = unsafe { K::score_narrow(q, &used[qi], &look_n, &w.narrow_cols, &mut w.narrow).lanes() };
                let mut again: Vec<usize> = Vec::new();
                for (l, &s) in best[..targets.len()].iter().enumerate() {
                    if s <= look_n.exact_limit() {
                        let score = s as i32;
                        w.tops[qi].push(Hit { target: (first + l) as u32, score, recomputed: recomputed(score) });
                    } else {
                        again.push(l);
                    }
                }
                for chunk in again.chunks(K::Wide::LANES) {
                    let wide_targets: Vec<&[u8]> = chunk.iter().map(|&l| targets[l]).collect();
                    w.wide_cols.fill::<K::Wide>(&wide_targets, K::BLOCK_WIDE);
                    let best = unsafe { K::score_wide(q, &used[qi], &look_w, &w.wide_cols, &mut w.wide).lanes() };
                    for (k, &l) in chunk.iter().enumerate() {
                        let target = (first + l) as u32;
                        let hit = if best[k] <= look_w.exact_limit() {
                            let score = best[k] as i32;
                            Hit { target, score, recomputed: recomputed(score) }
                        } else {
                            let profile = Profile::new(q, sc);
                            let s = scalar::score_end(&profile, targets[l], sc, &mut w.scalar).score;
                            Hit { target, score: s, recomputed: recomputed(s) }
                        };
                        w.tops[qi].push(hit);
                    }
                }
                work.add((q.len() * batch_residues) as u64);
            }
            w
        })
        .map(|w| w.tops)
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

/// Scores the byte tables cannot hold (huge DNA scores, say): the scalar reference.
fn scalar_search(sc: &Scoring, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>> {
    Ok(scalar::search_all(sc, queries, db, top, work))
}

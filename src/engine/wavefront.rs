//! One long pair on every thread: the scalar reference's two passes (`scalar::score_end`,
//! `scalar::start_from_end`) over the DP matrix cut into bands of query rows, one band a
//! thread. Band b computes its tile of a block of target columns once band b-1 has
//! finished that block, so the bands run as a wavefront down the anti-diagonal of blocks.
//! What crosses from a band to the next is, per column, the H of the band's last row and
//! the F carried below it.
//!
//! Results are the reference's bit for bit: every cell is computed by the same recurrence
//! in 32 bits, and the tie rule (smallest target end, then smallest query end; for the
//! start, the first cell reaching the score in the same order over the reversed prefixes)
//! is kept per band and then across bands, the earlier column first and, within a column,
//! the upper band.

use super::scalar::{self, Profile, ScoreEnd};
use super::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

/// Far below any reachable score, yet safe to subtract gap costs from (as in `scalar`).
const NEG: i32 = i32::MIN / 4;

/// Below this many cells a pair is aligned on one thread: a wavefront's waits would cost
/// more than its second thread saves.
pub const MIN_CELLS: usize = 1 << 24;

/// Score, end and start of one pair on `threads` threads (bands), bit-identical to
/// `scalar::align_pair`.
pub fn align_pair(query: &[u8], target: &[u8], sc: &Scoring, threads: usize) -> Result<Alignment> {
    let bands = threads.clamp(1, query.len().max(1));
    // Blocks of columns: enough that the wavefront fills quickly (32 a band), not so
    // narrow that waiting on the band above dominates.
    let block = (target.len() / (32 * bands)).clamp(64, 4096);
    align_pair_with(query, target, sc, bands, block)
}

/// `align_pair` with the band count and block width given (tests use small ones).
pub fn align_pair_with(query: &[u8], target: &[u8], sc: &Scoring, bands: usize, block: usize) -> Result<Alignment> {
    let end = Pass::Local.run(query, target, sc, bands, block, 0)?;
    if end.score <= 0 {
        return Ok(Alignment::default());
    }
    let (qe, te) = (end.qend as usize, end.tend as usize);
    let rq: Vec<u8> = query[..qe].iter().rev().copied().collect();
    let rt: Vec<u8> = target[..te].iter().rev().copied().collect();
    let start = Pass::Anchored.run(&rq, &rt, sc, bands, block, end.score)?;
    if start.score != end.score {
        return Err(Error::Internal(format!("reverse pass did not reach score {}", end.score)));
    }
    Ok(Alignment {
        score: end.score,
        qstart: end.qend + 1 - start.qend,
        qend: end.qend,
        tstart: end.tend + 1 - start.tend,
        tend: end.tend,
        recomputed: super::recomputed(end.score),
        internal: false,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Pass {
    /// `score_end`: local alignment, the best cell by the tie rule.
    Local,
    /// `start_from_end` on reversed prefixes: alignments that start at the corner (no
    /// floor at 0), the first cell (column-major) reaching the target score.
    Anchored,
}

/// The row above a band: per column j, H(r0 - 1, j) at `h[j + 1]` (`h[0]` is the column
/// before the first) and F(r0, j) at `f[j]`. Written by the band above, block by block.
struct Border {
    h: Vec<AtomicI32>,
    f: Vec<AtomicI32>,
}

impl Border {
    fn new(n: usize) -> Border {
        Border { h: (0..=n).map(|_| AtomicI32::new(0)).collect(), f: (0..n).map(|_| AtomicI32::new(NEG)).collect() }
    }
}

/// What one band found: its best cell (Local) or its first cell reaching the score
/// (Anchored), 0-based row and column; score 0 when none.
#[derive(Clone, Copy, Default)]
struct Found {
    score: i32,
    row: usize,
    col: usize,
}

impl Pass {
    /// The pass over `query` x `target` in `bands` bands; `goal` is the score an Anchored
    /// pass looks for. 1-based end cell, as the scalar functions give it.
    fn run(self, query: &[u8], target: &[u8], sc: &Scoring, bands: usize, block: usize, goal: i32) -> Result<ScoreEnd> {
        let (m, n) = (query.len(), target.len());
        if m == 0 || n == 0 {
            return Ok(ScoreEnd::default());
        }
        let bands = bands.clamp(1, m);
        let block = block.max(1);
        let blocks = n.div_ceil(block);
        // borders[b]: the row above band b (borders[0] the matrix's own top row).
        let borders: Vec<Border> = (0..bands).map(|_| Border::new(n)).collect();
        for j in 0..=n {
            let top = match self {
                Pass::Local => 0,
                Pass::Anchored if j == 0 => 0,
                Pass::Anchored => NEG,
            };
            borders[0].h[j].store(top, Ordering::Relaxed);
        }
        // The column before the first, below the top row: 0 for local, unreachable else.
        for border in &borders[1..] {
            border.h[0].store(if self == Pass::Local { 0 } else { NEG }, Ordering::Relaxed);
        }
        // done[b]: blocks band b has finished (or given up on, past `stop`).
        let done: Vec<AtomicUsize> = (0..bands).map(|_| AtomicUsize::new(0)).collect();
        // Anchored: the earliest column where some band reached the goal.
        let stop = AtomicUsize::new(usize::MAX);
        let rows = |b: usize| (b * m / bands)..((b + 1) * m / bands);
        let band = |b: usize| -> Result<Found> {
            let profile = Profile::new(&query[rows(b)], sc);
            let ctx =
                Band { pass: self, profile: &profile, target, sc, above: &borders[b], below: borders.get(b + 1), goal };
            ctx.run(block, blocks, b.checked_sub(1).map(|a| &done[a]), &done[b], &stop)
        };
        let band = &band;
        let found: Vec<Result<Found>> = std::thread::scope(|s| {
            let others: Vec<_> = (1..bands)
                .map(|b| crate::threads::spawn_scoped(s, &format!("sw-wave-{}", b), move || band(b)))
                .collect();
            let mut all = vec![band(0)];
            all.extend(
                others
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("wavefront band panicked".into())))),
            );
            all
        });
        let mut best: Option<(Found, usize)> = None;
        for (b, f) in found.into_iter().enumerate() {
            let f = f?;
            if f.score == 0 {
                continue;
            }
            let row = rows(b).start + f.row;
            let better = match best {
                None => true,
                Some((w, _)) => match self {
                    Pass::Local => f.score > w.score || (f.score == w.score && f.col < w.col),
                    Pass::Anchored => f.col < w.col,
                },
            };
            if better {
                best = Some((Found { row, ..f }, b));
            }
        }
        Ok(best.map_or(ScoreEnd::default(), |(f, _)| ScoreEnd {
            score: f.score,
            qend: f.row as u32 + 1,
            tend: f.col as u32 + 1,
        }))
    }
}

/// One band's view: its rows' profile, the border above (read) and below (written).
struct Band<'a> {
    pass: Pass,
    profile: &'a Profile,
    target: &'a [u8],
    sc: &'a Scoring,
    above: &'a Border,
    below: Option<&'a Border>,
    goal: i32,
}

impl Band<'_> {
    fn run(
        &self,
        block: usize,
        blocks: usize,
        above_done: Option<&AtomicUsize>,
        done: &AtomicUsize,
        stop: &AtomicUsize,
    ) -> Result<Found> {
        let m = self.profile.len();
        let local = self.pass == Pass::Local;
        let mut hcol = vec![if local { 0 } else { NEG }; m];
        let mut ecol = vec![NEG; m];
        let mut found = Found::default();
        let result = (|| {
            for c in 0..blocks {
                let cols = c * block..((c + 1) * block).min(self.target.len());
                if let Some(above) = above_done {
                    wait_for(above, c + 1);
                }
                if cols.start > stop.load(Ordering::Acquire) {
                    break;
                }
                for j in cols {
                    if j > stop.load(Ordering::Relaxed) {
                        break; // past a column where a band above reached the goal
                    }
                    let (col_best, col_best_i, f) = scalar::column(
                        self.profile.row(self.target[j]),
                        &mut hcol,
                        &mut ecol,
                        self.above.h[j].load(Ordering::Relaxed), // H(r0-1, j-1)
                        self.above.f[j].load(Ordering::Relaxed), // F(r0, j)
                        local,
                        self.sc,
                    );
                    if let Some(below) = self.below {
                        below.h[j + 1].store(hcol[m - 1], Ordering::Relaxed);
                        below.f[j].store(f, Ordering::Relaxed);
                    }
                    if local {
                        if col_best > found.score {
                            found = Found { score: col_best, row: col_best_i, col: j };
                        }
                    } else if col_best >= self.goal {
                        if col_best > self.goal {
                            return Err(Error::Internal(format!(
                                "reverse pass found score {} above the forward best {}",
                                col_best, self.goal
                            )));
                        }
                        // The first row reaching the goal: col_best_i is the first row
                        // strictly above every earlier one, so the first at its maximum.
                        found = Found { score: col_best, row: col_best_i, col: j };
                        stop.fetch_min(j, Ordering::AcqRel);
                        return Ok(());
                    }
                }
                done.store(c + 1, Ordering::Release);
            }
            Ok(())
        })();
        // Bands below never wait on blocks this band will not finish.
        done.store(usize::MAX, Ordering::Release);
        result.map(|_| found)
    }
}

/// Waits until `done` reaches `blocks`: spins briefly, then yields the core.
fn wait_for(done: &AtomicUsize, blocks: usize) {
    let mut spins = 0u32;
    while done.load(Ordering::Acquire) < blocks {
        if spins < 64 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// The scalar reference's `align_pair`, kept here for the tests' comparisons.
#[cfg(test)]
fn reference(query: &[u8], target: &[u8], sc: &Scoring) -> Alignment {
    scalar::align_pair(query, target, sc).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::{Alphabet, Matrix};

    #[test]
    fn bands_and_blocks_of_every_size_match_the_reference() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let schemes = [
            Scoring::blosum62(),
            Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap(),
            Scoring::new(Matrix::protein("BLOSUM45").unwrap(), 0, 3).unwrap(),
        ];
        for sc in &schemes {
            let size = sc.matrix.size() as u64;
            for k in 0..60 {
                let q: Vec<u8> = (0..1 + next(90)).map(|_| next(size) as u8).collect();
                let t: Vec<u8> = if k % 3 == 0 {
                    (0..1 + next(120)).map(|_| next(size) as u8).collect()
                } else {
                    // Related: a copy with edits, so scores are high and gaps cross bands.
                    let mut t = q.clone();
                    for _ in 0..next(12) {
                        let p = next(t.len() as u64) as usize;
                        match next(3) {
                            0 => t[p] = next(size) as u8,
                            1 if t.len() > 1 => {
                                t.remove(p);
                            }
                            _ => t.insert(p, next(size) as u8),
                        }
                    }
                    t
                };
                let want = reference(&q, &t, sc);
                for bands in 1..=4 {
                    for block in [1, 3, 7, 64] {
                        let got = align_pair_with(&q, &t, sc, bands, block).unwrap();
                        assert_eq!(got, want, "{} bands {} block {} q {:?} t {:?}", sc.describe(), bands, block, q, t);
                    }
                }
            }
        }
    }

    #[test]
    fn ties_across_bands_follow_the_rule() {
        let sc = Scoring::blosum62();
        let enc = |s: &str| Alphabet::Protein.encode(s.as_bytes()).unwrap();
        // Equal best cells in several bands and columns: repeats of one motif on both sides,
        // so the best score is reached at many (query end, target end) cells.
        let q = enc(&"WCW".repeat(9));
        let t = enc(&"AWCWA".repeat(4));
        let cases =
            [(q.clone(), t.clone()), (t.clone(), q.clone()), (enc("WAAAAW"), enc("W")), (enc("W"), enc("WAAAAW"))];
        for (q, t) in &cases {
            let want = reference(q, t, &sc);
            for bands in 1..=q.len().min(6) {
                for block in 1..=3 {
                    assert_eq!(
                        align_pair_with(q, t, &sc, bands, block).unwrap(),
                        want,
                        "bands {} block {}",
                        bands,
                        block
                    );
                }
            }
        }
    }
}

//! Striped (Farrar) scoring of one pair with the reference's end cell, for align.
//!
//! The query is laid out in `segs` segments of `LANES` rows: lane l of segment s holds
//! query row `l * segs + s`. Lanes are unsigned saturating with biased scores, as in
//! `intersequence`: values are the reference's clamped at 0, exact below `MAX - bias`.
//! The end cell follows the tie rule: the first column whose maximum beats every earlier
//! column, and in it the smallest row holding that maximum. Padding rows (beyond the
//! query) can tie but never beat a real cell, and are larger rows, so they never win.

use super::intersequence::bias;
use super::vector::Vector;
use crate::engine::scalar::ScoreEnd;
use crate::scoring::Scoring;

/// Biased scores of every query row against each residue code, in striped order.
pub struct Profile<V> {
    vecs: Vec<V>,
    segs: usize,
    bias: u32,
    gap_first: u32,
    gap_extend: u32,
}

impl<V: Vector> Profile<V> {
    /// `query` may be given reversed (`rev`), for the start pass. Callers check `fits`.
    #[inline(always)]
    pub unsafe fn new(query: &[u8], rev: bool, sc: &Scoring) -> Profile<V> {
        let m = query.len();
        let n = sc.matrix.size();
        let segs = m.div_ceil(V::LANES).max(1);
        let bias = bias(sc);
        let mut bytes = vec![0u8; V::BYTES];
        let mut vecs = Vec::with_capacity(n * segs);
        for c in 0..n as u8 {
            for s in 0..segs {
                for l in 0..V::LANES {
                    let i = l * segs + s;
                    let v = if i < m {
                        let q = if rev { query[m - 1 - i] } else { query[i] };
                        (sc.score(q, c) + bias as i32) as u16
                    } else {
                        0
                    };
                    bytes[l * V::WIDTH..(l + 1) * V::WIDTH].copy_from_slice(&v.to_le_bytes()[..V::WIDTH]);
                }
                vecs.push(V::load(bytes.as_ptr()));
            }
        }
        Profile { vecs, segs, bias, gap_first: sc.gap_first() as u32, gap_extend: sc.gap_extend as u32 }
    }
}

/// Column buffers one thread reuses.
pub struct Scratch<V> {
    h: Vec<V>,
    e: Vec<V>,
}

impl<V> Default for Scratch<V> {
    fn default() -> Self {
        Scratch { h: Vec::new(), e: Vec::new() }
    }
}

/// Best score and end cell of the profiled query against `target` (given reversed when
/// `rev`), or `None` when the lanes may have saturated. Stops at the first column reaching
/// `stop_at` (the start pass knows the best score: no later column can beat it).
#[inline(always)]
pub unsafe fn score_end<V: Vector>(
    prof: &Profile<V>,
    query_len: usize,
    target: &[u8],
    rev: bool,
    stop_at: u32,
    scratch: &mut Scratch<V>,
) -> Option<ScoreEnd> {
    let segs = prof.segs;
    let zero = V::zero();
    let bias = V::splat(prof.bias);
    let gap_first = V::splat(prof.gap_first);
    let gap_extend = V::splat(prof.gap_extend);
    let limit = V::MAX - prof.bias;
    scratch.h.clear();
    scratch.h.resize(segs, zero);
    scratch.e.clear();
    scratch.e.resize(segs, zero);
    let (hv, ev) = (scratch.h.as_mut_ptr(), scratch.e.as_mut_ptr());
    let mut best = ScoreEnd::default();
    let mut best_v = zero;
    let n = target.len();
    for j in 0..n {
        let t = if rev { target[n - 1 - j] } else { target[j] };
        let vp = prof.vecs.as_ptr().add(t as usize * segs);
        let mut f = zero;
        let mut diag = (*hv.add(segs - 1)).shift_up();
        let mut col_max = zero;
        for s in 0..segs {
            let e = *ev.add(s);
            let h = diag.adds(*vp.add(s)).subs(bias).max(e).max(f);
            diag = *hv.add(s);
            *hv.add(s) = h;
            col_max = col_max.max(h);
            let h_open = h.subs(gap_first);
            *ev.add(s) = e.subs(gap_extend).max(h_open);
            f = f.subs(gap_extend).max(h_open);
        }
        // Lazy F: carry F across the lane boundaries until it no longer matters.
        f = f.shift_up();
        let mut s = 0;
        loop {
            let h = *hv.add(s);
            if f.subs(h.subs(gap_first)).is_zero() {
                break;
            }
            let h = h.max(f);
            *hv.add(s) = h;
            col_max = col_max.max(h);
            *ev.add(s) = (*ev.add(s)).max(h.subs(gap_first));
            f = f.subs(gap_extend);
            s += 1;
            if s == segs {
                s = 0;
                f = f.shift_up();
            }
        }
        if !col_max.subs(best_v).is_zero() {
            let top = col_max.hmax();
            if top >= limit {
                return None;
            }
            let mut row = usize::MAX;
            for s in 0..segs {
                let lanes = (*hv.add(s)).lanes();
                for (l, &v) in lanes[..V::LANES].iter().enumerate() {
                    if v == top {
                        row = row.min(l * segs + s);
                    }
                }
            }
            best = ScoreEnd { score: top as i32, qend: row as u32 + 1, tend: j as u32 + 1 };
            best_v = V::splat(top);
            if top >= stop_at {
                break;
            }
        }
    }
    debug_assert!(best.qend as usize <= query_len);
    Some(best)
}

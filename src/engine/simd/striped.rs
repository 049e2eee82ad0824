//! Striped (Farrar) scoring of one pair with the reference's end cell, for align.
//!
//! The query is laid out in `segs` segments of `LANES` rows: lane l of segment s holds
//! query row `l * segs + s`, so each lane holds a block of `segs` consecutive rows. Lanes
//! are unsigned saturating with biased scores, as in `intersequence`: values are the
//! reference's clamped at 0, exact below `MAX - bias`.
//!
//! Vertical gaps (F) crossing from one lane's block into the next are settled after each
//! column's pass. Usually they change nothing, which one compare shows; otherwise the exact
//! carry into every lane is a prefix maximum over the lanes below, each block decaying it
//! by `segs * extend`, taken in log2(LANES) shift steps, and one walk down the segments
//! applies it until it stops mattering. (Farrar's lazy loop instead walks the lanes one
//! segment at a time, which at gap extend 1 can take dozens of steps a column.)
//!
//! The end cell follows the tie rule: the first column whose maximum beats every earlier
//! column, and in it the smallest row holding that maximum. That column's H is copied
//! aside, and the row looked up once at the end. Padding rows (beyond the query) can tie
//! but never beat a real cell, and are larger rows, so they never win.

use super::intersequence::{bias, PAD};
use super::vector::Vector;
use crate::engine::scalar::ScoreEnd;
use crate::scoring::Scoring;

/// For each target residue code c, byte shuffle tables of `score(x, c) + bias` over query
/// codes x (`lo`: x < 16, `hi`: 16..32): what a profile is built from.
pub struct Tables<V> {
    lo: Vec<V>,
    hi: Vec<V>,
    bias: u32,
    gap_open: u32,
    gap_first: u32,
    gap_extend: u32,
}

impl<V: Vector> Tables<V> {
    /// Callers check `intersequence::fits` first.
    #[inline(always)]
    pub unsafe fn new(sc: &Scoring) -> Tables<V> {
        let n = sc.matrix.size();
        let bias = bias(sc);
        let mut lo = Vec::with_capacity(n);
        let mut hi = Vec::with_capacity(n);
        for c in 0..n as u8 {
            let col = |x: usize| if x < n { (sc.score(x as u8, c) + bias as i32) as u8 } else { 0 };
            let lo_bytes: Vec<u8> = (0..V::BYTES).map(|b| col(b % 16)).collect();
            let hi_bytes: Vec<u8> = (0..V::BYTES).map(|b| col(16 + b % 16)).collect();
            lo.push(V::load(lo_bytes.as_ptr()));
            hi.push(V::load(hi_bytes.as_ptr()));
        }
        Tables {
            lo,
            hi,
            bias,
            gap_open: sc.gap_open as u32,
            gap_first: sc.gap_first() as u32,
            gap_extend: sc.gap_extend as u32,
        }
    }

    /// The largest score a lane holds exactly.
    pub fn exact_limit(&self) -> u32 {
        V::MAX - self.bias - 1
    }
}

/// Biased scores of every query row against each residue code, in striped order. One per
/// thread and width, rebuilt for each query.
pub struct Profile<V> {
    vecs: Vec<V>,
    segs: usize,
    len: usize,
    codes: Vec<u8>,
    idx: Vec<V>,
}

impl<V> Default for Profile<V> {
    fn default() -> Self {
        Profile { vecs: Vec::new(), segs: 0, len: 0, codes: Vec::new(), idx: Vec::new() }
    }
}

impl<V: Vector> Profile<V> {
    /// Lays out `query` (reversed when `rev`, for the start pass): its codes in striped
    /// order, then two shuffles per segment and residue code.
    #[inline(always)]
    pub unsafe fn build(&mut self, tabs: &Tables<V>, query: &[u8], rev: bool) {
        let m = query.len();
        let segs = m.div_ceil(V::LANES).max(1);
        self.segs = segs;
        self.len = m;
        // Padding rows get PAD, which both shuffles turn into 0 (score -bias); 16-bit
        // lanes carry 0xff in their high byte, which the shuffles turn into 0 too.
        self.codes.clear();
        self.codes.resize(segs * V::BYTES, PAD);
        if V::WIDTH == 2 {
            for b in self.codes.iter_mut().skip(1).step_by(2) {
                *b = 0xff;
            }
        }
        for (i, &c) in query.iter().enumerate() {
            let row = if rev { m - 1 - i } else { i };
            self.codes[(row % segs) * V::BYTES + (row / segs) * V::WIDTH] = c;
        }
        let (lo_add, hi_sub) = (V::splat_bytes(0x70), V::splat_bytes(16));
        self.idx.clear();
        for s in 0..segs {
            let codes = V::load(self.codes.as_ptr().add(s * V::BYTES));
            self.idx.push(codes.adds_bytes(lo_add)); // codes >= 16 get the high bit
            self.idx.push(codes.sub_bytes(hi_sub)); // codes < 16 wrap to the high bit
        }
        let n = tabs.lo.len();
        self.vecs.clear();
        self.vecs.resize(n * segs, V::zero());
        let out = self.vecs.as_mut_ptr();
        let idx = self.idx.as_ptr();
        for c in 0..n {
            let (lo, hi) = (tabs.lo[c], tabs.hi[c]);
            for s in 0..segs {
                let v = V::shuffle_bytes(lo, *idx.add(2 * s)).or(V::shuffle_bytes(hi, *idx.add(2 * s + 1)));
                *out.add(c * segs + s) = v;
            }
        }
    }
}

/// Column buffers one thread reuses.
pub struct Columns<V> {
    h: Vec<V>,
    e: Vec<V>,
    best_h: Vec<V>,
}

impl<V> Default for Columns<V> {
    fn default() -> Self {
        Columns { h: Vec::new(), e: Vec::new(), best_h: Vec::new() }
    }
}

/// Smallest real row (below `len`) of a striped column holding `value`.
#[inline(always)]
unsafe fn first_row<V: Vector>(col: &[V], len: usize, value: u32) -> Option<usize> {
    let segs = col.len();
    let mut row = None;
    for (s, v) in col.iter().enumerate() {
        let lanes = v.lanes();
        for (l, &x) in lanes[..V::LANES].iter().enumerate() {
            let i = l * segs + s;
            if x == value && i < len && row.is_none_or(|r| i < r) {
                row = Some(i);
            }
        }
    }
    row
}

/// Best score and end cell of the profiled query against `target` (given reversed when
/// `rev`), or `None` when the lanes may have saturated. Stops at the first column reaching
/// `stop_at` (the start pass knows the best score: no later column can beat it).
#[inline(always)]
pub unsafe fn score_end<V: Vector>(
    prof: &Profile<V>,
    tabs: &Tables<V>,
    target: &[u8],
    rev: bool,
    stop_at: u32,
    cols: &mut Columns<V>,
) -> Option<ScoreEnd> {
    let segs = prof.segs;
    let zero = V::zero();
    let bias = V::splat(tabs.bias);
    let gap_open = V::splat(tabs.gap_open);
    let gap_first = V::splat(tabs.gap_first);
    let gap_extend = V::splat(tabs.gap_extend);
    let limit = V::MAX - tabs.bias;
    // What a carry loses crossing 2^k lanes' blocks, for the prefix scan's step k.
    let mut decay = [zero; 7];
    let mut steps = 0;
    while (1 << steps) < V::LANES {
        decay[steps] = V::splat(((segs as u64 * tabs.gap_extend as u64) << steps).min(V::MAX as u64) as u32);
        steps += 1;
    }
    cols.h.clear();
    cols.h.resize(segs, zero);
    cols.e.clear();
    cols.e.resize(segs, zero);
    cols.best_h.clear();
    cols.best_h.resize(segs, zero);
    let (hv, ev) = (cols.h.as_mut_ptr(), cols.e.as_mut_ptr());
    let mut best = 0u32;
    let mut best_col = 0usize;
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
        // F leaving each lane's block enters the next lane's first row. A carry no larger
        // than H - open there changes neither H nor the F below it, in any lane.
        let mut f = f.shift_up();
        if !f.subs((*hv).subs(gap_open)).is_zero() {
            for (k, d) in decay[..steps].iter().enumerate() {
                f = f.max(f.shift_up_lanes(1 << k).subs(*d));
            }
            for s in 0..segs {
                let h = *hv.add(s);
                if f.subs(h.subs(gap_open)).is_zero() {
                    break;
                }
                let h = h.max(f);
                *hv.add(s) = h;
                col_max = col_max.max(h);
                *ev.add(s) = (*ev.add(s)).max(h.subs(gap_first));
                f = f.subs(gap_extend);
            }
        }
        if !col_max.subs(best_v).is_zero() {
            let top = col_max.hmax();
            if top >= limit {
                return None;
            }
            best = top;
            best_col = j;
            best_v = V::splat(top);
            if top >= stop_at {
                break;
            }
            std::ptr::copy_nonoverlapping(hv, cols.best_h.as_mut_ptr(), segs);
        }
    }
    if best == 0 {
        return Some(ScoreEnd::default());
    }
    // The stop column is still in `h`; otherwise the best column was copied aside.
    let col = if best >= stop_at { &cols.h } else { &cols.best_h };
    let row = first_row(col, prof.len, best)?;
    Some(ScoreEnd { score: best as i32, qend: row as u32 + 1, tend: best_col as u32 + 1 })
}

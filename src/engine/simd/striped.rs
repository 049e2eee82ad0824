//! Striped (Farrar) scoring of one pair with the reference's end cell, for align.
//!
//! The query is laid out in `segs` segments of `LANES` rows: lane l of segment s holds
//! query row `l * segs + s`, so each lane holds a block of `segs` consecutive rows.
//!
//! A lane holds `value + ZERO` (`ZERO = max(gap open + 2 extend, -least score)`) and the
//! inner loop's arithmetic wraps: x86 issues wrapping adds on more ports than saturating
//! ones (on Sapphire Rapids, saturating adds and subtracts issue on the ports of the
//! maximum, which bounded the loop). Why nothing wraps while the best score stays below
//! `widen_at`:
//! - H is floored at `ZERO` (the reference's 0), so `diag + score >= ZERO - bias >= 0`
//!   (the profile holds scores as wrapping lane values, padding the least score).
//! - `H - (open + extend) >= extend`, and E = max(E - extend, H - open - extend) (F
//!   alike, from its own start value `ZERO - open - extend`) stays at or above that, so
//!   `E - extend` never wraps below 0.
//! - Every value is at most the best before the column plus the top score, which
//!   `widen_at` keeps at or below `MAX`.
//! E and F may run below the reference's 0 where it clamps them; that changes no H, as H
//! is floored. Rare paths (the carry across lanes) keep saturating arithmetic.
//!
//! Vertical gaps (F) crossing from one lane's block into the next are settled after each
//! column's pass. Sometimes they change nothing, which one compare shows; otherwise the
//! exact carry into every lane is a prefix maximum over the lanes below, each block
//! decaying it by `segs * extend`, taken in at most log2(LANES) shift steps, and one
//! branch-free walk down the segments applies it. (Farrar's lazy loop instead walks the
//! lanes one segment at a time, which at gap extend 1 can take dozens of steps a column.)
//!
//! A pass at 8 bits stops before the column that could first saturate and hands its exact
//! state to a 16-bit pass (`widen`). Queries of at most 8 segments get a copy of the pass
//! with the count fixed, so the column stays in registers.
//!
//! Every `unsafe fn` here may only run on a CPU with `V`'s instruction set (the engine
//! checks once, at construction).
//!
//! The end cell follows the tie rule: the first column whose maximum beats every earlier
//! column, and in it the smallest row holding that maximum. That column's H is copied
//! aside, and the row looked up once at the end. Padding rows (beyond the query) can tie
//! but never beat a real cell, and are larger rows, so they never win.

#![allow(clippy::missing_safety_doc)]

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
    top_score: u32,
    gap_open: u32,
    gap_first: u32,
    gap_extend: u32,
    /// The lane value of score 0.
    zero: u32,
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
            top_score: sc.matrix.max_score().max(0) as u32,
            gap_open: sc.gap_open as u32,
            gap_first: sc.gap_first() as u32,
            gap_extend: sc.gap_extend as u32,
            zero: (sc.gap_first() as u32 + sc.gap_extend as u32).max(bias),
        }
    }

    /// A best score from which the next column might wrap: its values reach at most the
    /// best before it plus the top score.
    pub fn widen_at(&self) -> u32 {
        (V::MAX + 1).saturating_sub(self.top_score + self.zero)
    }
}

/// Scores of every query row against each residue code, in striped order, as wrapping lane
/// values (padding rows the least score). One per thread and width, rebuilt for each query.
pub struct Profile<V> {
    vecs: Vec<V>,
    pub segs: usize,
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
        // lanes carry 0xff in their high byte, which the shuffles turn into 0 too. Taking
        // the bias off the lane gives the score, sign-extended at 16 bits.
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
        let bias = V::splat(tabs.bias);
        for c in 0..n {
            let (lo, hi) = (tabs.lo[c], tabs.hi[c]);
            for s in 0..segs {
                let v = V::shuffle_bytes(lo, *idx.add(2 * s)).or(V::shuffle_bytes(hi, *idx.add(2 * s + 1)));
                *out.add(c * segs + s) = v.sub_lanes(bias);
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

/// Smallest real row (below `len`) of a striped column holding lane value `value`.
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

/// The best cell so far of a pass: its score (not a lane value), column, and row once known
/// (`None`: look it up in the copy of its column).
#[derive(Debug, Clone, Copy, Default)]
pub struct Best {
    pub score: u32,
    pub col: usize,
    pub row: Option<usize>,
}

/// How a pass ended.
pub enum Pass {
    /// Every column scored (or the start pass reached its score).
    Done,
    /// A lane may have saturated: the pass's results are void.
    Saturated,
    /// Column `col` might saturate: every value before it is exact, and the caller goes on
    /// from there at a wider width (`widen`).
    Widen { col: usize },
}

impl<V: Vector> Columns<V> {
    /// Score-0 buffers for a pass from column 0 of a query of `segs` segments.
    #[inline(always)]
    pub unsafe fn reset(&mut self, tabs: &Tables<V>, segs: usize) {
        for b in [&mut self.h, &mut self.e, &mut self.best_h] {
            b.clear();
            b.resize(segs, V::splat(tabs.zero));
        }
    }

    /// The end cell of a finished pass.
    #[inline(always)]
    pub unsafe fn end(&self, tabs: &Tables<V>, prof: &Profile<V>, best: &Best) -> Option<ScoreEnd> {
        if best.score == 0 {
            return Some(ScoreEnd::default());
        }
        let row = match best.row {
            Some(r) => r,
            None => first_row(&self.best_h, prof.len, best.score + tabs.zero)?,
        };
        Some(ScoreEnd { score: best.score as i32, qend: row as u32 + 1, tend: best.col as u32 + 1 })
    }
}

/// Carries a pass stopped by `Pass::Widen` over to a wider width: H and E of the real rows
/// into `to`'s striped layout (padding rows start at score 0: they never reach a real
/// row), and the best cell's row resolved, as its copied column does not move over.
#[inline(always)]
pub unsafe fn widen<N: Vector, W: Vector>(
    from_tabs: &Tables<N>,
    from_prof: &Profile<N>,
    from: &Columns<N>,
    best: &mut Best,
    to_tabs: &Tables<W>,
    to_prof: &Profile<W>,
    to: &mut Columns<W>,
    rows: &mut Vec<u32>,
) -> Option<()> {
    let m = from_prof.len;
    if best.score > 0 && best.row.is_none() {
        best.row = Some(first_row(&from.best_h, m, best.score + from_tabs.zero)?);
    }
    to.reset(to_tabs, to_prof.segs);
    // Lane values move from one zero to the other (E may lie below either: by at most
    // open + extend, which both zeros exceed).
    let shift = |x: u32| (x as i64 + to_tabs.zero as i64 - from_tabs.zero as i64) as u32;
    for (src, dst) in [(&from.h, &mut to.h), (&from.e, &mut to.e)] {
        rows.clear();
        rows.resize(m, to_tabs.zero);
        let segs = src.len();
        for (s, v) in src.iter().enumerate() {
            let lanes = v.lanes();
            for (l, &x) in lanes[..N::LANES].iter().enumerate() {
                if let Some(r) = rows.get_mut(l * segs + s) {
                    *r = shift(x);
                }
            }
        }
        let segs = dst.len();
        let mut bytes = [0u8; 64];
        for (s, d) in dst.iter_mut().enumerate() {
            bytes.fill(0);
            for l in 0..W::LANES {
                let x = rows.get(l * segs + s).copied().unwrap_or(to_tabs.zero);
                bytes[l * W::WIDTH..(l + 1) * W::WIDTH].copy_from_slice(&x.to_le_bytes()[..W::WIDTH]);
            }
            *d = W::load(bytes.as_ptr());
        }
    }
    Some(())
}

/// What one pass scores: `target` (given reversed when `rev`) from column `from` on. It
/// stops at the first column reaching `stop_at` (the start pass knows the best score: no
/// later column can beat it), and before any column that starts with the best score at
/// `widen_at` or above (a column scores at most the matrix's top score above the best
/// before it). Every pass needs `widen_at` at most `Tables::widen_at`: the score add wraps.
#[derive(Clone, Copy)]
pub struct Span<'a> {
    pub target: &'a [u8],
    pub rev: bool,
    pub from: usize,
    pub stop_at: u32,
    pub widen_at: u32,
}

/// Scores the profiled query over `span`, with `cols` holding the state before its first
/// column, keeping the best cell in `best`.
#[inline(always)]
pub unsafe fn run<V: Vector>(
    prof: &Profile<V>,
    tabs: &Tables<V>,
    span: Span,
    best: &mut Best,
    cols: &mut Columns<V>,
) -> Pass {
    // Short queries get a copy with the segment count fixed, whose columns live in registers.
    match prof.segs {
        1 => run_segs::<V, 1>(prof, tabs, span, best, cols),
        2 => run_segs::<V, 2>(prof, tabs, span, best, cols),
        3 => run_segs::<V, 3>(prof, tabs, span, best, cols),
        4 => run_segs::<V, 4>(prof, tabs, span, best, cols),
        5 => run_segs::<V, 5>(prof, tabs, span, best, cols),
        6 => run_segs::<V, 6>(prof, tabs, span, best, cols),
        7 => run_segs::<V, 7>(prof, tabs, span, best, cols),
        8 => run_segs::<V, 8>(prof, tabs, span, best, cols),
        _ => run_segs::<V, 0>(prof, tabs, span, best, cols),
    }
}

/// `run` for `SEGS` segments (0: any number, columns in memory).
#[inline(always)]
unsafe fn run_segs<V: Vector, const SEGS: usize>(
    prof: &Profile<V>,
    tabs: &Tables<V>,
    span: Span,
    best: &mut Best,
    cols: &mut Columns<V>,
) -> Pass {
    let Span { target, rev, from, stop_at, widen_at } = span;
    let segs = if SEGS > 0 { SEGS } else { prof.segs };
    debug_assert!(cols.h.len() == segs && cols.e.len() == segs && cols.best_h.len() == segs);
    debug_assert!(widen_at <= tabs.widen_at());
    let zero = V::zero();
    let z = tabs.zero;
    let floor = V::splat(z);
    // Lane 0 of a column's first diagonal: H of the row above the query, score 0.
    let diag_in = {
        let mut bytes = [0u8; 64];
        bytes[..V::WIDTH].copy_from_slice(&z.to_le_bytes()[..V::WIDTH]);
        V::load(bytes.as_ptr())
    };
    // F entering each column's first segment: below any H less open and extend, and at
    // least `extend`, so that taking `extend` off never wraps.
    let f_in = V::splat(z - tabs.gap_first);
    let gap_open = V::splat(tabs.gap_open);
    let gap_first = V::splat(tabs.gap_first);
    let gap_extend = V::splat(tabs.gap_extend);
    // What a carry loses crossing 2^k lanes' blocks, for the prefix scan's step k.
    let mut decay = [zero; 7];
    let mut decay_at = [0u64; 7];
    let mut steps = 0;
    while (1 << steps) < V::LANES {
        decay_at[steps] = (segs as u64 * tabs.gap_extend as u64) << steps;
        decay[steps] = V::splat(decay_at[steps].min(V::MAX as u64) as u32);
        steps += 1;
    }
    let mut h_reg = [zero; 8];
    let mut e_reg = [zero; 8];
    let (hv, ev) = if SEGS > 0 {
        h_reg[..SEGS].copy_from_slice(&cols.h);
        e_reg[..SEGS].copy_from_slice(&cols.e);
        (h_reg.as_mut_ptr(), e_reg.as_mut_ptr())
    } else {
        (cols.h.as_mut_ptr(), cols.e.as_mut_ptr())
    };
    let mut best_v = V::splat(best.score + z);
    // Scan steps whose decay is below the highest carry there can be: a column scores at
    // most the matrix's top score above the best before it, and a carry is an H less
    // open and extend. Later steps only ever leave carries below score 0, which change
    // no H.
    let top_carry = |best: u32| (best as u64 + tabs.top_score as u64).saturating_sub(tabs.gap_first as u64);
    let needed = |best: u32| decay_at[..steps].iter().filter(|&&d| d < top_carry(best)).count();
    let mut scan_steps = needed(best.score);
    let n = target.len();
    let mut outcome = Pass::Done;
    for j in from..n {
        if best.score >= widen_at {
            outcome = Pass::Widen { col: j };
            break;
        }
        let t = if rev { target[n - 1 - j] } else { target[j] };
        let vp = prof.vecs.as_ptr().add(t as usize * segs);
        let mut f = f_in;
        let mut diag = (*hv.add(segs - 1)).shift_up().or(diag_in);
        let mut col_max = zero;
        for s in 0..segs {
            let e = *ev.add(s);
            // F below opens from H before F's own share: the latter (F - open - extend)
            // is below the F - extend carried on anyway, and this keeps F's chain short.
            let h_open = diag.add_lanes(*vp.add(s)).max(e).max(floor);
            let h = h_open.max(f);
            diag = *hv.add(s);
            *hv.add(s) = h;
            col_max = col_max.max(h);
            *ev.add(s) = e.sub_lanes(gap_extend).max(h.sub_lanes(gap_first));
            f = f.sub_lanes(gap_extend).max(h_open.sub_lanes(gap_first));
        }
        // F leaving each lane's block enters the next lane's first row. A carry no larger
        // than H - open there changes neither H nor the F below it, in any lane; nor does
        // one at or below score 0, as H is floored there (F runs below 0 in these lanes,
        // and without that bound such carries set the walk off in most columns of DNA
        // pairs). Lane 0 takes in 0, below every H; the carry's arithmetic saturates, as it
        // may fall below 0 there.
        let mut f = f.shift_up();
        if !f.subs((*hv).sub_lanes(gap_open).max(floor)).is_zero() {
            for (k, d) in decay[..steps].iter().enumerate() {
                if k < scan_steps {
                    f = f.max(f.shift_up_lanes(1 << k).subs(*d));
                }
            }
            // Every segment, without branches: the carry reaches row s of a block less
            // s extensions.
            for s in 0..segs {
                let h = (*hv.add(s)).max(f);
                *hv.add(s) = h;
                col_max = col_max.max(h);
                *ev.add(s) = (*ev.add(s)).max(h.sub_lanes(gap_first));
                f = f.subs(gap_extend);
            }
        }
        if !col_max.subs(best_v).is_zero() {
            let top_lane = col_max.hmax();
            let top = top_lane - z;
            *best = Best { score: top, col: j, row: None };
            best_v = V::splat(top_lane);
            scan_steps = needed(top);
            if top >= stop_at {
                // The stop column is still in `h`.
                let col = std::slice::from_raw_parts(hv, segs);
                if let Some(r) = first_row(col, prof.len, top_lane) {
                    best.row = Some(r);
                } else {
                    outcome = Pass::Saturated;
                }
                break;
            }
            let copy = cols.best_h.as_mut_ptr();
            for s in 0..segs {
                (*hv.add(s)).store(copy.add(s) as *mut u8);
            }
        }
    }
    if SEGS > 0 {
        cols.h.copy_from_slice(&h_reg[..SEGS]);
        cols.e.copy_from_slice(&e_reg[..SEGS]);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::simd::vector::*;
    use crate::scoring::Matrix;

    /// Every profile lane holds its row's score, forwards and reversed; padding the least.
    unsafe fn check_profile<V: Vector>(sc: &Scoring) {
        let tabs = Tables::<V>::new(sc);
        let size = sc.matrix.size() as u8;
        let mut prof = Profile::<V>::default();
        for len in [1usize, 7, V::LANES, V::LANES + 1, 3 * V::LANES - 2] {
            let query: Vec<u8> = (0..len).map(|i| ((i * 11 + 5) % size as usize) as u8).collect();
            for rev in [false, true] {
                prof.build(&tabs, &query, rev);
                let segs = prof.segs;
                assert_eq!(segs, len.div_ceil(V::LANES));
                for c in 0..size {
                    for s in 0..segs {
                        let lanes = prof.vecs[c as usize * segs + s].lanes();
                        for l in 0..V::LANES {
                            let row = l * segs + s;
                            let score = if row < len {
                                let q = if rev { query[len - 1 - row] } else { query[row] };
                                sc.score(q, c)
                            } else {
                                -(bias(sc) as i32)
                            };
                            // The score as a wrapping lane value.
                            let want = (score as i64).rem_euclid(V::MAX as i64 + 1) as u32;
                            assert_eq!(lanes[l], want, "len {} rev {} code {} row {}", len, rev, c, row);
                        }
                    }
                }
            }
        }
    }

    unsafe fn check_widths<N: Vector, W: Vector>() {
        for sc in [Scoring::blosum62(), Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap()] {
            check_profile::<N>(&sc);
            check_profile::<W>(&sc);
        }
    }

    #[test]
    fn profiles_hold_the_biased_scores() {
        unsafe {
            check_widths::<Portable8, Portable16>();
            #[cfg(target_arch = "x86_64")]
            {
                if is_x86_feature_detected!("sse4.1") {
                    check_widths::<Sse41x8, Sse41x16>();
                }
                if is_x86_feature_detected!("avx2") {
                    check_widths::<Avx2x8, Avx2x16>();
                }
                if is_x86_feature_detected!("avx512bw") {
                    check_widths::<Avx512x8, Avx512x16>();
                }
            }
        }
    }
}

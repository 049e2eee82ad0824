//! Inter-sequence (SWIPE-style) scoring for search: one query against a batch of targets,
//! one target per lane, score only.
//!
//! Lanes are unsigned and saturating. Substitution scores are stored biased (`s + bias`,
//! never negative), so `subs(adds(diag, s + bias), bias) = max(0, diag + s)` and H, E, F
//! are the reference's values clamped at 0, which changes no H value. A lane that reaches
//! `MAX - bias` may have saturated: its score is not trusted and the caller rescores it
//! wider. Below that, no intermediate value saturated, so the score is exact.
//!
//! Each target's residue codes are looked up with two byte shuffles per residue code and
//! column (codes 0..15 and 16..31), giving the column's score vector for every code the
//! query uses; the inner loop over the query then does `BLOCK` columns at once, keeping
//! their H, E and F in registers.

use super::vector::Vector;
use crate::scoring::Scoring;

/// Code that pads short targets: both shuffles give score byte 0 (`-bias`), and a padded
/// column can never raise a lane's best score (every value in it is below one before it).
pub const PAD: u8 = 0x90;

/// The biased substitution rows of every query code, as shuffle tables.
pub struct Lookup<V> {
    lo: Vec<V>,
    hi: Vec<V>,
    bias: u32,
    gap_first: u32,
    gap_extend: u32,
}

/// Whether these scores fit the byte tables: alphabet of at most 32 codes, biased scores
/// in 0..=255.
pub fn fits(sc: &Scoring) -> bool {
    let bias = -sc.matrix.min_score().min(0) as i64;
    sc.matrix.size() <= 32 && sc.matrix.max_score() as i64 + bias <= 255
}

pub fn bias(sc: &Scoring) -> u32 {
    (-sc.matrix.min_score().min(0)) as u32
}

impl<V: Vector> Lookup<V> {
    /// Callers check `fits` first.
    #[inline(always)]
    pub unsafe fn new(sc: &Scoring) -> Lookup<V> {
        let n = sc.matrix.size();
        let bias = bias(sc);
        let mut lo = Vec::with_capacity(n);
        let mut hi = Vec::with_capacity(n);
        for a in 0..n as u8 {
            let row = |c: usize| if c < n { (sc.score(a, c as u8) + bias as i32) as u8 } else { 0 };
            let lo_bytes: Vec<u8> = (0..V::BYTES).map(|b| row(b % 16)).collect();
            let hi_bytes: Vec<u8> = (0..V::BYTES).map(|b| row(16 + b % 16)).collect();
            lo.push(V::load(lo_bytes.as_ptr()));
            hi.push(V::load(hi_bytes.as_ptr()));
        }
        Lookup { lo, hi, bias, gap_first: sc.gap_first() as u32, gap_extend: sc.gap_extend as u32 }
    }

    /// The largest score a lane can report exactly.
    pub fn exact_limit(&self) -> u32 {
        V::MAX - self.bias - 1
    }
}

/// Targets of one batch transposed column by column: for column j, one register of
/// lane codes (16-bit lanes carry 0xff in the high byte, so both shuffles zero it).
#[derive(Default)]
pub struct Columns {
    bytes: Vec<u8>,
    ncols: usize,
}

impl Columns {
    /// Lays out `targets` (at most `V::LANES`), padding to a multiple of `block` columns.
    pub fn fill<V: Vector>(&mut self, targets: &[&[u8]], block: usize) {
        debug_assert!(targets.len() <= V::LANES);
        let longest = targets.iter().map(|t| t.len()).max().unwrap_or(0);
        self.ncols = longest.div_ceil(block) * block;
        self.bytes.clear();
        self.bytes.resize(self.ncols * V::BYTES, PAD);
        if V::WIDTH == 2 {
            for b in self.bytes.iter_mut().skip(1).step_by(2) {
                *b = 0xff;
            }
        }
        for (l, t) in targets.iter().enumerate() {
            for (j, &c) in t.iter().enumerate() {
                self.bytes[j * V::BYTES + l * V::WIDTH] = c;
            }
        }
    }
}

/// Buffers one thread reuses across batches.
pub struct Scratch<V> {
    h: Vec<V>,
    e: Vec<V>,
    svec: Vec<V>,
}

impl<V> Default for Scratch<V> {
    fn default() -> Self {
        Scratch { h: Vec::new(), e: Vec::new(), svec: Vec::new() }
    }
}

/// Best score of `query` in every lane of `cols`. `used` lists the codes the query holds.
#[inline(always)]
pub unsafe fn score_batch<V: Vector, const BLOCK: usize>(
    query: &[u8],
    used: &[u8],
    look: &Lookup<V>,
    cols: &Columns,
    scratch: &mut Scratch<V>,
) -> V {
    let m = query.len();
    let zero = V::zero();
    let bias = V::splat(look.bias);
    let gap_first = V::splat(look.gap_first);
    let gap_extend = V::splat(look.gap_extend);
    let idx_lo_add = V::splat_bytes(0x70);
    let idx_hi_sub = V::splat_bytes(16);
    scratch.h.clear();
    scratch.h.resize(m, zero);
    scratch.e.clear();
    scratch.e.resize(m, zero);
    scratch.svec.clear();
    scratch.svec.resize(BLOCK * 32, zero);
    let (hcol, ecol, svec) = (scratch.h.as_mut_ptr(), scratch.e.as_mut_ptr(), scratch.svec.as_mut_ptr());
    let q = query.as_ptr();
    let mut best = zero;

    let mut j = 0;
    while j < cols.ncols {
        // Score vectors of this block's columns for every code the query uses.
        for k in 0..BLOCK {
            let idx = V::load(cols.bytes.as_ptr().add((j + k) * V::BYTES));
            let idx_lo = idx.adds_bytes(idx_lo_add); // codes >= 16 get the high bit
            let idx_hi = idx.sub_bytes(idx_hi_sub); // codes < 16 wrap to the high bit
            for &a in used {
                let s = V::shuffle_bytes(look.lo[a as usize], idx_lo).or(V::shuffle_bytes(look.hi[a as usize], idx_hi));
                *svec.add(k * 32 + a as usize) = s;
            }
        }
        let mut up = [zero; BLOCK]; // H(i-1, j+k)
        let mut f = [zero; BLOCK]; // F(i, j+k)
        let mut diag_first = zero; // H(i-1, j-1)
        for i in 0..m {
            let code = *q.add(i) as usize;
            let mut diag = diag_first;
            diag_first = *hcol.add(i);
            let mut e = *ecol.add(i); // E(i, j)
            for k in 0..BLOCK {
                let s = *svec.add(k * 32 + code);
                let h = diag.adds(s).subs(bias).max(e.max(f[k]));
                best = best.max(h);
                let h_open = h.subs(gap_first);
                e = e.subs(gap_extend).max(h_open);
                f[k] = f[k].subs(gap_extend).max(h_open);
                diag = up[k];
                up[k] = h;
            }
            *hcol.add(i) = up[BLOCK - 1];
            *ecol.add(i) = e;
        }
        j += BLOCK;
    }
    best
}

//! Inter-sequence (SWIPE-style) scoring for search: one query against a batch of targets,
//! one target per lane, score only.
//!
//! Lanes are signed and the arithmetic wraps (`add_lanes`, `sub_lanes`); only the maximum
//! is a comparison. x86 runs wrapping adds on more ports than saturating adds and maxima
//! (on Sapphire Rapids, 512-bit saturating adds and maxima issue on one port, wrapping adds
//! on two), so the kernel keeps the saturating kind out of the inner loop.
//!
//! A lane holds `value + ZERO` with `ZERO = MIN + headroom`, `headroom = max(gap_first +
//! gap_extend, -min score)`. Why nothing wraps while the lane's best stays at or below
//! `MAX - top score` (`exact_limit`):
//! - H is floored at `ZERO` (the reference's 0) by one maximum, so H >= ZERO.
//! - `H - gap_first` >= MIN + gap_extend, and E = max(E - extend, H - gap_first) (F alike)
//!   stays >= that, so `E - extend` >= MIN: the subtractions never wrap below.
//! - `diag + s` >= ZERO + min score >= MIN; and `diag` is an earlier H, already in the
//!   lane's best, so while best <= MAX - top score, `diag + s` <= MAX.
//!
//! A lane whose best passes that bound may have wrapped; the caller rescores it wider.
//! Below it, every H is the reference's exactly (E and F may run below 0, where the
//! reference clamps them, which changes no H since H is floored).
//!
//! Each target's residue codes are looked up with two byte shuffles per residue code and
//! column (codes 0..15 and 16..31), giving the column's score vector for every code the
//! query uses; the inner loop over the query then does `BLOCK` columns at once, keeping
//! their H, E and F in registers.

use super::vector::Vector;
use crate::scoring::Scoring;

/// Code that pads short targets: both shuffles give score byte 0 (the least score, once
/// the bias is taken off), and a padded column can never raise a lane's best score (every
/// value in it is at most one before it).
pub const PAD: u8 = 0x90;

/// The biased substitution rows of every query code, as shuffle tables, and the constants
/// of one lane width.
pub struct Lookup<V> {
    lo: Vec<V>,
    hi: Vec<V>,
    bias: u32,
    top_score: u32,
    headroom: u32,
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
        let gap_first = sc.gap_first() as u32;
        let gap_extend = sc.gap_extend as u32;
        Lookup {
            lo,
            hi,
            bias,
            top_score: sc.matrix.max_score().max(0) as u32,
            headroom: (gap_first + gap_extend).max(bias),
            gap_first,
            gap_extend,
        }
    }

    /// The largest score a lane reports exactly (negative: none, this width is no use).
    pub fn exact_limit(&self) -> i64 {
        V::MAX as i64 - self.top_score as i64 - self.headroom as i64
    }

    /// Whether this width can score anything: its lanes hold every score exactly (signed
    /// lanes of this width) and leave room for some alignment scores.
    pub fn usable(&self) -> bool {
        let half = (V::MAX / 2) as i64;
        self.top_score as i64 <= half && (self.bias as i64) <= half + 1 && self.exact_limit() > 0
    }

    /// The lane value (as unsigned bits) that stands for score 0: `MIN + headroom`.
    fn zero(&self) -> u32 {
        (V::MAX / 2 + 1 + self.headroom) & V::MAX
    }

    /// The score of a lane of `score_batch`'s result (unsigned bits of a signed lane).
    pub fn score(&self, lane: u32) -> i64 {
        ((lane + V::MAX / 2 + 1) & V::MAX) as i64 - self.headroom as i64
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

/// Best score of `query` in every lane of `cols`, as lane values (`Lookup::score` reads
/// them). `used` lists the codes the query holds.
#[inline(always)]
pub unsafe fn score_batch<V: Vector, const BLOCK: usize>(
    query: &[u8],
    used: &[u8],
    look: &Lookup<V>,
    cols: &Columns,
    scratch: &mut Scratch<V>,
) -> V {
    let m = query.len();
    let zero = V::splat(look.zero());
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
                *svec.add(k * 32 + a as usize) = s.sub_lanes(bias);
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
                let h = diag.add_lanes(s).floor(zero).max_signed(e.max_signed(f[k]));
                best = best.max_signed(h);
                let h_open = h.sub_lanes(gap_first);
                e = e.sub_lanes(gap_extend).max_signed(h_open);
                f[k] = f[k].sub_lanes(gap_extend).max_signed(h_open);
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

//! Planning of the GPU pair aligner, pure CPU code unit-tested without a GPU: kernel shapes
//! and their cost model, bins of pairs per shape, launches (warp tables), block sizes, the
//! kernel's scoring table, the packed pair table, pieces, and decoding the kernel's cells.

use crate::engine::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use crate::seq::PairSeqs;

pub use super::kernels::{Shape, ALIGN_PACKED_ROWS as PACKED_ROWS, ALIGN_WIDE_ROWS as WIDE_ROWS};
/// Threads per pair: a power of two up to a warp (shuffles stay inside the warp).
pub const GROUPS: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Block sizes tried (threads); the one keeping most warps resident on an SM wins, the
/// first listed on ties (small blocks retire unevenly long pairs more smoothly).
const BLOCKS: [u32; 4] = [64, 128, 256, 32];
/// Largest chunk of sequence bytes one kernel batch takes (offsets are 32-bit).
pub const CHUNK_BYTES: usize = 1 << 30;

/// Pairs per thread: two in s16x2 lanes (`packed`), else one at 32 bits.
pub fn halves(packed: bool) -> usize {
    if packed {
        2
    } else {
        1
    }
}

/// What the shape choice may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeRules {
    /// Most packed rows per thread (the profile's shared memory grows with them:
    /// [`packed_max_rows`]).
    pub max_rows: u32,
    /// Fewest threads per pair: a piece with few pairs needs wide groups to fill the GPU.
    pub min_group: u32,
    /// Whether any group may tile a long query over several passes (otherwise only the
    /// widest shape does). Off by default: on the H100 it stepped 92% real cells instead of
    /// 65% yet ran the protein set at half the speed (long multi-pass warps leave the
    /// launch's tail idle, and the reverse pass stops early only in its last pass;
    /// BENCHMARKS.md, issue 19).
    pub multipass: bool,
}

impl ShapeRules {
    pub fn new(max_rows: u32) -> ShapeRules {
        ShapeRules { max_rows, min_group: 1, multipass: false }
    }
}

/// The cheapest shape for a pair of these lengths, by a cost model of the kernel
/// ([`shape_cost`]) over every group size (from `rules.min_group`) and row count, each
/// tiling the query over as many passes as it needs. Ties go to fewer threads, then fewer
/// rows.
pub fn choose_shape(qlen: usize, tlen: usize, packed: bool, rules: ShapeRules) -> Shape {
    let all: &[u32] = if packed { &PACKED_ROWS } else { &[WIDE_ROWS] };
    let n = if packed { all.iter().filter(|&&r| r <= rules.max_rows).count().max(1) } else { 1 };
    let rows_set = &all[..n];
    let max_rows = rows_set[rows_set.len() - 1];
    let min_group = rules.min_group.min(GROUPS[GROUPS.len() - 1]);
    let widest = Shape { threads: GROUPS[GROUPS.len() - 1], rows: max_rows };
    let mut best = (shape_cost(widest, qlen, tlen), widest);
    for &group in GROUPS.iter().filter(|&&g| g >= min_group) {
        for &rows in rows_set {
            let shape = Shape { threads: group, rows };
            if shape.passes(qlen) > 1 && !rules.multipass {
                continue;
            }
            let cost = shape_cost(shape, qlen, tlen);
            if cost < best.0 || (cost == best.0 && (group, rows) < (best.1.threads, best.1.rows)) {
                best = (cost, shape);
            }
            // In one pass the cost grows with the rows: a group's first row count that
            // covers the query is its cheapest (this runs for every pair of every piece).
            if !rules.multipass {
                break;
            }
        }
    }
    best.1
}

/// Modelled run time of one pair in `shape` (kernels/align.cu, SASS of the 16-row variant
/// per thread and column): ~6 instructions per row (score byte, 3 DPX, the bias
/// subtraction and the column maximum), ~58 per column (shuffles, target codes, profile
/// loads, the improvement test, loop), and with several passes ~12 more for the boundary
/// row's scratch traffic; a pass takes `tlen + 2 (group - 1)` columns (the wavefront fills
/// and drains).
pub fn shape_cost(shape: Shape, qlen: usize, tlen: usize) -> f64 {
    const CELL: f64 = 6.0;
    const STEP: f64 = 58.0;
    const SCRATCH: f64 = 12.0;
    let group = shape.threads as f64;
    let passes = shape.passes(qlen);
    let per_column = shape.rows as f64 * CELL + STEP + if passes > 1 { SCRATCH } else { 0.0 };
    passes as f64 * group * per_column * (tlen as f64 + 2.0 * (group - 1.0))
}

/// The work of one launch: pairs of one shape, grouped `halves` to a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bin {
    /// Threads per pair (the kernel's G) and rows per thread.
    pub shape: Shape,
    /// 16-bit lanes, two pairs per thread; else 32-bit, one pair per thread.
    pub packed: bool,
    /// `halves` entries per group: a pair's index in the chunk, or -1 for an empty slot.
    pub groups: Vec<i32>,
    /// Longest target in the bin (columns the tiling scratch must hold).
    pub max_cols: usize,
    pub max_passes: usize,
    /// Per group: wavefront steps of its longest half, over all passes (its run time).
    pub work: Vec<u32>,
    /// Per group: passes of its longest query.
    pub passes: Vec<u32>,
}

/// One pair to bin: its index, query rows and target columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub index: u32,
    pub qlen: u32,
    pub tlen: u32,
}

/// Bins `items` by shape; inside a bin pairs are ordered by target length (longest first)
/// so the pairs sharing a thread, and the groups sharing a warp, run for similar lengths.
/// Empty pairs (either length 0) must be left out by the caller: they score 0.
pub fn make_bins(items: &[Item], packed: bool, rules: ShapeRules) -> Vec<Bin> {
    use rayon::prelude::*;
    // Shapes on all cores (this runs once per piece, between the GPU's passes).
    let shapes: Vec<Shape> = items
        .par_iter()
        .with_min_len(4096)
        .map(|it| choose_shape(it.qlen as usize, it.tlen as usize, packed, rules))
        .collect();
    let mut buckets: Vec<(Shape, Vec<Item>)> = Vec::new();
    for (it, &shape) in items.iter().zip(&shapes) {
        match buckets.iter_mut().find(|(s, _)| *s == shape) {
            Some((_, v)) => v.push(*it),
            None => buckets.push((shape, vec![*it])),
        }
    }
    let mut bins: Vec<Bin> = buckets
        .into_par_iter()
        .map(|(shape, mut its)| {
            // Most passes first (a warp runs as many as its longest group), then longest
            // target, then longest query, then by index (the order a stable sort keeps for
            // the callers' items, which come by index). One integer key per item, made
            // once: a key computed in the comparisons divided twice per comparison, and
            // this sort was half of a piece's preparation on short pairs.
            let key = |it: &Item| {
                let passes = shape.passes(it.qlen as usize) as u128;
                !((passes << 96) | (u128::from(it.tlen) << 64) | (u128::from(it.qlen) << 32) | u128::from(!it.index))
            };
            let mut keyed: Vec<(u128, Item)> = its.iter().map(|it| (key(it), *it)).collect();
            keyed.sort_unstable_by_key(|&(k, _)| k);
            its.clear();
            its.extend(keyed.iter().map(|&(_, it)| it));
            let h = halves(packed);
            let mut groups = Vec::with_capacity(its.len().div_ceil(h) * h);
            let mut work = Vec::with_capacity(its.len().div_ceil(h));
            let mut passes = Vec::with_capacity(its.len().div_ceil(h));
            for chunk in its.chunks(h) {
                passes.push(chunk.iter().map(|it| shape.passes(it.qlen as usize)).max().unwrap_or(1) as u32);
                groups.extend(chunk.iter().map(|it| it.index as i32));
                groups.extend(std::iter::repeat(-1).take(h - chunk.len()));
                let steps = |it: &Item| (it.tlen + shape.threads - 1) as u64 * shape.passes(it.qlen as usize) as u64;
                work.push(chunk.iter().map(steps).max().unwrap_or(0).min(u32::MAX as u64) as u32);
            }
            let max_cols = its.iter().map(|it| it.tlen as usize).max().unwrap_or(0);
            let max_passes = its.iter().map(|it| shape.passes(it.qlen as usize)).max().unwrap_or(1);
            Bin { shape, packed, groups, max_cols, max_passes, work, passes }
        })
        .collect();
    // Biggest work first, so small bins fill the GPU's tail.
    bins.sort_by_key(|b| (std::cmp::Reverse(b.groups.len() * b.max_cols * b.shape.span()), b.shape));
    bins
}

/// One launch: every bin of one kernel variant (rows per thread, lane width, pipelined or
/// not), as a table of warps, each running 32 / G groups of one bin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub packed: bool,
    pub rows: u32,
    /// Multi-pass groups of a whole warp, their passes spread over warps (kernels/align.cu,
    /// PIPELINE): a group's pass p runs on any warp once pass p - 1 is under way, so a long
    /// pair fills as many warps as it has passes instead of waiting on one.
    pub pipelined: bool,
    /// Per warp: (G, first group in the concatenated group table, scratch slot of that
    /// group (multi-pass bins; 0 otherwise), groups in the warp). Longest work first.
    /// Pipelined: per group (32, group, passes, 1), most passes first ([`Launch::items`]).
    pub warps: Vec<[i32; 4]>,
    /// Columns each scratch slot holds (1 when no bin takes several passes).
    pub stride: usize,
    /// Scratch slots (groups of multi-pass bins; two per group when pipelined).
    pub slots: usize,
}

impl Launch {
    /// Pipelined: the most passes of a group (the entries come most passes first).
    pub fn levels(&self) -> usize {
        if self.pipelined {
            self.warps.first().map_or(0, |w| w[2] as usize)
        } else {
            0
        }
    }

    /// Pipelined: items before each pass, `levels + 1` values (an item is one pass of one
    /// group, numbered pass by pass: the groups with more than p passes are the table's
    /// first ones, so pass p's items are groups 0..count of it). The kernel reads them
    /// after the entries and hands items out in this order.
    pub fn pass_start(&self) -> Vec<i32> {
        let mut out = vec![0i32];
        for p in 0..self.levels() {
            let groups = self.warps.iter().take_while(|w| w[2] as usize > p).count();
            out.push(out[p] + groups as i32);
        }
        out
    }

    /// Pipelined: scratch words past the rows (2 x stride x slots) for the kernel's state:
    /// per item and half its best (4 words), per item the columns written, per group the
    /// items finished, and the ticket counter; a multiple of 4 words.
    pub fn state_words(&self, halves: usize) -> usize {
        if !self.pipelined {
            return 0;
        }
        let (entries, levels) = (self.warps.len(), self.levels());
        (entries * levels * halves * 4 + entries * levels + entries + 1).next_multiple_of(4)
    }
}

/// Groups launches by kernel variant. `offsets[k]` is bin k's first group in the
/// concatenated group table. Warps go longest first so the long serial ones start early
/// and short ones fill the tail. Multi-pass bins of whole-warp groups are pipelined when
/// they hold fewer than `pipeline_below` groups: too few to fill the GPU one warp each
/// (a bin of many groups keeps every warp busy as it is, and pipelining costs its passes
/// ~10%: protein 800-1,000 x 800-1,000 on the H100, 1.17 against 1.28-1.33 TCUPS).
pub fn plan_launches(bins: &[Bin], offsets: &[usize], pipeline_below: usize) -> Vec<Launch> {
    let mut launches: Vec<(Launch, Vec<(u32, u32)>)> = Vec::new();
    for (bin, &first) in bins.iter().zip(offsets) {
        let few = bin.groups.len() / halves(bin.packed) < pipeline_below;
        let pipelined = few && bin.shape.threads == 32 && bin.max_passes > 1;
        let key = (bin.packed, bin.shape.rows, pipelined);
        let pos = match launches.iter().position(|(l, _)| (l.packed, l.rows, l.pipelined) == key) {
            Some(p) => p,
            None => {
                let l = Launch { packed: key.0, rows: key.1, pipelined, warps: Vec::new(), stride: 1, slots: 0 };
                launches.push((l, Vec::new()));
                launches.len() - 1
            }
        };
        let (launch, order) = &mut launches[pos];
        let g = bin.shape.threads as usize;
        let per_warp = 32 / g;
        let ngroups = bin.groups.len() / halves(bin.packed);
        let multi = bin.max_passes > 1;
        for j in (0..ngroups).step_by(per_warp) {
            if pipelined {
                launch.warps.push([32, (first + j) as i32, bin.passes[j] as i32, 1]);
                order.push((bin.passes[j], bin.work[j]));
            } else {
                let slot = if multi { launch.slots + j } else { 0 };
                launch.warps.push([g as i32, (first + j) as i32, slot as i32, per_warp.min(ngroups - j) as i32]);
                order.push((0, bin.work[j]));
            }
        }
        if multi {
            launch.slots += ngroups * if pipelined { 2 } else { 1 };
            launch.stride = launch.stride.max(bin.max_cols);
        }
    }
    launches
        .into_iter()
        .map(|(mut l, order)| {
            let mut by: Vec<usize> = (0..l.warps.len()).collect();
            by.sort_by_key(|&i| std::cmp::Reverse(order[i]));
            l.warps = by.iter().map(|&i| l.warps[i]).collect();
            l
        })
        .collect()
}

/// The kernel's scoring table: `(n + 1)^2` bytes, code n padding rows and columns with a
/// score below every real one (padding cells then never reach or tie a real best).
pub fn kernel_matrix(sc: &Scoring) -> Result<(Vec<i8>, usize)> {
    let n = sc.matrix.size();
    let nc1 = n + 1;
    let mut m = vec![-128i8; nc1 * nc1];
    for a in 0..n {
        for b in 0..n {
            let s = sc.score(a as u8, b as u8);
            if !(-127..=127).contains(&s) {
                return Err(Error::usage(format!(
                    "the CUDA engine needs substitution scores within -127..127 ({} has {})",
                    sc.matrix.name, s
                )));
            }
            m[a * nc1 + b] = s as i8;
        }
    }
    Ok((m, nc1))
}

/// Shared memory the align kernel's copy of the scoring table takes: `nc1` rows padded to
/// a multiple of 4 bytes (kernels/align.cu builds its profiles from aligned words of them),
/// rounded up to 16 bytes.
pub fn matrix_shared_bytes(nc1: usize) -> u32 {
    ((nc1 * nc1.next_multiple_of(4)).next_multiple_of(16)) as u32
}

/// Most packed rows per thread, unless configured: 16 for every alphabet. For proteins the
/// per-thread profile (2 x nc1 x rows bytes of shared memory) then leaves 8 warps per SM,
/// 8 rows 16, yet 16 rows measured faster overall on the H100 (fewer steps; BENCHMARKS.md,
/// issue 19); the small DNA profile never limits them.
pub fn packed_max_rows(_nc1: usize, configured: Option<u32>) -> u32 {
    configured.unwrap_or(16)
}

/// Largest best score the 16-bit kernel reports exactly: under it no lane can have wrapped.
pub fn overflow_limit(sc: &Scoring) -> i32 {
    i16::MAX as i32 - sc.matrix.max_score().max(0) - 1
}

/// Threads per block and dynamic shared memory for a kernel variant: the block size that
/// keeps most warps resident on one SM (larger blocks on ties), given the shared memory a
/// block needs (`fixed` + `per_thread` x threads), registers per thread, the SM's shared
/// memory and the per-block limit. None when not even 32 threads fit.
pub fn choose_block(
    fixed: u32,
    per_thread: u32,
    regs: u32,
    shared_per_sm: u32,
    max_per_block: u32,
) -> Option<(u32, u32)> {
    // Hopper/Ampere limits: 64 K registers (allocated per warp in 256s), 2048 threads and
    // 32 blocks per SM, 1 KB of shared memory reserved per block.
    let warp_regs = (regs.max(1) * 32).div_ceil(256) * 256;
    let mut best: Option<(u32, u32, u32)> = None;
    for &block in &BLOCKS {
        let shared = fixed + block * per_thread;
        if shared > max_per_block {
            continue;
        }
        let by_shared = shared_per_sm / (shared + 1024);
        let by_regs = (65536 / warp_regs) / (block / 32);
        let blocks = by_shared.min(by_regs).min(2048 / block).min(32);
        let warps = blocks * block / 32;
        if best.map_or(true, |(w, _, _)| warps > w) {
            best = Some((warps, block, shared));
        }
    }
    best.map(|(_, b, s)| (b, s))
}

/// Sequences of a chunk laid out for the kernel: all codes in one buffer and per pair
/// (query offset, target offset, query length, target length).
#[derive(Debug, Default)]
pub struct Packed {
    pub seqs: Vec<u8>,
    pub descs: Vec<u32>,
}

pub fn pack(pairs: PairSeqs<'_>) -> Packed {
    let mut p = Packed::default();
    pack_into(pairs, &mut p);
    p
}

/// `pack` into reused buffers (a worker keeps them between pieces: no page faults).
/// `seqs` may be longer than the bytes written.
pub fn pack_into(pairs: PairSeqs<'_>, out: &mut Packed) {
    let total = pack_descs(pairs, &mut out.descs);
    if out.seqs.len() < total {
        out.seqs.resize(total, 0);
    }
    pack_seqs(pairs, &mut out.seqs);
}

/// The pair table; returns the sequence bytes needed (at least 1).
pub fn pack_descs(pairs: PairSeqs<'_>, descs: &mut Vec<u32>) -> usize {
    descs.clear();
    let offsets: Vec<usize> = pairs.offsets().collect();
    for b in offsets.windows(3).step_by(2) {
        descs.extend_from_slice(&[b[0] as u32, b[1] as u32, (b[1] - b[0]) as u32, (b[2] - b[1]) as u32]);
    }
    offsets.last().copied().unwrap_or(0).max(1)
}

/// Copies the pairs' residues into `dst` (long enough): they already lie back to back in
/// the batch, so this is one copy, cut in parallel chunks.
pub fn pack_seqs(pairs: PairSeqs<'_>, dst: &mut [u8]) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 20;
    let src = pairs.residues();
    dst[..src.len()].par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// Fewest pairs in a piece of an align call (a piece's launches and copies cost the same
/// however few pairs it holds).
pub const MIN_PIECE_PAIRS: usize = 4_096;
/// Pieces each stream's worker gets from a call where the pairs allow: with two, every
/// worker prepared its first piece at the same time as the others and the GPU waited at each
/// call's start and end (H100, calls of 524,288 DNA-2 pairs: 0.80-0.99 TCUPS at two pieces
/// a worker, 1.59-1.68 at eight).
pub const PIECES_PER_WORKER: usize = 8;
/// A piece's work in multiples of its longest pair's: one pair runs on one warp, ~1/1,400 of
/// the H100's rate, so a piece holding less work than ~1,000 times its longest pair waits
/// for that pair (pairs by id of the real length distribution: 0.80-0.83 TCUPS with pieces
/// of 32,768 pairs, 0.71-0.74 with 16,384).
pub const TAIL_FACTOR: u64 = 1_000;

/// Pairs per piece for an align call of `n` pairs holding `cells` cells, its largest pair
/// `longest` cells, over `workers` workers: `per_worker` pieces each (default
/// [`PIECES_PER_WORKER`]), unless that
/// leaves a piece less than [`TAIL_FACTOR`] times its longest pair's work (pieces of the mean
/// pair); never fewer than two pieces a worker where the call has the pairs, never below
/// [`MIN_PIECE_PAIRS`] or above `most`.
pub fn piece_pairs(n: usize, cells: u64, longest: u64, workers: usize, per_worker: usize, most: usize) -> usize {
    let w = workers.max(1);
    let mean = (cells / n.max(1) as u64).max(1);
    let spread = n.div_ceil(per_worker.max(1) * w);
    let tail = usize::try_from(longest.saturating_mul(TAIL_FACTOR) / mean).unwrap_or(usize::MAX);
    spread.max(tail).min(n.div_ceil(2 * w)).max(MIN_PIECE_PAIRS).min(most.max(1))
}

/// Splits `pairs` into pieces of at most `max_pairs` pairs whose sequence bytes fit in
/// `max_bytes` (the kernel's offsets are 32-bit).
pub fn piece_ranges(pairs: PairSeqs<'_>, max_pairs: usize, max_bytes: usize) -> Vec<std::ops::Range<usize>> {
    super::layout::consecutive_ranges(pairs.iter().map(|(q, t)| q.len() + t.len()), 0, max_bytes, max_pairs)
}

/// One cell reported by the kernel: score and 0-based (row, column); -1 when score is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub score: i32,
    pub row: i32,
    pub col: i32,
    pub overflow: bool,
}

pub fn cells(raw: &[i32]) -> Vec<Cell> {
    raw.chunks_exact(4).map(|c| Cell { score: c[0], row: c[1], col: c[2], overflow: c[3] & 1 != 0 }).collect()
}

/// The forward end alone ([`crate::engine::Level::ScoreEnd`]): starts 0.
pub fn finish_end(end: Cell) -> Alignment {
    if end.score <= 0 {
        return Alignment::default();
    }
    Alignment::from_end(crate::engine::scalar::ScoreEnd {
        score: end.score,
        qend: end.row as u32 + 1,
        tend: end.col as u32 + 1,
    })
}

/// Combines the forward end and the reverse start (in reversed coordinates) of one pair.
/// `recomputed` follows the one rule of [`crate::engine::recomputed`], not the GPU's path.
pub fn finish(end: Cell, start: Option<Cell>) -> Result<Alignment> {
    let recomputed = crate::engine::recomputed(end.score);
    if end.score <= 0 {
        return Ok(Alignment::default());
    }
    let (qend, tend) = (end.row as u32 + 1, end.col as u32 + 1);
    let s = start.ok_or_else(|| Error::Internal("reverse pass result missing".into()))?;
    if s.score != end.score || s.row < 0 || s.col < 0 || s.row as u32 >= qend || s.col as u32 >= tend {
        return Err(Error::Internal(format!(
            "GPU reverse pass reached score {} at ({}, {}) for forward score {} ending at ({}, {})",
            s.score, s.row, s.col, end.score, qend, tend
        )));
    }
    Ok(Alignment {
        score: end.score,
        qstart: qend - s.row as u32,
        qend,
        tstart: tend - s.col as u32,
        tend,
        recomputed,
        internal: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::scalar;
    use crate::scoring::{Alphabet, Matrix};

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn random_pair(rng: &mut Rng, n: u8, qmax: usize, tmax: usize) -> (Vec<u8>, Vec<u8>) {
        let qlen = 1 + rng.below(qmax);
        let tlen = 1 + rng.below(tmax);
        let t: Vec<u8> = (0..tlen).map(|_| rng.below(n as usize) as u8).collect();
        // Half the pairs: the query is a mutated window of the target, so alignments are long.
        let q: Vec<u8> = if rng.below(2) == 0 && qlen <= tlen {
            let s = rng.below(tlen - qlen + 1);
            t[s..s + qlen].iter().map(|&c| if rng.below(5) == 0 { rng.below(n as usize) as u8 } else { c }).collect()
        } else {
            (0..qlen).map(|_| rng.below(n as usize) as u8).collect()
        };
        (q, t)
    }

    /// A CPU model of what the kernel computes for one pair at one shape: the offset
    /// recurrences over the padded matrix, then per-thread best tracking (strict improvement
    /// in column order, first row of the column), the group reduction and the pass merge.
    /// Returns (score, row, col) 0-based, or (0, -1, -1).
    fn model(q: &[u8], t: &[u8], pad_cols: usize, sc: &Scoring, shape: Shape) -> (i32, i32, i32) {
        let (mat, nc1) = kernel_matrix(sc).unwrap();
        let pad = (nc1 - 1) as u8;
        let passes = shape.passes(q.len());
        let rows = passes * shape.span();
        let cols = t.len() + pad_cols;
        let qc = |i: usize| if i < q.len() { q[i] } else { pad };
        let tc = |j: usize| if j < t.len() { t[j] } else { pad };
        let (oe, ext) = (sc.gap_open + sc.gap_extend, sc.gap_extend);
        // h[i][j] over the padded matrix, with e* = E + oe and g = F + oe.
        let mut h = vec![vec![0i32; cols]; rows];
        let mut estar = vec![0i32; rows];
        let mut hprev = vec![0i32; rows];
        for j in 0..cols {
            let mut g = 0; // F(0, j) + oe with H(0, j) = 0
            let mut diag = 0;
            for i in 0..rows {
                let old = hprev[i];
                let s = mat[qc(i) as usize * nc1 + tc(j) as usize] as i32;
                estar[i] = (estar[i] - ext).max(old);
                let a = (diag + s).max(estar[i] - oe).max(0);
                let hv = a.max(g - oe);
                g = (g - ext).max(hv);
                h[i][j] = hv;
                diag = old;
                hprev[i] = hv;
            }
        }
        let better = |a: (i32, i32, i32), b: (i32, i32, i32)| {
            a.0 > b.0 || (a.0 == b.0 && (a.2 < b.2 || (a.2 == b.2 && a.1 < b.1)))
        };
        let none = (0, i32::MAX, i32::MAX);
        let mut run = none;
        let r = shape.rows as usize;
        for p in 0..passes {
            let mut group = none;
            for th in 0..shape.threads as usize {
                let row0 = p * shape.span() + th * r;
                let (mut best, mut bcol, mut snap) = (0, i32::MAX, vec![0; r]);
                for j in 0..cols {
                    let cm = (0..r).map(|k| h[row0 + k][j]).max().unwrap();
                    if cm > best {
                        best = cm;
                        bcol = j as i32;
                        snap = (0..r).map(|k| h[row0 + k][j]).collect();
                    }
                }
                let b = if best > 0 {
                    let k = snap.iter().position(|&v| v == best).unwrap();
                    (best, (row0 + k) as i32, bcol)
                } else {
                    none
                };
                if better(b, group) {
                    group = b;
                }
            }
            if better(group, run) {
                run = group;
            }
        }
        if run.0 == 0 {
            (0, -1, -1)
        } else {
            run
        }
    }

    fn cell(m: (i32, i32, i32)) -> Cell {
        Cell { score: m.0, row: m.1, col: m.2, overflow: false }
    }

    fn check_model(sc: &Scoring, n: u8, seed: u64, count: usize, qmax: usize, tmax: usize) {
        let mut rng = Rng(seed);
        for k in 0..count {
            let (q, t) = random_pair(&mut rng, n, qmax, tmax);
            let want = scalar::align_pair(&q, &t, sc).unwrap();
            let shape = match k % 3 {
                0 => choose_shape(q.len(), t.len(), true, ShapeRules::new(16)),
                1 => Shape { threads: 2, rows: 4 },
                _ => Shape { threads: 1, rows: 4 },
            };
            let end = model(&q, &t, rng.below(4), sc, shape);
            let (qe, te) = if end.0 > 0 { (end.1 as usize + 1, end.2 as usize + 1) } else { (0, 0) };
            let rq: Vec<u8> = q[..qe].iter().rev().copied().collect();
            let rt: Vec<u8> = t[..te].iter().rev().copied().collect();
            let start = if end.0 > 0 { Some(cell(model(&rq, &rt, 0, sc, shape))) } else { None };
            let got = finish(cell(end), start).unwrap();
            assert_eq!(got, want, "pair {} shape {:?}: q {:?} t {:?}", k, shape, q, t);
        }
    }

    #[test]
    fn kernel_model_matches_scalar_protein() {
        check_model(&Scoring::blosum62(), 24, 0x9e3779b97f4a7c15, 300, 60, 80);
        let sc = Scoring::new(Matrix::protein("PAM30").unwrap(), 6, 1).unwrap();
        check_model(&sc, 24, 12345, 200, 40, 40);
    }

    #[test]
    fn kernel_model_matches_scalar_dna() {
        let sc = Scoring::new(Matrix::dna(2, -3), 5, 2).unwrap();
        check_model(&sc, 5, 777, 300, 50, 70);
        // Tiny alphabets make many ties: the tie rule is exercised hard.
        let sc = Scoring::new(Matrix::dna(1, -1), 1, 1).unwrap();
        check_model(&sc, 2, 4242, 300, 12, 12);
    }

    #[test]
    fn reverse_local_pass_equals_anchored_start() {
        // The claim the reverse kernel rests on, without the kernel model: a plain local
        // pass on the reversed prefixes finds the anchored start of `start_from_end`.
        let sc = Scoring::new(Matrix::dna(1, -1), 1, 1).unwrap();
        let mut rng = Rng(99);
        for _ in 0..500 {
            let (q, t) = random_pair(&mut rng, 3, 15, 15);
            let p = scalar::Profile::new(&q, &sc);
            let end = scalar::score_end(&p, &t, &sc, &mut scalar::Scratch::default());
            if end.score == 0 {
                continue;
            }
            let rq: Vec<u8> = q[..end.qend as usize].iter().rev().copied().collect();
            let rt: Vec<u8> = t[..end.tend as usize].iter().rev().copied().collect();
            let rev = scalar::score_end(&scalar::Profile::new(&rq, &sc), &rt, &sc, &mut scalar::Scratch::default());
            assert_eq!(rev.score, end.score);
            let (qs, ts) = scalar::start_from_end(&q, &t, &sc, end).unwrap();
            assert_eq!((end.qend - rev.qend + 1, end.tend - rev.tend + 1), (qs, ts));
        }
    }

    #[test]
    fn chosen_shape_follows_the_rules_and_no_allowed_shape_costs_less() {
        let mut rng = Rng(17);
        let rule_sets = [
            ShapeRules::new(16),
            ShapeRules::new(8),
            ShapeRules { min_group: 4, ..ShapeRules::new(16) },
            ShapeRules { min_group: 32, ..ShapeRules::new(16) },
            ShapeRules { multipass: true, ..ShapeRules::new(16) },
            ShapeRules { multipass: true, min_group: 4, ..ShapeRules::new(8) },
        ];
        for k in 0..3_000 {
            let qlen = if k < 500 { k + 1 } else { 1 + rng.below(20_000) };
            let tlen = 1 + rng.below(if k % 2 == 0 { 300 } else { 20_000 });
            for rules in rule_sets {
                for packed in [true, false] {
                    let s = choose_shape(qlen, tlen, packed, rules);
                    assert!(s.passes(qlen) * s.span() >= qlen);
                    assert!(s.threads >= rules.min_group && GROUPS.contains(&s.threads));
                    let rows: Vec<u32> = if packed {
                        PACKED_ROWS.iter().copied().filter(|&r| r <= rules.max_rows).collect()
                    } else {
                        vec![WIDE_ROWS]
                    };
                    assert!(rows.contains(&s.rows), "{:?}", s);
                    let widest = Shape { threads: 32, rows: *rows.last().unwrap() };
                    assert!(rules.multipass || s.passes(qlen) == 1 || s == widest, "{:?} {} {:?}", rules, qlen, s);
                    for &g in GROUPS.iter().filter(|&&g| g >= rules.min_group) {
                        for &r in &rows {
                            let other = Shape { threads: g, rows: r };
                            if !rules.multipass && other.passes(qlen) > 1 && other != widest {
                                continue;
                            }
                            assert!(shape_cost(s, qlen, tlen) <= shape_cost(other, qlen, tlen), "{:?} {:?}", s, other);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shapes_cover_the_query_with_little_padding() {
        for qlen in 1..3000 {
            for packed in [true, false] {
                let s = choose_shape(qlen, 1000, packed, ShapeRules { multipass: true, ..ShapeRules::new(16) });
                assert!(s.passes(qlen) * s.span() >= qlen);
                if packed {
                    let waste = s.passes(qlen) * s.span() - qlen;
                    assert!(waste * 3 <= qlen || waste < 16, "qlen {} -> {:?}", qlen, s);
                }
            }
        }
        // Hand-checked against the model: 20 rows fit two threads of 12 in one pass (one
        // thread would take two passes, two of 16 pad 12 rows); a long query against a short target tiles one
        // thread's 16 rows over many passes (no wavefront to fill); without several passes
        // only the widest shape tiles.
        let multi = ShapeRules { multipass: true, ..ShapeRules::new(16) };
        assert_eq!(choose_shape(20, 1000, true, multi), Shape { threads: 2, rows: 12 });
        assert_eq!(choose_shape(5000, 100, true, multi), Shape { threads: 1, rows: 16 });
        let single = ShapeRules::new(16);
        assert_eq!(choose_shape(5000, 100, true, single), Shape { threads: 32, rows: 16 });
        assert_eq!(choose_shape(5000, 100, true, ShapeRules { max_rows: 8, ..single }), Shape { threads: 32, rows: 8 });
        assert_eq!(choose_shape(20, 100, false, ShapeRules::new(16)).rows, WIDE_ROWS);
    }

    #[test]
    fn bins_hold_every_pair_once_sorted_by_passes_and_target_length() {
        let mut rng = Rng(5);
        let items: Vec<Item> = (0..1001)
            .map(|i| {
                // A third of tiny pairs, so equal keys occur.
                let (q, t) = if i % 3 == 0 { (8, 20) } else { (700, 2000) };
                Item { index: i, qlen: 1 + rng.below(q) as u32, tlen: 1 + rng.below(t) as u32 }
            })
            .collect();
        for packed in [true, false] {
            let bins = make_bins(&items, packed, ShapeRules::new(16));
            let mut seen = vec![0; items.len()];
            for b in &bins {
                assert_eq!(b.groups.len() % halves(b.packed), 0);
                let members: Vec<&Item> = b.groups.iter().filter(|&&g| g >= 0).map(|&g| &items[g as usize]).collect();
                for w in members.windows(2) {
                    let key = |m: &Item| (b.shape.passes(m.qlen as usize), m.tlen, m.qlen);
                    assert!(key(w[0]) >= key(w[1]));
                    // Equals keep input order (pairs sharing a thread: a deterministic plan).
                    assert!(key(w[0]) > key(w[1]) || w[0].index < w[1].index);
                }
                for m in &members {
                    seen[m.index as usize] += 1;
                    assert_eq!(choose_shape(m.qlen as usize, m.tlen as usize, packed, ShapeRules::new(16)), b.shape);
                    assert!(b.max_cols >= m.tlen as usize);
                    assert!(b.max_passes >= b.shape.passes(m.qlen as usize));
                }
                // Empty slots only at the very end of a bin.
                let first_empty = b.groups.iter().position(|&g| g < 0).unwrap_or(b.groups.len());
                assert!(b.groups[first_empty..].iter().all(|&g| g < 0));
                assert!(b.groups.len() - first_empty < halves(b.packed));
            }
            assert!(seen.iter().all(|&c| c == 1));
        }
    }

    #[test]
    fn launches_cover_every_group_once_with_its_bin_shape() {
        let mut rng = Rng(23);
        // Short and long queries: single-pass bins of several shapes and multi-pass ones.
        let items: Vec<Item> = (0..3000)
            .map(|i| {
                let qlen = if i % 10 == 0 { 600 + rng.below(3000) } else { 1 + rng.below(500) };
                Item { index: i, qlen: qlen as u32, tlen: 1 + rng.below(2000) as u32 }
            })
            .collect();
        let bins = make_bins(&items, true, ShapeRules::new(16));
        let mut offsets = Vec::new();
        let mut total = 0;
        for b in &bins {
            offsets.push(total);
            total += b.groups.len() / 2;
        }
        let launches = plan_launches(&bins, &offsets, usize::MAX);
        // Which bin (and shape) each concatenated group belongs to.
        let owner = |g: usize| bins.iter().zip(&offsets).find(|(b, &o)| g >= o && g < o + b.groups.len() / 2).unwrap();
        let mut seen = vec![0; total];
        let mut slots_seen = std::collections::HashSet::new();
        for l in &launches {
            let work = |x: &[i32; 4]| owner(x[1] as usize).0.work[x[1] as usize - *owner(x[1] as usize).1];
            let passes = |x: &[i32; 4]| owner(x[1] as usize).0.passes[x[1] as usize - *owner(x[1] as usize).1];
            if l.pipelined {
                // One whole-warp group per entry, most passes first; its items pass by pass.
                assert!(l.warps.windows(2).all(|w| (passes(&w[0]), work(&w[0])) >= (passes(&w[1]), work(&w[1]))));
                let starts = l.pass_start();
                assert_eq!(starts.len(), l.levels() + 1);
                let items: u32 = l.warps.iter().map(|w| w[2] as u32).sum();
                assert_eq!(*starts.last().unwrap() as u32, items);
                assert_eq!(l.slots, 2 * l.warps.len());
                for w in &l.warps {
                    assert_eq!((w[0], w[3]), (32, 1));
                    assert_eq!(w[2] as u32, passes(w));
                    assert!(w[2] >= 1 && l.stride >= owner(w[1] as usize).0.max_cols);
                    seen[w[1] as usize] += 1;
                }
                continue;
            }
            assert!(l.warps.windows(2).all(|w| work(&w[0]) >= work(&w[1])));
            for w in &l.warps {
                let (g, first, slot, count) = (w[0], w[1] as usize, w[2] as usize, w[3] as usize);
                assert!(count >= 1 && count <= 32 / g as usize);
                for k in 0..count {
                    let (b, _) = owner(first + k);
                    assert_eq!((b.packed, b.shape.rows, b.shape.threads), (l.packed, l.rows, g as u32));
                    seen[first + k] += 1;
                    if b.max_passes > 1 {
                        assert!(slot + k < l.slots && l.stride >= b.max_cols);
                        assert!(slots_seen.insert((l.rows, slot + k)));
                    }
                }
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert!(bins.iter().any(|b| b.max_passes > 1) && launches.iter().any(|l| l.pipelined));
    }

    #[test]
    fn only_bins_too_few_to_fill_the_gpu_are_pipelined() {
        let items: Vec<Item> = (0..40).map(|i| Item { index: i, qlen: 2_000, tlen: 3_000 }).collect();
        let bins = make_bins(&items, true, ShapeRules::new(16));
        assert_eq!(bins.len(), 1);
        assert_eq!(bins[0].max_passes, 4);
        let groups = bins[0].groups.len() / 2;
        assert!(plan_launches(&bins, &[0], groups + 1).iter().all(|l| l.pipelined));
        let serial = plan_launches(&bins, &[0], groups);
        assert!(serial.iter().all(|l| !l.pipelined && l.slots == groups));
        assert!(plan_launches(&bins, &[0], 0).iter().all(|l| !l.pipelined));
    }

    #[test]
    fn packing_and_pieces_keep_input_order() {
        let a = vec![1u8; 10];
        let b = vec![2u8; 7];
        let owned = crate::seq::SeqPairs::from_slices(&[(&a, &b), (&b[..0], &a), (&a[..3], &b[..1])]);
        let pairs = owned.view();
        let p = pack(pairs);
        assert_eq!(p.descs, vec![0, 10, 10, 7, 17, 17, 0, 10, 27, 30, 3, 1]);
        assert_eq!(&p.seqs[27..31], &[1, 1, 1, 2]);
        assert_eq!(piece_ranges(pairs, 10, 20), vec![0..1, 1..3]);
        assert_eq!(piece_ranges(pairs, 10, 5), vec![0..1, 1..2, 2..3]);
        assert_eq!(piece_ranges(pairs, 2, 100), vec![0..2, 2..3]);
        assert!(piece_ranges(pairs.slice(0..0), 2, 100).is_empty());
        // A piece's residues are the batch's, relative to the piece.
        let tail = pack(pairs.slice(1..3));
        assert_eq!(tail.descs, vec![0, 0, 0, 10, 10, 13, 3, 1]);
    }

    #[test]
    fn pieces_spread_over_the_workers_unless_a_long_pair_would_hold_them_up() {
        // Short pairs, a large call: eight pieces a worker.
        assert_eq!(piece_pairs(524_288, 524_288 * 120_000, 250_000, 4, PIECES_PER_WORKER, 65_536), 16_384);
        // One pair far longer than the mean: pieces as large as two a worker allow.
        assert_eq!(piece_pairs(262_144, 262_144 * 200_000, 15_000_000, 4, PIECES_PER_WORKER, 65_536), 32_768);
        // In between: the piece holds TAIL_FACTOR times the longest pair's work.
        let p = piece_pairs(1 << 20, (1 << 20) * 100_000, 5_000_000, 4, PIECES_PER_WORKER, 65_536);
        assert!(p > (1 << 20) / (PIECES_PER_WORKER * 4));
        assert_eq!(p as u64, 5_000_000 * TAIL_FACTOR / 100_000);
        // Bounds: the configured largest piece, the smallest one, and small calls.
        assert_eq!(piece_pairs(1 << 24, 1 << 40, 1, 4, PIECES_PER_WORKER, 65_536), 65_536);
        assert_eq!(piece_pairs(1 << 24, 1 << 40, 1, 4, PIECES_PER_WORKER, 1_000), 1_000);
        assert_eq!(piece_pairs(10_000, 10_000 * 1_000, 1_000, 4, PIECES_PER_WORKER, 65_536), MIN_PIECE_PAIRS);
        assert_eq!(piece_pairs(0, 0, 0, 0, PIECES_PER_WORKER, 0), 1);
        for (n, workers) in [(1usize, 1usize), (5_000, 3), (100_000, 16), (3_000_000, 8)] {
            let p = piece_pairs(n, n as u64 * 50_000, 5_000_000, workers, PIECES_PER_WORKER, 65_536);
            assert!((1..=65_536).contains(&p));
        }
    }

    #[test]
    fn finish_converts_reversed_start_and_rejects_mismatch() {
        let end = Cell { score: 17, row: 2, col: 5, overflow: false };
        let start = Cell { score: 17, row: 2, col: 2, overflow: false };
        let a = finish(end, Some(start)).unwrap();
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 3, 4, 6));
        assert!(finish(end, Some(Cell { score: 16, ..start })).is_err());
        assert!(finish(end, None).is_err());
        let zero = Cell { score: 0, row: -1, col: -1, overflow: false };
        assert_eq!(finish(zero, None).unwrap(), Alignment::default());
    }

    #[test]
    fn blocks_keep_most_warps_resident() {
        // H100: 228 KB of shared memory per SM, 227 KB per block at most.
        let (sm, max) = (233_472, 232_448);
        // Protein, 16 rows, 2 halves: 800 bytes per thread, 118 registers. 64 threads: 51,840
        // bytes, 4 blocks by shared memory = 8 warps (registers allow 17 warps); larger
        // blocks also reach 8 warps, and 64 comes first on ties.
        assert_eq!(choose_block(640, 800, 118, sm, max), Some((64, 51_840)));
        // 12 rows: 32 threads x 600 + 640 = 19,840 bytes, 11 blocks = 11 warps beats 64
        // threads (5 blocks = 10 warps).
        assert_eq!(choose_block(640, 600, 100, sm, max), Some((32, 19_840)));
        // Registers bind: 255 registers = 8,192 per warp, 8 warps per SM whatever the block.
        assert_eq!(choose_block(0, 8, 255, sm, max), Some((64, 512)));
        // Too big for any block.
        assert_eq!(choose_block(640, 8_000, 100, sm, max), None);
    }

    #[test]
    fn kernel_matrix_pads_below_every_score() {
        let (m, nc1) = kernel_matrix(&Scoring::blosum62()).unwrap();
        assert_eq!(nc1, 25);
        assert_eq!(m[17 * 25 + 17], 11); // W/W
        assert!((0..25).all(|i| m[24 * 25 + i] == -128 && m[i * 25 + 24] == -128));
        let bad = Scoring::new(Matrix::dna(200, -3), 5, 2).unwrap();
        assert!(kernel_matrix(&bad).is_err());
        let _ = Alphabet::Dna;
    }
}

//! Host-side data layout for the search kernels (pure CPU code, unit-tested without a GPU):
//! query pairing and the packed query-pair profiles, the per-GPU database shards, and the
//! length bins that pick a kernel specialisation.

use crate::database::Database;
use crate::error::{Error, Result};
use crate::scoring::Scoring;

/// Score of the PAD residue (query padding rows and target padding columns): negative, so
/// padded cells never exceed a real cell, and small enough that no s16 arithmetic wraps.
pub const PAD_SCORE: i32 = -1024;

pub use super::kernels::Shape;

/// Targets (subwarps) per 128-thread block of a search variant.
pub fn targets_per_block(shape: Shape) -> u32 {
    128 / shape.threads
}

/// Which specialisation runs which target lengths: `(longest target, variant)`, ascending.
/// Measured on the H100 (BENCHMARKS.md, ncu): the kernel is issue-bound at 3 warps per
/// scheduler, so the variant with the most rows per thread (least per-step overhead per
/// cell) wins at every length: 8 threads x 32 rows, for short and long targets alike.
pub fn default_bins() -> Vec<(u32, Shape)> {
    vec![(u32::MAX, Shape { threads: 8, rows: 32 })]
}

/// A contiguous run of targets (indices into a shard, ascending length) and its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    pub begin: u32,
    pub end: u32,
    pub shape: Shape,
    /// Longest target in the bin.
    pub max_len: u32,
}

/// Splits targets sorted by ascending length into bins by `bins` (see `default_bins`).
pub fn split_bins(lengths: &[u32], bins: &[(u32, Shape)]) -> Vec<Bin> {
    let mut out = Vec::new();
    let mut begin = 0usize;
    for &(limit, shape) in bins {
        if begin >= lengths.len() {
            break;
        }
        let end = begin + lengths[begin..].partition_point(|&l| l <= limit);
        if end > begin {
            out.push(Bin { begin: begin as u32, end: end as u32, shape, max_len: lengths[end - 1] });
        }
        begin = end;
    }
    out
}

/// Default longest strand, in passes, unless one query needs more: a work item runs a whole
/// strand over one group of targets, so its length bounds the launch's tail (items run
/// longest target first; the last ones must stay short).
pub const STRAND_PASSES: usize = 32;

/// Query blocks marker (kernels/sw_search.cu `BLOCK_*`): a lane's block of `rows` rows in a
/// pass holds no query.
pub const BLOCK_NONE: u32 = 0x3fff_ffff;
pub const BLOCK_START: u32 = 0x4000_0000;
pub const BLOCK_END: u32 = 0x8000_0000;

/// A pair of lanes (the two 16-bit halves of every cell), each a list of queries laid end to
/// end from block 0, every query starting on a block of `shape.rows` rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strand {
    /// Per lane: (query slot, first block), in order.
    pub lanes: [Vec<(usize, usize)>; 2],
    /// Passes (tiles of `shape.span()` rows).
    pub passes: usize,
}

/// Packs queries of the given lengths (one slot each; empty ones get none) into strands
/// for `shape`: every query takes whole blocks of `shape.rows` rows, and the queries are
/// spread longest first over the least-loaded of 2n lanes (lanes of similar load paired
/// into n strands), for the n that pads least among the few that keep strands within
/// `max_passes` (or the longest query). Only a query's last block and a strand's end are
/// padded.
pub fn pack_strands(lens: &[usize], shape: Shape, max_passes: usize) -> Vec<Strand> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let k = shape.rows as usize;
    let per_pass = shape.threads as usize;
    let blocks = |q: usize| lens[q].div_ceil(k);
    let mut order: Vec<usize> = (0..lens.len()).filter(|&q| lens[q] > 0).collect();
    if order.is_empty() {
        return Vec::new();
    }
    order.sort_by_key(|&q| (Reverse(lens[q]), q));
    let total: usize = order.iter().map(|&q| blocks(q)).sum();
    let cap = blocks(order[0]).div_ceil(per_pass).max(max_passes.max(1)) * per_pass;
    let fewest = total.div_ceil(2 * cap).max(1);
    let most = order.len().div_ceil(2);
    // Longest processing time first over 2n lanes; lanes sorted by load, paired.
    let spread = |n: usize| -> Vec<(usize, Vec<usize>)> {
        let mut lanes: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new()); 2 * n];
        let mut heap: BinaryHeap<Reverse<(usize, usize)>> = (0..2 * n).map(|l| Reverse((0, l))).collect();
        for &q in &order {
            let Reverse((load, l)) = heap.pop().expect("lanes");
            lanes[l].0 += blocks(q);
            lanes[l].1.push(q);
            heap.push(Reverse((load + blocks(q), l)));
        }
        lanes.sort_by_key(|l| Reverse(l.0));
        lanes
    };
    let passes_of =
        |lanes: &[(usize, Vec<usize>)]| -> usize { lanes.chunks(2).map(|p| p[0].0.div_ceil(per_pass).max(1)).sum() };
    let lanes = (fewest..=(fewest + 3).min(most.max(fewest)))
        .map(spread)
        .min_by_key(|l| (passes_of(l), Reverse(l.len())))
        .expect("at least one count");
    let place = |qs: &[usize]| {
        let mut at = 0;
        qs.iter()
            .map(|&q| {
                let p = (q, at);
                at += blocks(q);
                p
            })
            .collect::<Vec<_>>()
    };
    lanes
        .chunks(2)
        .filter(|p| p[0].0 > 0)
        .map(|p| Strand { lanes: [place(&p[0].1), place(&p[1].1)], passes: p[0].0.div_ceil(per_pass).max(1) })
        .collect()
}

/// The packed profiles of a batch's strands for one variant, as the kernel reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiles {
    /// Per pass (the strands' passes in turn): `alpha x span` ints, see [`profile_index`].
    pub data: Vec<i32>,
    /// Per pass and thread: the query block of lane A and of lane B (slot, `BLOCK_START`,
    /// `BLOCK_END`; `BLOCK_NONE` for padding), interleaved.
    pub blocks: Vec<u32>,
    /// Index of each strand's first pass.
    pub first_pass: Vec<u32>,
    /// Passes of each strand.
    pub passes: Vec<u32>,
}

/// Rows of the profile: alphabet codes plus PAD.
pub fn alpha(sc: &Scoring) -> u32 {
    sc.matrix.size() as u32 + 1
}

/// Index in a pass's profile of (residue code, row within the pass): thread t holds rows
/// t*K .. t*K+K and reads them as K/4 16-byte words interleaved across threads.
#[inline]
pub fn profile_index(v: Shape, alpha: u32, pass: u32, code: u32, row: u32) -> usize {
    let (t, r) = (row / v.rows, row % v.rows);
    let (i, e) = (r / 4, r % 4);
    ((pass * alpha + code) * v.span() as u32 + (i * v.threads + t) * 4 + e) as usize
}

/// Profiles of `strands` (slots index `queries`).
pub fn build_profiles(queries: &[&[u8]], strands: &[Strand], sc: &Scoring, v: Shape) -> Profiles {
    let al = alpha(sc);
    let size = sc.matrix.size() as u32;
    let (k, per_pass) = (v.rows as usize, v.threads as usize);
    let total: usize = strands.iter().map(|s| s.passes).sum();
    let mut data = vec![0i32; total * (al as usize) * v.span()];
    let mut blocks = vec![BLOCK_NONE; total * per_pass * 2];
    let mut first_pass = Vec::with_capacity(strands.len());
    let mut passes = Vec::with_capacity(strands.len());
    let mut p0 = 0usize;
    for s in strands {
        first_pass.push(p0 as u32);
        passes.push(s.passes as u32);
        // Per lane and strand row: (query slot, row in the query), or none.
        let mut rows: [Vec<Option<(usize, usize)>>; 2] =
            [vec![None; s.passes * v.span()], vec![None; s.passes * v.span()]];
        for (h, lane) in s.lanes.iter().enumerate() {
            for &(q, first) in lane {
                let nb = queries[q].len().div_ceil(k);
                for i in 0..queries[q].len() {
                    rows[h][first * k + i] = Some((q, i));
                }
                for b in 0..nb {
                    let mut d = q as u32;
                    if b == 0 {
                        d |= BLOCK_START;
                    }
                    if b + 1 == nb {
                        d |= BLOCK_END;
                    }
                    blocks[((p0 + (first + b) / per_pass) * per_pass + (first + b) % per_pass) * 2 + h] = d;
                }
            }
        }
        for pass in 0..s.passes {
            for code in 0..al {
                for row in 0..v.span() {
                    let lane = |h: usize| match rows[h][pass * v.span() + row] {
                        Some((q, i)) if code < size => sc.score(queries[q][i], code as u8),
                        _ => PAD_SCORE,
                    };
                    let packed = (lane(0) as u16 as u32) | ((lane(1) as u16 as u32) << 16);
                    data[profile_index(v, al, (p0 + pass) as u32, code, row as u32)] = packed as i32;
                }
            }
        }
        p0 += s.passes;
    }
    Profiles { data, blocks, first_pass, passes }
}

/// One GPU's share of the database: targets `g, g + n, g + 2n, ...` of the length order, so
/// every GPU holds about the same residues in every length range. Still ascending by length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// Residue codes; each target starts 4-byte aligned and is padded with PAD to a
    /// multiple of 4; 16 PAD bytes close the buffer.
    pub residues: Vec<u8>,
    pub starts: Vec<u32>,
    pub lengths: Vec<u32>,
    /// Database index (length order) of each target.
    pub global: Vec<u32>,
}

/// Database indices (length order) of GPU `gpu`'s shard out of `ngpus`.
pub fn shard_targets(db: &Database, gpu: usize, ngpus: usize) -> Vec<u32> {
    (gpu..db.len()).step_by(ngpus.max(1)).map(|i| i as u32).collect()
}

/// Bytes a target takes in a packed buffer (padded to 4).
pub fn padded_len(len: usize) -> usize {
    (len + 3) & !3
}

/// Bytes a packed buffer of these targets needs, closing PAD bytes included.
pub fn packed_bytes(db: &Database, targets: &[u32]) -> usize {
    targets.iter().map(|&i| padded_len(db.seq_len(i as usize))).sum::<usize>() + 16
}

pub fn shard(db: &Database, gpu: usize, ngpus: usize, sc: &Scoring) -> Result<Shard> {
    let global = shard_targets(db, gpu, ngpus);
    let bytes = packed_bytes(db, &global);
    if bytes > u32::MAX as usize {
        return Err(Error::Device(format!(
            "database shard of {} bytes exceeds the 4 GiB a resident CUDA shard may hold",
            bytes
        )));
    }
    let mut residues = vec![0u8; bytes];
    let (starts, lengths) = pack_targets(db, &global, sc, &mut residues)?;
    Ok(Shard { residues, starts, lengths, global })
}

/// Packs `targets` into `out` (at least `packed_bytes` long) as the kernels read them and
/// returns each target's start and length. Shared by resident shards and streamed chunks;
/// groups of targets are packed in parallel (this runs while the GPU waits for the data).
pub fn pack_targets(db: &Database, targets: &[u32], sc: &Scoring, out: &mut [u8]) -> Result<(Vec<u32>, Vec<u32>)> {
    use rayon::prelude::*;
    const GROUP: usize = 2048;
    let pad = sc.matrix.size() as u8;
    let need = packed_bytes(db, targets);
    if out.len() < need || need > u32::MAX as usize {
        return Err(Error::Internal(format!("packing {} target bytes into a buffer of {}", need, out.len())));
    }
    let lengths: Vec<u32> = targets.iter().map(|&i| db.seq_len(i as usize) as u32).collect();
    let mut starts = Vec::with_capacity(targets.len());
    let mut at = 0usize;
    for &l in &lengths {
        starts.push(at as u32);
        at += padded_len(l as usize);
    }
    // Disjoint pieces of `out`, one per group of targets.
    let mut pieces = Vec::with_capacity(targets.len().div_ceil(GROUP));
    let mut rest = &mut out[..at];
    for (gi, group) in targets.chunks(GROUP).enumerate() {
        let bytes: usize = lengths[gi * GROUP..gi * GROUP + group.len()].iter().map(|&l| padded_len(l as usize)).sum();
        let (piece, tail) = rest.split_at_mut(bytes);
        pieces.push((group, piece));
        rest = tail;
    }
    pieces.into_par_iter().try_for_each(|(group, piece)| {
        let mut at = 0usize;
        for &i in group {
            let s = db.seq(i as usize);
            // Encoded residues are below the alphabet size; check cheaply, name the culprit.
            if s.iter().fold(0u8, |m, &c| m.max(c)) >= pad {
                let bad = s.iter().find(|&&c| c >= pad).copied().unwrap_or(pad);
                return Err(Error::Internal(format!(
                    "database sequence {} holds residue code {} outside the {}-letter scoring alphabet",
                    db.id(i as usize),
                    bad,
                    pad
                )));
            }
            piece[at..at + s.len()].copy_from_slice(s);
            let end = at + padded_len(s.len());
            piece[at + s.len()..end].fill(pad);
            at = end;
        }
        Ok(())
    })?;
    out[at..at + 16].fill(pad);
    Ok((starts, lengths))
}

/// Splits a shard's targets (ascending length) into consecutive chunks of at most
/// `max_bytes` packed bytes each, for streaming a database that does not fit on the GPU.
/// A single target larger than `max_bytes` gets a chunk of its own.
pub fn chunk_targets(db: &Database, targets: &[u32], max_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let sizes = targets.iter().map(|&i| padded_len(db.seq_len(i as usize)));
    consecutive_ranges(sizes, 16, max_bytes, usize::MAX)
}

/// Cuts items of the given sizes into consecutive ranges, greedily: a range takes items while
/// `base` plus their sizes stays within `max_bytes` and it holds at most `max_items`; a single
/// item over the limit gets a range of its own. Shared by database chunks and pair pieces.
pub fn consecutive_ranges(
    sizes: impl IntoIterator<Item = usize>,
    base: usize,
    max_bytes: usize,
    max_items: usize,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut begin, mut bytes, mut n) = (0usize, base, 0usize);
    for (j, b) in sizes.into_iter().enumerate() {
        if j > begin && (bytes + b > max_bytes || j - begin >= max_items) {
            out.push(begin..j);
            begin = j;
            bytes = base;
        }
        bytes += b;
        n = j + 1;
    }
    if begin < n {
        out.push(begin..n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::Alphabet;
    use crate::seq::Record;

    fn db_of(lens: &[usize]) -> Database {
        let recs = lens
            .iter()
            .enumerate()
            .map(|(i, &l)| Record {
                id: format!("s{}", i),
                seq: (0..l).map(|j| ((i + j) % 20) as u8).collect(),
                header: String::new(),
            })
            .collect();
        Database::from_records("t", recs)
    }

    #[test]
    fn bins_cover_every_target_once_in_order() {
        let lens = [1, 5, 5, 9, 100, 5000, 5001, 70000];
        let v8 = Shape { threads: 8, rows: 16 };
        let v16 = Shape { threads: 16, rows: 16 };
        let bins = split_bins(&lens, &[(5, v8), (5000, v16), (u32::MAX, v8)]);
        assert_eq!(
            bins,
            vec![
                Bin { begin: 0, end: 3, shape: v8, max_len: 5 },
                Bin { begin: 3, end: 6, shape: v16, max_len: 5000 },
                Bin { begin: 6, end: 8, shape: v8, max_len: 70000 },
            ]
        );
        // An empty range produces no bin.
        let bins = split_bins(&[10, 20], &[(5, v8), (u32::MAX, v16)]);
        assert_eq!(bins, vec![Bin { begin: 0, end: 2, shape: v16, max_len: 20 }]);
        assert!(split_bins(&[], &default_bins()).is_empty());
    }

    /// Seeded lengths, residues and targets for the tests (no crate: a plain LCG).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// Every non-empty query once, on a block boundary, lanes disjoint and inside the strand.
    fn check_placement(lens: &[usize], v: Shape, strands: &[Strand]) {
        let k = v.rows as usize;
        let mut seen = vec![0; lens.len()];
        for s in strands {
            for lane in &s.lanes {
                let mut end = 0;
                for &(q, first) in lane {
                    seen[q] += 1;
                    assert!(first >= end, "overlap in {lane:?}");
                    end = first + lens[q].div_ceil(k);
                }
                assert!(end <= s.passes * v.threads as usize, "{lane:?} past {} passes", s.passes);
            }
        }
        for (q, &n) in seen.iter().enumerate() {
            assert_eq!(n, (lens[q] > 0) as usize, "query {q} of length {} placed {n} times", lens[q]);
        }
    }

    #[test]
    fn strands_place_every_query_once_with_little_padding() {
        let v = Shape { threads: 8, rows: 32 };
        assert!(pack_strands(&[], v, STRAND_PASSES).is_empty());
        assert!(pack_strands(&[0, 0], v, STRAND_PASSES).is_empty());
        let one = pack_strands(&[0, 100], v, STRAND_PASSES);
        assert_eq!(one, vec![Strand { lanes: [vec![(1, 0)], vec![]], passes: 1 }]);
        let mut rng = Lcg(7);
        for (n, lo, hi) in [(500, 8, 1500), (20, 100, 6000), (3, 1, 40), (2000, 30, 400), (64, 1, 70000)] {
            let mut lens: Vec<usize> = (0..n).map(|_| lo + rng.below(hi - lo)).collect();
            lens[n / 2] = 0;
            for shape in [v, Shape { threads: 16, rows: 16 }, Shape { threads: 4, rows: 4 }] {
                let strands = pack_strands(&lens, shape, STRAND_PASSES);
                check_placement(&lens, shape, &strands);
                // Padding: a query's last block and the strands' ends only.
                let rows: usize = strands.iter().map(|s| 2 * s.passes * shape.span()).sum();
                let blocks: usize = lens.iter().map(|l| l.div_ceil(shape.rows as usize) * shape.rows as usize).sum();
                if blocks >= 16 * shape.span() {
                    assert!(
                        blocks as f64 / rows as f64 >= 0.95,
                        "{n} queries, {shape:?}: {rows} rows for {blocks} in blocks"
                    );
                }
            }
        }
    }

    #[test]
    fn profile_holds_both_lanes_and_pads() {
        let sc = Scoring::blosum62();
        let qa = Alphabet::Protein.encode(b"WAC").unwrap();
        let qb = Alphabet::Protein.encode(b"HE").unwrap();
        let v = Shape { threads: 8, rows: 16 };
        let strand = Strand { lanes: [vec![(0, 0)], vec![(1, 0)]], passes: 1 };
        let p = build_profiles(&[&qa, &qb], &[strand], &sc, v);
        let al = alpha(&sc);
        assert_eq!((p.first_pass.clone(), p.passes.clone()), (vec![0], vec![1]));
        assert_eq!(p.data.len(), (al * v.span() as u32) as usize);
        let at = |code: u32, row: u32| {
            let w = p.data[profile_index(v, al, 0, code, row)] as u32;
            ((w & 0xffff) as u16 as i16 as i32, (w >> 16) as u16 as i16 as i32)
        };
        let w = Alphabet::Protein.encode(b"W").unwrap()[0] as u32;
        // Row 0: lane A is W (W/W = 11), lane B is H (H/W = -2), both from BLOSUM62.
        assert_eq!(at(w, 0), (11, -2));
        // Row 2: lane B has ended: padded.
        assert_eq!(at(w, 2).1, PAD_SCORE);
        assert_eq!(at(w, 3), (PAD_SCORE, PAD_SCORE));
        // The PAD code scores PAD everywhere.
        assert_eq!(at(al - 1, 0), (PAD_SCORE, PAD_SCORE));
        // Blocks: thread 0 holds both queries whole; the other threads hold none.
        assert_eq!(&p.blocks[..2], &[BLOCK_START | BLOCK_END, 1 | BLOCK_START | BLOCK_END]);
        assert!(p.blocks[2..].iter().all(|&b| b == BLOCK_NONE));
        // Every index of the tile is used exactly once.
        let mut seen = vec![false; p.data.len()];
        for code in 0..al {
            for row in 0..v.span() as u32 {
                let i = profile_index(v, al, 0, code, row);
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
    }

    /// Smith-Waterman with affine gaps, full matrices, the textbook way (gap of k costs
    /// open + k * extend): the oracle.
    fn gotoh(q: &[u8], t: &[u8], sc: &Scoring) -> i32 {
        let (go, ge) = (sc.gap_open, sc.gap_extend);
        let neg = i32::MIN / 4;
        let mut h = vec![vec![0; t.len() + 1]; q.len() + 1];
        let mut e = vec![vec![neg; t.len() + 1]; q.len() + 1];
        let mut f = vec![vec![neg; t.len() + 1]; q.len() + 1];
        let mut best = 0;
        for i in 1..=q.len() {
            for j in 1..=t.len() {
                e[i][j] = (e[i][j - 1] - ge).max(h[i][j - 1] - go - ge);
                f[i][j] = (f[i - 1][j] - ge).max(h[i - 1][j] - go - ge);
                h[i][j] = 0.max(h[i - 1][j - 1] + sc.score(q[i - 1], t[j - 1])).max(e[i][j]).max(f[i][j]);
                best = best.max(h[i][j]);
            }
        }
        best
    }

    /// The search kernel's arithmetic on one lane of every strand, unbiased and in i32,
    /// driven only by the profile and the block table as the kernel reads them: rows in
    /// passes of `span`, each thread's block taking the row above from the thread before
    /// (or the previous pass's bottom row), replaced by the boundary where its query starts;
    /// each query's score the maximum over the rows of its blocks.
    fn emulate(p: &Profiles, v: Shape, sc: &Scoring, target: &[u8], nq: usize) -> Vec<i32> {
        let (al, span, k, nt) = (alpha(sc), v.span(), v.rows as usize, v.threads as usize);
        let oe = sc.gap_open + sc.gap_extend;
        let mut best = vec![0; nq];
        for (si, &np) in p.passes.iter().enumerate() {
            for h in 0..2 {
                let mut bottom = vec![(0, -oe); target.len()];
                for pass in 0..np as usize {
                    let gp = p.first_pass[si] as usize + pass;
                    let block = |t: usize| p.blocks[(gp * nt + t) * 2 + h];
                    let (mut hcol, mut e) = (vec![0; span], vec![-oe; span]);
                    let mut seen_above = vec![0; span]; // masked H above a block's first row
                    let mut rowmax = vec![0; span];
                    for (j, &c) in target.iter().enumerate() {
                        let (mut f, mut up, mut old_above) = (0, 0, 0);
                        for r in 0..span {
                            let t = r / k;
                            let diag = if r % k == 0 {
                                let (mut hin, mut fin) = if t > 0 {
                                    (up, f)
                                } else if pass == 0 {
                                    (0, -oe)
                                } else {
                                    bottom[j]
                                };
                                if block(t) & BLOCK_START != 0 {
                                    (hin, fin) = (0, -oe);
                                }
                                f = fin;
                                std::mem::replace(&mut seen_above[r], hin)
                            } else {
                                old_above // H(r - 1, j - 1)
                            };
                            let w = p.data[profile_index(v, al, gp as u32, c as u32, r as u32)] as u32;
                            let s = (w >> (16 * h)) as u16 as i16 as i32;
                            let hn = 0.max(diag + s).max(e[r]).max(f);
                            e[r] = (e[r] - sc.gap_extend).max(hn - oe);
                            f = (f - sc.gap_extend).max(hn - oe);
                            rowmax[r] = rowmax[r].max(hn);
                            old_above = std::mem::replace(&mut hcol[r], hn);
                            up = hn;
                        }
                        bottom[j] = (up, f);
                    }
                    for t in 0..nt {
                        let d = block(t) & BLOCK_NONE;
                        if d != BLOCK_NONE {
                            let m = rowmax[t * k..t * k + k].iter().max().copied().unwrap_or(0);
                            best[d as usize] = best[d as usize].max(m);
                        }
                    }
                }
            }
        }
        best
    }
    #[test]
    fn emulated_kernel_on_packed_strands_matches_gotoh() {
        let mut rng = Lcg(11);
        for (sc, v) in [
            (Scoring::blosum62(), Shape { threads: 4, rows: 4 }),
            (Scoring::blosum62(), Shape { threads: 2, rows: 8 }),
            (Scoring { gap_open: 2, gap_extend: 1, ..Scoring::blosum62() }, Shape { threads: 4, rows: 4 }),
        ] {
            // Many short queries (several per block row of a pass), some longer than a
            // pass, one empty; lanes then hold queries that start mid-pass and span passes.
            let lens: Vec<usize> =
                (0..40).map(|i| if i == 5 { 0 } else { 1 + rng.below(if i % 7 == 0 { 150 } else { 30 }) }).collect();
            let queries: Vec<Vec<u8>> = lens.iter().map(|&l| (0..l).map(|_| rng.below(20) as u8).collect()).collect();
            let refs: Vec<&[u8]> = queries.iter().map(|q| q.as_slice()).collect();
            let strands = pack_strands(&lens, v, STRAND_PASSES);
            check_placement(&lens, v, &strands);
            assert!(strands.iter().any(|s| s.lanes.iter().any(|l| l.len() > 1)), "no lane holds two queries");
            let p = build_profiles(&refs, &strands, &sc, v);
            for tlen in [1, 13, 60] {
                let target: Vec<u8> = (0..tlen).map(|_| rng.below(20) as u8).collect();
                let got = emulate(&p, v, &sc, &target, queries.len());
                for (q, query) in queries.iter().enumerate() {
                    assert_eq!(
                        got[q],
                        gotoh(query, &target, &sc),
                        "query {q} (len {}) vs target of {tlen}",
                        query.len()
                    );
                }
            }
        }
    }

    #[test]
    fn shards_split_residues_evenly_and_align_targets() {
        let db = db_of(&[3, 8, 5, 1, 6, 2, 7]);
        let sc = Scoring::blosum62();
        let s0 = shard(&db, 0, 2, &sc).unwrap();
        let s1 = shard(&db, 1, 2, &sc).unwrap();
        assert_eq!(s0.global, vec![0, 2, 4, 6]);
        assert_eq!(s1.global, vec![1, 3, 5]);
        for s in [&s0, &s1] {
            assert!(s.lengths.windows(2).all(|w| w[0] <= w[1]));
            for (j, &g) in s.global.iter().enumerate() {
                let st = s.starts[j] as usize;
                assert_eq!(st % 4, 0);
                assert_eq!(&s.residues[st..st + s.lengths[j] as usize], db.seq(g as usize));
                let padded_end = st + ((s.lengths[j] as usize + 3) & !3);
                assert!(s.residues[st + s.lengths[j] as usize..padded_end].iter().all(|&c| c == 24));
            }
            assert!(s.residues[s.residues.len() - 16..].iter().all(|&c| c == 24));
        }
        let total = |s: &Shard| s.lengths.iter().sum::<u32>();
        assert_eq!(total(&s0) + total(&s1), db.total_residues() as u32);
    }

    #[test]
    fn chunks_cover_the_shard_in_order_within_the_byte_limit() {
        let lens = [1, 2, 3, 4, 5, 9, 17, 40, 41, 300];
        let db = db_of(&lens);
        let sc = Scoring::blosum62();
        let targets = shard_targets(&db, 0, 1);
        for max in [1usize, 24, 40, 64, 100, 1000] {
            let chunks = chunk_targets(&db, &targets, max);
            let flat: Vec<usize> = chunks.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(flat, (0..targets.len()).collect::<Vec<_>>(), "max {}", max);
            for r in &chunks {
                let bytes = packed_bytes(&db, &targets[r.clone()]);
                assert!(bytes <= max || r.len() == 1, "chunk {:?} holds {} bytes > {}", r, bytes, max);
                // A chunk packs to the same residues as the whole shard holds for it.
                let mut buf = vec![0u8; bytes];
                let (starts, lengths) = pack_targets(&db, &targets[r.clone()], &sc, &mut buf).unwrap();
                for (k, &g) in targets[r.clone()].iter().enumerate() {
                    let st = starts[k] as usize;
                    assert_eq!(&buf[st..st + lengths[k] as usize], db.seq(g as usize));
                }
            }
        }
        // Many targets: packed in parallel groups, each in its place.
        let lens: Vec<usize> = (0..9000).map(|i| 1 + (i * 7919) % 61).collect();
        let db = db_of(&lens);
        let targets = shard_targets(&db, 1, 3);
        let mut buf = vec![0u8; packed_bytes(&db, &targets)];
        let (starts, lengths) = pack_targets(&db, &targets, &sc, &mut buf).unwrap();
        for (k, &g) in targets.iter().enumerate() {
            let st = starts[k] as usize;
            assert_eq!(st % 4, 0);
            assert_eq!(&buf[st..st + lengths[k] as usize], db.seq(g as usize));
            assert!(buf[st + lengths[k] as usize..st + padded_len(lengths[k] as usize)].iter().all(|&c| c == 24));
        }
        assert!(buf[buf.len() - 16..].iter().all(|&c| c == 24));
        let db = db_of(&[1, 2, 3, 4, 5, 9, 17, 40, 41, 300]);
        let targets = shard_targets(&db, 0, 1);
        // Greedy: at 64 bytes the first chunk takes targets while they fit.
        let chunks = chunk_targets(&db, &targets, 64);
        assert_eq!(chunks[0], 0..6);
    }
}

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

/// Queries paired for the two 16-bit lanes: `(a, b)` indices into the query list; `b` is
/// None for an odd one out. Pairs are neighbours in length order, so little is padded.
pub fn pair_queries(lens: &[usize]) -> Vec<(usize, Option<usize>)> {
    let mut order: Vec<usize> = (0..lens.len()).filter(|&i| lens[i] > 0).collect();
    order.sort_by_key(|&i| lens[i]);
    order.chunks(2).map(|c| (c[0], c.get(1).copied())).collect()
}

/// The packed profiles of all query pairs for one variant, as the kernel reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profiles {
    pub data: Vec<i32>,
    /// Start of each pair in `data`.
    pub offsets: Vec<u32>,
    /// Passes (tiles of `shape.span()` rows) of each pair.
    pub passes: Vec<u32>,
}

/// Rows of the profile: alphabet codes plus PAD.
pub fn alpha(sc: &Scoring) -> u32 {
    sc.matrix.size() as u32 + 1
}

/// Index in a pair's profile of (pass, residue code, query row within the pass): thread t
/// holds rows t*K .. t*K+K and reads them as K/4 16-byte words interleaved across threads.
#[inline]
pub fn profile_index(v: Shape, alpha: u32, pass: u32, code: u32, row: u32) -> usize {
    let (t, r) = (row / v.rows, row % v.rows);
    let (i, e) = (r / 4, r % 4);
    ((pass * alpha + code) * v.span() as u32 + (i * v.threads + t) * 4 + e) as usize
}

pub fn build_profiles(queries: &[&[u8]], pairs: &[(usize, Option<usize>)], sc: &Scoring, v: Shape) -> Profiles {
    let al = alpha(sc);
    let size = sc.matrix.size() as u32;
    let rows = v.span() as u32;
    let mut data = Vec::new();
    let mut offsets = Vec::with_capacity(pairs.len());
    let mut passes = Vec::with_capacity(pairs.len());
    let lane = |q: Option<&[u8]>, row: u32, code: u32| -> i32 {
        match q {
            Some(q) if (row as usize) < q.len() && code < size => sc.score(q[row as usize], code as u8),
            _ => PAD_SCORE,
        }
    };
    for &(a, b) in pairs {
        let qa = queries[a];
        let qb = b.map(|b| queries[b]);
        let len = qa.len().max(qb.map_or(0, |q| q.len())) as u32;
        let np = len.div_ceil(rows).max(1);
        let base = data.len();
        offsets.push(base as u32);
        passes.push(np);
        data.resize(base + (np * al * rows) as usize, 0);
        for pass in 0..np {
            for code in 0..al {
                for row in 0..rows {
                    let g = pass * rows + row;
                    let sa = lane(Some(qa), g, code);
                    let sb = lane(qb, g, code);
                    let packed = (sa as u16 as u32) | ((sb as u16 as u32) << 16);
                    data[base + profile_index(v, al, pass, code, row)] = packed as i32;
                }
            }
        }
    }
    Profiles { data, offsets, passes }
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

    #[test]
    fn queries_pair_by_length_and_skip_empty() {
        let pairs = pair_queries(&[10, 0, 3, 7, 12]);
        assert_eq!(pairs, vec![(2, Some(3)), (0, Some(4))]);
        assert_eq!(pair_queries(&[4, 2, 9]), vec![(1, Some(0)), (2, None)]);
    }

    #[test]
    fn profile_holds_both_lanes_and_pads() {
        let sc = Scoring::blosum62();
        let qa = Alphabet::Protein.encode(b"WAC").unwrap();
        let qb = Alphabet::Protein.encode(b"HE").unwrap();
        let v = Shape { threads: 8, rows: 16 };
        let p = build_profiles(&[&qa, &qb], &[(0, Some(1))], &sc, v);
        let al = alpha(&sc);
        assert_eq!(p.passes, vec![1]);
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

    #[test]
    fn long_queries_take_several_passes() {
        let sc = Scoring::blosum62();
        let q = vec![0u8; 300];
        let v = Shape { threads: 8, rows: 16 };
        let p = build_profiles(&[&q], &[(0, None)], &sc, v);
        assert_eq!(p.passes, vec![3]);
        // Row 290 (pass 2, row 34) is real; row 300 (pass 2, row 44) is padding.
        let al = alpha(&sc);
        let at = |row: u32| p.data[profile_index(v, al, row / 128, 0, row % 128)] as u32;
        assert_eq!((at(290) & 0xffff) as u16 as i16 as i32, sc.score(0, 0));
        assert_eq!((at(300) & 0xffff) as u16 as i16 as i32, PAD_SCORE);
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

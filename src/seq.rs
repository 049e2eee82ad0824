//! Sequences as every part of swarrow sees them: records of the FASTA readers, and the
//! columnar batch of pairs that the align pipeline moves from reader to engine to writer.
//!
//! A [`PairBatch`] holds a batch's residues in one buffer (query 0, target 0, query 1, ...)
//! with offsets, and its ids as Arrow stores strings (one byte buffer plus offsets). Readers
//! fill it in place, engines read it through the borrowed view [`PairSeqs`], and the writer
//! takes its id buffers over as Arrow arrays without copying them. No allocation per pair.

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{RecordBatch, StringArray};
use arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};

use crate::error::{Error, Result};

/// One input sequence. `id` is the header up to the first whitespace; `seq` holds residue
/// codes of the run's alphabet (see `scoring::alphabet`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub id: String,
    pub seq: Vec<u8>,
    /// The FASTA header line after `>` (id included), trailing whitespace removed; empty
    /// where the source has none.
    pub header: String,
}

/// Encoded pairs back to back: pair i's query is `residues[bounds[2i]..bounds[2i+1]]`, its
/// target `residues[bounds[2i+1]..bounds[2i+2]]`. Owned; engines read it as [`PairSeqs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqPairs {
    pub residues: Vec<u8>,
    /// `2 * len + 1` offsets, starting at 0.
    pub bounds: Vec<usize>,
}

impl Default for SeqPairs {
    fn default() -> Self {
        SeqPairs { residues: Vec::new(), bounds: vec![0] }
    }
}

impl SeqPairs {
    /// Copies borrowed pairs into one buffer (tests, search's few reported hits).
    pub fn from_slices(pairs: &[(&[u8], &[u8])]) -> SeqPairs {
        let mut out = SeqPairs::default();
        out.residues.reserve(pairs.iter().map(|(q, t)| q.len() + t.len()).sum());
        out.bounds.reserve(2 * pairs.len());
        for (q, t) in pairs {
            out.push(q, t);
        }
        out
    }

    /// Appends borrowed pairs, their residues copied in parallel (batches of whole
    /// sequences from a reader that parsed them elsewhere).
    pub fn extend_par(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        self.extend_par_with(pairs.len(), |i| pairs[i])
    }

    /// Appends the `n` pairs `pair(0..n)` (borrowed from elsewhere, a resident set say),
    /// their residues and bounds written in parallel: no pass over the pairs or their
    /// residues is left to the calling thread.
    pub fn extend_par_with<'a>(&mut self, n: usize, pair: impl Fn(usize) -> (&'a [u8], &'a [u8]) + Sync) -> Result<()> {
        let old = self.bounds.len();
        self.bounds.resize(old + 2 * n, 0);
        let gathered = gather_par(&mut self.residues, &mut self.bounds[old..], |i| pair(i).into(), Some, "");
        if gathered.is_err() {
            self.bounds.truncate(old);
        }
        gathered
    }

    pub fn push(&mut self, query: &[u8], target: &[u8]) {
        self.residues.extend_from_slice(query);
        self.bounds.push(self.residues.len());
        self.residues.extend_from_slice(target);
        self.bounds.push(self.residues.len());
    }

    pub fn len(&self) -> usize {
        self.bounds.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the pairs, keeping the allocations.
    pub fn clear(&mut self) {
        self.residues.clear();
        self.bounds.clear();
        self.bounds.push(0);
    }

    pub fn view(&self) -> PairSeqs<'_> {
        PairSeqs { residues: &self.residues, bounds: &self.bounds }
    }
}

/// Borrowed pairs in the [`SeqPairs`] layout; what `Engine::align` reads.
#[derive(Debug, Clone, Copy)]
pub struct PairSeqs<'a> {
    residues: &'a [u8],
    bounds: &'a [usize],
}

impl<'a> PairSeqs<'a> {
    pub fn len(&self) -> usize {
        self.bounds.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (query, target) of pair `i`.
    pub fn pair(&self, i: usize) -> (&'a [u8], &'a [u8]) {
        let b = &self.bounds[2 * i..2 * i + 3];
        (&self.residues[b[0]..b[1]], &self.residues[b[1]..b[2]])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])> + '_ {
        (0..self.len()).map(move |i| self.pair(i))
    }

    /// The pairs as slices, for engines that work pair by pair (no residue is copied).
    pub fn to_slices(&self) -> Vec<(&'a [u8], &'a [u8])> {
        self.iter().collect()
    }

    /// Pairs `range`: their residues are one contiguous run of this batch's buffer.
    pub fn slice(&self, range: Range<usize>) -> PairSeqs<'a> {
        PairSeqs { residues: self.residues, bounds: &self.bounds[2 * range.start..2 * range.end + 1] }
    }

    /// The residues of every pair, back to back in pair order (one copy uploads them all).
    pub fn residues(&self) -> &'a [u8] {
        &self.residues[self.bounds[0]..self.bounds[self.bounds.len() - 1]]
    }

    /// Where each sequence starts and ends in [`Self::residues`]: `2 * len + 1` offsets.
    pub fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let base = self.bounds[0];
        self.bounds.iter().map(move |b| b - base)
    }

    /// Query length times target length, summed: the cells an aligner fills.
    pub fn cells(&self) -> u64 {
        self.iter().map(|(q, t)| q.len() as u64 * t.len() as u64).sum()
    }
}

/// Strings as Arrow stores them: one UTF-8 byte buffer plus offsets. Turned into an Arrow
/// array by moving the buffers, not copying them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids {
    data: Vec<u8>,
    offsets: Vec<i32>,
}

impl Default for Ids {
    fn default() -> Self {
        Ids { data: Vec::new(), offsets: vec![0] }
    }
}

impl Ids {
    /// Appends `id` as its text ([`crate::error::id_text`]: bytes that are not UTF-8 escaped,
    /// so such ids stay apart).
    pub fn push_bytes(&mut self, id: &[u8]) -> Result<()> {
        self.push(&crate::error::id_text(id))
    }

    /// Appends every id of `ids` as [`Self::push_bytes`] would, checked and copied in
    /// parallel: a large batch gathered from a resident set (pairs by id) would otherwise
    /// spend a thread on its ids.
    pub fn extend_par(&mut self, ids: &[&[u8]]) -> Result<()> {
        self.extend_par_with(ids.len(), |i| ids[i])
    }

    /// Appends the `n` ids `id(0..n)` as [`Self::extend_par`] does, without a list of them.
    pub fn extend_par_with<'a>(&mut self, n: usize, id: impl Fn(usize) -> &'a [u8] + Sync) -> Result<()> {
        use rayon::prelude::*;
        if !(0..n).into_par_iter().with_min_len(1024).all(|i| std::str::from_utf8(id(i)).is_ok()) {
            return (0..n).try_for_each(|i| self.push_bytes(id(i)));
        }
        self.extend_utf8_par_with(n, id)
    }

    /// Appends the `n` ids `id(0..n)`, each known to be UTF-8 on its own (ids of a resident
    /// set, checked once), copied in parallel. Not checked again here: an id that is not
    /// UTF-8 reads back empty from [`Self::get`] and fails [`Self::take_array`].
    pub fn extend_utf8_par_with<'a>(&mut self, n: usize, id: impl Fn(usize) -> &'a [u8] + Sync) -> Result<()> {
        let old = self.offsets.len();
        self.offsets.resize(old + n, 0);
        let end = |end| i32::try_from(end).ok();
        let gathered = gather_par(&mut self.data, &mut self.offsets[old..], |i| [id(i)], end, TOO_MANY_IDS);
        if gathered.is_err() {
            self.offsets.truncate(old);
        }
        gathered
    }

    /// Appends the `n` ids `id(0..n)`: copied as they are when `utf8` says each is UTF-8 on
    /// its own (checked once where they were read), else as [`Self::extend_par_with`] does.
    pub fn extend_known_par_with<'a>(
        &mut self,
        n: usize,
        utf8: bool,
        id: impl Fn(usize) -> &'a [u8] + Sync,
    ) -> Result<()> {
        match utf8 {
            true => self.extend_utf8_par_with(n, id),
            false => self.extend_par_with(n, id),
        }
    }

    pub fn push(&mut self, id: &str) -> Result<()> {
        self.data.extend_from_slice(id.as_bytes());
        let end = i32::try_from(self.data.len()).map_err(|_| Error::Internal(TOO_MANY_IDS.into()))?;
        self.offsets.push(end);
        Ok(())
    }

    /// Appends every string of `other`, in order.
    pub fn extend(&mut self, other: &Ids) -> Result<()> {
        for i in 0..other.len() {
            self.push(other.get(i))?;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> &str {
        let bytes = &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize];
        // Only whole strs are ever pushed, so every range holds valid UTF-8.
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Takes the strings out as an Arrow array (the buffers move), leaving this empty.
    pub fn take_array(&mut self) -> Result<StringArray> {
        let data = std::mem::take(&mut self.data);
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        StringArray::try_new(offsets, Buffer::from_vec(data), None)
            .map_err(|e| Error::Internal(format!("id column: {e}")))
    }
}

const TOO_MANY_IDS: &str = "more than 2 GiB of ids in one batch";

/// Items per parallel job of [`gather_par`].
const GATHER_BLOCK: usize = 2048;

/// Appends to `buf` the parts of items `0..n` back to back (`item(i)`: `K` byte slices),
/// writing into `ends` the end offset in `buf` of every part (`K` per item, converted by
/// `end`). The bytes are copied by the thread pool in blocks of items straight into the
/// buffer's spare room: the calling thread neither zeroes the room nor first touches its
/// pages. An error (and `buf` as it was) if an offset does not convert (`overflow` says
/// why) or `item` gives other slices on its second call.
fn gather_par<'a, const K: usize, T: Send>(
    buf: &mut Vec<u8>,
    ends: &mut [T],
    item: impl Fn(usize) -> [&'a [u8]; K] + Sync,
    end: impl Fn(usize) -> Option<T> + Sync,
    overflow: &str,
) -> Result<()> {
    use rayon::prelude::*;
    let n = ends.len() / K;
    let blocks = n.div_ceil(GATHER_BLOCK);
    let block = |b: usize| b * GATHER_BLOCK..((b + 1) * GATHER_BLOCK).min(n);
    let sizes: Vec<usize> = (0..blocks)
        .into_par_iter()
        .map(|b| block(b).map(|i| item(i).iter().map(|p| p.len()).sum::<usize>()).sum())
        .collect();
    let total: usize = sizes.iter().sum();
    let base = buf.len();
    buf.reserve(total);
    // Disjoint destinations, one per block of items, with the block's offsets.
    let mut jobs = Vec::with_capacity(blocks);
    let (mut room, mut offsets) = (&mut buf.spare_capacity_mut()[..total], &mut *ends);
    let mut at = base;
    for (b, &size) in sizes.iter().enumerate() {
        let (dst, rest) = std::mem::take(&mut room).split_at_mut(size);
        let (these, others) = std::mem::take(&mut offsets).split_at_mut(block(b).len() * K);
        jobs.push((block(b), dst, these, at));
        (room, offsets) = (rest, others);
        at += size;
    }
    /// Why a job stopped.
    enum Stop {
        Overflow,
        Inexact,
    }
    let copied = jobs.into_par_iter().try_for_each(|(items, dst, offsets, start)| {
        let mut written = 0;
        let mut slots = offsets.iter_mut();
        for i in items {
            for part in item(i) {
                let to = dst.get_mut(written..written + part.len()).ok_or(Stop::Inexact)?;
                // `to` is `part.len()` bytes of the reserved room (taken just above); the copy
                // is `<[MaybeUninit<u8>]>::write_copy_of_slice`, stable only since Rust 1.93.
                unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), to.as_mut_ptr().cast::<u8>(), part.len()) };
                written += part.len();
                *slots.next().ok_or(Stop::Inexact)? = end(start + written).ok_or(Stop::Overflow)?;
            }
        }
        if written == dst.len() {
            Ok(())
        } else {
            Err(Stop::Inexact)
        }
    });
    match copied {
        Ok(()) => {}
        Err(Stop::Overflow) => return Err(Error::Internal(overflow.into())),
        Err(Stop::Inexact) => return Err(Error::Internal("a parallel copy did not fill its room exactly".into())),
    }
    // SAFETY: the jobs above cover `total` bytes of spare room from `base` exactly (each
    // block's room is its size, the sizes sum to `total`), and every job wrote its whole
    // room (`exact`): bytes `base..base + total` are initialised.
    unsafe { buf.set_len(base + total) };
    Ok(())
}

/// The strand of the query a pair is aligned on (DNA): `Minus` aligns the query's reverse
/// complement against the target as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Strand {
    #[default]
    Plus,
    Minus,
}

impl Strand {
    /// The sign PAF and the `strand` column write.
    pub fn sign(self) -> char {
        match self {
            Strand::Plus => '+',
            Strand::Minus => '-',
        }
    }
}

/// Where a pair's residues in a batch sit on its whole sequences: each side's window (the
/// 0-based offset of its first residue; the residues in the batch are the window) and the
/// whole lengths, and the strand the input gave the pair (PAF's column 5). The engine
/// aligns the windows; coordinates are reported on the whole sequences through the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Frame {
    pub query_offset: usize,
    pub target_offset: usize,
    pub query_len: usize,
    pub target_len: usize,
    /// The strand the input names for this pair; `None`: the run's `--strand`.
    pub strand: Option<Strand>,
}

/// A candidate's region on one sequence, 0-based half-open on its forward strand, as PAF
/// writes it.
pub type Region = std::ops::Range<usize>;

/// The window aligned for a candidate region of a sequence of `len` residues: the region
/// widened by `margin` on each side and kept inside the sequence; the whole sequence for
/// `None` (`--window full`).
pub fn window(region: &Region, len: usize, margin: Option<usize>) -> Region {
    match margin {
        None => 0..len,
        Some(m) => {
            let end = region.end.min(len).saturating_add(m).min(len);
            region.start.min(end).saturating_sub(m)..end
        }
    }
}

/// Which sides of a candidate's windows first run along its diagonal out to the sequences'
/// borders, before the margin widens them: the start side (where the aligned query and the
/// target begin) and the end side. A mode's free ends (`PairOptions::reach`): a free end is
/// never taken at a window edge that is no border of the sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reach {
    pub start: bool,
    pub end: bool,
}

/// The windows of a candidate with regions `query` (on the query's forward strand, of
/// `qlen` residues) and `target` (of `tlen`): on each side that `reach` names, the regions
/// first run along the candidate's diagonal to the nearer border of the two sequences (the
/// query aligned on `strand`: on minus its region's end is where the aligned query begins;
/// `None`, both strands, runs along both diagonals and keeps both), then [`window`] widens
/// each by `margin`. `None` margin: whole sequences.
pub fn windows(
    query: &Region,
    qlen: usize,
    target: &Region,
    tlen: usize,
    strand: Option<Strand>,
    margin: Option<usize>,
    reach: Reach,
) -> (Region, Region) {
    let (q, t) = match strand {
        Some(s) => along_diagonal(query, qlen, target, tlen, s, reach),
        None => {
            let (qp, tp) = along_diagonal(query, qlen, target, tlen, Strand::Plus, reach);
            let (qm, tm) = along_diagonal(query, qlen, target, tlen, Strand::Minus, reach);
            (qp.start.min(qm.start)..qp.end.max(qm.end), tp.start.min(tm.start)..tp.end.max(tm.end))
        }
    };
    (window(&q, qlen, margin), window(&t, tlen, margin))
}

/// The regions run along their diagonal to the nearer border on each side `reach` names.
fn along_diagonal(
    query: &Region,
    qlen: usize,
    target: &Region,
    tlen: usize,
    strand: Strand,
    reach: Reach,
) -> (Region, Region) {
    let (qs, qe) = (query.start.min(qlen), query.end.min(qlen).max(query.start.min(qlen)));
    let (ts, te) = (target.start.min(tlen), target.end.min(tlen).max(target.start.min(tlen)));
    // The query region on the aligned strand.
    let (aqs, aqe) = match strand {
        Strand::Plus => (qs, qe),
        Strand::Minus => (qlen - qe, qlen - qs),
    };
    let before = if reach.start { aqs.min(ts) } else { 0 };
    let after = if reach.end { (qlen - aqe).min(tlen - te) } else { 0 };
    let (aqs, aqe) = (aqs - before, aqe + after);
    let q = match strand {
        Strand::Plus => aqs..aqe,
        Strand::Minus => qlen - aqe..qlen - aqs,
    };
    (q, ts - before..te + after)
}

/// A batch of pairs for `align`: residues, ids, and the input's other columns that the
/// output carries through (Arrow and Parquet inputs), in input order.
#[derive(Debug, Clone, Default)]
pub struct PairBatch {
    pub seqs: SeqPairs,
    pub query_ids: Ids,
    pub target_ids: Ids,
    /// FASTA header lines, row for row, where the input has them (two FASTA files); empty
    /// otherwise.
    pub query_headers: Ids,
    pub target_headers: Ids,
    /// Slices of the input's record batches holding the carried columns, row for row.
    pub carried: Vec<RecordBatch>,
    /// Pairs of the input before this batch (for messages).
    pub first: u64,
    /// Pairs by id left in their sets: (query, target) sequence numbers, row for row, in
    /// place of ids and residues (filled later from the sets); empty otherwise.
    pub set_pairs: Vec<[u32; 2]>,
    /// Row for row where the input places pairs on windows or names their strand (PAF
    /// candidates, region columns); empty otherwise: whole sequences, the run's strand.
    pub frames: Vec<Frame>,
    /// Row for row where the output writes them (SAM/BAM): each query's whole sequence as
    /// letters on its forward strand, and its FASTQ qualities (empty strings where the input
    /// has none); empty otherwise.
    pub query_text: Ids,
    pub query_quals: Ids,
}

impl PairBatch {
    pub fn len(&self) -> usize {
        self.seqs.len().max(self.set_pairs.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one pair of encoded sequences.
    pub fn push(&mut self, query_id: &str, query: &[u8], target_id: &str, target: &[u8]) -> Result<()> {
        self.query_ids.push(query_id)?;
        self.target_ids.push(target_id)?;
        self.seqs.push(query, target);
        Ok(())
    }

    /// Empties the batch for reuse, keeping the residue allocations.
    pub fn clear(&mut self) {
        self.seqs.clear();
        self.query_ids.clear();
        self.target_ids.clear();
        self.query_headers.clear();
        self.target_headers.clear();
        self.carried.clear();
        self.first = 0;
        self.set_pairs.clear();
        self.frames.clear();
        self.query_text.clear();
        self.query_quals.clear();
    }
}

/// The schema of the columns a pair input carries through to the output (may be empty).
pub type Carried = Arc<arrow::datatypes::Schema>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel copy gives the ids one `push_bytes` each gives, bad UTF-8 included.
    #[test]
    fn ids_extend_par_equals_push_bytes() {
        let owned: Vec<Vec<u8>> = (0..5000).map(|i| format!("id{}", i * 7919 % 100_003).into_bytes()).collect();
        for bad in [false, true] {
            let mut ids: Vec<&[u8]> = owned.iter().map(|v| v.as_slice()).collect();
            if bad {
                ids[3001] = b"x\xffy";
            }
            let (mut par, mut one) = (Ids::default(), Ids::default());
            par.push("before").unwrap();
            one.push("before").unwrap();
            par.extend_par(&ids).unwrap();
            for id in &ids {
                one.push_bytes(id).unwrap();
            }
            assert_eq!(par, one);
        }
    }

    /// The window of a region against a plain account of "widen by the margin, clip to the
    /// sequence".
    #[test]
    fn windows_widen_regions_inside_the_sequence() {
        for len in [0usize, 1, 7, 40] {
            for start in 0..=len {
                for end in start..=len {
                    for m in [0usize, 1, 3, 100] {
                        let w = window(&(start..end), len, Some(m));
                        let lo = if start > m { start - m } else { 0 };
                        let hi = if end + m < len { end + m } else { len };
                        assert_eq!(w, lo..hi, "{start}..{end} of {len}, margin {m}");
                    }
                    assert_eq!(window(&(start..end), len, None), 0..len);
                }
            }
        }
        // A region past the sequence (refused by readers) still gives a valid window.
        assert_eq!(window(&(50..60), 40, Some(2)), 38..40);
    }

    /// Windows that reach, against the test's own walk: the regions moved one diagonal
    /// step at a time while both sequences have a residue left on that side, then widened.
    #[test]
    fn windows_run_along_the_diagonal_to_the_nearer_border() {
        let walk = |q: &Region, ql: usize, t: &Region, tl: usize, minus: bool, reach: Reach| {
            // The aligned query's region (reversed on minus), walked, mapped back.
            let (mut a, mut b) = if minus { (ql - q.end, ql - q.start) } else { (q.start, q.end) };
            let (mut c, mut d) = (t.start, t.end);
            while reach.start && a > 0 && c > 0 {
                (a, c) = (a - 1, c - 1);
            }
            while reach.end && b < ql && d < tl {
                (b, d) = (b + 1, d + 1);
            }
            (if minus { ql - b..ql - a } else { a..b }, c..d)
        };
        let mut seed = 3u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % (n + 1)
        };
        for _ in 0..5000 {
            let (ql, tl) = (next(60), next(60));
            let (a, b) = (next(ql), next(ql));
            let (c, d) = (next(tl), next(tl));
            let (q, t) = (a.min(b)..a.max(b), c.min(d)..c.max(d));
            let reach = Reach { start: next(1) == 1, end: next(1) == 1 };
            let m = next(5);
            for (strand, minus) in [(Strand::Plus, false), (Strand::Minus, true)] {
                let (wq, wt) = walk(&q, ql, &t, tl, minus, reach);
                let want = (window(&wq, ql, Some(m)), window(&wt, tl, Some(m)));
                assert_eq!(
                    windows(&q, ql, &t, tl, Some(strand), Some(m), reach),
                    want,
                    "{q:?} {ql} {t:?} {tl} {reach:?}"
                );
            }
            let (p, n) = (walk(&q, ql, &t, tl, false, reach), walk(&q, ql, &t, tl, true, reach));
            let both = (p.0.start.min(n.0.start)..p.0.end.max(n.0.end), p.1.start.min(n.1.start)..p.1.end.max(n.1.end));
            let want = (window(&both.0, ql, Some(m)), window(&both.1, tl, Some(m)));
            assert_eq!(windows(&q, ql, &t, tl, None, Some(m), reach), want);
            assert_eq!(windows(&q, ql, &t, tl, None, None, reach), (0..ql, 0..tl));
            // Without reach: the regions widened, as before.
            let plain = (window(&q, ql, Some(m)), window(&t, tl, Some(m)));
            assert_eq!(windows(&q, ql, &t, tl, Some(Strand::Minus), Some(m), Reach::default()), plain);
        }
    }

    #[test]
    fn pairs_read_back_and_slice_contiguously() {
        let pairs: [(&[u8], &[u8]); 3] = [(b"\x01\x02", b"\x03"), (b"", b"\x04\x05"), (b"\x06", b"")];
        let owned = SeqPairs::from_slices(&pairs);
        let mut par = SeqPairs::default();
        par.extend_par(&pairs[..1]).unwrap();
        par.extend_par(&pairs[1..]).unwrap();
        assert_eq!(par, owned);
        let view = owned.view();
        assert_eq!(view.len(), 3);
        assert_eq!(view.to_slices(), pairs.to_vec());
        let tail = view.slice(1..3);
        assert_eq!(tail.to_slices(), pairs[1..].to_vec());
        assert_eq!(tail.residues(), &[4, 5, 6]);
        assert_eq!(tail.offsets().collect::<Vec<_>>(), vec![0, 0, 2, 3, 3]);
        assert_eq!(view.cells(), 2);
    }

    #[test]
    fn ids_move_into_arrow_without_loss() {
        let mut ids = Ids::default();
        ids.push("a").unwrap();
        ids.push_bytes(b"b\xffc").unwrap();
        ids.push("").unwrap();
        // Bytes that are not UTF-8 are escaped, not replaced (issue 44: ids stay apart).
        assert_eq!(ids.get(1), "b\\xffc");
        let array = ids.take_array().unwrap();
        assert_eq!(array.iter().collect::<Vec<_>>(), vec![Some("a"), Some("b\\xffc"), Some("")]);
        assert!(ids.is_empty());
    }
}

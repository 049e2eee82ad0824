//! Two FASTA files read in step: record i of the query file with record i of the target
//! file. Both are parsed in blocks on the thread pool (`BlockFastaReader`), each on its own
//! thread ahead of the caller (`AheadFastaReader`), so the two files and the batch being
//! filled progress at once. Records arrive packed a piece at a time (`Packed`: no
//! allocation per record); this thread only pairs their indices up, and their ids, headers
//! and residues are copied into the batch on the pool.

use std::path::Path;
use std::sync::Arc;

use super::{no_columns, BatchLimits, Counter, Source};
use crate::error::{Error, Result};
use crate::io::fasta::Packed;
use crate::io::fasta_blocks::{AheadFastaReader, BlockFastaReader, Spares};
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch};

pub(super) struct FastaPairs {
    query: Side,
    target: Side,
    limits: BatchLimits,
    counter: Counter,
    /// Fill `query_text` and `query_quals` (queries decoded in this alphabet).
    query_text: Option<Alphabet>,
}

/// One file of the two: the part being paired up and its next record.
struct Side {
    reader: AheadFastaReader,
    /// Where used parts go back to be parsed into again.
    spares: Spares,
    part: Arc<Packed>,
    next: usize,
    /// Records paired so far.
    taken: usize,
    ended: bool,
}

impl Side {
    fn new(reader: BlockFastaReader) -> Side {
        let spares = reader.spares();
        Side { reader: AheadFastaReader::new(reader), spares, part: Arc::default(), next: 0, taken: 0, ended: false }
    }

    /// Whether a record is waiting at `next` (false at the end of the file); the file's
    /// error, where it has one at this record.
    fn ready(&mut self) -> Result<bool> {
        while self.next == self.part.len() {
            if self.ended {
                return Ok(false);
            }
            match self.reader.next_part() {
                Some(Ok(part)) => {
                    self.spares.put(std::mem::replace(&mut self.part, Arc::new(part)));
                    self.next = 0;
                }
                Some(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                None => self.ended = true,
            }
        }
        Ok(true)
    }

    /// Records left in the current part.
    fn left(&self) -> usize {
        self.part.len() - self.next
    }

    /// The index of the current part in `parts` (the parts of this batch), added if new.
    fn part_in(&self, parts: &mut Vec<Arc<Packed>>) -> u32 {
        if !parts.last().is_some_and(|p| Arc::ptr_eq(p, &self.part)) {
            parts.push(Arc::clone(&self.part));
        }
        (parts.len() - 1) as u32
    }
}

impl FastaPairs {
    fn new(query: BlockFastaReader, target: BlockFastaReader, limits: BatchLimits) -> FastaPairs {
        let (query, target) = (Side::new(query), Side::new(target));
        FastaPairs { query, target, limits, counter: Counter { pairs: 0 }, query_text: None }
    }

    /// `query_text`: fill whole queries and their FASTQ qualities, decoded in this alphabet.
    pub(super) fn open(
        query: &Path,
        target: &Path,
        alphabet: Alphabet,
        limits: BatchLimits,
        query_text: Option<Alphabet>,
    ) -> Result<FastaPairs> {
        let query = BlockFastaReader::open(query, alphabet)?.allow_empty().keep_quals(query_text.is_some());
        let target = BlockFastaReader::open(target, alphabet)?.allow_empty();
        Ok(FastaPairs { query_text, ..FastaPairs::new(query, target, limits) })
    }

    /// The record at `found`'s `next` has no partner: `short` ran out.
    fn unmatched(found: &Side, short: &Side) -> Error {
        let problem =
            format!("no record to pair it with: {} ran out after {} records", short.reader.place(), short.taken);
        Error::record(found.reader.place(), found.taken, found.part.id(found.next), problem)
    }

    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        // The parts this batch draws on, and per pair: query part and record, target part
        // and record.
        let (mut queries, mut targets) = (Vec::new(), Vec::new());
        let mut pairs: Vec<[u32; 4]> = Vec::new();
        let mut residues = 0;
        while pairs.len() < self.limits.pairs && residues < self.limits.residues {
            // The query file's problem is reported before reading on in the target.
            let query = self.query.ready()?;
            match (query, self.target.ready()?) {
                (false, false) => break,
                (true, true) => {}
                (true, false) => return Err(Self::unmatched(&self.query, &self.target)),
                (false, true) => return Err(Self::unmatched(&self.target, &self.query)),
            }
            let (qp, tp) = (self.query.part_in(&mut queries), self.target.part_in(&mut targets));
            let run = self.query.left().min(self.target.left()).min(self.limits.pairs - pairs.len());
            for _ in 0..run {
                if residues >= self.limits.residues {
                    break;
                }
                let (qi, ti) = (self.query.next, self.target.next);
                residues += self.query.part.seq(qi).len() + self.target.part.seq(ti).len();
                pairs.push([qp, qi as u32, tp, ti as u32]);
                for side in [&mut self.query, &mut self.target] {
                    side.next += 1;
                    side.taken += 1;
                }
            }
        }
        let n = pairs.len();
        let (q, t, p) = (&queries, &targets, &pairs);
        let query = |i: usize| &q[p[i][0] as usize];
        let target = |i: usize| &t[p[i][2] as usize];
        let (qi, ti) = (|i: usize| p[i][1] as usize, |i: usize| p[i][3] as usize);
        let utf8 = queries.iter().chain(&targets).all(|part| part.is_utf8());
        batch.query_ids.extend_known_par_with(n, utf8, |i| query(i).id(qi(i)))?;
        batch.target_ids.extend_known_par_with(n, utf8, |i| target(i).id(ti(i)))?;
        batch.query_headers.extend_known_par_with(n, utf8, |i| query(i).header(qi(i)))?;
        batch.target_headers.extend_known_par_with(n, utf8, |i| target(i).header(ti(i)))?;
        batch.seqs.extend_par_with(n, |i| (query(i).seq(qi(i)), target(i).seq(ti(i))))?;
        if let Some(alphabet) = self.query_text {
            use rayon::prelude::*;
            let texts: Vec<Vec<u8>> =
                (0..n).into_par_iter().with_min_len(256).map(|i| alphabet.decode(query(i).seq(qi(i)))).collect();
            batch.query_text.extend_utf8_par_with(n, |i| &texts[i])?;
            batch.query_quals.extend_utf8_par_with(n, |i| query(i).quals(qi(i)))?;
        }
        self.counter.pairs += n as u64;
        // The parts go back to their readers from the pool, those used up to be parsed into
        // again (the others when their side moves on).
        let (qs, ts) = (self.query.spares.clone(), self.target.spares.clone());
        rayon::spawn(move || {
            queries.into_iter().for_each(|p| qs.put(p));
            targets.into_iter().for_each(|p| ts.put(p));
            drop(pairs);
        });
        Ok(n > 0)
    }
}

impl Source for FastaPairs {
    fn carried(&self) -> Carried {
        no_columns()
    }

    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool> {
        self.fill_inner(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Where;
    use crate::io::fasta::FastaReader;
    use crate::io::input::Input;
    use crate::seq::Record;

    const P: Alphabet = Alphabet::Protein;

    /// Query id, header and residues, then the target's.
    type Got = Vec<[Vec<u8>; 6]>;

    fn row(q: (&str, &str, &[u8]), t: (&str, &str, &[u8])) -> [Vec<u8>; 6] {
        [q.0, q.1]
            .map(|s| s.as_bytes().to_vec())
            .into_iter()
            .chain([q.2.to_vec()])
            .chain([t.0, t.1].map(|s| s.as_bytes().to_vec()).into_iter().chain([t.2.to_vec()]))
            .collect::<Vec<_>>()
            .try_into()
            .unwrap()
    }

    /// The pair-by-pair reader these parts must agree with: two sequential FASTA readers
    /// stepped together, the query's problem first (swarrow's reader before packed parts).
    fn oracle(q: &[u8], t: &[u8]) -> std::result::Result<Got, String> {
        let (qp, tp) = (Where::Path("q.fa".into()), Where::Path("t.fa".into()));
        let mut qr = FastaReader::new(qp.clone(), q, P).allow_empty();
        let mut tr = FastaReader::new(tp.clone(), t, P).allow_empty();
        let mut out = Vec::new();
        let unmatched = |found: &Where, index: usize, r: &Record, short: &Where, n: usize| {
            let problem = format!("no record to pair it with: {short} ran out after {n} records");
            Err(Error::record(found, index, &r.id, problem).to_string())
        };
        loop {
            let a = qr.next().transpose().map_err(|e| e.to_string())?;
            match (a, tr.next().transpose().map_err(|e| e.to_string())?) {
                (None, None) => return Ok(out),
                (Some(a), Some(b)) => out.push(row((&a.id, &a.header, &a.seq), (&b.id, &b.header, &b.seq))),
                (Some(a), None) => {
                    return unmatched(&qp, FastaReader::count(&qr) - 1, &a, &tp, FastaReader::count(&tr))
                }
                (None, Some(b)) => {
                    return unmatched(&tp, FastaReader::count(&tr) - 1, &b, &qp, FastaReader::count(&qr))
                }
            }
        }
    }

    fn parts(q: &[u8], t: &[u8], sizes: [usize; 4], limits: BatchLimits) -> std::result::Result<Got, String> {
        let reader = |place: &str, text: &[u8], block, piece| {
            let input: Input = Box::new(std::io::Cursor::new(text.to_vec()));
            BlockFastaReader::new(Where::Path(place.into()), input, P).allow_empty().with_sizes(block, piece)
        };
        let mut pairs =
            FastaPairs::new(reader("q.fa", q, sizes[0], sizes[1]), reader("t.fa", t, sizes[2], sizes[3]), limits);
        let (mut out, mut batch) = (Vec::new(), PairBatch::default());
        loop {
            batch.clear();
            match pairs.fill_inner(&mut batch) {
                Err(e) => return Err(e.to_string()),
                Ok(false) => return Ok(out),
                Ok(true) => {}
            }
            assert!(batch.len() <= limits.pairs && batch.first as usize == out.len());
            for i in 0..batch.len() {
                let (a, b) = batch.seqs.view().pair(i);
                let ids = (batch.query_ids.get(i), batch.target_ids.get(i));
                let headers = (batch.query_headers.get(i), batch.target_headers.get(i));
                out.push(row((ids.0, headers.0, a), (ids.1, headers.1, b)));
            }
        }
    }

    /// `n` records of 1 to ~90 residues over one to three lines, with descriptions; `bad`
    /// puts an invalid residue into record `bad`.
    fn fasta(n: usize, seed: usize, bad: Option<usize>) -> Vec<u8> {
        let mut text = String::new();
        for i in 0..n {
            text.push_str(&format!(">r{seed}_{i} some words {}\n", i * seed));
            let len = 1 + (i * 37 + seed * 11) % 90;
            let seq: String = (0..len).map(|k| b"ACDEFGHIKLMNPQRSTVWY"[(k * 7 + i + seed) % 20] as char).collect();
            for (k, line) in seq.as_bytes().chunks(30 + seed).enumerate() {
                let line = std::str::from_utf8(line).unwrap();
                if bad == Some(i) && k == 0 {
                    text.push_str(&format!("{}1{}\n", &line[..line.len() / 2], &line[line.len() / 2..]));
                } else {
                    text.push_str(&format!("{line}\n"));
                }
            }
        }
        text.into_bytes()
    }

    #[test]
    fn packed_parts_pair_up_as_records_read_one_by_one() {
        let cases = [
            (fasta(300, 1, None), fasta(300, 2, None)),
            (fasta(300, 1, None), fasta(250, 2, None)),
            (fasta(180, 1, None), fasta(300, 2, None)),
            (fasta(300, 1, Some(200)), fasta(300, 2, Some(100))),
            (fasta(300, 1, Some(100)), fasta(300, 2, Some(200))),
            (fasta(300, 1, None), fasta(150, 2, Some(120))),
            (Vec::new(), fasta(3, 2, None)),
            (Vec::new(), Vec::new()),
        ];
        // Parts of different sizes on each side; batches bounded by pairs or by residues.
        let sizes = [[64, 16, 333, 70], [4096, 512, 100, 20], [1 << 20, 1 << 20, 1 << 20, 1 << 20]];
        let limits = [(1, 1), (7, 1 << 20), (64, 500), (1 << 20, 1 << 30)];
        for (q, t) in &cases {
            let want = oracle(q, t);
            for s in sizes {
                for (pairs, residues) in limits {
                    let got = parts(q, t, s, BatchLimits { pairs, residues });
                    assert!(
                        got == want,
                        "sizes {s:?}, limits {pairs}/{residues}: {:?} vs {:?}",
                        got.as_ref().map(|g| g.len()),
                        want.as_ref().map(|w| w.len())
                    );
                }
            }
        }
    }
}

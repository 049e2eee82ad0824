//! Two FASTA files read in step: record i of the query file with record i of the target
//! file. Both are parsed in blocks on the thread pool (`BlockFastaReader`), each on its own
//! thread ahead of the caller (`AheadFastaReader`), so the two files and the batch being
//! filled progress at once.

use std::path::Path;

use super::{no_columns, BatchLimits, Counter, Source};
use crate::error::{Error, Result};
use crate::io::fasta_blocks::{AheadFastaReader, BlockFastaReader};
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch, Record};

pub(super) struct FastaPairs {
    query: AheadFastaReader,
    target: AheadFastaReader,
    limits: BatchLimits,
    counter: Counter,
}

impl FastaPairs {
    pub(super) fn open(query: &Path, target: &Path, alphabet: Alphabet, limits: BatchLimits) -> Result<FastaPairs> {
        let query = AheadFastaReader::new(BlockFastaReader::open(query, alphabet)?.allow_empty());
        let target = AheadFastaReader::new(BlockFastaReader::open(target, alphabet)?.allow_empty());
        Ok(FastaPairs { query, target, limits, counter: Counter { pairs: 0 } })
    }

    fn unmatched(found: &AheadFastaReader, record: &Record, short: &AheadFastaReader) -> Error {
        let problem = format!("no record to pair it with: {} ran out after {} records", short.place(), short.count());
        Error::record(found.place(), found.count() - 1, &record.id, problem)
    }

    /// The next pair; None at the end of both files.
    fn step(&mut self) -> Result<Option<(Record, Record)>> {
        // The query file's problem is reported before reading on in the target.
        let query = self.query.next().transpose()?;
        match (query, self.target.next().transpose()?) {
            (None, None) => Ok(None),
            (Some(q), Some(t)) => Ok(Some((q, t))),
            (Some(q), None) => Err(Self::unmatched(&self.query, &q, &self.target)),
            (None, Some(t)) => Err(Self::unmatched(&self.target, &t, &self.query)),
        }
    }

    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        // This thread only pairs records up; their ids, headers and residues are copied
        // into the batch on the pool.
        let mut records = Vec::new();
        let mut residues = 0;
        while records.len() < self.limits.pairs && residues < self.limits.residues {
            let Some((q, t)) = self.step()? else { break };
            residues += q.seq.len() + t.seq.len();
            records.push((q, t));
        }
        let n = records.len();
        let r = &records;
        batch.query_ids.extend_utf8_par_with(n, |i| r[i].0.id.as_bytes())?;
        batch.target_ids.extend_utf8_par_with(n, |i| r[i].1.id.as_bytes())?;
        batch.query_headers.extend_utf8_par_with(n, |i| r[i].0.header.as_bytes())?;
        batch.target_headers.extend_utf8_par_with(n, |i| r[i].1.header.as_bytes())?;
        batch.seqs.extend_par_with(n, |i| (r[i].0.seq.as_slice(), r[i].1.seq.as_slice()))?;
        self.counter.pairs += n as u64;
        // Freed on the pool too: six allocations a pair, whose frees took a tenth of this
        // thread's time.
        rayon::spawn(move || drop(records));
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

//! Candidate pairs by id (`align --pairs CANDIDATES --seqs SEQS [--target-seqs SEQS2]`):
//! rows of (query id, target id) streamed from TSV (the first two columns; a header line
//! `query_id<TAB>target_id...` is skipped; further columns are ignored) or from an Arrow IPC
//! stream or file or a Parquet file (id columns by name, every other column carried through
//! as for pair tables). Each id is looked up in its resident [`SeqSet`] and the batch is
//! filled as every pair reader fills it: ids, FASTA headers where the set has them, and the
//! residues gathered from the set into the batch's one buffer (copied once, in parallel).

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::Schema;

use super::seqset::{shown, SeqSet};
use super::table::{carried_indices, carried_schema, open_table, string_columns, Batches, StrColumn, Table};
use super::tsv::{read_chunks, Chunk, PAUSE};
use super::{fused, no_columns, BatchLimits, Counter, PairColumns, PairReader, Source, PAIR_COLUMNS};
use crate::error::{Error, Result, Where};
use crate::io::input::{read_error, Head, Input, MAX_LINE};
use crate::seq::{Carried, PairBatch};

/// The id columns of a TSV candidate file, as its optional header names them.
const TSV_ID_COLUMNS: [&str; 2] = ["query_id", "target_id"];

/// Opens the candidate pairs at `path` (`-` = stdin) against the sets holding their
/// sequences (the same set twice for pairs within one set).
pub(super) fn open(
    path: &Path,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
) -> Result<Box<dyn PairReader>> {
    let raw = Head::open(path, 8)?;
    let place = raw.place.clone();
    let names = [columns.names[0].clone(), columns.names[2].clone()];
    let project = |place: &Where, schema: &Schema| -> Result<Vec<usize>> {
        let ids = id_columns(place, schema, &names)?;
        let mut all = carried_indices(place, schema, columns, &ids)?;
        all.extend(ids);
        all.sort_unstable();
        all.dedup();
        Ok(all)
    };
    let rows = match open_table(raw, &project)? {
        Ok((schema, batches)) => table_rows(&place, &schema, batches, columns)?,
        Err(input) => {
            if names != TSV_ID_COLUMNS.map(String::from) || columns.carry.is_some() {
                return Err(Error::usage(format!(
                    "{place}: column options apply to Arrow and Parquet candidate tables, not TSV"
                )));
            }
            Rows::Tsv(TsvIds::new(input))
        }
    };
    Ok(id_pairs(place, rows, query, target, limits))
}

/// Candidate pairs by id from an in-memory table.
pub(super) fn from_table(
    table: Table,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
) -> Result<Box<dyn PairReader>> {
    let rows = table_rows(&table.place, &table.schema, table.batches, columns)?;
    Ok(id_pairs(table.place, rows, query, target, limits))
}

/// The id rows of a candidate table: id columns by name, every other column carried.
fn table_rows(place: &Where, schema: &Schema, batches: Batches, columns: &PairColumns) -> Result<Rows> {
    let names = [columns.names[0].clone(), columns.names[2].clone()];
    let ids = id_columns(place, schema, &names)?;
    let carried = carried_indices(place, schema, columns, &ids)?;
    let carried_schema = carried_schema(place, schema, &carried)?;
    Ok(Rows::Table(TableIds {
        batches,
        ids: [ids[0], ids[1]],
        names,
        carried,
        carried_schema,
        current: None,
        columns: Vec::new(),
        row: 0,
    }))
}

fn id_columns(place: &Where, schema: &Schema, names: &[String; 2]) -> Result<Vec<usize>> {
    string_columns(place, schema, names, "candidate pairs need", "--query-id-col, --target-id-col")
}

fn id_pairs(
    place: Where,
    rows: Rows,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    limits: BatchLimits,
) -> Box<dyn PairReader> {
    let headers = query.has_headers() || target.has_headers();
    fused(IdPairs { place, query, target, rows, limits, counter: Counter { pairs: 0 }, headers, picked: Vec::new() })
}

struct IdPairs {
    place: Where,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    rows: Rows,
    limits: BatchLimits,
    counter: Counter,
    /// Either set has FASTA headers: the batch carries header columns.
    headers: bool,
    /// The batch's pairs as sequence numbers in the query and target sets.
    picked: Vec<(u32, u32)>,
}

enum Rows {
    Tsv(TsvIds),
    Table(TableIds),
}

/// The pairs chosen for one batch, with what limits it.
struct Pick<'a> {
    place: &'a Where,
    query: &'a SeqSet,
    target: &'a SeqSet,
    limits: BatchLimits,
    /// Pairs of the input before this batch.
    first: u64,
    picked: &'a mut Vec<(u32, u32)>,
    residues: usize,
}

impl Pick<'_> {
    /// The batch is full: its pair limit reached, or its residue limit (at least one pair).
    fn full(&self) -> bool {
        self.picked.len() >= self.limits.pairs || (!self.picked.is_empty() && self.residues >= self.limits.residues)
    }

    /// Looks the pair's ids up and takes it; an id that is empty or in no set is an error
    /// naming the pair (`context` prefixes the problem: a TSV line number).
    fn take(&mut self, q: &[u8], t: &[u8], names: [&str; 2], context: impl Fn() -> String) -> Result<()> {
        let index = (self.first + self.picked.len() as u64) as usize;
        let query_id = String::from_utf8_lossy(q);
        if q.is_empty() {
            return Err(Error::record(self.place, index, "", format!("{}{} is empty", context(), names[0])));
        }
        if t.is_empty() {
            return Err(Error::record(self.place, index, &query_id, format!("{}{} is empty", context(), names[1])));
        }
        let missing = |name: &str, id: &[u8], set: &SeqSet| {
            let problem = format!("{}{name} {} not found in {}", context(), shown(id), set.describe());
            Error::record(self.place, index, &query_id, problem)
        };
        let qi = self.query.find(q).ok_or_else(|| missing(names[0], q, self.query))?;
        let ti = self.target.find(t).ok_or_else(|| missing(names[1], t, self.target))?;
        self.residues += self.query.seq(qi).len() + self.target.seq(ti).len();
        self.picked.push((qi, ti));
        Ok(())
    }
}

impl IdPairs {
    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        self.picked.clear();
        let mut pick = Pick {
            place: &self.place,
            query: &self.query,
            target: &self.target,
            limits: self.limits,
            first: self.counter.pairs,
            picked: &mut self.picked,
            residues: 0,
        };
        match &mut self.rows {
            Rows::Tsv(rows) => rows.pick(&mut pick)?,
            Rows::Table(rows) => rows.pick(&mut pick, &mut batch.carried)?,
        }
        if self.picked.is_empty() {
            return self.counter.end(&self.place);
        }
        let (query, target) = (&self.query, &self.target);
        for &(q, t) in &self.picked {
            batch.query_ids.push_bytes(query.id(q))?;
            batch.target_ids.push_bytes(target.id(t))?;
            if self.headers {
                batch.query_headers.push_bytes(query.header(q))?;
                batch.target_headers.push_bytes(target.header(t))?;
            }
        }
        // The residues gathered from the sets into the batch's buffer, in parallel.
        let seqs: Vec<(&[u8], &[u8])> = self.picked.iter().map(|&(q, t)| (query.seq(q), target.seq(t))).collect();
        batch.seqs.extend_par(&seqs);
        self.counter.pairs += self.picked.len() as u64;
        Ok(true)
    }
}

impl Source for IdPairs {
    fn carried(&self) -> Carried {
        match &self.rows {
            Rows::Tsv(_) => no_columns(),
            Rows::Table(t) => t.carried_schema.clone(),
        }
    }

    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool> {
        self.fill_inner(batch)
    }
}

/// What [`TsvIds::next_line`] found.
enum Next {
    /// A line (without its newline) at this range of `pending`.
    Line(usize, usize),
    /// The input paused with no whole line waiting.
    Paused,
    End,
}

/// TSV candidate rows, read by a thread in chunks and split into lines here; a batch under
/// way goes out when the input pauses, so a slow producer's pairs flow through at once.
struct TsvIds {
    chunks: Receiver<Chunk>,
    recycle: SyncSender<Vec<u8>>,
    /// Bytes received; `pending[pos..]` not yet handed out as lines.
    pending: Vec<u8>,
    pos: usize,
    ended: bool,
    /// Lines handed out (the last one's number).
    line: usize,
    /// The first non-blank line has been seen (a header is only looked for there).
    started: bool,
}

impl TsvIds {
    fn new(input: Input) -> TsvIds {
        let (tx, chunks) = sync_channel(16);
        let (recycle, recycled) = sync_channel(16);
        std::thread::spawn(move || read_chunks(input, tx, recycled));
        TsvIds { chunks, recycle, pending: Vec::new(), pos: 0, ended: false, line: 0, started: false }
    }

    /// The next line; waits for one if `patient`, else says when the input has paused.
    fn next_line(&mut self, place: &Where, patient: bool) -> Result<Next> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.pending[self.pos..]) {
                let start = self.pos;
                self.pos += i + 1;
                self.line += 1;
                return Ok(Next::Line(start, start + i));
            }
            if self.ended {
                if self.pos < self.pending.len() {
                    let start = self.pos;
                    self.pos = self.pending.len();
                    self.line += 1;
                    return Ok(Next::Line(start, self.pending.len()));
                }
                return Ok(Next::End);
            }
            if self.pending.len() - self.pos > MAX_LINE {
                return Err(Error::file(
                    place,
                    format!("line {} longer than 1 GiB: not a real candidate pair file?", self.line + 1),
                ));
            }
            self.pending.drain(..self.pos);
            self.pos = 0;
            let chunk = if patient {
                self.chunks.recv().ok()
            } else {
                match self.chunks.recv_timeout(PAUSE) {
                    Ok(chunk) => Some(chunk),
                    Err(RecvTimeoutError::Timeout) => return Ok(Next::Paused),
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            };
            match chunk {
                Some(Chunk::Data(buf, n)) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    let _ = self.recycle.try_send(buf);
                }
                Some(Chunk::Failed(e)) => return Err(read_error(place, e)),
                None => self.ended = true,
            }
        }
    }

    fn pick(&mut self, p: &mut Pick<'_>) -> Result<()> {
        while !p.full() {
            let (start, end) = match self.next_line(p.place, p.picked.is_empty())? {
                Next::Line(start, end) => (start, end),
                Next::Paused | Next::End => return Ok(()),
            };
            let line = &self.pending[start..end];
            let text = line.strip_suffix(b"\r").unwrap_or(line);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let number = self.line;
            if !self.started {
                self.started = true;
                if is_header(p.place, text, number)? {
                    continue;
                }
            }
            let mut fields = text.splitn(3, |&b| b == b'\t');
            let q = fields.next().unwrap_or_default();
            let Some(t) = fields.next() else {
                let problem = format!(
                    "line {number}: expected at least 2 tab-separated columns ({}), found 1",
                    TSV_ID_COLUMNS.join(", ")
                );
                let index = (p.first + p.picked.len() as u64) as usize;
                return Err(Error::record(p.place, index, &String::from_utf8_lossy(q), problem));
            };
            p.take(q, t, TSV_ID_COLUMNS, || format!("line {number}: "))?;
        }
        Ok(())
    }
}

/// Whether the first line of a TSV candidate file is its header; a FASTA file or a pair
/// file with sequences given as candidates is an error saying so.
fn is_header(place: &Where, text: &[u8], number: usize) -> Result<bool> {
    if text.starts_with(b">") {
        return Err(Error::file(
            place,
            format!(
                "line {number}: looks like FASTA, not candidate pairs: give the pairs (query id, target id) \
                 as --pairs and the sequences as --seqs"
            ),
        ));
    }
    let fields: Vec<&[u8]> = text.split(|&b| b == b'\t').collect();
    if fields.iter().copied().eq(PAIR_COLUMNS.iter().map(|c| c.as_bytes())) {
        return Err(Error::file(
            place,
            format!(
                "line {number}: a pair file with sequences ({}), not candidate pairs by id: read it without --seqs",
                PAIR_COLUMNS.join(", ")
            ),
        ));
    }
    Ok(fields.len() >= 2 && fields[..2].iter().copied().eq(TSV_ID_COLUMNS.iter().map(|c| c.as_bytes())))
}

/// Candidate rows from record batches; one input batch in memory at a time.
struct TableIds {
    batches: Batches,
    /// The id columns' indices and names.
    ids: [usize; 2],
    names: [String; 2],
    carried: Vec<usize>,
    carried_schema: Carried,
    current: Option<RecordBatch>,
    /// The current batch's id columns.
    columns: Vec<StrColumn>,
    row: usize,
}

impl TableIds {
    /// Rows left in the current input batch, reading the next one when it is used up;
    /// 0 at the end of the input.
    fn rows_left(&mut self) -> Result<usize> {
        loop {
            if let Some(b) = &self.current {
                if self.row < b.num_rows() {
                    return Ok(b.num_rows() - self.row);
                }
            }
            match self.batches.next() {
                None => return Ok(0),
                Some(Err(e)) => return Err(e),
                Some(Ok(b)) => {
                    self.columns = self.ids.iter().map(|&i| StrColumn::new(b.column(i).clone())).collect();
                    self.current = Some(b);
                    self.row = 0;
                }
            }
        }
    }

    fn pick(&mut self, p: &mut Pick<'_>, carried: &mut Vec<RecordBatch>) -> Result<()> {
        while !p.full() {
            let left = self.rows_left()?;
            if left == 0 {
                return Ok(());
            }
            let start = self.row;
            let mut take = 0;
            while take < left && !p.full() {
                let r = start + take;
                let names = [self.names[0].as_str(), self.names[1].as_str()];
                let (q, t) = match (self.columns[0].get(r), self.columns[1].get(r)) {
                    (Some(q), Some(t)) => (q, t),
                    (q, _) => {
                        let index = (p.first + p.picked.len() as u64) as usize;
                        let id = q.map(String::from_utf8_lossy).unwrap_or_default();
                        let column = if q.is_none() { names[0] } else { names[1] };
                        return Err(Error::record(p.place, index, &id, format!("{column} is null")));
                    }
                };
                p.take(q, t, names, String::new)?;
                take += 1;
            }
            if !self.carried.is_empty() {
                if let Some(b) = &self.current {
                    let cols: Vec<ArrayRef> = self.carried.iter().map(|&i| b.column(i).slice(start, take)).collect();
                    let part = RecordBatch::try_new(self.carried_schema.clone(), cols)
                        .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
                    carried.push(part);
                }
            }
            self.row += take;
        }
        Ok(())
    }
}

//! Candidate pairs by id (`align --pairs CANDIDATES --seqs SEQS [--target-seqs SEQS2]`):
//! rows of (query id, target id) streamed from TSV (the first two columns; further columns
//! are carried through as text, named by a header line `query_id<TAB>target_id<TAB>...`,
//! and ignored without one) or from an Arrow IPC stream or file or a Parquet file (id
//! columns by name, every other column carried through as for pair tables). Each id is looked up in its resident [`SeqSet`] and the batch is
//! filled as every pair reader fills it: ids, FASTA headers where the set has them, and the
//! residues gathered from the set into the batch's one buffer (copied once, in parallel).

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};

use super::seqset::{shown, SeqSet};
use super::table::{carried_indices, carried_schema, open_table, string_columns, BatchCursor, Batches, Table, Wanted};
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
    let project = |place: &Where, schema: &Schema| -> Result<Wanted> {
        let ids = id_columns(place, schema, &names)?;
        Wanted::new(&ids, carried_indices(place, schema, columns, &ids)?)
    };
    let rows = match open_table(raw, &project)? {
        Ok((schema, batches)) => table_rows(&place, &schema, batches, columns)?,
        Err(input) => {
            if names != TSV_ID_COLUMNS.map(String::from) {
                return Err(Error::usage(format!(
                    "{place}: id column options apply to Arrow and Parquet candidate tables, not TSV"
                )));
            }
            let mut rows = TsvIds::new(input);
            rows.start(&place, columns)?;
            Rows::Tsv(rows)
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

fn id_columns(place: &Where, schema: &Schema, names: &[String; 2]) -> Result<Vec<usize>> {
    string_columns(place, schema, names, "candidate pairs need", "--query-id-col, --target-id-col")
}

/// The id rows of a candidate table: id columns by name, the others carried as `--carry` says.
fn table_rows(place: &Where, schema: &Schema, batches: Batches, columns: &PairColumns) -> Result<Rows> {
    let names = [columns.names[0].clone(), columns.names[2].clone()];
    let ids = id_columns(place, schema, &names)?;
    let carried = carried_indices(place, schema, columns, &ids)?;
    let carried_schema = carried_schema(place, schema, &carried)?;
    Ok(Rows::Table(TableIds { cursor: BatchCursor::new(batches, ids), names, carried, carried_schema }))
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
            Rows::Tsv(rows) => rows.pick(&mut pick, &mut batch.carried)?,
            Rows::Table(rows) => rows.pick(&mut pick, &mut batch.carried)?,
        }
        if self.picked.is_empty() {
            return self.counter.end(&self.place);
        }
        let (query, target) = (&self.query, &self.target);
        let picked = &self.picked;
        batch.query_ids.extend_par(&picked.iter().map(|&(q, _)| query.id(q)).collect::<Vec<_>>())?;
        batch.target_ids.extend_par(&picked.iter().map(|&(_, t)| target.id(t)).collect::<Vec<_>>())?;
        if self.headers {
            batch.query_headers.extend_par(&picked.iter().map(|&(q, _)| query.header(q)).collect::<Vec<_>>())?;
            batch.target_headers.extend_par(&picked.iter().map(|&(_, t)| target.header(t)).collect::<Vec<_>>())?;
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
            Rows::Tsv(t) => t.carried_schema.clone(),
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
    /// The header's column names (the two id columns' when there is none).
    header: Vec<String>,
    /// The columns carried, by their index in a line, and as the output names them.
    carried: Vec<usize>,
    carried_schema: Carried,
    /// The fields of the line being read, as ranges of `pending`.
    fields: Vec<(usize, usize)>,
}

impl TsvIds {
    fn new(input: Input) -> TsvIds {
        let (tx, chunks) = sync_channel(16);
        let (recycle, recycled) = sync_channel(16);
        std::thread::spawn(move || read_chunks(input, tx, recycled));
        TsvIds {
            chunks,
            recycle,
            pending: Vec::new(),
            pos: 0,
            ended: false,
            line: 0,
            header: TSV_ID_COLUMNS.map(String::from).to_vec(),
            carried: Vec::new(),
            carried_schema: no_columns(),
            fields: Vec::new(),
        }
    }

    /// Reads up to the first line that is not blank: a header names the carried columns
    /// (`--carry` chooses among them); any other line is left to be read as a candidate.
    fn start(&mut self, place: &Where, columns: &PairColumns) -> Result<()> {
        while let Next::Line(start, end) = self.next_line(place, true)? {
            let line = &self.pending[start..end];
            let text = line.strip_suffix(b"\r").unwrap_or(line);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if is_header(place, text, self.line)? {
                self.header = text.split(|&b| b == b'\t').map(|f| String::from_utf8_lossy(f).into_owned()).collect();
            } else {
                self.pos = start;
                self.line -= 1;
            }
            break;
        }
        let fields: Vec<Field> = self.header.iter().map(|n| Field::new(n, DataType::Utf8, false)).collect();
        let schema = Schema::new(fields);
        self.carried = carried_indices(place, &schema, columns, &[0, 1])?;
        self.carried_schema = carried_schema(place, &schema, &self.carried)?;
        Ok(())
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

    /// Picks candidates until the batch is full or the input pauses or ends; the carried
    /// cells of the picked rows go to `carried` as one record batch.
    fn pick(&mut self, p: &mut Pick<'_>, carried: &mut Vec<RecordBatch>) -> Result<()> {
        let mut cells: Vec<StringBuilder> = self.carried.iter().map(|_| StringBuilder::new()).collect();
        let picked = p.picked.len();
        self.pick_rows(p, &mut cells)?;
        if !cells.is_empty() && p.picked.len() > picked {
            let cols: Vec<ArrayRef> = cells.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef).collect();
            let part = RecordBatch::try_new(self.carried_schema.clone(), cols)
                .map_err(|e| Error::Internal(format!("carried columns: {e}")))?;
            carried.push(part);
        }
        Ok(())
    }

    fn pick_rows(&mut self, p: &mut Pick<'_>, cells: &mut [StringBuilder]) -> Result<()> {
        while !p.full() {
            // The block path takes ids only: lines with carried cells go one by one.
            if cells.is_empty() && self.pick_block(p) {
                continue;
            }
            let (start, end) = match self.next_line(p.place, p.picked.is_empty())? {
                Next::Line(start, end) => (start, end),
                Next::Paused | Next::End => return Ok(()),
            };
            let line = &self.pending[start..end];
            let end = end - line.ends_with(b"\r") as usize;
            let text = &self.pending[start..end];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let number = self.line;
            // The fields (only the ids' when nothing is carried: further ones are ignored).
            self.fields.clear();
            let mut at = start;
            for piece in text.splitn(if cells.is_empty() { 3 } else { usize::MAX }, |&b| b == b'\t') {
                self.fields.push((at, at + piece.len()));
                at += piece.len() + 1;
            }
            let field = |k: usize| &self.pending[self.fields[k].0..self.fields[k].1];
            let wanted = if cells.is_empty() { 2 } else { self.header.len() };
            if self.fields.len() < 2 || (!cells.is_empty() && self.fields.len() != wanted) {
                let columns = if cells.is_empty() { TSV_ID_COLUMNS.join(", ") } else { self.header.join(", ") };
                let problem = format!(
                    "line {number}: expected {}{wanted} tab-separated columns ({columns}), found {}",
                    if cells.is_empty() { "at least " } else { "" },
                    self.fields.len()
                );
                let index = (p.first + p.picked.len() as u64) as usize;
                return Err(Error::record(p.place, index, &String::from_utf8_lossy(field(0)), problem));
            }
            p.take(field(0), field(1), TSV_ID_COLUMNS, || format!("line {number}: "))?;
            for (cell, &k) in cells.iter_mut().zip(&self.carried) {
                cell.append_value(String::from_utf8_lossy(field(k)));
            }
        }
        Ok(())
    }
}

/// What one candidate line holds, as [`TsvIds::pick_block`] looks it up.
enum Looked {
    Pair(u32, u32),
    Blank,
    /// Not a pair of known ids: the one-line path says why, in order.
    Bad,
}

impl TsvIds {
    /// Takes the whole lines already received (after the first line) into `p`, their ids
    /// looked up in parallel: at 100M candidates one thread of lookups was the limit. Stops
    /// where the batch is full or at a line that is not a pair of known ids (left for the
    /// one-line path, whose error names it); false when no line was taken.
    fn pick_block(&mut self, p: &mut Pick<'_>) -> bool {
        use rayon::prelude::*;
        /// Below this many lines waiting, the one-line path is as fast.
        const MIN_BLOCK: usize = 256;
        let want = p.limits.pairs.saturating_sub(p.picked.len());
        let mut lines = Vec::with_capacity(want.min(1 << 16));
        let mut at = self.pos;
        while lines.len() < want.min(1 << 16) {
            let Some(i) = memchr::memchr(b'\n', &self.pending[at..]) else { break };
            lines.push((at, at + i));
            at += i + 1;
        }
        if lines.len() < MIN_BLOCK {
            return false;
        }
        let (pending, query, target) = (&self.pending, p.query, p.target);
        let looked: Vec<Looked> = lines
            .par_iter()
            .with_min_len(1024)
            .map(|&(start, end)| {
                let line = &pending[start..end];
                let text = line.strip_suffix(b"\r").unwrap_or(line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    return Looked::Blank;
                }
                let mut fields = text.splitn(3, |&b| b == b'\t');
                let (q, t) = (fields.next().unwrap_or_default(), fields.next().unwrap_or_default());
                match (query.find(q), target.find(t)) {
                    (Some(qi), Some(ti)) if !q.is_empty() && !t.is_empty() => Looked::Pair(qi, ti),
                    _ => Looked::Bad,
                }
            })
            .collect();
        let mut taken = 0;
        for l in &looked {
            if p.full() {
                break;
            }
            match *l {
                Looked::Pair(qi, ti) => {
                    p.residues += query.seq(qi).len() + target.seq(ti).len();
                    p.picked.push((qi, ti));
                }
                Looked::Blank => {}
                Looked::Bad => break,
            }
            taken += 1;
        }
        if taken == 0 {
            return false;
        }
        self.pos = lines[taken - 1].1 + 1;
        self.line += taken;
        true
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
    /// The input batch being handed out, with the id columns.
    cursor: BatchCursor,
    /// The id columns' names.
    names: [String; 2],
    carried: Vec<usize>,
    carried_schema: Carried,
}

impl TableIds {
    fn pick(&mut self, p: &mut Pick<'_>, carried: &mut Vec<RecordBatch>) -> Result<()> {
        while !p.full() {
            let left = self.cursor.rows_left()?;
            if left == 0 {
                return Ok(());
            }
            let start = self.cursor.row;
            let columns = &self.cursor.columns;
            let mut take = 0;
            while take < left && !p.full() {
                let r = start + take;
                let names = [self.names[0].as_str(), self.names[1].as_str()];
                let (q, t) = match (columns[0].get(r), columns[1].get(r)) {
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
            carried.extend(self.cursor.carried(&self.carried, &self.carried_schema, start, take)?);
            self.cursor.row += take;
        }
        Ok(())
    }
}

//! Candidate pairs by id (`align --pairs CANDIDATES --seqs SEQS [--target-seqs SEQS2]`):
//! rows of (query id, target id) streamed from TSV (the first two columns; further columns
//! are carried through as text, named by a header line `query_id<TAB>target_id<TAB>...`,
//! and ignored without one) or from an Arrow IPC stream or file or a Parquet file (id
//! columns by name, every other column carried through as for pair tables). Each id is looked up in its resident [`SeqSet`] and the batch is
//! filled as every pair reader fills it: ids, FASTA headers where the set has them, and the
//! residues gathered from the set into the batch's one buffer (copied once, in parallel).

use std::collections::VecDeque;
use std::io::Read as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};

use super::paf::{looks_like_paf, named_paf, PafRows};
use super::seqset::SeqSet;
use super::table::{
    carried_indices, carried_rows, carried_schema, open_table, string_columns, Batches, StrColumn, Table, Wanted,
};
use super::tsv::PAUSE;
use super::{
    fused, no_columns, BatchLimits, CandidateFormat, Counter, PairColumns, PairOptions, PairReader, Source,
    PAIR_COLUMNS,
};
use crate::error::{quoted_id, Error, Result, Where};
use crate::io::input::{read_error, skip_bom, Head, Input, MAX_LINE};
use crate::scoring::Alphabet;
use crate::seq::{windows, Carried, Frame, PairBatch, Region, Strand};

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
    gather: bool,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    let raw = Head::open(path, 8)?;
    let place = raw.place.clone();
    let names = [columns.names[0].clone(), columns.names[2].clone()];
    let project = |place: &Where, schema: &Schema| -> Result<Wanted> {
        let ids = id_columns(place, schema, &names)?;
        // Region and strand columns are read as they are (not decoded as bytes, as ids are).
        let mut kept = carried_indices(place, schema, columns, &ids)?;
        kept.extend(placing_columns(place, schema, options)?.iter().filter(|i| !ids.contains(i)));
        Ok(Wanted::new(&ids, kept)?.without_views())
    };
    let rows = match open_table(raw, &project)? {
        Ok((schema, batches)) => table_rows(&place, &schema, batches, columns, &query, &target, options)?,
        Err(input) => {
            let input = skip_bom(&place, input)?;
            let (paf, input) = is_paf(&place, input, options)?;
            if paf {
                if options.placed_by_columns() || names != TSV_ID_COLUMNS.map(String::from) {
                    return Err(Error::usage(format!(
                        "{place}: PAF candidates name their own columns (1, 6: names; 5: strand; 3-4, 8-9: regions): \
                         id, region and strand column options apply to TSV, Arrow and Parquet candidates"
                    )));
                }
                if columns.carry.as_ref().is_some_and(|c| !c.is_empty()) {
                    return Err(Error::usage(format!(
                        "{place}: --carry applies to TSV, Arrow and Parquet candidates, not PAF"
                    )));
                }
                if !gather {
                    return Err(Error::usage(format!(
                        "{place}: PAF candidates (regions and strands) are aligned by the pair engine, not --gpu-paired"
                    )));
                }
                return Ok(id_pairs(place, Rows::Paf(PafRows::new(input)), query, target, limits, gather, options));
            }
            if names != TSV_ID_COLUMNS.map(String::from) {
                return Err(Error::usage(format!(
                    "{place}: id column options apply to Arrow and Parquet candidate tables, not TSV"
                )));
            }
            let mut rows = TsvIds::new(input, query.clone(), target.clone());
            rows.start(&place, columns, options)?;
            Rows::Tsv(rows)
        }
    };
    if options.placed_by_columns() && !gather {
        return Err(Error::usage(format!(
            "{place}: candidates with region or strand columns are aligned by the pair engine, not --gpu-paired"
        )));
    }
    Ok(id_pairs(place, rows, query, target, limits, gather, options))
}

/// Whether a text candidate input is PAF: named so (`--pairs-format paf`, a `.paf` or
/// `.paf.gz` file), or its first line reads as PAF (read up to its end, 64 KiB at most;
/// the bytes read stay in front of the input).
fn is_paf(
    place: &Where,
    mut input: crate::io::input::Input,
    options: &PairOptions,
) -> Result<(bool, crate::io::input::Input)> {
    if options.format == CandidateFormat::Paf || named_paf(place) {
        return Ok((true, input));
    }
    const LOOK: usize = 64 << 10;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while head.len() < LOOK && !head.contains(&b'\n') {
        match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(read_error(place, e)),
        }
    }
    let paf = memchr::memchr(b'\n', &head).is_some_and(|end| looks_like_paf(&head[..end]));
    let input: crate::io::input::Input = Box::new(std::io::Cursor::new(head).chain(input));
    Ok((paf, input))
}

/// Candidate pairs by id from an in-memory table.
pub(super) fn from_table(
    table: Table,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    columns: &PairColumns,
    limits: BatchLimits,
    options: &PairOptions,
) -> Result<Box<dyn PairReader>> {
    let rows = table_rows(&table.place, &table.schema, table.batches, columns, &query, &target, options)?;
    Ok(id_pairs(table.place, rows, query, target, limits, true, options))
}

fn id_columns(place: &Where, schema: &Schema, names: &[String; 2]) -> Result<Vec<usize>> {
    string_columns(place, schema, names, "candidate pairs need", "--query-id-col, --target-id-col")
}

/// The region columns (qstart, qend, tstart, tend) and then the strand column of a
/// candidate table, where `options` names them, by index in `schema`; an error naming a
/// missing one.
fn placing_columns(place: &Where, schema: &Schema, options: &PairOptions) -> Result<Vec<usize>> {
    let named = options.region_cols.iter().flatten().map(|n| (n, "--region-cols"));
    let named = named.chain(options.strand_col.iter().map(|n| (n, "--strand-col")));
    named
        .map(|(name, option)| {
            schema.index_of(name).map_err(|_| {
                let has: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                Error::usage(format!(
                    "{place}: {option}: no column '{name}' in the candidates (they have {})",
                    has.join(", ")
                ))
            })
        })
        .collect()
}

/// The id rows of a candidate table: id columns by name, the others carried as `--carry` says.
fn table_rows(
    place: &Where,
    schema: &Schema,
    batches: Batches,
    columns: &PairColumns,
    query: &Arc<SeqSet>,
    target: &Arc<SeqSet>,
    options: &PairOptions,
) -> Result<Rows> {
    let names = [columns.names[0].clone(), columns.names[2].clone()];
    let ids = id_columns(place, schema, &names)?;
    let carried = carried_indices(place, schema, columns, &ids)?;
    let carried_schema = carried_schema(place, schema, &carried)?;
    let placing = placing_columns(place, schema, options)?;
    let mut placed_names: Vec<String> = options.region_cols.iter().flatten().cloned().collect();
    placed_names.extend(options.strand_col.iter().cloned());
    let shape = (options.region_cols.is_some(), options.strand_col.is_some());
    let (tx, looked) = sync_channel(LOOKED_AHEAD);
    let (query, target, ids) = (query.clone(), target.clone(), [ids[0], ids[1]]);
    crate::threads::spawn("sw-id-lookup", move || look_up_batches(batches, ids, &query, &target, tx));
    Ok(Rows::Table(TableIds {
        looked,
        current: None,
        row: 0,
        ended: false,
        names,
        carried,
        carried_schema,
        placing,
        placed_names,
        shape,
    }))
}

fn id_pairs(
    place: Where,
    rows: Rows,
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    limits: BatchLimits,
    gather: bool,
    options: &PairOptions,
) -> Box<dyn PairReader> {
    let headers = query.has_headers() || target.has_headers();
    let counter = Counter { pairs: 0 };
    let (picked, placed) = (Vec::new(), Vec::new());
    let options = options.clone();
    fused(IdPairs { place, query, target, rows, limits, counter, headers, picked, placed, gather, options })
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
    /// Their regions and strands, pair for pair, where the input places them; else empty.
    placed: Vec<Placed>,
    options: PairOptions,
    /// Ids, headers and residues gathered into the batch; else only the sequence numbers
    /// (`PairBatch::set_pairs`), for an engine that reads the sets where they are.
    gather: bool,
}

enum Rows {
    Tsv(TsvIds),
    Table(TableIds),
    Paf(PafRows),
}

/// Where a candidate is aligned: its regions on the query and the target (0-based
/// half-open, forward strands; a whole sequence where the input names none) and the
/// strand the input gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Placed {
    pub query: Region,
    pub target: Region,
    pub strand: Option<Strand>,
}

impl Placed {
    /// The windows aligned for this candidate on sequences of `ql` and `tl` residues
    /// (`seq::windows`: the margin, the reach and the strand the run aligns it on).
    fn windows(&self, ql: usize, tl: usize, options: &PairOptions) -> (Region, Region) {
        let strand = options.strand.pick(self.strand);
        windows(&self.query, ql, &self.target, tl, strand, options.window, options.reach)
    }
}

/// The pairs chosen for one batch, with what limits it.
pub(super) struct Pick<'a> {
    pub place: &'a Where,
    pub query: &'a SeqSet,
    pub target: &'a SeqSet,
    limits: BatchLimits,
    /// Pairs of the input before this batch.
    first: u64,
    picked: &'a mut Vec<(u32, u32)>,
    /// Pair for pair where the input places them (every pair of such an input), else empty.
    placed: &'a mut Vec<Placed>,
    /// How windows are made (`PairOptions`), for the residue count.
    options: &'a PairOptions,
    residues: usize,
}

impl Pick<'_> {
    /// The batch is full: its pair limit reached, or its residue limit (at least one pair).
    pub fn full(&self) -> bool {
        self.picked.len() >= self.limits.pairs || (!self.picked.is_empty() && self.residues >= self.limits.residues)
    }

    /// Pairs the batch can still take (its residue limit aside).
    pub fn room(&self) -> usize {
        self.limits.pairs.saturating_sub(self.picked.len())
    }

    /// The 0-based number of the next pair in the input.
    pub fn index(&self) -> usize {
        (self.first + self.picked.len() as u64) as usize
    }

    /// Takes a pair found in the sets, placed on regions or not; counts the residues it
    /// will hold in the batch (its windows where it is placed). Every strand an input gives
    /// a candidate enters here: a protein candidate on `-` is refused, naming it (`context`
    /// prefixes the problem: a line number).
    pub fn push(&mut self, qi: u32, ti: u32, placed: Option<Placed>, context: impl Fn() -> String) -> Result<()> {
        let (ql, tl) = (self.query.seq(qi).len(), self.target.seq(ti).len());
        self.residues += match placed {
            None => ql + tl,
            Some(placed) => {
                if placed.strand == Some(Strand::Minus) && self.query.alphabet() != Alphabet::Dna {
                    let problem = format!(
                        "{}candidate of query {} on target {} names strand -: proteins have no minus strand \
                         (strands are DNA's: --dna)",
                        context(),
                        quoted_id(self.query.id(qi)),
                        quoted_id(self.target.id(ti))
                    );
                    return Err(Error::record(self.place, self.index(), self.query.id(qi), problem));
                }
                let (qw, tw) = placed.windows(ql, tl, self.options);
                let n = qw.len() + tw.len();
                self.placed.push(placed);
                n
            }
        };
        self.picked.push((qi, ti));
        Ok(())
    }

    /// Looks the pair's ids up and takes it; an id that is empty or in no set is an error
    /// naming the pair (`context` prefixes the problem: a TSV line number).
    fn take(&mut self, q: &[u8], t: &[u8], names: [&str; 2], context: impl Fn() -> String) -> Result<()> {
        let (qi, ti) = self.find(q, t, names, &context)?;
        self.push(qi, ti, None, context)
    }

    /// The sequence numbers of the pair's ids; an id that is empty or in no set is an error
    /// naming the pair (`context` prefixes the problem: a line number).
    pub fn find(&self, q: &[u8], t: &[u8], names: [&str; 2], context: impl Fn() -> String) -> Result<(u32, u32)> {
        let index = self.index();
        if q.is_empty() {
            return Err(Error::record(self.place, index, "", format!("{}{} is empty", context(), names[0])));
        }
        if t.is_empty() {
            return Err(Error::record(self.place, index, q, format!("{}{} is empty", context(), names[1])));
        }
        let missing = |name: &str, id: &[u8], set: &SeqSet| {
            let problem = format!("{}{name} {} not found in {}", context(), quoted_id(id), set.describe());
            Error::record(self.place, index, q, problem)
        };
        let qi = self.query.find(q).ok_or_else(|| missing(names[0], q, self.query))?;
        let ti = self.target.find(t).ok_or_else(|| missing(names[1], t, self.target))?;
        Ok((qi, ti))
    }
}

impl IdPairs {
    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        self.picked.clear();
        self.placed.clear();
        let mut pick = Pick {
            place: &self.place,
            query: &self.query,
            target: &self.target,
            limits: self.limits,
            first: self.counter.pairs,
            picked: &mut self.picked,
            placed: &mut self.placed,
            options: &self.options,
            residues: 0,
        };
        match &mut self.rows {
            Rows::Tsv(rows) => rows.pick(&mut pick, &mut batch.carried)?,
            Rows::Table(rows) => rows.pick(&mut pick, &mut batch.carried)?,
            Rows::Paf(rows) => rows.pick(&mut pick)?,
        }
        if self.picked.is_empty() {
            return self.counter.end(&self.place);
        }
        if !self.gather {
            if !self.placed.is_empty() {
                return Err(Error::Internal("candidates placed on regions need their residues gathered".into()));
            }
            batch.set_pairs.extend(self.picked.iter().map(|&(q, t)| [q, t]));
            self.counter.pairs += self.picked.len() as u64;
            return Ok(true);
        }
        // Ids, headers and residues gathered from the sets into the batch, in parallel.
        let (query, target, picked) = (&*self.query, &*self.target, &self.picked);
        let n = picked.len();
        // Sets whose ids and headers were found UTF-8 at loading need no check per batch.
        let utf8 = query.is_utf8() && target.is_utf8();
        batch.query_ids.extend_known_par_with(n, utf8, |i| query.id(picked[i].0))?;
        batch.target_ids.extend_known_par_with(n, utf8, |i| target.id(picked[i].1))?;
        if self.headers {
            batch.query_headers.extend_known_par_with(n, utf8, |i| query.header(picked[i].0))?;
            batch.target_headers.extend_known_par_with(n, utf8, |i| target.header(picked[i].1))?;
        }
        if self.placed.is_empty() {
            batch.seqs.extend_par_with(n, |i| (query.seq(picked[i].0), target.seq(picked[i].1)))?;
        } else {
            // Only each side's window is copied (a read's candidate on a long contig holds
            // the contig's window, never the contig), with the frame that places it.
            let frames = window_frames(query, target, picked, &self.placed, &self.options);
            batch.seqs.extend_par_with(n, |i| {
                let w = &frames[i];
                let (qo, to) = (w.frame.query_offset, w.frame.target_offset);
                let qs = &query.seq(picked[i].0)[qo..qo + w.query_window];
                let ts = &target.seq(picked[i].1)[to..to + w.target_window];
                (qs, ts)
            })?;
            batch.frames.extend(frames.iter().map(|f| f.frame));
        }
        if self.options.query_text {
            query_text(batch, query, picked.iter().map(|p| p.0))?;
        }
        self.counter.pairs += self.picked.len() as u64;
        Ok(true)
    }
}

/// A pair's frame with the lengths of its two windows.
struct Windowed {
    frame: Frame,
    query_window: usize,
    target_window: usize,
}

/// The windows of placed pairs ([`Placed::windows`]) and the frames that say where they sit
/// on the whole sequences.
fn window_frames(
    query: &SeqSet,
    target: &SeqSet,
    picked: &[(u32, u32)],
    placed: &[Placed],
    options: &PairOptions,
) -> Vec<Windowed> {
    picked
        .iter()
        .zip(placed)
        .map(|(&(qi, ti), placed)| {
            let (ql, tl) = (query.seq(qi).len(), target.seq(ti).len());
            let (qw, tw) = placed.windows(ql, tl, options);
            let frame = Frame {
                query_offset: qw.start,
                target_offset: tw.start,
                query_len: ql,
                target_len: tl,
                strand: placed.strand,
            };
            Windowed { frame, query_window: qw.len(), target_window: tw.len() }
        })
        .collect()
}

/// Fills `batch.query_text` and `batch.query_quals` row for row with the queries' whole
/// sequences (letters, forward strand) and their FASTQ qualities (empty where the set
/// keeps none).
pub(super) fn query_text(batch: &mut PairBatch, query: &SeqSet, rows: impl Iterator<Item = u32>) -> Result<()> {
    use rayon::prelude::*;
    let rows: Vec<u32> = rows.collect();
    let alphabet = query.alphabet();
    let texts: Vec<Vec<u8>> = rows.par_iter().with_min_len(256).map(|&i| alphabet.decode(query.seq(i))).collect();
    batch.query_text.extend_utf8_par_with(rows.len(), |i| &texts[i])?;
    batch.query_quals.extend_utf8_par_with(rows.len(), |i| query.quals(rows[i]))
}

impl Source for IdPairs {
    fn carried(&self) -> Carried {
        match &self.rows {
            Rows::Tsv(t) => t.carried_schema.clone(),
            Rows::Table(t) => t.carried_schema.clone(),
            Rows::Paf(_) => no_columns(),
        }
    }

    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool> {
        self.fill_inner(batch)
    }
}

/// What [`TsvIds::next_line`] found.
enum Next {
    /// A line (without its newline) at this range of the front piece.
    Line(usize, usize),
    /// The input paused with no whole line waiting.
    Paused,
    End,
}

/// Bytes per read of the reading thread: the unit of parallel parsing.
const PIECE: usize = 256 << 10;
/// Pieces read ahead at most (16 MiB).
pub(super) const AHEAD: usize = 64;

/// What the reading thread sends.
pub(super) enum Read {
    /// Whole lines (the input's last one may lack its newline): the first `n` bytes.
    Lines(Vec<u8>, usize),
    /// Whole lines (the first `n` bytes) being looked up on the thread pool, which gives
    /// them back with their lookups.
    Looking(Receiver<(Vec<u8>, Vec<Line>)>, usize),
    /// A line longer than `MAX_LINE`: what came before it has been sent.
    TooLong,
    Failed(std::io::Error),
}

/// The sets a piece's lines are looked up in, once `on` (no column is carried).
pub(super) struct Lookup {
    query: Arc<SeqSet>,
    target: Arc<SeqSet>,
    on: Arc<AtomicBool>,
}

/// Reads `input` into pieces of whole lines: a piece ends at its last newline, and the
/// start of a line that goes on moves to the next piece (a line longer than a read grows
/// the buffer). One read per piece, so a slow producer's lines come through at once. Each
/// piece's ids are looked up on the thread pool as it is sent (`lookup`), pieces in
/// parallel: the consumer only takes the results in order.
pub(super) fn read_lines(mut input: Input, tx: SyncSender<Read>, recycled: Receiver<Vec<u8>>, lookup: Option<Lookup>) {
    let fresh = |recycled: &Receiver<Vec<u8>>| recycled.try_recv().unwrap_or_else(|_| vec![0; PIECE]);
    let mut buf = fresh(&recycled);
    // Bytes of `buf` holding the start of a line.
    let mut held = 0;
    loop {
        if held == buf.len() {
            if held > MAX_LINE {
                let _ = tx.send(Read::TooLong);
                return;
            }
            buf.resize(2 * held, 0);
        }
        let n = match input.read(&mut buf[held..]) {
            Ok(0) => {
                if held > 0 {
                    let _ = tx.send(Read::Lines(buf, held));
                }
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Read::Failed(e));
                return;
            }
        };
        let Some(last) = memchr::memrchr(b'\n', &buf[held..held + n]) else {
            held += n;
            continue;
        };
        let cut = held + last + 1;
        let mut next = fresh(&recycled);
        let rest = held + n - cut;
        if next.len() < rest {
            next.resize(rest.max(PIECE), 0);
        }
        next[..rest].copy_from_slice(&buf[cut..held + n]);
        let full = std::mem::replace(&mut buf, next);
        let read = if let Some(lookup) = lookup.as_ref().filter(|l| l.on.load(Ordering::Acquire)) {
            let (done, looking) = sync_channel(1);
            let (query, target) = (lookup.query.clone(), lookup.target.clone());
            rayon::spawn(move || {
                let lines = look_up(&full[..cut], 0, &query, &target);
                let _ = done.send((full, lines));
            });
            Read::Looking(looking, cut)
        } else {
            Read::Lines(full, cut)
        };
        if tx.send(read).is_err() {
            return;
        }
        held = rest;
    }
}

/// A piece of whole lines received, `buf[pos..len]` not yet handed out.
struct Piece {
    /// Empty while `looking`.
    buf: Vec<u8>,
    len: usize,
    pos: usize,
    /// The lookup under way on the thread pool, which has the buffer.
    looking: Option<Receiver<(Vec<u8>, Vec<Line>)>>,
    /// Its lines from `pos` on, looked up (by [`TsvIds::pick_block`]): dropped when the
    /// one-line path takes a line.
    looked: Option<Looked>,
}

/// The lines of a piece, looked up in parallel; `lines[next..]` not yet taken.
struct Looked {
    lines: Vec<Line>,
    next: usize,
}

/// One candidate line, as [`TsvIds::pick_block`] looks it up.
#[derive(Clone, Copy)]
pub(super) struct Line {
    kind: Kind,
    /// Where the line (with its newline) ends in the piece.
    end: u32,
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// Sequence numbers and their residue count.
    Pair(u32, u32, usize),
    Blank,
    /// Not a pair of known ids: the one-line path says why, in order.
    Bad,
}

impl Kind {
    /// A pair of non-empty ids both found in their sets, else `Bad`.
    fn of(q: &[u8], t: &[u8], query: &SeqSet, target: &SeqSet) -> Kind {
        match (query.find(q), target.find(t)) {
            (Some(qi), Some(ti)) if !q.is_empty() && !t.is_empty() => {
                Kind::Pair(qi, ti, query.seq(qi).len() + target.seq(ti).len())
            }
            _ => Kind::Bad,
        }
    }
}

/// TSV candidate rows, read by a thread in pieces of whole lines; their ids are looked up
/// in parallel a piece at a time (no pass over the bytes on this thread) when no column is
/// carried, line by line otherwise. A batch under way goes out when the input pauses, so a
/// slow producer's pairs flow through at once.
struct TsvIds {
    /// Tells the reading thread to look pieces up (nothing is carried).
    look_up: Arc<AtomicBool>,
    reads: Receiver<Read>,
    recycle: SyncSender<Vec<u8>>,
    /// Pieces received, not yet handed out.
    pieces: VecDeque<Piece>,
    /// Why the reads stopped (once every piece before it is handed out): `None` at the end.
    stopped: Option<Option<Read>>,
    /// Lines handed out (the last one's number).
    line: usize,
    /// Bytes and lines looked up so far (their ratio sizes how much to read ahead).
    bytes_looked: usize,
    lines_looked: usize,
    /// The header's column names (the two id columns' when there is none).
    header: Vec<String>,
    /// The columns carried, by their index in a line, and as the output names them.
    carried: Vec<usize>,
    carried_schema: Carried,
    /// The fields of the line being read, as ranges of the front piece.
    fields: Vec<(usize, usize)>,
    /// Region columns (qstart, qend, tstart, tend) and strand column by index in a line,
    /// where `--region-cols` and `--strand-col` name them.
    regions: Option<[usize; 4]>,
    strand: Option<usize>,
    /// Their names, for messages.
    placed_names: Vec<String>,
}

impl TsvIds {
    fn new(input: Input, query: Arc<SeqSet>, target: Arc<SeqSet>) -> TsvIds {
        let (tx, reads) = sync_channel(AHEAD);
        let (recycle, recycled) = sync_channel(AHEAD);
        let look_up = Arc::new(AtomicBool::new(false));
        let lookup = Lookup { query, target, on: look_up.clone() };
        crate::threads::spawn("sw-cand-read", move || read_lines(input, tx, recycled, Some(lookup)));
        TsvIds {
            look_up,
            reads,
            recycle,
            pieces: VecDeque::new(),
            stopped: None,
            line: 0,
            bytes_looked: 0,
            lines_looked: 0,
            header: TSV_ID_COLUMNS.map(String::from).to_vec(),
            carried: Vec::new(),
            carried_schema: no_columns(),
            fields: Vec::new(),
            regions: None,
            strand: None,
            placed_names: Vec::new(),
        }
    }

    /// Candidates are placed by region or strand columns (read line by line).
    fn placed(&self) -> bool {
        self.regions.is_some() || self.strand.is_some()
    }

    /// The front piece's bytes (where [`Self::next_line`]'s lines are).
    fn front(&self) -> &[u8] {
        self.pieces.front().map_or(&[], |p| &p.buf[..p.len])
    }

    /// Reads up to the first line that is not blank: a header names the carried columns
    /// (`--carry` chooses among them); any other line is left to be read as a candidate.
    fn start(&mut self, place: &Where, columns: &PairColumns, options: &PairOptions) -> Result<()> {
        let mut headed = false;
        while let Next::Line(start, end) = self.next_line(place, true)? {
            let line = &self.front()[start..end];
            let text = line.strip_suffix(b"\r").unwrap_or(line);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if is_header(place, text, self.line)? {
                self.header = header_names(place, text, self.line)?;
                headed = true;
            } else if let Some(piece) = self.pieces.front_mut() {
                piece.pos = start;
                self.line -= 1;
            }
            break;
        }
        let fields: Vec<Field> = self.header.iter().map(|n| Field::new(n, DataType::Utf8, false)).collect();
        let schema = Schema::new(fields);
        self.carried = carried_indices(place, &schema, columns, &[0, 1])?;
        self.carried_schema = carried_schema(place, &schema, &self.carried)?;
        if options.placed_by_columns() {
            let column = |name: &String, option: &str| -> Result<usize> {
                if !headed {
                    return Err(Error::usage(format!(
                        "{place}: {option} names columns of the candidates' header line \
                         (query_id<TAB>target_id<TAB>...), and the input has none"
                    )));
                }
                self.header.iter().position(|h| h == name).ok_or_else(|| {
                    Error::usage(format!(
                        "{place}: {option}: no column '{name}' in the header (it has {})",
                        self.header.join(", ")
                    ))
                })
            };
            if let Some(names) = &options.region_cols {
                let mut found = [0; 4];
                for (k, name) in names.iter().enumerate() {
                    found[k] = column(name, "--region-cols")?;
                }
                self.regions = Some(found);
                self.placed_names.extend(names.iter().cloned());
            }
            if let Some(name) = &options.strand_col {
                self.strand = Some(column(name, "--strand-col")?);
                self.placed_names.push(name.clone());
            }
        }
        self.look_up.store(self.carried.is_empty() && !self.placed(), Ordering::Release);
        Ok(())
    }

    /// Takes what the reading thread sent; false when it has stopped.
    fn receive(&mut self, read: Option<Read>) -> bool {
        match read {
            Some(Read::Lines(buf, len)) => {
                self.pieces.push_back(Piece { buf, len, pos: 0, looking: None, looked: None });
                true
            }
            Some(Read::Looking(looking, len)) => {
                let piece = Piece { buf: Vec::new(), len, pos: 0, looking: Some(looking), looked: None };
                self.pieces.push_back(piece);
                true
            }
            stop => {
                self.stopped = Some(stop);
                false
            }
        }
    }

    /// Drops the pieces handed out entirely (their buffers go back to the reading thread).
    fn drop_used(&mut self) {
        while self.pieces.front().is_some_and(|p| p.pos == p.len && p.looking.is_none()) {
            if let Some(piece) = self.pieces.pop_front() {
                let _ = self.recycle.try_send(piece.buf);
            }
        }
    }

    /// The next line; waits for one if `patient`, else says when the input has paused.
    fn next_line(&mut self, place: &Where, patient: bool) -> Result<Next> {
        loop {
            self.drop_used();
            if let Some(piece) = self.pieces.front_mut() {
                piece.wait()?;
                let start = piece.pos;
                let end = memchr::memchr(b'\n', &piece.buf[start..piece.len]).map_or(piece.len, |i| start + i);
                piece.pos = (end + 1).min(piece.len);
                piece.looked = None;
                self.line += 1;
                return Ok(Next::Line(start, end));
            }
            match self.stopped.take() {
                Some(None) => {
                    self.stopped = Some(None);
                    return Ok(Next::End);
                }
                Some(Some(Read::TooLong)) => {
                    return Err(Error::file(
                        place,
                        format!("line {} longer than 1 GiB: not a real candidate pair file?", self.line + 1),
                    ))
                }
                Some(Some(Read::Failed(e))) => return Err(read_error(place, e)),
                Some(Some(Read::Lines(..) | Read::Looking(..))) | None => {}
            }
            let read = if patient {
                self.reads.recv().ok()
            } else {
                match self.reads.recv_timeout(PAUSE) {
                    Ok(read) => Some(read),
                    Err(RecvTimeoutError::Timeout) => return Ok(Next::Paused),
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            };
            self.receive(read);
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
            let every = !cells.is_empty() || self.placed();
            if !every && self.pick_block(p)? {
                continue;
            }
            let (start, end) = match self.next_line(p.place, p.picked.is_empty())? {
                Next::Line(start, end) => (start, end),
                Next::Paused | Next::End => return Ok(()),
            };
            let mut fields = std::mem::take(&mut self.fields);
            let front = self.front();
            let line = &front[start..end];
            let end = end - line.ends_with(b"\r") as usize;
            let text = &front[start..end];
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let number = self.line;
            // The fields (only the ids' when nothing is carried: further ones are ignored).
            fields.clear();
            let mut at = start;
            for piece in text.splitn(if every { usize::MAX } else { 3 }, |&b| b == b'\t') {
                fields.push((at, at + piece.len()));
                at += piece.len() + 1;
            }
            let field = |k: usize| &front[fields[k].0..fields[k].1];
            let wanted = if every { self.header.len() } else { 2 };
            if fields.len() < 2 || (every && fields.len() != wanted) {
                let columns = if every { self.header.join(", ") } else { TSV_ID_COLUMNS.join(", ") };
                let problem = format!(
                    "line {number}: expected {}{wanted} tab-separated columns ({columns}), found {}",
                    if every { "" } else { "at least " },
                    fields.len()
                );
                let index = (p.first + p.picked.len() as u64) as usize;
                return Err(Error::record(p.place, index, field(0), problem));
            }
            if self.placed() {
                let context = || format!("line {number}: ");
                let (qi, ti) = p.find(field(0), field(1), TSV_ID_COLUMNS, context)?;
                let mut cols = self.regions.iter().flatten().chain(&self.strand).map(|&k| field(k));
                let values: Vec<&[u8]> = cols.by_ref().collect();
                let names: Vec<&str> = self.placed_names.iter().map(String::as_str).collect();
                let placed = place_row(p, qi, ti, self.regions.is_some(), self.strand.is_some(), &values, &names)
                    .map_err(|problem| {
                        Error::record(p.place, p.index(), field(0), format!("line {number}: {problem}"))
                    })?;
                p.push(qi, ti, Some(placed), context)?;
            } else {
                p.take(field(0), field(1), TSV_ID_COLUMNS, || format!("line {number}: "))?;
            }
            for (cell, &k) in cells.iter_mut().zip(&self.carried) {
                cell.append_value(String::from_utf8_lossy(field(k)));
            }
            self.fields = fields;
        }
        Ok(())
    }

    /// Takes the lines already received into `p`, looked up a piece at a time on the thread
    /// pool (at 100M candidates one thread of lookups was the limit; then one thread
    /// splitting lines). Stops where the batch is full or at a line that is not a pair of
    /// known ids (left for the one-line path, whose error names it); false when no line
    /// was taken.
    fn pick_block(&mut self, p: &mut Pick<'_>) -> Result<bool> {
        use rayon::prelude::*;
        self.drop_used();
        // Enough pieces for the rest of the batch, as far as they have come in.
        let want = p.limits.pairs.saturating_sub(p.picked.len());
        let per_line = if self.lines_looked == 0 { 64 } else { self.bytes_looked.div_ceil(self.lines_looked) };
        let mut ahead: usize = self.pieces.iter().map(|piece| piece.len - piece.pos).sum();
        while self.stopped.is_none() && ahead < want.saturating_mul(per_line) {
            match self.reads.try_recv() {
                Ok(read) => {
                    ahead += match &read {
                        Read::Lines(_, len) => *len,
                        _ => 0,
                    };
                    self.receive(Some(read));
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.receive(None);
                }
            }
        }
        let (query, target) = (p.query, p.target);
        let fresh: Vec<&mut Piece> =
            self.pieces.iter_mut().filter(|piece| piece.looked.is_none() && piece.looking.is_none()).collect();
        let (bytes, lines) = fresh
            .into_par_iter()
            .map(|piece| {
                let looked = look_up(&piece.buf[..piece.len], piece.pos, query, target);
                let counts = (piece.len - piece.pos, looked.len());
                piece.looked = Some(Looked { lines: looked, next: 0 });
                counts
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        self.bytes_looked += bytes;
        self.lines_looked += lines;
        // Taken in order, as far as the batch has room.
        let mut taken = 0;
        'pieces: for piece in &mut self.pieces {
            piece.wait()?;
            let Some(looked) = &mut piece.looked else { break };
            for line in &looked.lines[looked.next..] {
                if p.full() {
                    break 'pieces;
                }
                match line.kind {
                    Kind::Pair(qi, ti, residues) => {
                        p.residues += residues;
                        p.picked.push((qi, ti));
                    }
                    Kind::Blank => {}
                    Kind::Bad => break 'pieces,
                }
                piece.pos = line.end as usize;
                looked.next += 1;
                taken += 1;
            }
        }
        self.line += taken;
        Ok(taken > 0)
    }
}

impl Piece {
    /// Waits for the piece's lookup under way, if any (its buffer comes back with it).
    fn wait(&mut self) -> Result<()> {
        if let Some(looking) = self.looking.take() {
            let (buf, lines) = looking.recv().map_err(|_| Error::Internal("a candidate lookup job stopped".into()))?;
            self.buf = buf;
            if self.pos == 0 {
                self.looked = Some(Looked { lines, next: 0 });
            }
        }
        Ok(())
    }
}

/// The lines of `piece[from..]` looked up in the sets.
fn look_up(piece: &[u8], from: usize, query: &SeqSet, target: &SeqSet) -> Vec<Line> {
    let mut lines = Vec::with_capacity((piece.len() - from) / 32 + 1);
    let mut at = from;
    while at < piece.len() {
        let end = memchr::memchr(b'\n', &piece[at..]).map_or(piece.len(), |i| at + i);
        let line = &piece[at..end];
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        let kind = if text.iter().all(u8::is_ascii_whitespace) {
            Kind::Blank
        } else {
            let mut fields = text.splitn(3, |&b| b == b'\t');
            Kind::of(fields.next().unwrap_or_default(), fields.next().unwrap_or_default(), query, target)
        };
        at = (end + 1).min(piece.len());
        lines.push(Line { kind, end: at as u32 });
    }
    lines
}

/// A candidate's regions and strand from the text of its region columns (qstart, qend,
/// tstart, tend, where `regions`) and strand column (where `strand`), in that order in
/// `values` (named by `names`), checked against the sequences' lengths; the problem
/// otherwise.
fn place_row(
    p: &Pick<'_>,
    qi: u32,
    ti: u32,
    regions: bool,
    strand: bool,
    values: &[&[u8]],
    names: &[&str],
) -> std::result::Result<Placed, String> {
    let (ql, tl) = (p.query.seq(qi).len(), p.target.seq(ti).len());
    let number = |k: usize| -> std::result::Result<usize, String> {
        let text = values[k].trim_ascii();
        std::str::from_utf8(text)
            .ok()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{} is not a 0-based position: {}", names[k], quoted_id(values[k])))
    };
    let region = |side: &str, s: usize, e: usize, len: usize| {
        if s <= e && e <= len {
            Ok(s..e)
        } else {
            Err(format!(
                "{side} region {s}..{e} is not within its {len} residues (0-based half-open start <= end <= length)"
            ))
        }
    };
    let (query, target) = match regions {
        true => (region("query", number(0)?, number(1)?, ql)?, region("target", number(2)?, number(3)?, tl)?),
        false => (0..ql, 0..tl),
    };
    let strand = match strand {
        false => None,
        true => {
            let k = if regions { 4 } else { 0 };
            Some(match values[k].trim_ascii() {
                b"+" => Strand::Plus,
                b"-" => Strand::Minus,
                other => return Err(format!("{} is {}, not + or -", names[k], quoted_id(other))),
            })
        }
    };
    Ok(Placed { query, target, strand })
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

/// The column names of a TSV header line: a trailing tab (an empty name at the end, as
/// spreadsheets write) is dropped; an empty name elsewhere is an error naming the column.
fn header_names(place: &Where, text: &[u8], number: usize) -> Result<Vec<String>> {
    let mut names: Vec<&[u8]> = text.split(|&b| b == b'\t').collect();
    while names.last().is_some_and(|n| n.iter().all(u8::is_ascii_whitespace)) {
        names.pop();
    }
    if let Some(k) = names.iter().position(|n| n.iter().all(u8::is_ascii_whitespace)) {
        return Err(Error::file(place, format!("line {number}: header column {} has no name", k + 1)));
    }
    Ok(names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect())
}

/// Input batches of candidates looked up ahead of the consumer, at most.
const LOOKED_AHEAD: usize = 2;

/// An input batch of candidates with its rows looked up.
struct LookedBatch {
    batch: RecordBatch,
    /// The query and target id columns.
    ids: [StrColumn; 2],
    /// Row by row: a pair of known ids, or `Bad` (null, empty or unknown: the one-row path
    /// says why, in order).
    rows: Vec<Kind>,
}

/// Looks the rows of `batches` up in the sets, each batch in parallel on the thread pool,
/// and sends them in order (`None` after the last): the consumer's thread only takes the
/// pairs (at 20M Parquet candidates, its lookups one by one were a serial ~60 ns a row).
fn look_up_batches(
    batches: Batches,
    ids: [usize; 2],
    query: &SeqSet,
    target: &SeqSet,
    tx: SyncSender<Option<Result<Box<LookedBatch>>>>,
) {
    use rayon::prelude::*;
    for batch in batches {
        let looked = batch.map(|batch| {
            let ids = ids.map(|i| StrColumn::new(batch.column(i).clone()));
            let mut rows = Vec::new();
            (0..batch.num_rows())
                .into_par_iter()
                .with_min_len(4096)
                .map(|r| match (ids[0].get(r), ids[1].get(r)) {
                    (Some(q), Some(t)) => Kind::of(q, t, query, target),
                    _ => Kind::Bad,
                })
                .collect_into_vec(&mut rows);
            Box::new(LookedBatch { batch, ids, rows })
        });
        let failed = looked.is_err();
        if tx.send(Some(looked)).is_err() || failed {
            return;
        }
    }
    let _ = tx.send(None);
}

/// Candidate rows from record batches, looked up ahead by [`look_up_batches`]; a few input
/// batches in memory at a time.
struct TableIds {
    looked: Receiver<Option<Result<Box<LookedBatch>>>>,
    /// The input batch being handed out, from row `row` on.
    current: Option<Box<LookedBatch>>,
    row: usize,
    /// The input has ended (or failed: its error was handed out).
    ended: bool,
    /// The id columns' names.
    names: [String; 2],
    carried: Vec<usize>,
    carried_schema: Carried,
    /// Region columns, then the strand column, by index (where options name them), their
    /// names, and which of the two are named.
    placing: Vec<usize>,
    placed_names: Vec<String>,
    shape: (bool, bool),
}

impl TableIds {
    /// Rows left in the current input batch, taking the next one when it is used up; 0 at
    /// the end of the input.
    fn rows_left(&mut self) -> Result<usize> {
        loop {
            if let Some(b) = &self.current {
                if self.row < b.rows.len() {
                    return Ok(b.rows.len() - self.row);
                }
            }
            if self.ended {
                return Ok(0);
            }
            // A thread gone without its end marker panicked: no quiet end of the input then.
            let next = self
                .looked
                .recv()
                .unwrap_or_else(|_| Some(Err(Error::Internal("the candidate lookup thread stopped".into()))));
            match next {
                None => {
                    self.ended = true;
                    self.current = None;
                }
                Some(Err(e)) => {
                    self.ended = true;
                    self.current = None;
                    return Err(e);
                }
                Some(Ok(b)) => {
                    self.current = Some(b);
                    self.row = 0;
                }
            }
        }
    }

    fn pick(&mut self, p: &mut Pick<'_>, carried: &mut Vec<RecordBatch>) -> Result<()> {
        while !p.full() {
            if self.rows_left()? == 0 {
                return Ok(());
            }
            let Some(b) = &self.current else { return Ok(()) };
            let start = self.row;
            let mut take = 0;
            let mut failed = None;
            for (r, kind) in b.rows.iter().enumerate().skip(start) {
                if p.full() {
                    break;
                }
                if !self.placing.is_empty() {
                    let placed = |p: &mut Pick<'_>| -> Result<()> {
                        let names = [self.names[0].as_str(), self.names[1].as_str()];
                        let (q, t) = match (b.ids[0].get(r), b.ids[1].get(r)) {
                            (Some(q), Some(t)) => (q, t),
                            _ => return take_row(p, &b.ids, r, &self.names),
                        };
                        let (qi, ti) = p.find(q, t, names, String::new)?;
                        let texts = placing_texts(&b.batch, &self.placing, r);
                        let values: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
                        let names: Vec<&str> = self.placed_names.iter().map(String::as_str).collect();
                        let (regions, strand) = self.shape;
                        let placed = place_row(p, qi, ti, regions, strand, &values, &names)
                            .map_err(|problem| Error::record(p.place, p.index(), q, problem))?;
                        p.push(qi, ti, Some(placed), String::new)
                    };
                    if let Err(e) = placed(p) {
                        failed = Some(e);
                        break;
                    }
                    take += 1;
                    continue;
                }
                match *kind {
                    Kind::Pair(qi, ti, residues) => {
                        p.residues += residues;
                        p.picked.push((qi, ti));
                    }
                    // Says why; taken as before if it is a pair after all.
                    Kind::Bad | Kind::Blank => {
                        if let Err(e) = take_row(p, &b.ids, r, &self.names) {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                take += 1;
            }
            carried.extend(carried_rows(&b.batch, &self.carried, &self.carried_schema, start, take)?);
            self.row += take;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(())
    }
}

/// The cells of row `r` of `columns` of `batch` as text (numbers as digits, strings and
/// binaries as they are; "" for a null, which `place_row` refuses by name).
fn placing_texts(batch: &RecordBatch, columns: &[usize], r: usize) -> Vec<String> {
    use arrow::array::Array;
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default();
    columns
        .iter()
        .map(|&k| {
            let column = batch.column(k);
            if column.is_null(r) {
                return String::new();
            }
            if StrColumn::readable(column.data_type()) {
                let cell = StrColumn::new(column.clone());
                return String::from_utf8_lossy(cell.get(r).unwrap_or_default()).into_owned();
            }
            match ArrayFormatter::try_new(column.as_ref(), &options) {
                Ok(f) => f.value(r).to_string(),
                Err(_) => String::new(),
            }
        })
        .collect()
}

/// Takes row `r` of the id columns `ids` one by one, with the error that names what is
/// wrong with it.
fn take_row(p: &mut Pick<'_>, ids: &[StrColumn; 2], r: usize, names: &[String; 2]) -> Result<()> {
    let names = [names[0].as_str(), names[1].as_str()];
    let (q, t) = match (ids[0].get(r), ids[1].get(r)) {
        (Some(q), Some(t)) => (q, t),
        (q, _) => {
            let index = (p.first + p.picked.len() as u64) as usize;
            let column = if q.is_none() { names[0] } else { names[1] };
            return Err(Error::record(p.place, index, q.unwrap_or_default(), format!("{column} is null")));
        }
    };
    p.take(q, t, names, String::new)
}

//! TSV pairs (`query_id, query_seq, target_id, target_seq`, header optional), parsed in
//! parallel blocks, in three stages that overlap: one thread reads (and inflates) the input
//! in chunks; a cutting thread gathers them into blocks of whole lines and splits each block
//! into lines on the thread pool; the caller's thread encodes runs of lines into the batch.
//! A block is cut when it is big, or as soon as the input pauses, so a slow producer's pairs
//! still flow through at once.
//! Same pairs and same errors, with the same numbers, as reading line by line
//! (property-tested below against such a reader).

use std::collections::VecDeque;
use std::io::Read;
use std::ops::Range;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::Duration;

use rayon::prelude::*;

use super::{append_pairs, no_columns, BatchLimits, Counter, Source, PAIR_COLUMNS};
use crate::error::{Error, Result, Where};
use crate::io::input::{read_error, Input, MAX_LINE};
use crate::scoring::Alphabet;
use crate::seq::{Carried, PairBatch};

/// Bytes per block at most (more for a longer line): big enough for parallel parsing.
const BLOCK: usize = 32 << 20;
/// Bytes per parallel piece of a block (cut at newlines).
const PIECE: usize = 1 << 20;
/// Bytes per read of the reading thread.
pub(super) const CHUNK: usize = 1 << 20;
/// An input silent this long has paused: what is complete goes on (streaming).
pub(super) const PAUSE: Duration = Duration::from_millis(10);

/// Said of a line of two fields: a candidate list given without its sequence set.
const IDS_ONLY_HINT: &str = " (two columns of ids, query id and target id? give their sequences with --seqs)";

pub(super) struct TsvPairs {
    place: Where,
    alphabet: Alphabet,
    limits: BatchLimits,
    /// Blocks cut by the cutting thread, with their lines.
    cuts: Receiver<Cut>,
    /// Blocks handed out go back to the cutting thread (reused: no fresh pages).
    used: SyncSender<Vec<u8>>,
    /// The cutting thread said the input ended.
    ended: bool,
    /// The block being handed out, with its lines.
    block: Vec<u8>,
    lines: VecDeque<Line>,
    /// A line problem met after `lines` (wrong column count, FASTA, overlong line).
    problem: Option<LineProblem>,
    /// Input lines before the current block, and in it.
    lines_before: usize,
    block_lines: usize,
    counter: Counter,
}

/// What the reading thread sends: a buffer with its first `n` bytes read, or why it stopped.
pub(super) enum Chunk {
    Data(Vec<u8>, usize),
    Failed(std::io::Error),
}

/// What the cutting thread sends.
enum Cut {
    /// Whole lines, split: the pair lines, the problem that stopped the split, line count.
    Block {
        block: Vec<u8>,
        lines: Vec<Line>,
        problem: Option<LineProblem>,
        count: usize,
    },
    /// The input paused with no whole line waiting (sent again every pause interval).
    Idle,
    /// A line longer than `MAX_LINE`.
    TooLong,
    Failed(Error),
    End,
}

/// What [`TsvPairs::next_block`] found.
enum Got {
    /// A new current block.
    Block,
    /// The input paused with no whole line waiting.
    Idle,
    End,
}

/// What [`Cutter::next_block`] found.
enum Next {
    Block(Vec<u8>),
    /// The input paused with no whole line waiting.
    Idle,
    TooLong,
    End,
}

/// Where the cutting thread's bytes come from.
enum Feed {
    /// A stream (stdin, a pipe, gzip) from the reading thread, in chunks; the buffers go
    /// back to it.
    Chunks { chunks: Receiver<Chunk>, recycle: SyncSender<Vec<u8>> },
    /// A regular uncompressed file, read at offsets by the pool's threads straight into the
    /// block: one reading thread and a copy of every byte into the block were two serial
    /// stages at ~4 GB/s each, the bound of a run of short pairs.
    File { file: std::fs::File, at: u64 },
}

/// The cutting thread's state: bytes received, not yet cut into a block.
struct Cutter {
    place: Where,
    feed: Feed,
    /// Blocks the parser is done with.
    used: Receiver<Vec<u8>>,
    /// The start of a line that may go on.
    pending: Vec<u8>,
    /// The input has ended (everything is in `pending`).
    ended: bool,
}

/// One pair line of a block: where its four fields are, and its line number in the block.
#[derive(Debug, Clone)]
struct Line {
    fields: [Range<usize>; 4],
    /// 1-based line number counted from the start of the block.
    number: usize,
}

#[derive(Debug, Clone)]
enum LineProblem {
    /// Not four tab-separated fields: the field count and the first field.
    Columns {
        number: usize,
        found: usize,
        id: Range<usize>,
    },
    TooLong,
}

impl TsvPairs {
    pub(super) fn new(place: Where, input: Input, alphabet: Alphabet, limits: BatchLimits) -> TsvPairs {
        let (tx, chunks) = sync_channel(64);
        let (recycle, recycled) = sync_channel(64);
        crate::threads::spawn("sw-tsv-read", move || read_chunks(input, tx, recycled));
        TsvPairs::with_feed(place, Feed::Chunks { chunks, recycle }, alphabet, limits)
    }

    /// The pairs of a regular uncompressed file (a UTF-8 byte order mark skipped).
    pub(super) fn from_file(
        place: Where,
        file: std::fs::File,
        alphabet: Alphabet,
        limits: BatchLimits,
    ) -> Result<TsvPairs> {
        let at = crate::io::input::bom_len(&place, &file)?;
        Ok(TsvPairs::with_feed(place, Feed::File { file, at }, alphabet, limits))
    }

    fn with_feed(place: Where, feed: Feed, alphabet: Alphabet, limits: BatchLimits) -> TsvPairs {
        // Two blocks cut ahead at most: memory stays bounded by a few blocks.
        let (cut_tx, cuts) = sync_channel(2);
        let (used, used_rx) = sync_channel(4);
        let cutter = Cutter { place: place.clone(), feed, used: used_rx, pending: Vec::new(), ended: false };
        crate::threads::spawn("sw-tsv-cut", move || cutter.run(cut_tx));
        TsvPairs {
            place,
            alphabet,
            limits,
            cuts,
            used,
            ended: false,
            block: Vec::new(),
            lines: VecDeque::new(),
            problem: None,
            lines_before: 0,
            block_lines: 0,
            counter: Counter { pairs: 0 },
        }
    }

    /// Takes the next block from the cutting thread; when the input pauses with no whole
    /// line in, waits on if `patient`, else says so.
    fn next_block(&mut self, patient: bool) -> Result<Got> {
        loop {
            let cut = match self.cuts.recv() {
                Ok(cut) => cut,
                Err(_) if self.ended => return Ok(Got::End),
                Err(_) => return Err(Error::Internal(format!("{}: the TSV cutting thread stopped", self.place))),
            };
            match cut {
                Cut::Block { block, lines, problem, count } => {
                    self.start_block(block, lines, problem, count)?;
                    return Ok(Got::Block);
                }
                Cut::Idle if patient => continue,
                Cut::Idle => return Ok(Got::Idle),
                Cut::TooLong => {
                    // No real pair file has such a line: whatever came before it has been read.
                    self.problem = Some(LineProblem::TooLong);
                    return Ok(Got::Block);
                }
                Cut::Failed(e) => return Err(e),
                Cut::End => {
                    self.ended = true;
                    return Ok(Got::End);
                }
            }
        }
    }

    /// Makes `block` (whole lines, split into `lines`) the current block.
    fn start_block(
        &mut self,
        block: Vec<u8>,
        lines: Vec<Line>,
        problem: Option<LineProblem>,
        count: usize,
    ) -> Result<()> {
        let _ = self.used.try_send(std::mem::replace(&mut self.block, block));
        self.lines_before += self.block_lines;
        self.block_lines = count;
        self.lines = lines.into();
        self.problem = problem;
        if self.counter.pairs == 0 {
            self.check_start()?;
        }
        Ok(())
    }

    /// Before the first pair: skip header lines; refuse a FASTA file.
    fn check_start(&mut self) -> Result<()> {
        loop {
            let (number, start) = match (self.lines.front(), &self.problem) {
                (Some(line), _) => (line.number, line.fields[0].start),
                (None, Some(LineProblem::Columns { number, id, .. })) => (*number, id.start),
                _ => return Ok(()),
            };
            if self.block[start..].starts_with(b">") {
                return Err(Error::file(
                    &self.place,
                    format!(
                        "line {}: looks like FASTA, not a pair file: give query and target FASTA files as two inputs",
                        self.lines_before + number
                    ),
                ));
            }
            let header = self.lines.front().is_some_and(|line| {
                let fields: Vec<&[u8]> = line.fields.iter().map(|r| &self.block[r.clone()]).collect();
                super::is_pair_header(&fields)
                    || line.fields.iter().zip(PAIR_COLUMNS).all(|(r, name)| &self.block[r.clone()] == name.as_bytes())
            });
            if !header {
                return Ok(());
            }
            self.lines.pop_front();
        }
    }

    fn line_problem(&self, problem: &LineProblem) -> Error {
        match problem {
            LineProblem::TooLong => Error::file(
                &self.place,
                format!("line {} longer than 1 GiB: not a real pair file?", self.lines_before + self.block_lines + 1),
            ),
            LineProblem::Columns { number, found, id } => Error::record(
                &self.place,
                self.counter.pairs as usize,
                &self.block[id.clone()],
                format!(
                    "line {}: expected 4 tab-separated columns ({}), found {found}{}",
                    self.lines_before + number,
                    PAIR_COLUMNS.join(", "),
                    if *found == 2 { IDS_ONLY_HINT } else { "" }
                ),
            ),
        }
    }
}

impl Source for TsvPairs {
    fn carried(&self) -> Carried {
        no_columns()
    }

    fn next_pairs(&mut self, batch: &mut PairBatch) -> Result<bool> {
        self.fill_inner(batch)
    }
}

impl TsvPairs {
    fn fill_inner(&mut self, batch: &mut PairBatch) -> Result<bool> {
        batch.first = self.counter.pairs;
        loop {
            if self.lines.is_empty() {
                if let Some(problem) = self.problem.take() {
                    return Err(self.line_problem(&problem));
                }
                if !batch.is_empty() && batch.seqs.residues.len() >= self.limits.residues {
                    return Ok(true);
                }
                // A batch under way goes out when the input pauses.
                match self.next_block(batch.is_empty())? {
                    Got::Block => continue,
                    Got::Idle => return Ok(true),
                    Got::End if batch.is_empty() => return self.counter.end(&self.place),
                    Got::End => return Ok(true),
                }
            }
            // The lines that fit the batch's limits (at least one).
            let room = self.limits.pairs.saturating_sub(batch.len());
            let budget = self.limits.residues.saturating_sub(batch.seqs.residues.len());
            let mut take = 0;
            let mut size = 0;
            for line in self.lines.iter().take(room) {
                size += line.fields[1].len() + line.fields[3].len();
                if take > 0 && size > budget {
                    break;
                }
                take += 1;
            }
            if take == 0 {
                return Ok(true);
            }
            let lines = self.lines.make_contiguous();
            let (block, place, before) = (&self.block, &self.place, self.lines_before);
            let field = |i: usize| {
                let f = &lines[i].fields;
                Ok([&block[f[0].clone()], &block[f[1].clone()], &block[f[2].clone()], &block[f[3].clone()]])
            };
            let context = |i: usize| format!("line {}: ", before + lines[i].number);
            append_pairs(batch, take, field, place, self.counter.pairs, context, self.alphabet)?;
            self.counter.pairs += take as u64;
            self.lines.drain(..take);
            if batch.len() >= self.limits.pairs || batch.seqs.residues.len() >= self.limits.residues {
                return Ok(true);
            }
        }
    }
}

impl Cutter {
    /// Cuts blocks and sends them, split into lines, until the input ends or fails, or the
    /// parser has gone.
    fn run(mut self, out: SyncSender<Cut>) {
        loop {
            let cut = match self.next_block() {
                Ok(Next::Block(block)) => {
                    let (lines, problem, count) = split_lines(&block);
                    Cut::Block { block, lines, problem, count }
                }
                Ok(Next::Idle) => Cut::Idle,
                Ok(Next::TooLong) => Cut::TooLong,
                Ok(Next::End) => Cut::End,
                Err(e) => Cut::Failed(e),
            };
            let last = matches!(cut, Cut::End | Cut::Failed(_) | Cut::TooLong);
            if out.send(cut).is_err() || last {
                return;
            }
        }
    }

    /// Cuts the next block of whole lines from what the reading thread sent: once `BLOCK`
    /// bytes are in, or the input pauses or ends.
    fn next_block(&mut self) -> Result<Next> {
        let mut want = BLOCK;
        loop {
            let paused = self.ended || self.take_in(want)?;
            let whole = match memchr::memrchr(b'\n', &self.pending) {
                _ if self.ended => self.pending.len(),
                Some(i) => i + 1,
                None => 0,
            };
            if whole > 0 {
                // The block keeps the big buffer; the unfinished line moves to a used one
                // (buffers are reused: no fresh pages, no regrowth).
                let mut next = self.used.try_recv().unwrap_or_default();
                next.clear();
                next.reserve(BLOCK + CHUNK);
                next.extend_from_slice(&self.pending[whole..]);
                let mut block = std::mem::replace(&mut self.pending, next);
                block.truncate(whole);
                return Ok(Next::Block(block));
            }
            if self.ended {
                return Ok(Next::End);
            }
            if self.pending.len() > MAX_LINE {
                return Ok(Next::TooLong);
            }
            if paused {
                return Ok(Next::Idle);
            }
            // One line longer than a block: take in more.
            want = want.max((2 * self.pending.len()).min(MAX_LINE + 1));
        }
    }

    /// Takes in what the reading thread sends until `want` bytes are pending; true when the
    /// input paused (or ended) first.
    fn take_in(&mut self, want: usize) -> Result<bool> {
        self.pending.reserve((want + CHUNK).saturating_sub(self.pending.len()));
        let (chunks, recycle) = match &mut self.feed {
            Feed::Chunks { chunks, recycle } => (chunks, recycle),
            Feed::File { file, at } => {
                let n = read_at_into(&self.place, file, *at, &mut self.pending, want)?;
                *at += n as u64;
                crate::progress::count_input(n as u64);
                // Short of `want`: the file has ended.
                self.ended = self.pending.len() < want;
                return Ok(self.ended);
            }
        };
        while self.pending.len() < want {
            match chunks.recv_timeout(PAUSE) {
                Ok(Chunk::Data(buf, n)) => {
                    self.pending.extend_from_slice(&buf[..n]);
                    let _ = recycle.try_send(buf);
                }
                Ok(Chunk::Failed(e)) => return Err(read_error(&self.place, e)),
                Err(RecvTimeoutError::Timeout) => return Ok(true),
                Err(RecvTimeoutError::Disconnected) => {
                    self.ended = true;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// Appends bytes of `file` from offset `at` to `buf` until it holds `want` bytes or the file
/// ends, in pieces read at their offsets on the pool (the buffer grown in parallel too);
/// returns the bytes appended.
fn read_at_into(place: &Where, file: &std::fs::File, at: u64, buf: &mut Vec<u8>, want: usize) -> Result<usize> {
    let have = buf.len();
    if want <= have {
        return Ok(0);
    }
    buf.par_extend(rayon::iter::repeat_n(0u8, want - have));
    let got: Vec<std::io::Result<usize>> = buf[have..]
        .par_chunks_mut(PIECE)
        .enumerate()
        .map(|(k, piece)| crate::io::input::read_full_at(file, piece, at + (k * PIECE) as u64))
        .collect();
    // The bytes read are the pieces up to the first short one (the end of the file).
    let mut n = 0;
    for (k, g) in got.into_iter().enumerate() {
        let g = g.map_err(|e| read_error(place, e))?;
        n += g;
        if g < PIECE.min(want - have - k * PIECE) {
            break;
        }
    }
    buf.truncate(have + n);
    Ok(n)
}

/// The reading thread: the input (inflated when gzip) in chunks of up to `CHUNK` bytes,
/// in buffers recycled by the parser; it ends at the end of the input or when the parser
/// has gone.
pub(super) fn read_chunks(mut input: Input, tx: SyncSender<Chunk>, recycled: Receiver<Vec<u8>>) {
    loop {
        let mut buf = recycled.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
        let n = match input.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Chunk::Failed(e));
                return;
            }
        };
        if tx.send(Chunk::Data(buf, n)).is_err() {
            return;
        }
    }
}

/// Splits a block of whole lines into pair lines, in parallel pieces; stops at the first
/// line that does not hold four fields. Blank lines are skipped; a final `\r` is dropped.
/// Also returns the block's line count (up to the problem, if any).
fn split_lines(block: &[u8]) -> (Vec<Line>, Option<LineProblem>, usize) {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < block.len() {
        let from = (start + PIECE).min(block.len());
        let end = memchr::memchr(b'\n', &block[from..]).map_or(block.len(), |i| from + i + 1);
        pieces.push(start..end);
        start = end;
    }
    let parsed: Vec<(Vec<Line>, Option<LineProblem>, usize)> =
        pieces.par_iter().map(|r| split_piece(block, r.clone())).collect();
    let mut lines = Vec::new();
    let mut before = 0;
    for (mut piece, problem, count) in parsed {
        for line in &mut piece {
            line.number += before;
        }
        lines.append(&mut piece);
        if let Some(mut problem) = problem {
            if let LineProblem::Columns { number, .. } = &mut problem {
                *number += before;
            }
            return (lines, Some(problem), before + count);
        }
        before += count;
    }
    (lines, None, before)
}

/// One piece: its pair lines, the problem that stopped it, and its line count.
fn split_piece(block: &[u8], range: Range<usize>) -> (Vec<Line>, Option<LineProblem>, usize) {
    let mut lines = Vec::new();
    let mut number = 0;
    let mut start = range.start;
    while start < range.end {
        let nl = memchr::memchr(b'\n', &block[start..range.end]).map_or(range.end, |i| start + i);
        number += 1;
        let mut end = nl;
        if end > start && block[end - 1] == b'\r' {
            end -= 1;
        }
        let text = &block[start..end];
        if !text.iter().all(u8::is_ascii_whitespace) {
            let mut fields: [Range<usize>; 4] = Default::default();
            let mut found = 0;
            let mut from = start;
            for tab in memchr::memchr_iter(b'\t', text).map(|i| start + i).chain([end]) {
                if found < 4 {
                    fields[found] = from..tab;
                }
                found += 1;
                from = tab + 1;
            }
            // A header line with a trailing tab (spreadsheet exports): its four names count.
            let header_with_tab = found == 5
                && text.ends_with(b"\t")
                && super::is_pair_header(&fields.iter().map(|r| &block[r.clone()]).collect::<Vec<_>>());
            if found != 4 && !header_with_tab {
                let id = fields[0].clone();
                return (lines, Some(LineProblem::Columns { number, found, id }), number);
            }
            lines.push(Line { fields, number });
        }
        start = nl + 1;
    }
    (lines, None, number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::input::{read_line_bounded, Line as Read};
    use proptest::prelude::*;
    use std::io::Cursor;

    /// The pair-by-pair reader these blocks must agree with: each line read, split and
    /// checked in turn (swarrow's reader before block parsing).
    fn sequential(text: &[u8]) -> std::result::Result<Vec<[String; 4]>, String> {
        let place = Where::Path("p.tsv".into());
        let mut input = Cursor::new(text);
        let (mut buf, mut line, mut out) = (Vec::new(), 0, Vec::<[String; 4]>::new());
        loop {
            if read_line_bounded(&mut input, &mut buf, MAX_LINE).unwrap() == Read::End {
                return Ok(out);
            }
            line += 1;
            let text = buf.strip_suffix(b"\r").unwrap_or(&buf);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let fields: Vec<&[u8]> = text.split(|&b| b == b'\t').collect();
            if out.is_empty() && super::super::is_pair_header(&fields) {
                continue;
            }
            if out.is_empty() && text.starts_with(b">") {
                return Err(format!("p.tsv: line {line}: looks like FASTA, not a pair file: give query and target FASTA files as two inputs"));
            }
            let n = out.len();
            let id = |k: usize| fields[k].to_vec();
            // Messages through `Error::record`, as every reader's (its id escaping included).
            if fields.len() != 4 {
                let hint = if fields.len() == 2 { IDS_ONLY_HINT } else { "" };
                let problem = format!(
                    "line {line}: expected 4 tab-separated columns (query_id, query_seq, target_id, target_seq), found {}{hint}",
                    fields.len()
                );
                return Err(Error::record(&place, n, id(0), problem).to_string());
            }
            let record = |who: Vec<u8>, problem: String| {
                Error::record(&place, n, who, format!("line {line}: {problem}")).to_string()
            };
            if fields[0].is_empty() {
                return Err(record(Vec::new(), "query_id is empty".into()));
            }
            if fields[2].is_empty() {
                return Err(record(id(0), "target_id is empty".into()));
            }
            for (col, k) in [("query_id", 0), ("target_id", 2)] {
                if fields[k].iter().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
                    return Err(record(id(0), format!("{col} contains a tab or line break")));
                }
            }
            for (who, col, k) in [(id(0), "query_seq", 1), (id(2), "target_seq", 3)] {
                if fields[k].is_empty() {
                    return Err(record(who, format!("{col} is empty")));
                }
                if let Err(i) = Alphabet::Protein.encode(fields[k]) {
                    let b = crate::scoring::alphabet::describe_residue(Alphabet::Protein, fields[k][i]);
                    return Err(record(who, format!("{col}: {b} at position {}", i + 1)));
                }
            }
            let dec = |k: usize| {
                String::from_utf8(Alphabet::Protein.decode(&Alphabet::Protein.encode(fields[k]).unwrap())).unwrap()
            };
            let text = |k: usize| crate::error::id_text(fields[k]).into_owned();
            out.push([text(0), dec(1), text(2), dec(3)]);
        }
    }

    fn blocks(text: &[u8], limits: BatchLimits) -> std::result::Result<Vec<[String; 4]>, String> {
        let place = Where::Path("p.tsv".into());
        let input: Input = Box::new(Cursor::new(text.to_vec()));
        drain(TsvPairs::new(place, input, Alphabet::Protein, limits), limits)
    }

    /// As [`blocks`], from a regular file read at offsets (the `Feed::File` path).
    fn file_blocks(text: &[u8], limits: BatchLimits) -> std::result::Result<Vec<[String; 4]>, String> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, text).unwrap();
        let file = std::fs::File::open(f.path()).unwrap();
        let reader = TsvPairs::from_file(Where::Path("p.tsv".into()), file, Alphabet::Protein, limits).unwrap();
        drain(reader, limits)
    }

    fn drain(reader: TsvPairs, limits: BatchLimits) -> std::result::Result<Vec<[String; 4]>, String> {
        let mut reader = super::super::fused(reader);
        let mut out = Vec::new();
        let mut batch = PairBatch::default();
        loop {
            batch.clear();
            match reader.fill(&mut batch) {
                Ok(false) => return Ok(out),
                Ok(true) => {}
                Err(e) => return Err(e.to_string()),
            }
            assert!(batch.len() <= limits.pairs && batch.len() > 0);
            assert_eq!(batch.first as usize, out.len());
            for i in 0..batch.len() {
                let (q, t) = batch.seqs.view().pair(i);
                let dec = |s: &[u8]| String::from_utf8(Alphabet::Protein.decode(s)).unwrap();
                out.push([batch.query_ids.get(i).into(), dec(q), batch.target_ids.get(i).into(), dec(t)]);
            }
        }
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        let field = prop::sample::select(vec!["", "q1", "MKV", "ww", "A-C", "x y", ">a", "K\r", "query_id"]);
        let line = prop::collection::vec(field, 0..6).prop_map(|f| f.join("\t"));
        let header = prop::bool::ANY.prop_map(|h| if h { "query_id\tquery_seq\ttarget_id\ttarget_seq\n" } else { "" });
        let good = prop::sample::select(vec!["a\tMKV\tb\tWW", "c\tA\td\tK", "e\tmk\tf\tw", ""]);
        let body = prop::collection::vec(prop_oneof![4 => good.prop_map(String::from), 1 => line], 0..30);
        (header, body, prop::bool::ANY).prop_map(|(h, b, nl)| {
            let mut t = format!("{h}{}", b.join("\n"));
            if nl {
                t.push('\n');
            }
            t.into_bytes()
        })
    }

    proptest! {
        #[test]
        fn blocks_give_what_the_line_by_line_reader_gives(t in text(), pairs in 1usize..7, residues in 1usize..20) {
            let want = sequential(&t);
            prop_assert_eq!(blocks(&t, BatchLimits { pairs, residues }), want.clone());
            prop_assert_eq!(file_blocks(&t, BatchLimits { pairs, residues }), want);
        }
    }

    #[test]
    fn lines_split_across_pieces_keep_their_numbers() {
        let mut text = Vec::new();
        for i in 0..100_000 {
            text.extend_from_slice(format!("q{i}\tMKVLA\tt{i}\tWWAK\n").as_bytes());
        }
        text.extend_from_slice(b"bad\tMK1\tt\tA\n");
        let limits = BatchLimits { pairs: 30_000, residues: 1 << 30 };
        let err = blocks(&text, limits).unwrap_err();
        assert_eq!(err, "p.tsv: record 100001 (bad): line 100001: query_seq: invalid residue '1' at position 3");
        assert_eq!(sequential(&text).unwrap_err(), err);
        assert_eq!(file_blocks(&text, limits).unwrap_err(), err);
    }

    /// A file of several read pieces (lines across their edges), with a byte order mark and
    /// without a final newline, read at offsets: the pairs the line-by-line reader gives.
    #[test]
    fn a_file_read_at_offsets_gives_every_line_once() {
        let mut text = b"\xef\xbb\xbfquery_id\tquery_seq\ttarget_id\ttarget_seq\n".to_vec();
        let mut i = 0;
        while text.len() < 3 * PIECE + 1000 {
            text.extend_from_slice(format!("q{i}\t{}\tt{i}\tWWAK\n", "MKVLA".repeat(1 + i % 37)).as_bytes());
            i += 1;
        }
        text.extend_from_slice(b"last\tMK\tt\tA");
        let limits = BatchLimits { pairs: 7_001, residues: 1 << 30 };
        let got = file_blocks(&text, limits).unwrap();
        let want = sequential(&text[3..]).unwrap();
        assert_eq!(got.len(), i + 1);
        assert_eq!(got, want);
    }
}

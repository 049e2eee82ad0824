//! FASTA parsed in blocks on the thread pool, for inputs big enough that one parsing thread
//! would starve the aligner (a GPU aligns pairs faster than one core parses them).
//!
//! The input is read in large blocks cut just before a line that starts with '>', so no
//! record straddles two blocks; a block is cut the same way into pieces, and every piece is
//! parsed by the ordinary `FastaReader`. Records come out in input order, and a problem is
//! reported exactly as the sequential reader reports it: the piece that holds it is parsed
//! again knowing how many records and lines came before it. A record too big for a block
//! (a chromosome, or something that is not FASTA) switches the rest of the input to the
//! sequential reader, with its line-length guard. Records come out packed, a piece's worth
//! at a time ([`Packed`]: shared buffers, no allocation per record), or one by one.
//!
//! FASTQ (a block whose first record has an '@' header) is cut before a record's header
//! found by reading its records from the block's start as the reader does
//! ([`scan_records`]: sequence lines to the '+' line, then qualities until as many as the
//! residues): in multi-line FASTQ a quality line may start with '@' and the line two below
//! it with '+', so no line seen alone can be told to start a record.

use std::collections::VecDeque;
use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::error::{Error, Result, Where};
use crate::io::fasta::{FastaReader, Packed};
use crate::io::input::{open_input, read_error, Input};
use crate::scoring::Alphabet;
use crate::seq::Record;

/// Bytes read per block; pieces are at least `MIN_PIECE`.
const BLOCK: usize = 16 << 20;
const MIN_PIECE: usize = 512 << 10;
/// A record that has not ended after this many bytes goes to the sequential reader.
const BIG_RECORD: usize = 256 << 20;

/// Iterator over the records of one FASTA input, like `FastaReader` (same records, same
/// errors, stops after the first), parsed ahead one block at a time.
pub struct BlockFastaReader {
    place: Where,
    alphabet: Alphabet,
    /// The input, until its reading thread starts (at the first block).
    input: Option<Input>,
    /// The blocks cut by the reading thread, and where their buffers go back once parsed
    /// (their pages stay: a fresh 16 MB block each time faulted in every page, and freeing
    /// it unmapped them); `None` before the thread starts and once the input has ended.
    cuts: Option<(Receiver<Cut>, SyncSender<Filled>)>,
    /// Parsed pieces (never empty) and the error that ends the input, in order.
    ready: VecDeque<Result<Packed>>,
    /// Parts handed back for reuse.
    spares: Spares,
    /// Records and lines in the blocks parsed so far.
    parsed_records: usize,
    parsed_lines: usize,
    /// Records handed out.
    count: usize,
    /// The part being handed out record by record (the `Iterator`), and its next record.
    current: Packed,
    next: usize,
    sequential: Option<FastaReader<Input>>,
    block: usize,
    min_piece: usize,
    big_record: usize,
    done: bool,
    /// An input without records ends quietly instead of with "no sequences".
    empty_ok: bool,
    /// Keep FASTQ qualities ([`Packed::quals`]).
    keep_quals: bool,
}

impl BlockFastaReader {
    /// Opens `path` (`-` = stdin; plain or gzip).
    pub fn open(path: &Path, alphabet: Alphabet) -> Result<BlockFastaReader> {
        let (place, input) = open_input(path)?;
        Ok(BlockFastaReader::new(place, input, alphabet))
    }

    pub fn new(place: Where, input: Input, alphabet: Alphabet) -> BlockFastaReader {
        BlockFastaReader {
            place,
            alphabet,
            input: Some(input),
            cuts: None,
            ready: VecDeque::new(),
            spares: Spares::default(),
            parsed_records: 0,
            parsed_lines: 0,
            count: 0,
            current: Packed::default(),
            next: 0,
            sequential: None,
            block: BLOCK,
            min_piece: MIN_PIECE,
            big_record: BIG_RECORD,
            done: false,
            empty_ok: false,
            keep_quals: false,
        }
    }

    /// Keeps FASTQ qualities, handed out in [`Packed::quals`].
    pub fn keep_quals(mut self, keep: bool) -> Self {
        self.keep_quals = keep;
        self
    }

    /// An input without records is not an error: it simply ends (an empty shard of a
    /// workflow has no pairs and gets an empty result).
    pub fn allow_empty(mut self) -> Self {
        self.empty_ok = true;
        self
    }

    /// Small blocks and pieces, so tests cross every boundary.
    #[cfg(test)]
    pub(crate) fn with_sizes(mut self, block: usize, min_piece: usize) -> Self {
        self.block = block;
        self.min_piece = min_piece;
        self.big_record = 8 * block;
        self
    }

    pub fn place(&self) -> &Where {
        &self.place
    }

    /// Records handed out so far (those of the parts handed out, with [`Self::next_part`]).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Where parts handed out go back once used, to be parsed into again.
    pub fn spares(&self) -> Spares {
        self.spares.clone()
    }

    /// Parses the next block into `ready`; false at the end of the input. The blocks are
    /// read and cut on a thread of their own (started here, at the first), so the input is
    /// read while the block before is parsed: read then parsed on one thread, a pipe went
    /// unread for every parse (two FASTA pipes came in slower than one TSV pipe of both).
    fn refill(&mut self) -> Result<bool> {
        if let Some(input) = self.input.take() {
            let (tx, blocks) = sync_channel(1);
            let (recycle, recycled) = sync_channel(2);
            let (block, big_record) = (self.block, self.big_record);
            crate::threads::spawn("sw-fasta-cut", move || cut_blocks(input, block, big_record, tx, recycled));
            self.cuts = Some((blocks, recycle));
        }
        let Some((blocks, _)) = &self.cuts else { return Ok(false) };
        // A thread gone without its end marker panicked: no quiet end of the input then.
        let cut =
            blocks.recv().map_err(|_| Error::Internal(format!("{}: the FASTA reading thread stopped", self.place)));
        match cut? {
            Cut::Block(block) => {
                self.parse_block(block.data());
                if let Some((_, recycle)) = &self.cuts {
                    let _ = recycle.try_send(block);
                }
                Ok(true)
            }
            Cut::Sequential(rest) => {
                self.cuts = None;
                let reader =
                    FastaReader::piece(self.place.clone(), rest, self.alphabet, self.parsed_records, self.parsed_lines)
                        .keep_quals(self.keep_quals);
                self.sequential = Some(reader);
                Ok(true)
            }
            Cut::Failed(e) => {
                self.cuts = None;
                Err(read_error(&self.place, e))
            }
            Cut::End => {
                self.cuts = None;
                Ok(false)
            }
        }
    }

    /// Parses a block of whole records, in pieces on the thread pool.
    fn parse_block(&mut self, block: &[u8]) {
        let pieces = split_pieces(block, self.min_piece.max(block.len() / (4 * rayon::current_num_threads())));
        let (place, alphabet) = (&self.place, (self.alphabet, self.keep_quals));
        let mut outs = self.spares.take(pieces.len());
        outs.resize_with(pieces.len(), Packed::default);
        let parsed: Vec<Piece> =
            pieces.par_iter().zip(outs).map(|(p, out)| Piece::parse(place, alphabet, p, 0, 0, out)).collect();
        for (bytes, piece) in pieces.iter().zip(parsed) {
            let piece = if piece.failed {
                // Again, numbered as the whole input: the message must name the right record.
                Piece::parse(place, alphabet, bytes, self.parsed_records, self.parsed_lines, Packed::default())
            } else {
                piece
            };
            self.parsed_records += piece.records;
            self.parsed_lines += piece.lines;
            if !piece.packed.is_empty() {
                self.ready.push_back(Ok(piece.packed));
            }
            if let Some(e) = piece.error {
                self.ready.push_back(Err(e));
                // Nothing after the error is read.
                self.cuts = None;
                return;
            }
        }
    }
}

/// What the reading thread of a [`BlockFastaReader`] sends, in input order.
enum Cut {
    /// Whole records (the last block: the rest of the input).
    Block(Filled),
    /// A record that has not ended after `big_record` bytes: the rest of the input from
    /// its start, for the sequential reader (its 1 GiB line guard applies).
    Sequential(Input),
    Failed(std::io::Error),
    End,
}

/// Reads `input` into blocks of about `block` bytes cut before the last line that starts
/// with '>' (that record may go on: it starts the next block) and sends them in order;
/// the buffers of parsed blocks come back through `recycled`.
fn cut_blocks(mut input: Input, mut block: usize, big_record: usize, tx: SyncSender<Cut>, recycled: Receiver<Filled>) {
    // Bytes read but not sent yet: the start of a record that may continue.
    let mut carry = Filled::default();
    loop {
        let mut eof = false;
        let cut = loop {
            // Read until the carry holds a block (or the input ends).
            while carry.len < block && !eof {
                match carry.read_from(&mut input, block) {
                    Ok(got) => eof = got == 0,
                    Err(e) => {
                        let _ = tx.send(Cut::Failed(e));
                        return;
                    }
                }
            }
            if eof {
                break carry.len;
            }
            match last_record_start(carry.data()) {
                Some(i) => break i,
                _ if carry.len >= big_record => {
                    let rest: Input = Box::new(Cursor::new(carry.into_vec()).chain(input));
                    let _ = tx.send(Cut::Sequential(rest));
                    return;
                }
                _ => block = carry.len * 2,
            }
        };
        let mut rest = recycled.try_recv().unwrap_or_default();
        rest.set(&carry.data()[cut..]);
        carry.len = cut;
        let full = std::mem::replace(&mut carry, rest);
        if full.len > 0 && tx.send(Cut::Block(full)).is_err() {
            return; // the reader stopped (an error in a block before)
        }
        if eof {
            let _ = tx.send(Cut::End);
            return;
        }
    }
}

/// Bytes read ahead, `bytes[..len]`, with room after them that is already initialized: reads
/// go straight into it, bypassing the input's own buffer (a copy of every byte fewer), and a
/// recycled buffer is zeroed once, not at every block.
#[derive(Default)]
struct Filled {
    bytes: Vec<u8>,
    len: usize,
}

impl Filled {
    fn data(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Makes `data` the contents.
    fn set(&mut self, data: &[u8]) {
        self.len = 0;
        self.room(data.len());
        self.bytes[..data.len()].copy_from_slice(data);
        self.len = data.len();
    }

    /// Room for `total` bytes in all.
    fn room(&mut self, total: usize) {
        if self.bytes.len() < total {
            self.bytes.resize(total, 0);
        }
    }

    /// Reads more of `input`, up to `want` bytes in all (one byte at least); returns how many
    /// (0 at the end).
    fn read_from(&mut self, input: &mut Input, want: usize) -> std::io::Result<usize> {
        let want = want.max(self.len + 1);
        self.room(want);
        loop {
            match input.read(&mut self.bytes[self.len..want]) {
                Ok(n) => {
                    self.len += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn into_vec(mut self) -> Vec<u8> {
        self.bytes.truncate(self.len);
        self.bytes
    }
}

/// Whether `data` (which starts at a record, or at the input's start) holds FASTQ: its
/// first byte that is not whitespace (nor a byte order mark) is '@'.
fn is_fastq(data: &[u8]) -> bool {
    let data = data.strip_prefix(crate::io::input::UTF8_BOM).unwrap_or(data);
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'@')
}

/// The line of `data` that starts at `at` (without its line break and a CR), and where the
/// next one starts; `None` where the line does not end inside `data`.
fn line_at(data: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let end = at + memchr::memchr(b'\n', data.get(at..)?)?;
    let line = &data[at..end];
    Some((line.strip_suffix(b"\r").unwrap_or(line), end + 1))
}

/// How a scan of records ([`scan_records`]) ended.
#[derive(Debug, PartialEq, Eq)]
enum Scan {
    /// At the end of the data (or where asked to stop).
    End,
    /// At a record the reader fails on: no header where one is due, a header before a FASTQ
    /// record's '+' line, more qualities than residues.
    Malformed,
}

/// Scans the records of `data` (which starts at a record, or at the input's start) as
/// `FastaReader` reads them, calling `found` with the first byte of each record's header
/// line, in order, while it returns true. A FASTQ record's qualities are counted line by
/// line until they are as many as its residues, so a quality line that starts with '@' (in
/// a wrapped, multi-line record as in any other) is never taken for a header: the only
/// safe cut of multi-line FASTQ is one found reading from a known record start.
fn scan_records(data: &[u8], mut found: impl FnMut(usize) -> bool) -> Scan {
    let mut at = if data.starts_with(crate::io::input::UTF8_BOM) { 3 } else { 0 };
    loop {
        // The header: blank lines before it are skipped, as the reader skips them.
        let header = loop {
            let Some((line, next)) = line_at(data, at) else { return Scan::End };
            if !line.iter().all(u8::is_ascii_whitespace) {
                break line;
            }
            at = next;
        };
        if header[0] != b'@' && header[0] != b'>' {
            return Scan::Malformed;
        }
        if !found(at) {
            return Scan::End;
        }
        let Some((_, next)) = line_at(data, at) else { return Scan::End };
        at = next;
        if header[0] == b'>' {
            // FASTA: sequence lines up to one that starts with '>' or '@'.
            while !matches!(data.get(at), Some(b'>' | b'@')) {
                let Some((_, next)) = line_at(data, at) else { return Scan::End };
                at = next;
            }
            continue;
        }
        let mut residues = 0;
        loop {
            let Some((line, next)) = line_at(data, at) else { return Scan::End };
            at = next;
            match line.first() {
                Some(b'+') => break,
                Some(b'@' | b'>') => return Scan::Malformed,
                _ => residues += line.len(),
            }
        }
        let mut quals = 0;
        while quals < residues {
            let Some((line, next)) = line_at(data, at) else { return Scan::End };
            at = next;
            quals += line.len();
        }
        if quals > residues {
            return Scan::Malformed;
        }
    }
}

/// Where the last record that may go on starts in `data` (a block being cut): the last
/// line that starts with '>' in FASTA, the last record [`scan_records`] finds in FASTQ. A
/// FASTQ record the reader fails on ends the block with the data (the error ends the input).
fn last_record_start(data: &[u8]) -> Option<usize> {
    if is_fastq(data) {
        let mut last = 0;
        match scan_records(data, |at| {
            last = at;
            true
        }) {
            Scan::Malformed => Some(data.len()),
            Scan::End => (last > 0).then_some(last),
        }
    } else {
        memchr::memmem::rfind(data, b"\n>").map(|i| i + 1)
    }
}

/// Cuts `block` into pieces of at least `size` bytes, each (but the first) starting at a
/// record: a line that starts with '>' (FASTA), a record [`scan_records`] finds (FASTQ).
fn split_pieces(block: &[u8], size: usize) -> Vec<&[u8]> {
    let size = size.max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    if is_fastq(block) {
        scan_records(block, |at| {
            if at >= start + size {
                pieces.push(&block[start..at]);
                start = at;
            }
            true
        });
    } else {
        while start + size < block.len() {
            match memchr::memmem::find(&block[start + size..], b"\n>") {
                Some(i) => {
                    let end = start + size + i + 1;
                    pieces.push(&block[start..end]);
                    start = end;
                }
                None => break,
            }
        }
    }
    if start < block.len() {
        pieces.push(&block[start..]);
    }
    pieces
}

/// What one piece parsed to: its records, and the error that stopped it.
struct Piece {
    packed: Packed,
    error: Option<Error>,
    records: usize,
    lines: usize,
    failed: bool,
}

impl Piece {
    /// Parses `bytes` into `packed` (emptied first, its buffers reused).
    fn parse(
        place: &Where,
        (alphabet, keep_quals): (Alphabet, bool),
        bytes: &[u8],
        records: usize,
        lines: usize,
        mut packed: Packed,
    ) -> Piece {
        let mut reader = FastaReader::piece(place.clone(), bytes, alphabet, records, lines).keep_quals(keep_quals);
        packed.reuse_for(bytes.len());
        let mut error = None;
        while let Some(item) = reader.next_into(&mut packed) {
            if let Err(e) = item {
                error = Some(e);
                break;
            }
        }
        let (records, lines) = (FastaReader::count(&reader) - records, reader.lines() - lines);
        Piece { packed, failed: error.is_some(), error, records, lines }
    }
}

impl BlockFastaReader {
    /// The next run of records, in order; the error that ends the input; `None` at its end
    /// (with the error "no sequences" first for an input without records, unless allowed).
    pub fn next_part(&mut self) -> Option<Result<Packed>> {
        if self.done {
            return None;
        }
        loop {
            if let Some(reader) = &mut self.sequential {
                // Records bigger than a block: one a part.
                let mut packed = Packed::default();
                return match reader.next_into(&mut packed) {
                    Some(Ok(())) => self.hand_out(Some(Ok(packed))),
                    other => self.hand_out(other.map(|r| r.map(|()| packed))),
                };
            }
            if let Some(item) = self.ready.pop_front() {
                return self.hand_out(Some(item));
            }
            match self.refill() {
                Ok(true) => continue,
                Ok(false) => return self.hand_out(None),
                Err(e) => return self.hand_out(Some(Err(e))),
            }
        }
    }
}

impl Iterator for BlockFastaReader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if self.next < self.current.len() {
                self.next += 1;
                return Some(Ok(self.current.record(self.next - 1)));
            }
            match self.next_part()? {
                Ok(part) => (self.current, self.next) = (part, 0),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl BlockFastaReader {
    /// Counts what goes out, stops after an error, and reports an input without records.
    fn hand_out(&mut self, item: Option<Result<Packed>>) -> Option<Result<Packed>> {
        match item {
            Some(Ok(part)) => {
                self.count += part.len();
                Some(Ok(part))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            None => {
                self.done = true;
                (self.count == 0 && !self.empty_ok).then(|| Err(Error::file(&self.place, "no sequences")))
            }
        }
    }
}

/// Used parts kept for reuse at most, per reader: a part's buffers are as big as its piece,
/// and fresh ones cost as much as parsing into them (every page faulted in, then unmapped).
const KEEP_SPARES: usize = 64;

/// Where used parts go back to the reader that parsed them (shared with its consumer).
#[derive(Clone, Default)]
pub struct Spares(Arc<Mutex<Vec<Packed>>>);

impl Spares {
    /// Hands `part` back when the caller held it last.
    pub fn put(&self, part: Arc<Packed>) {
        if let (Ok(part), Ok(mut kept)) = (Arc::try_unwrap(part), self.0.lock()) {
            if kept.len() < KEEP_SPARES {
                kept.push(part);
            }
        }
    }

    /// Up to `n` parts to parse into.
    fn take(&self, n: usize) -> Vec<Packed> {
        match self.0.lock() {
            Ok(mut kept) => {
                let from = kept.len().saturating_sub(n);
                kept.split_off(from)
            }
            Err(_) => Vec::new(),
        }
    }
}

/// Parts queued at most by an [`AheadFastaReader`]: a few blocks' worth of pieces.
const AHEAD_PARTS: usize = 128;

/// A [`BlockFastaReader`] run on its own thread, ahead of its caller: reading and splitting
/// one input then overlap with parsing the other input of a pair and with the caller's
/// work (a block reader alone reads, then parses, then hands out, one after the other).
/// Same records and errors, in order, in the same parts.
pub struct AheadFastaReader {
    place: Where,
    queue: std::sync::mpsc::Receiver<Result<Packed>>,
    current: Packed,
    next: usize,
    count: usize,
    done: bool,
}

impl AheadFastaReader {
    pub fn new(reader: BlockFastaReader) -> AheadFastaReader {
        let place = reader.place.clone();
        let (tx, queue) = std::sync::mpsc::sync_channel(AHEAD_PARTS);
        crate::threads::spawn("sw-fasta-parse", move || {
            let mut reader = reader;
            while let Some(part) = reader.next_part() {
                let last = part.is_err();
                if tx.send(part).is_err() || last {
                    return;
                }
            }
        });
        AheadFastaReader { place, queue, current: Packed::default(), next: 0, count: 0, done: false }
    }

    pub fn place(&self) -> &Where {
        &self.place
    }

    /// Records handed out so far (those of the parts handed out, with [`Self::next_part`]).
    pub fn count(&self) -> usize {
        self.count
    }

    /// [`BlockFastaReader::next_part`], from the reading thread.
    pub fn next_part(&mut self) -> Option<Result<Packed>> {
        if self.done {
            return None;
        }
        match self.queue.recv() {
            Ok(Ok(part)) => {
                self.count += part.len();
                Some(Ok(part))
            }
            Ok(Err(e)) => {
                self.done = true;
                Some(Err(e))
            }
            Err(_) => {
                self.done = true;
                None
            }
        }
    }
}

impl Iterator for AheadFastaReader {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        loop {
            if self.next < self.current.len() {
                self.next += 1;
                return Some(Ok(self.current.record(self.next - 1)));
            }
            match self.next_part()? {
                Ok(part) => (self.current, self.next) = (part, 0),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn place() -> Where {
        Where::Path("in.fa".into())
    }

    fn sequential(text: &[u8]) -> Vec<std::result::Result<Record, String>> {
        FastaReader::new(place(), text, Alphabet::Protein).map(|r| r.map_err(|e| e.to_string())).collect()
    }

    fn blocks(text: &[u8], block: usize, piece: usize) -> Vec<std::result::Result<Record, String>> {
        let input: Input = Box::new(Cursor::new(text.to_vec()));
        BlockFastaReader::new(place(), input, Alphabet::Protein)
            .with_sizes(block, piece)
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    /// FASTA-like text from a small alphabet of lines, errors included.
    fn text() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            8 => "[ACDEFGHIKLMNPQRSTVWY]{1,30}".prop_map(String::from),
            4 => "[a-z0-9_]{1,6}( [a-z ]{0,8})?".prop_map(|s| format!(">{}", s)),
            1 => Just(String::new()),
            1 => Just(">".to_string()),
            1 => Just("AC1GT".to_string()),
            1 => Just("AC GT\r".to_string()),
        ];
        (prop::collection::vec(line, 0..40), any::<bool>()).prop_map(|(lines, last_newline)| {
            let mut t = lines.join("\n");
            if last_newline {
                t.push('\n');
            }
            t.into_bytes()
        })
    }

    /// FASTQ-like text: whole records, single-line and wrapped over several lines (quality
    /// lines starting with '@' or '+' among them: `[@+]` weighs them in) and, now and then, a
    /// damaged one or a stray line.
    fn fastq_text() -> impl Strategy<Value = Vec<u8>> {
        let fields = ("[a-z0-9]{1,5}", "[ACGT]{0,12}", "[!-~@+]{12}", 0u8..12, 1usize..5, 1usize..5);
        let record = fields.prop_map(|(id, seq, quals, damage, w, v)| {
            let quals = &quals[..seq.len()];
            let wrap = |s: &str, w: usize| -> String {
                s.as_bytes().chunks(w).map(|c| format!("{}\n", std::str::from_utf8(c).unwrap())).collect()
            };
            match damage {
                0 => format!("@{id}\n{seq}\n{quals}\n"),
                1 => format!("@{id}\n{seq}\n+\n{quals}I\n"),
                2 => format!("@{id}\n{seq}\n+\n"),
                3 => format!("@{id}\n{seq}\n{seq}\n+\n{quals}{quals}\n"),
                4 => format!("@{id}\n{}+\n{}", wrap(&seq, w), wrap(quals, v)),
                5 => format!("@{id}\n{}+\n{}I\n", wrap(&seq, w), wrap(quals, v)),
                6 | 7 => format!("@{id} d\n{}+{id}\n{}", wrap(&seq, w), wrap(quals, v)),
                _ => format!("@{id} d\n{seq}\n+\n{quals}\n"),
            }
        });
        let weighted = prop_oneof![20 => record.clone().prop_filter("whole", |r| !r.ends_with("+\n")), 1 => record];
        (prop::collection::vec(weighted, 0..30), any::<bool>()).prop_map(|(records, last_newline)| {
            let mut t = records.concat();
            if !last_newline {
                t.pop();
            }
            t.into_bytes()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn blocks_give_what_the_sequential_reader_gives(t in text(), block in 1usize..120, piece in 1usize..50) {
            prop_assert_eq!(blocks(&t, block, piece), sequential(&t));
        }

        #[test]
        fn fastq_blocks_give_what_the_sequential_reader_gives(t in fastq_text(), block in 1usize..120, piece in 1usize..50) {
            prop_assert_eq!(blocks(&t, block, piece), sequential(&t));
        }
    }

    /// Multi-line records whose quality lines look like whole single-line records ('@'
    /// line, a line, '+' line, a line as long): cut by reading from a record start, never
    /// inside them (issue 60 item 9).
    #[test]
    fn multi_line_fastq_is_cut_at_record_starts_only() {
        let mut t = String::new();
        for i in 0..1500 {
            // 16 residues on 4 lines; 16 qualities on 4 lines: "@III", "IIII", "+III", "IIII".
            t.push_str(&format!("@r{i}\nACGT\nACGT\nACGT\nACGT\n+\n@III\nIIII\n+III\nIIII\n"));
        }
        for (block, piece) in [(256, 64), (1000, 100), (97, 13)] {
            let got = blocks(t.as_bytes(), block, piece);
            assert_eq!(got.len(), 1500);
            assert_eq!(got, sequential(t.as_bytes()), "block {block} piece {piece}");
        }
        let input: Input = Box::new(Cursor::new(t.clone().into_bytes()));
        let mut reader = BlockFastaReader::new(place(), input, Alphabet::Dna).with_sizes(256, 64).keep_quals(true);
        let mut n = 0;
        while let Some(part) = reader.next_part() {
            let part = part.unwrap();
            for i in 0..part.len() {
                assert_eq!((part.seq(i).len(), part.quals(i)), (16, &b"@IIIIIII+IIIIIII"[..]));
                n += 1;
            }
        }
        assert_eq!(n, 1500);
    }

    #[test]
    fn fastq_records_are_cut_at_their_headers_only() {
        // Quality lines that start with '@' (and '+') are no record starts.
        let mut t = String::new();
        for i in 0..2000 {
            let q = if i % 3 == 0 { "@@II" } else { "+III" };
            t.push_str(&format!("@r{i}\nACGT\n+\n{q}\n"));
        }
        let got = blocks(t.as_bytes(), 256, 64);
        assert_eq!(got.len(), 2000);
        assert_eq!(got, sequential(t.as_bytes()));
        // Qualities come out of every piece, in order.
        let input: Input = Box::new(Cursor::new(t.clone().into_bytes()));
        let mut reader = BlockFastaReader::new(place(), input, Alphabet::Dna).with_sizes(256, 64).keep_quals(true);
        let mut n = 0;
        while let Some(part) = reader.next_part() {
            let part = part.unwrap();
            for i in 0..part.len() {
                assert_eq!(part.quals(i), if n % 3 == 0 { b"@@II" } else { b"+III" });
                n += 1;
            }
        }
        assert_eq!(n, 2000);
    }

    #[test]
    fn errors_deep_in_a_block_name_the_right_record_and_line() {
        let mut t = String::new();
        for i in 0..500 {
            t.push_str(&format!(">r{}\nACDEFG\nHIKL\n", i));
        }
        t.push_str(">bad\nACD\nAC1D\n>after\nAC\n");
        let got = blocks(t.as_bytes(), 1000, 64);
        assert_eq!(got.len(), 501);
        let err = got.last().unwrap().as_ref().unwrap_err();
        assert_eq!(Err(err.clone()), sequential(t.as_bytes()).pop().unwrap());
        assert!(err.contains("record 501") && err.contains("bad") && err.contains("line 1503"), "{}", err);
    }

    #[test]
    fn a_read_error_comes_after_the_records_read_before_it() {
        // An input that fails after its first 4,000 bytes, read in blocks of about 1,000.
        struct Failing(Cursor<Vec<u8>>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                match self.0.read(buf)? {
                    0 => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "corrupt gzip data")),
                    n => Ok(n),
                }
            }
        }
        let mut t = String::new();
        for i in 0..1000 {
            t.push_str(&format!(">r{i:03}\nACDEFGHIKLMNPQRSTVWY\n"));
        }
        let input: Input = Box::new(std::io::BufReader::new(Failing(Cursor::new(t.as_bytes()[..4000].to_vec()))));
        let got: Vec<_> = BlockFastaReader::new(place(), input, Alphabet::Protein)
            .with_sizes(1000, 100)
            .map(|r| r.map_err(|e| e.to_string()))
            .collect();
        // The 148 whole records of those bytes (27 each) come out, then the error.
        assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 148);
        assert_eq!(got.last(), Some(&Err("in.fa: corrupt gzip data".to_string())));
    }

    #[test]
    fn a_record_bigger_than_a_block_is_read_whole() {
        let seq = "ACDEFGHIKL".repeat(1000);
        let t = format!(">a\n{}\n>b\nWW\n", seq);
        let got = blocks(t.as_bytes(), 64, 16);
        assert_eq!(got, sequential(t.as_bytes()));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn a_record_past_the_big_record_limit_goes_to_the_sequential_reader() {
        // Block 64, limit 512: the 10,000-residue record switches readers, errors included.
        let seq = "ACDEFGHIKL".repeat(1000);
        for tail in ["", "AC1\n", ">\n", ">c\n>d\nW\n"] {
            let t = format!(">x\nW\n>a\n{}\n>b\nWW\n{}", seq, tail);
            assert_eq!(blocks(t.as_bytes(), 64, 16), sequential(t.as_bytes()), "tail {:?}", tail);
        }
    }

    #[test]
    fn empty_input_has_no_sequences() {
        assert_eq!(blocks(b"", 64, 16), sequential(b""));
        assert_eq!(blocks(b"\n\n", 64, 16), sequential(b"\n\n"));
    }

    #[test]
    fn ahead_reader_gives_the_same_records_and_errors() {
        let mut text = Vec::new();
        for i in 0..40_000 {
            text.extend_from_slice(format!(">r{i}\nMKV\nW\n").as_bytes());
        }
        let reader = |text: &[u8]| {
            let input: Input = Box::new(Cursor::new(text.to_vec()));
            BlockFastaReader::new(place(), input, Alphabet::Protein).with_sizes(4096, 512)
        };
        let got: Vec<_> = AheadFastaReader::new(reader(&text)).map(|r| r.map_err(|e| e.to_string())).collect();
        assert_eq!(got, sequential(&text));
        text.extend_from_slice(b">bad\nM1\n>after\nK\n");
        let mut ahead = AheadFastaReader::new(reader(&text));
        let got: Vec<_> = ahead.by_ref().map(|r| r.map_err(|e| e.to_string())).collect();
        assert_eq!(got, sequential(&text));
        assert_eq!(AheadFastaReader::count(&ahead), 40_000);
    }
}

//! PAF candidates (`align --pairs x.paf --seqs S [--target-seqs T]`): the candidate lines
//! minimap2 and other seeding tools write, one a line, at least 12 tab-separated columns
//! (further columns, SAM-like tags, are ignored). Names from columns 1 (query) and 6
//! (target), the strand from column 5, the lengths of columns 2 and 7 checked against the
//! sequence sets, the regions of columns 3-4 (query) and 8-9 (target), 0-based half-open on
//! each sequence's forward strand, checked to lie within it. Each candidate is aligned in
//! its window (`PairOptions::window`) through the same gathering as every candidate by id
//! (`by_id`). A thread reads pieces of whole lines (gzip and BGZF through `Input`); the
//! pieces are parsed and looked up in parallel, and the candidates taken in input order.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};

use super::by_id::{read_lines, Pick, Placed, Read, AHEAD};
use super::seqset::SeqSet;
use crate::error::{Error, Result, Where};
use crate::io::input::{read_error, Input};
use crate::seq::Strand;

/// The names of PAF's columns used, as messages name them.
const NAMES: [&str; 2] = ["query name (column 1)", "target name (column 6)"];

/// The columns of one PAF line that swarrow reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PafLine<'a> {
    pub query: &'a [u8],
    pub query_len: usize,
    pub query_region: std::ops::Range<usize>,
    pub strand: Strand,
    pub target: &'a [u8],
    pub target_len: usize,
    pub target_region: std::ops::Range<usize>,
}

/// Parses a PAF line (without its line break); the problem otherwise, in words.
pub(super) fn parse_line(text: &[u8]) -> std::result::Result<PafLine<'_>, String> {
    let mut fields: [&[u8]; 12] = [b""; 12];
    let mut n = 0;
    for field in text.split(|&b| b == b'\t') {
        if n < 12 {
            fields[n] = field;
        }
        n += 1;
        if n > 12 {
            break;
        }
    }
    if n < 12 {
        return Err(format!("expected at least 12 tab-separated PAF columns, found {n}"));
    }
    let number = |k: usize, what: &str| -> std::result::Result<usize, String> {
        let f = fields[k - 1];
        match std::str::from_utf8(f).ok().filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())) {
            Some(s) => s.parse::<usize>().map_err(|_| format!("column {k} ({what}) is too large: {s}")),
            None => Err(format!("column {k} ({what}) is not a number: {}", crate::error::quoted_id(f))),
        }
    };
    let query_len = number(2, "query length")?;
    let (qs, qe) = (number(3, "query start")?, number(4, "query end")?);
    let strand = match fields[4] {
        b"+" => Strand::Plus,
        b"-" => Strand::Minus,
        other => return Err(format!("column 5 (strand) is {}, not + or -", crate::error::quoted_id(other))),
    };
    let target_len = number(7, "target length")?;
    let (ts, te) = (number(8, "target start")?, number(9, "target end")?);
    for (k, what) in [(10, "matching residues"), (11, "alignment length"), (12, "mapping quality")] {
        number(k, what)?;
    }
    let region = |side: &str, s: usize, e: usize, len: usize| {
        if s <= e && e <= len {
            Ok(s..e)
        } else {
            Err(format!(
                "{side} region {s}..{e} is not within its {len} residues (0-based half-open start <= end <= length)"
            ))
        }
    };
    Ok(PafLine {
        query: fields[0],
        query_len,
        query_region: region("query", qs, qe, query_len)?,
        strand,
        target: fields[5],
        target_len,
        target_region: region("target", ts, te, target_len)?,
    })
}

/// Whether a first line reads as PAF: at least 12 tab-separated columns, `+` or `-` in
/// column 5, numbers in columns 2-4 and 7-12.
pub(crate) fn looks_like_paf(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    parse_line(line).is_ok()
}

/// Whether a path names PAF (`.paf`, `.paf.gz`).
pub(super) fn named_paf(place: &Where) -> bool {
    match place {
        Where::Path(p) => {
            let name = p.to_string_lossy().to_ascii_lowercase();
            name.ends_with(".paf") || name.ends_with(".paf.gz")
        }
        _ => false,
    }
}

/// The candidate lines of a PAF input, read by a thread in pieces of whole lines
/// ([`read_lines`]) and parsed and looked up a piece at a time on the thread pool; taken
/// in order. A line that does not parse or whose names or lengths do not check out goes
/// through the one-line path ([`PafRows::take_line`]), whose error names it.
pub(super) struct PafRows {
    reads: Receiver<Read>,
    recycle: SyncSender<Vec<u8>>,
    /// Pieces received and not yet taken whole.
    pieces: VecDeque<Piece>,
    /// Why the reads stopped (once every piece before it is taken): `None` at the end.
    stopped: Option<Option<Read>>,
    /// Lines taken so far (the last one's number).
    line: usize,
}

/// A piece of whole lines, parsed (`lines`, from `next` on not yet taken).
struct Piece {
    buf: Vec<u8>,
    len: usize,
    lines: Option<Vec<Parsed>>,
    next: usize,
}

/// One line of a piece, as parsed in parallel.
enum Parsed {
    Pair(u32, u32, Placed),
    Blank,
    /// Taken by the one-line path (which says what is wrong): its bytes in the piece.
    Bad(usize, usize),
}

impl PafRows {
    pub(super) fn new(input: Input) -> PafRows {
        let (tx, reads) = sync_channel(AHEAD);
        let (recycle, recycled) = sync_channel(AHEAD);
        crate::threads::spawn("sw-paf-read", move || read_lines(input, tx, recycled, None));
        PafRows { reads, recycle, pieces: VecDeque::new(), stopped: None, line: 0 }
    }

    /// Takes what the reading thread sent; false when it has stopped.
    fn receive(&mut self, read: Option<Read>) -> bool {
        match read {
            Some(Read::Lines(buf, len)) => {
                self.pieces.push_back(Piece { buf, len, lines: None, next: 0 });
                true
            }
            // Pieces are sent with no lookup: nothing else comes.
            Some(Read::Looking(..)) => true,
            stop => {
                self.stopped = Some(stop);
                false
            }
        }
    }

    /// Takes candidates into `p` until the batch is full or the input ends.
    pub(super) fn pick(&mut self, p: &mut Pick<'_>) -> Result<()> {
        use rayon::prelude::*;
        while !p.full() {
            // Pieces done with go back to the reading thread.
            while self.pieces.front().is_some_and(|piece| piece.lines.as_ref().is_some_and(|l| piece.next == l.len())) {
                if let Some(piece) = self.pieces.pop_front() {
                    let _ = self.recycle.try_send(piece.buf);
                }
            }
            // Enough pieces for the rest of the batch as far as they have come in (counting
            // a line per 128 bytes: minimap2's lines without cg:Z are ~100-130), one at least,
            // waited for; they are parsed together, spread over the pool.
            let want = p.room();
            let mut lines_ahead: usize = self.pieces.iter().map(|piece| piece.len / 128 + 1).sum();
            while self.stopped.is_none() && (self.pieces.is_empty() || lines_ahead < want) {
                let read = match self.pieces.is_empty() {
                    true => self.reads.recv().ok(),
                    false => match self.reads.try_recv() {
                        Ok(read) => Some(read),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => None,
                    },
                };
                if let Some(Read::Lines(_, len)) = &read {
                    lines_ahead += len / 128 + 1;
                }
                self.receive(read);
            }
            if self.pieces.is_empty() {
                return match self.stopped.take() {
                    Some(Some(Read::TooLong)) => {
                        let problem = format!("line {} longer than 1 GiB: not a PAF file?", self.line + 1);
                        Err(Error::file(p.place, problem))
                    }
                    Some(Some(Read::Failed(e))) => Err(read_error(p.place, e)),
                    _ => {
                        self.stopped = Some(None);
                        Ok(())
                    }
                };
            }
            let (query, target) = (p.query, p.target);
            self.pieces
                .par_iter_mut()
                .filter(|piece| piece.lines.is_none())
                .for_each(|piece| piece.lines = Some(parse_piece(&piece.buf[..piece.len], query, target)));
            // Taken in order, as far as the batch has room.
            'pieces: for piece in &mut self.pieces {
                let Some(lines) = &piece.lines else { break };
                while piece.next < lines.len() {
                    if p.full() {
                        break 'pieces;
                    }
                    self.line += 1;
                    match &lines[piece.next] {
                        Parsed::Pair(qi, ti, placed) => {
                            let number = self.line;
                            p.push(*qi, *ti, Some(placed.clone()), || format!("line {number}: "))?
                        }
                        Parsed::Blank => {}
                        &Parsed::Bad(start, end) => take_line(p, &piece.buf[start..end], self.line)?,
                    }
                    piece.next += 1;
                }
            }
        }
        Ok(())
    }
}

/// The lines of a piece, parsed and looked up; a line that does not check out is `Bad`.
fn parse_piece(piece: &[u8], query: &SeqSet, target: &SeqSet) -> Vec<Parsed> {
    let mut lines = Vec::with_capacity(piece.len() / 96 + 1);
    let mut at = 0;
    while at < piece.len() {
        let end = memchr::memchr(b'\n', &piece[at..]).map_or(piece.len(), |i| at + i);
        let line = &piece[at..end];
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        let parsed = if text.iter().all(u8::is_ascii_whitespace) {
            Parsed::Blank
        } else {
            match checked(text, query, target) {
                Some((qi, ti, placed)) => Parsed::Pair(qi, ti, placed),
                None => Parsed::Bad(at, end),
            }
        };
        lines.push(parsed);
        at = (end + 1).min(piece.len());
    }
    lines
}

/// A line's pair when it parses, both names are found and the lengths agree.
fn checked(text: &[u8], query: &SeqSet, target: &SeqSet) -> Option<(u32, u32, Placed)> {
    let line = parse_line(text).ok()?;
    if line.query.is_empty() || line.target.is_empty() {
        return None;
    }
    let (qi, ti) = (query.find(line.query)?, target.find(line.target)?);
    if query.seq(qi).len() != line.query_len || target.seq(ti).len() != line.target_len {
        return None;
    }
    Some((qi, ti, Placed { query: line.query_region, target: line.target_region, strand: Some(line.strand) }))
}

/// Takes line `number` (`line`, with its line break, if any) into `p`, or says what is
/// wrong with it.
fn take_line(p: &mut Pick<'_>, line: &[u8], number: usize) -> Result<()> {
    let text = line.strip_suffix(b"\r").unwrap_or(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let index = p.index();
    let line = match parse_line(text) {
        Ok(line) => line,
        Err(problem) => {
            let name = text.split(|&b| b == b'\t').next().unwrap_or_default();
            return Err(Error::record(p.place, index, name, format!("line {number}: {problem}")));
        }
    };
    let (qi, ti) = p.find(line.query, line.target, NAMES, || format!("line {number}: "))?;
    for (side, said, set, i) in [("query", line.query_len, p.query, qi), ("target", line.target_len, p.target, ti)] {
        let len = set.seq(i).len();
        if said != len {
            let problem = format!("line {number}: {side} length {said} in the PAF, {len} in {}", set.place());
            return Err(Error::record(p.place, index, line.query, problem));
        }
    }
    let placed = Placed { query: line.query_region, target: line.target_region, strand: Some(line.strand) };
    p.push(qi, ti, Some(placed), || format!("line {number}: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_minimap2_writes_them() {
        let line = b"r1\t150\t3\t148\t-\tctg\t1000\t200\t345\t140\t145\t60\ttp:A:P\tcm:i:20";
        let got = parse_line(line).unwrap();
        assert_eq!(
            got,
            PafLine {
                query: b"r1",
                query_len: 150,
                query_region: 3..148,
                strand: Strand::Minus,
                target: b"ctg",
                target_len: 1000,
                target_region: 200..345,
            }
        );
        assert!(looks_like_paf(line));
        assert!(looks_like_paf(b"a\t5\t0\t5\t+\tb\t5\t0\t5\t5\t5\t255\r"));
    }

    #[test]
    fn damaged_lines_say_what_is_wrong() {
        let err = |t: &[u8]| parse_line(t).unwrap_err();
        assert_eq!(
            err(b"r1\t150\t3\t148\t+\tctg\t1000\t200"),
            "expected at least 12 tab-separated PAF columns, found 8"
        );
        assert_eq!(err(b"r1\t150\t3\t148\t*\tctg\t1000\t200\t345\t1\t1\t0"), "column 5 (strand) is \"*\", not + or -");
        assert_eq!(
            err(b"r1\tx\t3\t148\t+\tctg\t1000\t200\t345\t1\t1\t0"),
            "column 2 (query length) is not a number: \"x\""
        );
        assert_eq!(
            err(b"r1\t150\t3\t-1\t+\tctg\t1000\t200\t345\t1\t1\t0"),
            "column 4 (query end) is not a number: \"-1\""
        );
        assert_eq!(
            err(b"r1\t150\t3\t151\t+\tctg\t1000\t200\t345\t1\t1\t0"),
            "query region 3..151 is not within its 150 residues (0-based half-open start <= end <= length)"
        );
        assert_eq!(
            err(b"r1\t150\t3\t15\t+\tctg\t1000\t300\t200\t1\t1\t0"),
            "target region 300..200 is not within its 1000 residues (0-based half-open start <= end <= length)"
        );
        // TSV candidates and pair files are not PAF.
        assert!(!looks_like_paf(b"q1\tt1"));
        assert!(!looks_like_paf(b"query_id\ttarget_id\tscore"));
    }
}

//! Streaming FASTA and FASTQ reader: one record in memory at a time, residues encoded as
//! they are read, every problem reported with file, record number, id and position.
//!
//! FASTQ is told by its records' `@` headers (each record is read as its header says):
//! `@id description`, the sequence (on one line or wrapped over several), a line starting
//! with `+` (anything after it), then the qualities (Phred+33 `!`..`~`, one line or
//! wrapped), read until they are as many as the residues: a quality line may start with `@`
//! or `+`, as minimap2, samtools and racon read it. Qualities are kept only when asked
//! ([`FastaReader::keep_quals`]).
//!
//! Parsed here rather than through noodles-fasta: its reader reads header lines without a
//! bound and hides line boundaries inside sequences, so it could not give the 1 GiB line
//! guard or the residue positions and line numbers the error messages need.

use std::io::BufRead;
use std::path::Path;

use crate::error::{Error, Result, Where};
use crate::io::input::{open_input, read_error, read_line_bounded, Input, Line, MAX_LINE};
use crate::scoring::alphabet::describe_residue;
use crate::scoring::Alphabet;
use crate::seq::Record;

/// Iterator over the records of one FASTA input. Yields an error for an input without any
/// record ("FILE: no sequences"), and stops after the first error.
pub struct FastaReader<R> {
    input: R,
    place: Where,
    alphabet: Alphabet,
    /// Records read so far (the next record's 0-based index).
    count: usize,
    /// Lines consumed so far (the next line's number minus one).
    line: usize,
    line_limit: usize,
    header: Vec<u8>,
    /// The current record's id, and its header text (after `>`), for `Record::header`:
    /// buffers reused from record to record. Bytes as the file has them: ids are looked up
    /// as bytes (pairs by id), so two ids that differ only in bytes that are not UTF-8 stay
    /// apart.
    id: Vec<u8>,
    description: Vec<u8>,
    done: bool,
    /// A piece of a larger input (see `fasta_blocks`): having no record is not an error.
    piece: bool,
    /// The current record is FASTQ ('@' header).
    fastq: bool,
    /// Keep FASTQ qualities (`quals`, then [`Packed::quals`]).
    keep_quals: bool,
    /// The current FASTQ record's qualities (where kept), and a buffer for its lines.
    quals: Vec<u8>,
    lines: Vec<u8>,
}

impl FastaReader<Input> {
    /// Opens `path` (`-` = stdin; plain or gzip).
    pub fn open(path: &Path, alphabet: Alphabet) -> Result<FastaReader<Input>> {
        let (place, input) = open_input(path)?;
        Ok(FastaReader::new(place, input, alphabet))
    }
}

impl<R: BufRead> FastaReader<R> {
    /// Reads FASTA from `input`; `place` names it in error messages.
    pub fn new(place: Where, input: R, alphabet: Alphabet) -> FastaReader<R> {
        FastaReader {
            input,
            place,
            alphabet,
            count: 0,
            line: 0,
            line_limit: MAX_LINE,
            header: Vec::new(),
            id: Vec::new(),
            description: Vec::new(),
            done: false,
            piece: false,
            fastq: false,
            keep_quals: false,
            quals: Vec::new(),
            lines: Vec::new(),
        }
    }

    /// Keeps FASTQ qualities, handed out in [`Packed::quals`] (every record gets an entry
    /// then: empty for a FASTA record).
    pub fn keep_quals(mut self, keep: bool) -> Self {
        self.keep_quals = keep;
        self
    }

    /// A reader for a piece of a larger input that starts after `records` records and
    /// `lines` lines, so that its messages number records and lines as the whole input does.
    pub(crate) fn piece(place: Where, input: R, alphabet: Alphabet, records: usize, lines: usize) -> FastaReader<R> {
        FastaReader { count: records, line: lines, piece: true, ..FastaReader::new(place, input, alphabet) }
    }

    /// An input without records is not an error: it simply ends (a search of no queries
    /// writes an empty result).
    pub fn allow_empty(mut self) -> Self {
        self.piece = true;
        self
    }

    /// Lines consumed so far.
    pub(crate) fn lines(&self) -> usize {
        self.line
    }

    /// Where the records come from.
    pub fn place(&self) -> &Where {
        &self.place
    }

    /// Number of records read so far.
    pub fn count(&self) -> usize {
        self.count
    }

    #[cfg(test)]
    fn with_line_limit(mut self, limit: usize) -> Self {
        self.line_limit = limit;
        self
    }

    fn too_long(&self) -> String {
        let limit =
            if self.line_limit == MAX_LINE { "1 GiB".to_string() } else { format!("{} bytes", self.line_limit) };
        format!("line {} longer than {}: not a real sequence file?", self.line + 1, limit)
    }

    /// Reads the next header line, skipping blank lines, into `id` and `description`; false
    /// at end of input.
    fn read_header(&mut self) -> Result<bool> {
        loop {
            let got = read_line_bounded(&mut self.input, &mut self.header, self.line_limit)
                .map_err(|e| read_error(&self.place, e))?;
            match got {
                Line::End => return Ok(false),
                Line::TooLong => {
                    let problem = format!("record {}: {}", self.count + 1, self.too_long());
                    return Err(Error::file(&self.place, problem));
                }
                Line::Read => {}
            }
            // A UTF-8 byte order mark before the first line is no part of it.
            if self.line == 0 && self.header.starts_with(crate::io::input::UTF8_BOM) {
                self.header.drain(..3);
            }
            self.line += 1;
            if self.header.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if self.header[0] != b'>' && self.header[0] != b'@' {
                // Sequence lines are consumed with their record, so only text before the
                // first header lands here.
                let kind = (self.count == 0).then(|| crate::io::input::kind_of(&self.header)).flatten();
                let what = if let Some((kind, hint)) = kind {
                    let hint = if hint.is_empty() { String::new() } else { format!(": {hint}") };
                    format!("this is {kind}, not FASTA{hint}")
                } else if self.count == 0 {
                    "text before the first '>' or '@' header: not a FASTA or FASTQ file?".to_string()
                } else {
                    "text between records: not a FASTA or FASTQ file?".to_string()
                };
                return Err(Error::file(&self.place, format!("line {}: {what}", self.line)));
            }
            let name = &self.header[1..];
            let end = name.iter().position(u8::is_ascii_whitespace).unwrap_or(name.len());
            if end == 0 {
                let problem = format!("header on line {} has no id", self.line);
                return Err(Error::record(&self.place, self.count, "", problem));
            }
            self.id.clear();
            self.id.extend_from_slice(&name[..end]);
            self.description.clear();
            self.description.extend_from_slice(name.trim_ascii_end());
            self.fastq = self.header[0] == b'@';
            return Ok(true);
        }
    }

    /// Reads and encodes sequence lines up to the next header or the end of input, appending
    /// the residues to `seq` (positions in messages count from `start`).
    fn read_sequence(&mut self, id: &[u8], seq: &mut Vec<u8>, start: usize) -> Result<()> {
        let mut line_len = 0usize;
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(&self.place, e)),
            };
            // A line that starts with '>' or '@' (never a residue) starts the next record.
            if chunk.is_empty() || (line_len == 0 && (chunk[0] == b'>' || chunk[0] == b'@')) {
                return Ok(());
            }
            let (part, ends_line) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            line_len += part.len() + ends_line as usize;
            if line_len > self.line_limit {
                return Err(Error::record(&self.place, self.count, id, self.too_long()));
            }
            if let Err(bad) = encode_skipping_whitespace(self.alphabet, part, seq) {
                let problem = format!(
                    "{} at position {} (line {})",
                    describe_residue(self.alphabet, bad),
                    seq.len() - start + 1,
                    self.line + 1
                );
                return Err(Error::record(&self.place, self.count, id, problem));
            }
            let used = part.len() + ends_line as usize;
            self.input.consume(used);
            if ends_line {
                self.line += 1;
                line_len = 0;
            }
        }
    }

    /// Reads one line of the current FASTQ record into `self.lines` (without its line
    /// break and a CR before it); false at the end of the input.
    fn fastq_line(&mut self, id: &[u8]) -> Result<bool> {
        let got = read_line_bounded(&mut self.input, &mut self.lines, self.line_limit)
            .map_err(|e| read_error(&self.place, e))?;
        match got {
            Line::End => Ok(false),
            Line::TooLong => Err(Error::record(&self.place, self.count, id, self.too_long())),
            Line::Read => {
                self.line += 1;
                if self.lines.last() == Some(&b'\r') {
                    self.lines.pop();
                }
                Ok(true)
            }
        }
    }

    /// Reads the rest of a FASTQ record after its header: its sequence lines (residues
    /// appended to `seq`) up to the `+` line, then quality lines until they hold as many
    /// qualities as residues (a quality line may start with `@` or `+`), as minimap2,
    /// samtools and racon read multi-line FASTQ; single-line records are the same rule.
    fn read_fastq(&mut self, id: &[u8], seq: &mut Vec<u8>) -> Result<()> {
        let problem = |this: &Self, problem: String| Error::record(&this.place, this.count, id, problem);
        let truncated = |this: &Self, what: &str| {
            problem(this, format!("truncated FASTQ record: the input ends before its {what} (line {})", this.line + 1))
        };
        let start = seq.len();
        let mut lines = 0;
        loop {
            if !self.fastq_line(id)? {
                return Err(truncated(self, if lines == 0 { "sequence line" } else { "'+' line" }));
            }
            lines += 1;
            match self.lines.first() {
                Some(b'+') => break,
                Some(b'@' | b'>') => {
                    let p =
                        format!("line {}: expected the '+' line after the sequence lines, found a header", self.line);
                    return Err(problem(self, p));
                }
                _ => {}
            }
            let before = seq.len() - start;
            if let Err(i) = self.alphabet.encode_into(&self.lines, seq) {
                let bad = self.lines[i];
                let p = format!(
                    "{} at position {} (line {})",
                    describe_residue(self.alphabet, bad),
                    before + i + 1,
                    self.line
                );
                return Err(problem(self, p));
            }
        }
        let residues = seq.len() - start;
        self.quals.clear();
        let mut quals = 0;
        while quals < residues {
            if !self.fastq_line(id)? {
                return Err(truncated(self, if quals == 0 { "quality line" } else { "last qualities" }));
            }
            if let Some(i) = self.lines.iter().position(|&q| !(b'!'..=b'~').contains(&q)) {
                let q = self.lines[i];
                let shown = if q.is_ascii_graphic() { format!("'{}'", q as char) } else { format!("byte 0x{q:02x}") };
                let p = format!(
                    "line {}: invalid quality {shown} at position {} (Phred+33: ! to ~)",
                    self.line,
                    quals + i + 1
                );
                return Err(problem(self, p));
            }
            quals += self.lines.len();
            if quals > residues {
                let p = format!("line {}: {quals} qualities for {residues} residues", self.line);
                return Err(problem(self, p));
            }
            if self.keep_quals {
                self.quals.extend_from_slice(&self.lines);
            }
        }
        Ok(())
    }

    /// Reads the next record, its residues appended to `seq` (its id and header in `id` and
    /// `description`, its qualities in `quals` where kept); false at end of input.
    fn read_record_into(&mut self, seq: &mut Vec<u8>) -> Result<bool> {
        if !self.read_header()? {
            return Ok(false);
        }
        let start = seq.len();
        let id = std::mem::take(&mut self.id);
        self.quals.clear();
        let read = if self.fastq { self.read_fastq(&id, seq) } else { self.read_sequence(&id, seq, start) };
        self.id = id;
        read?;
        if seq.len() == start {
            return Err(Error::record(&self.place, self.count, &self.id, "empty sequence"));
        }
        self.count += 1;
        Ok(true)
    }

    fn read_record(&mut self) -> Result<Option<Record>> {
        let mut seq = Vec::new();
        if !self.read_record_into(&mut seq)? {
            return Ok(None);
        }
        let text = |t: &[u8]| crate::error::id_text(t).into_owned();
        Ok(Some(Record { id: text(&self.id), seq, header: text(&self.description) }))
    }

    /// The next record appended to `out` (no allocation of its own), as [`Iterator::next`]
    /// gives it: `None` at the end, after an error, or with the error of an input without
    /// records; on an error, `out` holds the records before it.
    pub fn next_into(&mut self, out: &mut Packed) -> Option<Result<()>> {
        if self.done {
            return None;
        }
        match self.read_record_into(&mut out.residues) {
            Ok(true) => {
                out.push_last(&self.id, &self.description);
                if self.keep_quals {
                    out.quals.extend_from_slice(&self.quals);
                    out.qual_ends.push(out.quals.len());
                }
                Some(Ok(()))
            }
            Ok(false) => {
                self.done = true;
                (self.count == 0 && !self.piece).then(|| Err(Error::file(&self.place, "no sequences")))
            }
            Err(e) => {
                self.done = true;
                out.residues.truncate(out.seq_ends.last().copied().unwrap_or(0));
                Some(Err(e))
            }
        }
    }
}

/// Records packed into a few shared buffers, in order: residues, ids and headers of a run
/// of records, with no allocation per record (block parsers hand these out: a `Record` each
/// cost three allocations, and their frees, across threads, as much as parsing).
#[derive(Debug, Default)]
pub struct Packed {
    residues: Vec<u8>,
    /// Where record i's residues end (they start where record i - 1's end).
    seq_ends: Vec<usize>,
    /// Ids and headers: record i's id, then its header, from where record i - 1's header
    /// ends; bytes as the file has them.
    text: Vec<u8>,
    text_ends: Vec<(usize, usize)>,
    /// Some id or header is not UTF-8 (an id column of the output then needs the lossy path).
    not_utf8: bool,
    /// FASTQ qualities, where the reader keeps them: record i's end at `qual_ends[i]`
    /// (empty for a FASTA record); `qual_ends` empty where none are kept.
    quals: Vec<u8>,
    qual_ends: Vec<usize>,
}

impl Packed {
    /// Empties `self` for the records of `bytes` bytes of FASTA (no more residues than
    /// bytes), its buffers kept.
    pub(crate) fn reuse_for(&mut self, bytes: usize) {
        self.residues.clear();
        if self.residues.capacity() < bytes {
            // With room to spare: pieces differ a little in size, and a buffer a few bytes
            // short would be allocated anew each time.
            self.residues = Vec::with_capacity(bytes + bytes / 4);
        }
        self.seq_ends.clear();
        self.text.clear();
        self.text_ends.clear();
        self.not_utf8 = false;
        self.quals.clear();
        self.qual_ends.clear();
    }

    pub fn len(&self) -> usize {
        self.seq_ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq_ends.is_empty()
    }

    pub fn seq(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.seq_ends[i - 1] };
        &self.residues[start..self.seq_ends[i]]
    }

    pub fn id(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.text_ends[i - 1].1 };
        &self.text[start..self.text_ends[i].0]
    }

    /// The header line after `>` (id included), trailing whitespace removed.
    pub fn header(&self, i: usize) -> &[u8] {
        &self.text[self.text_ends[i].0..self.text_ends[i].1]
    }

    /// The FASTQ qualities of record i ("" for FASTA, or where they are not kept).
    pub fn quals(&self, i: usize) -> &[u8] {
        match self.qual_ends.get(i) {
            Some(&end) => &self.quals[if i == 0 { 0 } else { self.qual_ends[i - 1] }..end],
            None => b"",
        }
    }

    /// Whether every id and header is UTF-8 on its own.
    pub fn is_utf8(&self) -> bool {
        !self.not_utf8
    }

    pub fn record(&self, i: usize) -> Record {
        let text = |t: &[u8]| crate::error::id_text(t).into_owned();
        Record { id: text(self.id(i)), seq: self.seq(i).to_vec(), header: text(self.header(i)) }
    }

    /// Ends the record whose residues were appended last.
    fn push_last(&mut self, id: &[u8], header: &[u8]) {
        self.seq_ends.push(self.residues.len());
        // The header starts with the id, cut at ASCII whitespace: one check covers both.
        self.not_utf8 |= std::str::from_utf8(header).is_err();
        self.text.extend_from_slice(id);
        let id_end = self.text.len();
        self.text.extend_from_slice(header);
        self.text_ends.push((id_end, self.text.len()));
    }
}

/// Encodes `raw` onto `out`, skipping whitespace (spaces, tabs, CR). On an invalid byte,
/// returns it; `out` then holds the residues before it.
fn encode_skipping_whitespace(alphabet: Alphabet, raw: &[u8], out: &mut Vec<u8>) -> Result<(), u8> {
    let mut rest = raw;
    while let Err(i) = alphabet.encode_into(rest, out) {
        let b = rest[i];
        if !b.is_ascii_whitespace() {
            return Err(b);
        }
        rest = &rest[i + 1..];
    }
    Ok(())
}

impl<R: BufRead> Iterator for FastaReader<R> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.done = true;
                if self.count == 0 && !self.piece {
                    Some(Err(Error::file(&self.place, "no sequences")))
                } else {
                    None
                }
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads every record of a (small) FASTA input into memory.
pub fn read_all(path: &Path, alphabet: Alphabet) -> Result<Vec<Record>> {
    FastaReader::open(path, alphabet)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Alphabet = Alphabet::Protein;

    fn place() -> Where {
        Where::Path("in.fa".into())
    }

    fn parse(text: &[u8]) -> Result<Vec<Record>> {
        FastaReader::new(place(), text, P).collect()
    }

    /// The record a header line (after `>`, trailing whitespace removed) and letters give:
    /// the id is the header up to the first whitespace.
    fn rec(header: &str, letters: &[u8]) -> Record {
        // Hand-written codes for the letters used below, in NCBI order ARNDCQEGHILKMFPSTWYVBZX*.
        let codes =
            letters.iter().map(|&l| b"ARNDCQEGHILKMFPSTWYVBZX*".iter().position(|&c| c == l).unwrap() as u8).collect();
        let id = header.split(|c: char| c.is_ascii_whitespace()).next().unwrap().to_string();
        Record { id, seq: codes, header: header.to_string() }
    }

    fn err(text: &[u8]) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_multiline_records_with_ids_up_to_whitespace() {
        let text = b"\n>sp|P1|A desc here\nAR N\r\nd\n\n>b\tx\n*WV\n>c";
        let text = [&text[..], b"\nX"].concat();
        assert_eq!(parse(&text).unwrap(), vec![rec("sp|P1|A desc here", b"ARND"), rec("b\tx", b"*WV"), rec("c", b"X")]);
    }

    #[test]
    fn crlf_files_and_missing_final_newline_read_the_same() {
        let unix = parse(b">a\nMKV\nLA\n>b\nW\n").unwrap();
        assert_eq!(parse(b">a\r\nMKV\r\nLA\r\n>b\r\nW").unwrap(), unix);
        assert_eq!(unix, vec![rec("a", b"MKVLA"), rec("b", b"W")]);
    }

    #[test]
    fn streams_through_small_buffers() {
        // A 3-byte buffer splits lines and headers across reads.
        let text: &[u8] = b">first one\nACDE\nFG\n>second\nHIK\n";
        let input = std::io::BufReader::with_capacity(3, text);
        let got: Vec<Record> = FastaReader::new(place(), input, P).collect::<Result<_>>().unwrap();
        assert_eq!(got, vec![rec("first one", b"ACDEFG"), rec("second", b"HIK")]);
    }

    #[test]
    fn invalid_residue_names_file_record_id_and_position() {
        let msg = err(b">a\nMK\n>b second\nAC\nD-E\n");
        assert_eq!(msg, "in.fa: record 2 (b): invalid residue '-' at position 4 (line 5)");
        let msg = err(b">a\nMK\x01V\n");
        assert_eq!(msg, "in.fa: record 1 (a): invalid residue byte 0x01 at position 3 (line 2)");
    }

    #[test]
    fn empty_record_is_an_error_naming_it() {
        let msg = err(b">a\nMK\n>b\n\n>c\nW\n");
        assert_eq!(msg, "in.fa: record 2 (b): empty sequence");
        let msg = err(b">a\nMK\n>last\n");
        assert_eq!(msg, "in.fa: record 2 (last): empty sequence");
    }

    #[test]
    fn empty_input_yields_no_sequences_error() {
        assert_eq!(err(b""), "in.fa: no sequences");
        assert_eq!(err(b"\n \n"), "in.fa: no sequences");
        let mut reader = FastaReader::new(place(), &b""[..], P);
        assert!(reader.next().unwrap().is_err());
        assert!(reader.next().is_none(), "the iterator stops after an error");
    }

    #[test]
    fn text_before_first_header_is_an_error() {
        let msg = err(b"\nMKV\n>a\nMK\n");
        assert_eq!(msg, "in.fa: line 2: text before the first '>' or '@' header: not a FASTA or FASTQ file?");
    }

    /// A record as `fastq` gives it: id, letters, qualities.
    type Fastq = (String, Vec<u8>, Vec<u8>);

    /// Every record's id, letters (decoded) and qualities, from a reader keeping them.
    fn fastq(text: &[u8]) -> std::result::Result<Vec<Fastq>, String> {
        let mut reader = FastaReader::new(place(), text, Alphabet::Dna).keep_quals(true);
        let mut packed = Packed::default();
        while let Some(r) = reader.next_into(&mut packed) {
            r.map_err(|e| e.to_string())?;
        }
        Ok((0..packed.len())
            .map(|i| {
                let id = String::from_utf8(packed.id(i).to_vec()).unwrap();
                (id, Alphabet::Dna.decode(packed.seq(i)), packed.quals(i).to_vec())
            })
            .collect())
    }

    #[test]
    fn fastq_records_read_with_their_qualities() {
        // '@' and '+' starting quality lines, a '+' line repeating the id, CRLF, blank lines
        // between records, a FASTA record after FASTQ ones (no qualities), no final newline.
        let text = b"@r1 first read\nACGT\n+\n@+II\n\n@r2\r\nacgn\r\n+r2\r\n+!~I\r\n>f\nAC\nGT\n@r3\nA\n+\nI";
        let got = fastq(text).unwrap();
        let want = vec![
            ("r1".to_string(), b"ACGT".to_vec(), b"@+II".to_vec()),
            ("r2".to_string(), b"ACGN".to_vec(), b"+!~I".to_vec()),
            ("f".to_string(), b"ACGT".to_vec(), Vec::new()),
            ("r3".to_string(), b"A".to_vec(), b"I".to_vec()),
        ];
        assert_eq!(got, want);
        // The same records without qualities unless asked; headers as FASTA's.
        let records: Vec<Record> = FastaReader::new(place(), &text[..], Alphabet::Dna).collect::<Result<_>>().unwrap();
        assert_eq!(records[0].header, "r1 first read");
        let mut packed = Packed::default();
        let mut reader = FastaReader::new(place(), &text[..], Alphabet::Dna);
        while let Some(r) = reader.next_into(&mut packed) {
            r.unwrap();
        }
        assert_eq!(packed.quals(0), b"");
    }

    /// Multi-line FASTQ (issue 60 item 9): sequences and qualities wrapped, quality lines
    /// starting with '@' and '+' (data, not headers), CRLF, read as the same records written
    /// one line each.
    #[test]
    fn multi_line_fastq_reads_as_its_single_line_records() {
        let wrapped = b"@r1 x\nACG\nTA\n+\n@@I\n+I\n@r2\r\nA\r\nC\r\nG\r\n+r2\r\n@\r\n@\r\n+\r\n@r3\nT\n+\n@\n";
        let single = b"@r1 x\nACGTA\n+\n@@I+I\n@r2\nACG\n+r2\n@@+\n@r3\nT\n+\n@\n";
        let got = fastq(wrapped).unwrap();
        assert_eq!(got, fastq(single).unwrap());
        assert_eq!(got[0], ("r1".to_string(), b"ACGTA".to_vec(), b"@@I+I".to_vec()));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn damaged_fastq_names_the_record_and_the_problem() {
        let err = |t: &[u8]| fastq(t).unwrap_err();
        assert_eq!(
            err(b"@r1\nACGT\n+\nIIII\n@r2\nAC\n@r3\n+\nI\n"),
            "in.fa: record 2 (r2): line 7: expected the '+' line after the sequence lines, found a header"
        );
        assert_eq!(err(b"@r1\nACGT\n+\nII\nIII\n"), "in.fa: record 1 (r1): line 5: 5 qualities for 4 residues");
        assert_eq!(
            err(b"@r1\nACGT\n+\nII\n"),
            "in.fa: record 1 (r1): truncated FASTQ record: the input ends before its last qualities (line 5)"
        );
        assert_eq!(
            err(b"@r1\nAC\nGT\n+\nII\nI \n"),
            "in.fa: record 1 (r1): line 6: invalid quality byte 0x20 at position 4 (Phred+33: ! to ~)"
        );
        assert_eq!(
            err(b"@r1\nACGT\nAC-T\n+\nIIIIIIII\n"),
            "in.fa: record 1 (r1): invalid residue '-' at position 7 (line 3)"
        );
        assert_eq!(
            err(b"@r1\n"),
            "in.fa: record 1 (r1): truncated FASTQ record: the input ends before its sequence line (line 2)"
        );
        assert_eq!(
            err(b"@r1\nAC\n"),
            "in.fa: record 1 (r1): truncated FASTQ record: the input ends before its '+' line (line 3)"
        );
        assert_eq!(
            err(b"@r1\nAC\n+\n"),
            "in.fa: record 1 (r1): truncated FASTQ record: the input ends before its quality line (line 4)"
        );
        assert_eq!(
            err(b"@r1\nAC\n+\nI \n"),
            "in.fa: record 1 (r1): line 4: invalid quality ' ' at position 2 (Phred+33: ! to ~)"
                .replace("' '", "byte 0x20")
        );
        assert_eq!(err(b"@r1\nA-C\n+\nIII\n"), "in.fa: record 1 (r1): invalid residue '-' at position 2 (line 2)");
        assert_eq!(err(b"@r1\n\n+\n\n"), "in.fa: record 1 (r1): empty sequence");
        assert_eq!(err(b"@ x\nA\n+\nI\n"), "in.fa: record 1 (no id): header on line 1 has no id");
        assert_eq!(err(b"@r1\nA\n+\nI\nTTT\n"), "in.fa: line 5: text between records: not a FASTA or FASTQ file?");
    }

    #[test]
    fn header_without_id_is_an_error() {
        assert_eq!(err(b">a\nM\n> desc\nK\n"), "in.fa: record 2 (no id): header on line 3 has no id");
    }

    #[test]
    fn overlong_lines_are_refused_without_reading_them_whole() {
        let read = |text: &'static [u8]| -> String {
            let input = std::io::BufReader::with_capacity(4, text);
            let r: Result<Vec<Record>> = FastaReader::new(place(), input, P).with_line_limit(8).collect();
            r.unwrap_err().to_string()
        };
        assert_eq!(
            read(b">a\nMKVMKVMKVMKV\n"),
            "in.fa: record 1 (a): line 2 longer than 8 bytes: not a real sequence file?"
        );
        assert_eq!(
            read(b">a\nMK\n>bbbbbbbbbbbbbbb\nW\n"),
            "in.fa: record 2: line 3 longer than 8 bytes: not a real sequence file?"
        );
        // Exactly at the limit is fine (7 residues + newline).
        let input = std::io::BufReader::with_capacity(4, &b">a\nMKVMKVM\n"[..]);
        let ok: Vec<Record> = FastaReader::new(place(), input, P).with_line_limit(8).collect::<Result<_>>().unwrap();
        assert_eq!(ok, vec![rec("a", b"MKVMKVM")]);
    }

    #[test]
    fn dna_alphabet_is_used_for_encoding() {
        let got: Vec<Record> =
            FastaReader::new(place(), &b">d\nacgtuN\n"[..], Alphabet::Dna).collect::<Result<_>>().unwrap();
        assert_eq!(got[0].seq, vec![0, 1, 2, 3, 3, 4]);
    }

    #[test]
    fn read_all_reads_gzip_files() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.fa.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b">x y\nMKV\n>z\nW\n").unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        assert_eq!(read_all(&path, P).unwrap(), vec![rec("x y", b"MKV"), rec("z", b"W")]);
        let msg = read_all(&dir.path().join("none.fa"), P).unwrap_err().to_string();
        assert!(msg.ends_with("none.fa: no such file"), "{}", msg);
    }
}

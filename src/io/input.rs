//! Opening an input: a path or `-` for standard input, plain or gzip-compressed (detected
//! by its magic bytes, never by its name), behind one large buffered reader. BGZF (bgzip:
//! gzip members of at most 64 KiB, each naming its size in an extra field) is inflated on
//! every core, its blocks being independent; other gzip on one thread.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use crate::error::{Error, Result, Where};
use crate::io::bgzf;
use crate::progress::CountingRead;

/// Buffer size for every input: large reads keep decompression and parsing streaming.
pub const BUFFER_SIZE: usize = 1 << 20;

/// No line of a real sequence, pair or database file comes near this; a longer one means
/// the input is something else (binary data, one huge line), so readers stop there instead
/// of allocating it.
pub const MAX_LINE: usize = 1 << 30;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// The start of an Arrow IPC stream (a message's continuation marker), of an Arrow IPC
/// file, and of a Parquet file.
pub const ARROW_CONTINUATION: [u8; 4] = [0xff; 4];
pub const ARROW_FILE_MAGIC: &[u8; 6] = b"ARROW1";
pub const PARQUET_MAGIC: &[u8; 4] = b"PAR1";
/// The start of a `makedb` database (PNG-style: a high byte, a name, CR LF and ^Z catch
/// text-mode transfers).
pub const SWDB_MAGIC: [u8; 8] = *b"\x89SWDB\r\n\x1a";

/// What an input that is not the expected text is, from its first bytes (a file's magic
/// number, or tabs in its first line), for messages: the kind and a hint (empty where none);
/// `None` when nothing is recognised.
pub fn kind_of(head: &[u8]) -> Option<(&'static str, &'static str)> {
    const DECOMPRESS: &str = "swarrow reads plain text or gzip: decompress it first";
    const KINDS: [(&[u8], &str, &str); 8] = [
        (PARQUET_MAGIC, "a Parquet file", ""),
        (ARROW_FILE_MAGIC, "an Arrow IPC file", ""),
        (&ARROW_CONTINUATION, "an Arrow IPC stream", ""),
        (b"\x89SWDB", "a swarrow makedb database (.swdb)", ""),
        (b"BZh", "a bzip2 stream", "swarrow reads plain text or gzip: decompress it first, or give <(bzcat FILE)"),
        (
            &[0x28, 0xb5, 0x2f, 0xfd],
            "a zstd stream",
            "swarrow reads plain text or gzip: decompress it first, or give <(zstd -dc FILE)",
        ),
        (
            &[0xfd, b'7', b'z', b'X', b'Z', 0],
            "an xz stream",
            "swarrow reads plain text or gzip: decompress it first, or give <(xz -dc FILE)",
        ),
        (b"PK\x03\x04", "a zip archive", DECOMPRESS),
    ];
    if let Some((_, kind, hint)) = KINDS.iter().find(|(magic, _, _)| head.starts_with(magic)) {
        return Some((kind, hint));
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    line.contains(&b'\t').then_some(("a tab-separated table", ""))
}

/// The byte order mark some editors and spreadsheets put before UTF-8 text: skipped before
/// the first line of a TSV input.
pub const UTF8_BOM: &[u8; 3] = b"\xef\xbb\xbf";

/// Every magic number an input's format is told by. The head of an input is read only as
/// far as it could still be one of them: a text line shorter than a magic (`a<TAB>b` of a
/// candidate list, written by a producer that then pauses) is not held back waiting for
/// more bytes.
const MAGICS: [&[u8]; 5] = [&GZIP_MAGIC, &SWDB_MAGIC, &ARROW_CONTINUATION, ARROW_FILE_MAGIC, PARQUET_MAGIC];

/// Whether the bytes read so far already tell the format: they begin no magic number
/// longer than they are.
fn told(head: &[u8]) -> bool {
    !MAGICS.iter().any(|m| m.len() > head.len() && m.starts_with(head))
}

/// Reads from `input` into `head` until it holds `n` bytes, the input ends, or, when
/// `sniff`, the bytes read tell the format ([`told`]); one read at a time, so a pipe's
/// bytes count as they arrive.
fn read_head(input: &mut impl Read, head: &mut Vec<u8>, n: usize, sniff: bool) -> io::Result<()> {
    let mut buf = [0u8; 64];
    while head.len() < n && !(sniff && told(head)) {
        let want = (n - head.len()).min(buf.len());
        match input.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(got) => head.extend_from_slice(&buf[..got]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A buffered input stream that can cross threads.
pub type Input = Box<dyn BufRead + Send>;

/// Opens `path` (`-` = standard input), decompressing gzip (multi-member and bgzip too).
pub fn open_input(path: &Path) -> Result<(Where, Input)> {
    let head = Head::open(path, GZIP_MAGIC.len())?;
    let place = head.place.clone();
    Ok((place, head.into_input()?))
}

/// An input opened once, with its first bytes read for format sniffing. A path is never
/// opened twice: a pipe (`<(zcat db.fa.gz)`, a FIFO) cannot be read again, so every reader
/// continues from this one, the head chained in front of the rest.
pub struct Head {
    pub place: Where,
    /// The first bytes, raw (before any decompression); fewer only at end of input.
    pub bytes: Vec<u8>,
    source: Source,
}

enum Source {
    Stdin(BufReader<io::Stdin>),
    /// `regular`: a regular file, which can be rewound and memory-mapped. Counted below
    /// decompression: progress compares the bytes read with the file's size.
    File {
        reader: BufReader<CountingRead<File>>,
        regular: bool,
    },
}

/// Asks for a 1 MiB pipe buffer (Linux's unprivileged maximum) where the input is a pipe:
/// with the default 64 KiB every read returns at most that, and the reading thread wakes
/// the parser once per 64 KiB (measured: a third of the reader's time went to task switches
/// through `cat file |`). Best effort: anything but a pipe, or a refusal, changes nothing.
fn widen_pipe(fd: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

impl Head {
    /// Opens `path` (`-` = stdin) and reads up to `n` bytes, fewer where they already tell
    /// the format (a text line shorter than `n`: see [`told`]).
    pub fn open(path: &Path, n: usize) -> Result<Head> {
        let place = Where::from_arg(path);
        let source = match &place {
            Where::Stdin => {
                crate::stdio::check_stdin()?;
                widen_pipe(&io::stdin());
                Source::Stdin(BufReader::with_capacity(BUFFER_SIZE, io::stdin()))
            }
            Where::Path(p) => {
                let file = open_file(p)?;
                widen_pipe(&file);
                let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
                Source::File { reader: BufReader::with_capacity(BUFFER_SIZE, CountingRead(file)), regular }
            }
            Where::Named(name) => return Err(Error::Internal(format!("{name} is not a file"))),
        };
        let mut head = Head { place, bytes: Vec::with_capacity(n), source };
        head.read_up_to(n, true)?;
        Ok(head)
    }

    /// Reads on until the head holds `n` bytes (fewer only at end of input, or where they
    /// tell the format if `sniff`).
    fn read_up_to(&mut self, n: usize, sniff: bool) -> Result<()> {
        let read = match &mut self.source {
            Source::Stdin(r) => read_head(r, &mut self.bytes, n, sniff),
            Source::File { reader, .. } => read_head(reader, &mut self.bytes, n, sniff),
        };
        read.map_err(|e| read_error(&self.place, e))
    }

    /// The input is a regular file (it can be rewound, memory-mapped, read from its end).
    pub fn is_regular_file(&self) -> bool {
        matches!(self.source, Source::File { regular: true, .. })
    }

    /// A regular file whose first bytes begin no format's magic number: plain text that a
    /// reader may take straight from the file (positional reads on several threads).
    pub fn is_plain_regular_file(&self) -> bool {
        self.is_regular_file() && told(&self.bytes) && !MAGICS.iter().any(|m| self.bytes.starts_with(m))
    }

    /// The whole raw stream, head included, without decompression.
    pub fn into_raw(self) -> Input {
        let head = io::Cursor::new(self.bytes);
        match self.source {
            Source::Stdin(r) => Box::new(head.chain(r)),
            Source::File { reader, .. } => Box::new(head.chain(reader)),
        }
    }

    /// The whole stream, gzip decompressed when it starts with the gzip magic bytes (BGZF
    /// on several threads).
    pub fn into_input(mut self) -> Result<Input> {
        let gzip = self.bytes.starts_with(&GZIP_MAGIC);
        if gzip {
            self.read_up_to(bgzf::HEADER, false)?;
        }
        let bgzf = bgzf::is_bgzf(&self.bytes);
        let place = self.place.to_string();
        let raw = self.into_raw();
        if bgzf {
            let decoder = Inflated { inner: bgzf::BgzfInput::new(raw), what: "BGZF", place };
            Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, decoder)))
        } else if gzip {
            let decoder = Inflated { inner: MultiGzDecoder::new(raw), what: "gzip", place };
            Ok(Box::new(BufReader::with_capacity(BUFFER_SIZE, decoder)))
        } else {
            Ok(raw)
        }
    }

    /// The file itself, rewound to its start, when the input is a regular file (formats
    /// that seek or memory-map need one); `None` for stdin, pipes and devices.
    pub fn into_regular_file(self) -> Result<Option<File>> {
        match self.source {
            Source::File { reader, regular: true } => {
                let mut file = reader.into_inner().0;
                file.rewind().map_err(|e| read_error(&self.place, e))?;
                Ok(Some(file))
            }
            _ => Ok(None),
        }
    }
}

/// Opens a regular file for reading, with messages that say what is wrong.
pub fn open_file(path: &Path) -> Result<File> {
    let place = Where::Path(path.to_path_buf());
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Error::file(&place, "no such file")),
        Err(e) => return Err(Error::file(&place, format!("cannot read: {}", e))),
        Ok(m) if m.is_dir() => return Err(Error::file(&place, "is a directory, not a sequence file")),
        Ok(_) => {}
    }
    File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Error::file(&place, "no such file"),
        _ => Error::file(&place, format!("cannot open: {}", e)),
    })
}

/// Reads up to `n` bytes from the start of `input` (fewer at end of input, or where they
/// already tell the format: see [`told`]) and returns them with a reader that still yields
/// the whole stream. Works on pipes, where a single read may return fewer bytes than asked.
pub fn peek(place: &Where, mut input: Input, n: usize) -> Result<(Vec<u8>, Input)> {
    let mut head = Vec::with_capacity(n);
    read_head(&mut input, &mut head, n, true).map_err(|e| read_error(place, e))?;
    let rest: Input = Box::new(io::Cursor::new(head.clone()).chain(input));
    Ok((head, rest))
}

/// Fills `buf` from `file` at offset `at` (positional reads: any thread, no shared cursor);
/// fewer bytes only at the end of the file. Returns the bytes read.
pub fn read_full_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Bytes a file's text starts at: 3 after a UTF-8 byte order mark (see [`skip_bom`]), else 0.
pub fn bom_len(place: &Where, file: &File) -> Result<u64> {
    let mut head = [0u8; 3];
    let got = read_full_at(file, &mut head, 0).map_err(|e| read_error(place, e))?;
    Ok(if &head[..got] == UTF8_BOM { 3 } else { 0 })
}

/// `input` without the UTF-8 byte order mark it may start with (TSV saved by a spreadsheet):
/// the mark is no part of the first line's first field.
pub fn skip_bom(place: &Where, mut input: Input) -> Result<Input> {
    let mut head = Vec::with_capacity(UTF8_BOM.len());
    let mut byte = [0u8; 1];
    while head.len() < UTF8_BOM.len() && UTF8_BOM.starts_with(&head) {
        match input.read(&mut byte) {
            Ok(0) => break,
            Ok(_) => head.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(read_error(place, e)),
        }
    }
    if head == UTF8_BOM {
        return Ok(input);
    }
    Ok(Box::new(io::Cursor::new(head).chain(input)))
}

/// Turns a read failure into the crate error: data the decoder rejects is the input's
/// fault (exit 2); anything else is an I/O failure.
pub fn read_error(place: &Where, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => Error::file(place, e),
        _ => Error::io(format!("reading {}", place), e),
    }
}

/// An inflater (gzip, BGZF) whose every failure reads as corrupt input, so that a truncated
/// file is reported, never taken for a shorter one.
struct Inflated<R> {
    inner: R,
    /// The format, for messages.
    what: &'static str,
    place: String,
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                return e;
            }
            io::Error::new(io::ErrorKind::InvalidData, format!("truncated or corrupt {} data ({})", self.what, e))
        })
    }
}

impl<R> std::fmt::Debug for Inflated<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Inflated({}, {})", self.what, self.place)
    }
}

/// What [`read_line_bounded`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line was read into the buffer (without its `\n`; a `\r` before it is kept).
    Read,
    /// End of input: nothing was read.
    End,
    /// The line is longer than the limit; the buffer holds its first part only.
    TooLong,
}

/// Reads one line into `buf` (cleared first), refusing to grow it past `limit` bytes.
pub fn read_line_bounded<R: BufRead + ?Sized>(input: &mut R, buf: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if any { Line::Read } else { Line::End });
        }
        any = true;
        let (part, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        if buf.len() + part.len() > limit {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(part);
        let used = part.len() + done as usize;
        input.consume(used);
        if done {
            return Ok(Line::Read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn read_all(path: &Path) -> Result<Vec<u8>> {
        let (place, mut input) = open_input(path)?;
        let mut out = Vec::new();
        input.read_to_end(&mut out).map_err(|e| read_error(&place, e))?;
        Ok(out)
    }

    #[test]
    fn plain_and_gzip_files_read_the_same_whatever_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let text = b">a\nACGT\n>b\nMKV\n";
        let plain = dir.path().join("x.fa.gz"); // misleading name: content decides
        std::fs::write(&plain, text).unwrap();
        let packed = dir.path().join("y.fa");
        std::fs::write(&packed, gzip(text)).unwrap();
        assert_eq!(read_all(&plain).unwrap(), text);
        assert_eq!(read_all(&packed).unwrap(), text);
    }

    #[test]
    fn multi_member_gzip_reads_every_member() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = gzip(b">a\nAC\n");
        data.extend(gzip(b">b\nGT\n"));
        let path = dir.path().join("m.gz");
        std::fs::write(&path, data).unwrap();
        assert_eq!(read_all(&path).unwrap(), b">a\nAC\n>b\nGT\n");
    }

    #[test]
    fn truncated_gzip_is_an_input_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let text: Vec<u8> = (0..20000).map(|i| b"ACDEFGHIKLMNPQRSTVWY\n"[i % 21]).collect();
        let data = gzip(&text);
        let path = dir.path().join("cut.gz");
        std::fs::write(&path, &data[..data.len() / 2]).unwrap();
        let err = read_all(&path).unwrap_err();
        let msg = err.to_string();
        assert_eq!(err.exit_code(), 2, "{}", msg);
        assert!(msg.contains("cut.gz") && msg.contains("truncated or corrupt gzip"), "{}", msg);
        // Cut inside the trailer too: the data all decompresses but the CRC/size is missing.
        std::fs::write(&path, &data[..data.len() - 3]).unwrap();
        let msg = read_all(&path).unwrap_err().to_string();
        assert!(msg.contains("truncated or corrupt gzip"), "{}", msg);
    }

    /// BGZF as bgzip writes it: blocks of at most 64 KiB, then the empty end-of-file block.
    fn bgzf(data: &[u8]) -> Vec<u8> {
        let mut w = noodles_bgzf::io::Writer::new(Vec::new());
        w.write_all(data).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn bgzf_is_detected_and_reads_like_gzip() {
        let dir = tempfile::tempdir().unwrap();
        // Pseudo-random residues: blocks of real size, so that a cut falls inside one.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let text: Vec<u8> = (0..300_000)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 61 == 60 {
                    b'\n'
                } else {
                    b"ACDEFGHIKLMNPQRSTVWY"[(x % 20) as usize]
                }
            })
            .collect();
        let data = bgzf(&text);
        assert!(bgzf::is_bgzf(&data) && !bgzf::is_bgzf(&gzip(&text)));
        let path = dir.path().join("x.tsv.gz");
        std::fs::write(&path, &data).unwrap();
        assert_eq!(read_all(&path).unwrap(), text);
        // Truncated inside a block, and a block's deflate data or CRC changed: input errors.
        // Cut inside a block's header, and inside the end-of-file block.
        for bad in
            [data[..data.len() / 2].to_vec(), data[..data.len() - 30].to_vec(), data[..data.len() - 3].to_vec(), {
                let mut d = data.clone();
                d[40] ^= 0x55;
                d
            }]
        {
            std::fs::write(&path, &bad).unwrap();
            let Err(err) = read_all(&path) else { panic!("bad BGZF data read without an error") };
            let msg = err.to_string();
            assert_eq!(err.exit_code(), 2, "{}", msg);
            assert!(msg.starts_with(&format!("{}: truncated or corrupt BGZF data", path.display())), "{}", msg);
        }
    }

    #[test]
    fn missing_file_and_directory_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.fa");
        let msg = open_input(&missing).err().unwrap().to_string();
        assert_eq!(msg, format!("{}: no such file", missing.display()));
        let msg = open_input(dir.path()).err().unwrap().to_string();
        assert!(msg.contains("is a directory"), "{}", msg);
    }

    #[test]
    fn bounded_lines_stop_at_the_limit() {
        let mut input: &[u8] = b"abc\r\n\nabcdefgh\nxy";
        let mut buf = Vec::new();
        assert_eq!(read_line_bounded(&mut input, &mut buf, 5).unwrap(), Line::Read);
        assert_eq!(buf, b"abc\r");
        assert_eq!(read_line_bounded(&mut input, &mut buf, 5).unwrap(), Line::Read);
        assert_eq!(buf, b"");
        assert_eq!(read_line_bounded(&mut input, &mut buf, 5).unwrap(), Line::TooLong);
        let mut input: &[u8] = b"xy";
        assert_eq!(read_line_bounded(&mut input, &mut buf, 5).unwrap(), Line::Read);
        assert_eq!(buf, b"xy");
        assert_eq!(read_line_bounded(&mut input, &mut buf, 5).unwrap(), Line::End);
    }

    // A pipe can be read once: the sniffed head must reach the reader, nothing reopened.
    #[test]
    fn a_fifo_is_read_once_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(&fifo, gzip(b">a\nM\n>b\nK\n")).unwrap())
        };
        let head = Head::open(&fifo, 8).unwrap();
        assert_eq!(&head.bytes[..2], GZIP_MAGIC);
        let mut out = Vec::new();
        head.into_input().unwrap().read_to_end(&mut out).unwrap();
        writer.join().unwrap();
        assert_eq!(out, b">a\nM\n>b\nK\n");
    }

    #[test]
    fn peek_keeps_the_whole_stream() {
        let place = Where::Stdin;
        // A reader that returns one byte per read, like a slow pipe.
        struct Trickle(Vec<u8>, usize);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[self.1];
                self.1 += 1;
                Ok(1)
            }
        }
        let input: Input = Box::new(BufReader::new(Trickle(b"ARROW1xyz".to_vec(), 0)));
        let (head, mut rest) = peek(&place, input, 6).unwrap();
        assert_eq!(head, b"ARROW1");
        let mut all = Vec::new();
        rest.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"ARROW1xyz");
    }
}

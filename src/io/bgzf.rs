//! BGZF (bgzip) input, inflated on several threads by `noodles-bgzf`: its blocks are gzip
//! members of at most 64 KiB that name their own size, so they inflate independently.
//!
//! noodles' reading thread ends quietly at a read failure or at a block cut short (the
//! consumer just sees the end), so the raw stream is watched on its way in: the block
//! boundaries are followed from the sizes in their headers, and an input that ends inside
//! a block, or fails, is reported when the inflated stream ends.

use std::io::{self, Read};
use std::num::NonZero;
use std::sync::{Arc, Mutex};

use noodles_bgzf::io::MultithreadedReader;

/// Bytes of a BGZF block's header: the gzip header with its `BC` extra subfield, whose
/// last two bytes hold the block's size less one (SAM specification, 4.1).
pub const HEADER: usize = 18;

/// Bytes of the smallest block: a header and the gzip trailer (CRC32, size).
const MIN_BLOCK: u64 = HEADER as u64 + 8;

/// A gzip member whose header is a BGZF block's: the `BC` subfield of 2 bytes first.
pub fn is_bgzf(head: &[u8]) -> bool {
    head.len() >= 16
        && head[..3] == [0x1f, 0x8b, 8]
        && head[3] & 4 != 0
        && head[10..12] == [6, 0]
        && head[12..14] == *b"BC"
        && head[14..16] == [2, 0]
}

/// The inflated stream of a BGZF input, on every core.
pub struct BgzfInput<R> {
    inner: MultithreadedReader<Watched<R>>,
    seen: Arc<Mutex<Seen>>,
}

impl<R: Read + Send + 'static> BgzfInput<R> {
    pub fn new(raw: R) -> BgzfInput<R> {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let threads = std::thread::available_parallelism().unwrap_or(NonZero::<usize>::MIN);
        let watched = Watched { inner: raw, seen: Arc::clone(&seen) };
        BgzfInput { inner: MultithreadedReader::with_worker_count(threads, watched), seen }
    }
}

impl<R: Read + Send + 'static> Read for BgzfInput<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            let seen = self.seen.lock().map_err(|_| io::Error::other("BGZF reading thread failed"))?;
            if let Some(problem) = seen.problem() {
                return Err(io::Error::new(io::ErrorKind::InvalidData, problem));
            }
        }
        Ok(n)
    }
}

/// What went by on the raw stream.
#[derive(Default)]
struct Seen {
    /// Raw bytes read.
    read: u64,
    /// Where the block being read ends (where the next header starts).
    block_end: u64,
    /// The first bytes of a header being read.
    header: Vec<u8>,
    ended: bool,
    failed: Option<String>,
}

impl Seen {
    fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && self.failed.is_none() {
            if self.read < self.block_end {
                let skip = (self.block_end - self.read).min(bytes.len() as u64) as usize;
                bytes = &bytes[skip..];
                self.read += skip as u64;
                continue;
            }
            let take = (HEADER - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            self.read += take as u64;
            if self.header.len() == HEADER {
                let size = u64::from(u16::from_le_bytes([self.header[16], self.header[17]])) + 1;
                if size < MIN_BLOCK {
                    self.failed = Some(format!("block at byte {} has size {size}", self.read - HEADER as u64));
                }
                self.block_end = self.read - HEADER as u64 + size;
                self.header.clear();
            }
        }
    }

    /// Why the inflated stream ended early, if it did.
    fn problem(&self) -> Option<String> {
        if let Some(failed) = &self.failed {
            return Some(failed.clone());
        }
        if !self.ended {
            return Some("the reading thread stopped".into());
        }
        if !self.header.is_empty() || self.read < self.block_end {
            return Some(format!("the data ends inside a block (after {} bytes)", self.read));
        }
        None
    }
}

/// The raw stream, watched.
struct Watched<R> {
    inner: R,
    seen: Arc<Mutex<Seen>>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.inner.read(buf);
        if let Ok(mut seen) = self.seen.lock() {
            match &result {
                Ok(0) if !buf.is_empty() => seen.ended = true,
                Ok(n) => seen.see(&buf[..*n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => seen.failed = Some(e.to_string()),
            }
        }
        result
    }
}

//! BGZF output (BAM's container, SAM specification 4.1): the bytes cut into blocks of at
//! most [`BLOCK_DATA`], each compressed as one gzip member whose `BC` extra field names its
//! size, then an empty block that marks the end.
//!
//! The caller's bytes are gathered in groups of [`GROUP_BLOCKS`] blocks and handed to a
//! thread of their own, which deflates a group's blocks on a pool sized for the machine
//! (`sw-bgzf-N`, one libdeflate compressor kept per thread) and writes them in order; the
//! caller goes on encoding meanwhile. (noodles' writer, used before, compressed one block
//! per job with a fresh zlib stream each time at zlib's level 6.)

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use rayon::prelude::*;

/// Bytes of text per block at most (as htslib and noodles cut them).
pub(super) const BLOCK_DATA: usize = 0xff00;

/// The most a whole block may take (its size less one must fit in 16 bits).
const MAX_BLOCK: usize = 1 << 16;

/// A block's gzip header with the `BC` subfield, less the block size that follows it.
const HEADER: [u8; 16] = [0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0];

/// Header, block size, and the trailer's CRC32 and text size.
const FRAME: usize = HEADER.len() + 2 + 8;

/// The end-of-file marker: an empty block.
pub(super) const EOF: [u8; 28] =
    [0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, b'B', b'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// libdeflate's level, chosen by measurement (BENCHMARKS.md, issue 59: the BAM of 100k reads
/// on one core: level 1 twice level 6's rate and 4x zlib's level 6, used before, for a file
/// 4% larger; levels 2-5 no smaller than 1 by more than 2%, at 60% of its rate).
pub(super) const LEVEL: i32 = 1;

/// Blocks per group handed to the compressing thread (4 MiB of text: a pool's worth).
const GROUP_BLOCKS: usize = 64;

/// Groups waiting for the compressing thread at most.
const QUEUE: usize = 2;

thread_local! {
    /// The compressor of each pool thread, made at its first block and kept.
    static COMPRESSOR: RefCell<Option<libdeflater::Compressor>> = const { RefCell::new(None) };
}

/// A BGZF stream into `W`, compressed on a pool.
pub(super) struct BgzfWriter<W: Write + Send + 'static> {
    /// Text not yet handed on (less than a group).
    group: Vec<u8>,
    groups: Option<SyncSender<Vec<u8>>>,
    /// Group buffers handed back once compressed.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<W>>>,
}

impl<W: Write + Send + 'static> BgzfWriter<W> {
    pub(super) fn new(inner: W) -> BgzfWriter<W> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(inner, threads)
    }

    pub(super) fn with_threads(inner: W, threads: usize) -> BgzfWriter<W> {
        let (groups, received) = sync_channel::<Vec<u8>>(QUEUE);
        let (give_back, spare) = sync_channel(QUEUE + 1);
        let thread = crate::threads::spawn("sw-bgzf", move || compress_groups(inner, threads, received, give_back));
        BgzfWriter {
            group: Vec::with_capacity(GROUP_BLOCKS * BLOCK_DATA),
            groups: Some(groups),
            spare,
            thread: Some(thread),
        }
    }

    /// Hands the text gathered so far to the compressing thread.
    fn send(&mut self) -> io::Result<()> {
        if self.group.is_empty() {
            return Ok(());
        }
        let mut next = self.spare.try_recv().unwrap_or_else(|_| Vec::with_capacity(GROUP_BLOCKS * BLOCK_DATA));
        next.clear();
        let group = std::mem::replace(&mut self.group, next);
        let sent = self.groups.as_ref().is_some_and(|g| g.send(group).is_ok());
        if sent {
            return Ok(());
        }
        // The thread stopped on an error: say which.
        self.groups = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(io::Error::other("the BGZF compressing thread panicked")),
            _ => Err(io::Error::other("the BGZF compressing thread stopped")),
        }
    }

    /// Compresses what is left, writes the end-of-file block, and returns the output.
    pub(super) fn finish(mut self) -> io::Result<W> {
        self.send()?;
        self.groups = None;
        let mut inner = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(inner)) => inner?,
            _ => return Err(io::Error::other("the BGZF compressing thread panicked")),
        };
        inner.write_all(&EOF)?;
        inner.flush()?;
        Ok(inner)
    }
}

impl<W: Write + Send + 'static> Write for BgzfWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = GROUP_BLOCKS * BLOCK_DATA - self.group.len();
        let n = buf.len().min(room);
        self.group.extend_from_slice(&buf[..n]);
        if self.group.len() == GROUP_BLOCKS * BLOCK_DATA {
            self.send()?;
        }
        Ok(n)
    }

    /// Hands on the text gathered so far (it ends a block); the bytes reach the output
    /// once compressed.
    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

impl<W: Write + Send + 'static> Drop for BgzfWriter<W> {
    fn drop(&mut self) {
        // Unfinished (an error elsewhere): stop the thread; nothing more is written.
        self.groups = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The compressing thread: each group's blocks deflated on the pool, written in order.
fn compress_groups<W: Write>(
    mut inner: W,
    threads: usize,
    groups: Receiver<Vec<u8>>,
    give_back: SyncSender<Vec<u8>>,
) -> io::Result<W> {
    let pool = crate::threads::pool("sw-bgzf", threads.max(1)).map_err(|e| io::Error::other(e.to_string()))?;
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    for group in groups {
        let texts: Vec<&[u8]> = group.chunks(BLOCK_DATA).collect();
        if blocks.len() < texts.len() {
            blocks.resize_with(texts.len(), Vec::new);
        }
        let outs = &mut blocks[..texts.len()];
        pool.install(|| texts.par_iter().zip(outs.par_iter_mut()).for_each(|(text, out)| block(text, out)));
        for out in &blocks[..texts.len()] {
            inner.write_all(out)?;
        }
        let _ = give_back.try_send(group);
    }
    Ok(inner)
}

/// `text` (at most [`BLOCK_DATA`] bytes) as one BGZF block in `out`.
pub(super) fn block(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.resize(MAX_BLOCK, 0);
    let body = &mut out[HEADER.len() + 2..MAX_BLOCK - 8];
    let deflated = COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let compressor = c.get_or_insert_with(|| libdeflater::Compressor::new(level(LEVEL)));
        compressor.deflate_compress(text, body).ok()
    });
    // Text that does not shrink enough to fit is stored (level 0 always fits).
    let n = match deflated {
        Some(n) => n,
        None => libdeflater::Compressor::new(level(0)).deflate_compress(text, body).unwrap_or(0),
    };
    let size = HEADER.len() + 2 + n + 8;
    out[..HEADER.len()].copy_from_slice(&HEADER);
    out[HEADER.len()..HEADER.len() + 2].copy_from_slice(&((size - 1) as u16).to_le_bytes());
    let at = HEADER.len() + 2 + n;
    out[at..at + 4].copy_from_slice(&libdeflater::crc32(text).to_le_bytes());
    out[at + 4..at + 8].copy_from_slice(&(text.len() as u32).to_le_bytes());
    out.truncate(size);
    debug_assert!(size <= MAX_BLOCK && FRAME + n == size);
}

fn level(n: i32) -> libdeflater::CompressionLvl {
    libdeflater::CompressionLvl::new(n).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Text of `n` bytes: runs that compress and stretches of xorshift noise that do not
    /// (those blocks are stored).
    fn text(n: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if (i / 200_000) % 2 == 0 {
                    b"ACGT\t"[(i / 7) % 5]
                } else {
                    x as u8
                }
            })
            .collect()
    }

    // Oracles: flate2's multi-member gzip reader and noodles' BGZF reader inflate what the
    // writer wrote back to the text, across groups, blocks, flushes and stored blocks; every
    // block names its own size and the stream ends with the EOF block.
    #[test]
    fn blocks_inflate_back_to_the_text_and_end_with_eof() {
        let data = text(3 * GROUP_BLOCKS * BLOCK_DATA + 12_345);
        for threads in [1, 3] {
            let mut w = BgzfWriter::with_threads(Vec::new(), threads);
            // Odd write sizes and a flush in the middle (a short block).
            let (a, b) = data.split_at(1_000_003);
            for piece in a.chunks(77_777) {
                w.write_all(piece).unwrap();
            }
            w.flush().unwrap();
            w.write_all(b).unwrap();
            let out = w.finish().unwrap();
            assert!(out.ends_with(&EOF));
            let mut at = 0;
            let mut blocks = 0;
            while at < out.len() {
                assert_eq!(out[at..at + 16], HEADER, "block {blocks}");
                let size = u16::from_le_bytes([out[at + 16], out[at + 17]]) as usize + 1;
                let isize = u32::from_le_bytes(out[at + size - 4..at + size].try_into().unwrap()) as usize;
                assert!(size <= MAX_BLOCK && isize <= BLOCK_DATA);
                at += size;
                blocks += 1;
            }
            assert_eq!(at, out.len());
            assert!(blocks > data.len() / BLOCK_DATA);
            let mut back = Vec::new();
            flate2::read::MultiGzDecoder::new(&out[..]).read_to_end(&mut back).unwrap();
            assert!(back == data, "flate2: {threads} threads");
            let mut back = Vec::new();
            noodles_bgzf::io::Reader::new(&out[..]).read_to_end(&mut back).unwrap();
            assert!(back == data, "noodles: {threads} threads");
        }
    }

    #[test]
    fn an_empty_stream_is_the_eof_block() {
        let out = BgzfWriter::with_threads(Vec::new(), 2).finish().unwrap();
        assert_eq!(out, EOF);
    }
}

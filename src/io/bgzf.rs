//! BGZF (bgzip) input, inflated on the thread pool. Its blocks are gzip members of at most
//! 64 KiB that name their size in the header and their inflated size in the trailer, so a
//! run of blocks inflates at once, each block straight into its place in one buffer.
//!
//! Three stages overlap: a thread reads whole blocks; a second takes the blocks that have
//! arrived (up to [`GROUP`]) and inflates them in parallel; the consumer reads the inflated
//! bytes in order. A slow producer's blocks go on as they come (a group is what has
//! arrived), a fast one's in groups big enough to keep every core busy. (noodles' reader,
//! used before, had one block per thread in flight and handed them over one at a time:
//! 0.86 GB/s of text on 16 cores.)
//!
//! Every problem (a cut block, a bad header, deflate data or CRC32 that do not check out, a
//! read failure) is an error after the bytes of the blocks before it, never a quiet end.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};

use flate2::{Crc, Decompress, FlushDecompress, Status};
use rayon::prelude::*;

/// Bytes of a BGZF block's header: the gzip header with its `BC` extra subfield, whose
/// last two bytes hold the block's size less one (SAM specification, 4.1).
pub const HEADER: usize = 18;

/// The gzip trailer: CRC32 and size of the inflated data.
const TRAILER: usize = 8;

/// Bytes of the smallest block: a header and the trailer.
const MIN_BLOCK: usize = HEADER + TRAILER;

/// The most a block inflates to.
const MAX_INFLATED: usize = 1 << 16;

/// Blocks inflated together at most (16 MiB of text).
const GROUP: usize = 256;

/// Blocks read ahead of the inflating at most.
const READ_AHEAD: usize = 2 * GROUP;

/// A gzip member whose header is a BGZF block's: the `BC` subfield of 2 bytes first.
pub fn is_bgzf(head: &[u8]) -> bool {
    head.len() >= 16
        && head[..3] == [0x1f, 0x8b, 8]
        && head[3] & 4 != 0
        && head[10..12] == [6, 0]
        && head[12..14] == *b"BC"
        && head[14..16] == [2, 0]
}

/// The inflated stream of a BGZF input.
pub struct BgzfInput {
    chunks: Receiver<Step<Text>>,
    /// Buffers read out go back to the inflating thread (their pages stay).
    used: SyncSender<Text>,
    current: Text,
    pos: usize,
    /// Where the stream stopped: `None` at its end, else why.
    stopped: Option<Option<String>>,
}

/// What a stage hands on: its next item, the end, or why it stopped.
enum Step<T> {
    Item(T),
    End,
    Failed(String),
}

/// A block as read: where it starts in the raw stream, and its bytes after the header.
struct Block {
    at: u64,
    rest: Vec<u8>,
}

/// Inflated bytes `bytes[..len]`; the rest of `bytes` was written before (a recycled buffer
/// is not zeroed again).
#[derive(Default)]
struct Text {
    bytes: Vec<u8>,
    len: usize,
}

impl BgzfInput {
    pub fn new(raw: impl Read + Send + 'static) -> BgzfInput {
        let (block_tx, blocks) = sync_channel(READ_AHEAD);
        crate::threads::spawn("sw-bgzf-read", move || read_blocks(raw, block_tx));
        let (chunk_tx, chunks) = sync_channel(2);
        let (used, recycled) = sync_channel(4);
        crate::threads::spawn("sw-bgzf-inflate", move || inflate_groups(blocks, chunk_tx, recycled));
        BgzfInput { chunks, used, current: Text::default(), pos: 0, stopped: None }
    }
}

impl Read for BgzfInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.current.len || buf.is_empty() {
                let n = buf.len().min(self.current.len - self.pos);
                buf[..n].copy_from_slice(&self.current.bytes[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            match &self.stopped {
                Some(None) => return Ok(0),
                Some(Some(problem)) => return Err(io::Error::new(io::ErrorKind::InvalidData, problem.clone())),
                None => {}
            }
            let next = self.chunks.recv().unwrap_or_else(|_| Step::Failed("the inflating thread stopped".into()));
            match next {
                Step::Item(chunk) => {
                    let _ = self.used.try_send(std::mem::replace(&mut self.current, chunk));
                    self.pos = 0;
                }
                Step::End => self.stopped = Some(None),
                Step::Failed(problem) => self.stopped = Some(Some(problem)),
            }
        }
    }
}

/// Reads `raw` block by block into `tx`, to its end or its first problem.
fn read_blocks(mut raw: impl Read, tx: SyncSender<Step<Block>>) {
    let mut at = 0u64;
    loop {
        let step = match read_block(&mut raw, at) {
            Ok(Some(block)) => {
                at += (HEADER + block.rest.len()) as u64;
                Step::Item(block)
            }
            Ok(None) => Step::End,
            Err(problem) => Step::Failed(problem),
        };
        let last = !matches!(step, Step::Item(_));
        if tx.send(step).is_err() || last {
            return;
        }
    }
}

/// The block at byte `at`; `None` at the end of the input.
fn read_block(raw: &mut impl Read, at: u64) -> Result<Option<Block>, String> {
    let mut header = [0u8; HEADER];
    let n = read_full(raw, &mut header)?;
    if n == 0 {
        return Ok(None);
    }
    if n < HEADER {
        return Err(format!("the data ends inside a block (after {} bytes)", at + n as u64));
    }
    if !is_bgzf(&header) {
        return Err(format!("the block at byte {at} is not a BGZF block"));
    }
    let size = usize::from(u16::from_le_bytes([header[16], header[17]])) + 1;
    if size < MIN_BLOCK {
        return Err(format!("block at byte {at} has size {size}"));
    }
    let mut rest = vec![0u8; size - HEADER];
    let n = read_full(raw, &mut rest)?;
    if n < rest.len() {
        return Err(format!("the data ends inside a block (after {} bytes)", at + (HEADER + n) as u64));
    }
    Ok(Some(Block { at, rest }))
}

/// Reads until `buf` is full or the input ends; how many bytes were read.
fn read_full(raw: &mut impl Read, buf: &mut [u8]) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match raw.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(n)
}

/// Inflates the blocks of `blocks` in groups (those that have arrived, up to [`GROUP`]) and
/// hands the text on in order, in buffers `recycled` gives back.
fn inflate_groups(blocks: Receiver<Step<Block>>, tx: SyncSender<Step<Text>>, recycled: Receiver<Text>) {
    loop {
        let mut group = Vec::new();
        let mut last = None;
        let mut next = blocks.recv().unwrap_or_else(|_| Step::Failed("the reading thread stopped".into()));
        loop {
            match next {
                Step::Item(block) => group.push(block),
                Step::End => {
                    last = Some(Step::End);
                    break;
                }
                Step::Failed(problem) => {
                    last = Some(Step::Failed(problem));
                    break;
                }
            }
            if group.len() == GROUP {
                break;
            }
            next = match blocks.try_recv() {
                Ok(step) => step,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => Step::Failed("the reading thread stopped".into()),
            };
        }
        let mut out = recycled.try_recv().unwrap_or_default();
        let failed = inflate(&group, &mut out);
        if out.len > 0 && tx.send(Step::Item(out)).is_err() {
            return;
        }
        if let Some(last) = failed.map(Step::Failed).or(last) {
            let _ = tx.send(last);
            return;
        }
    }
}

/// Inflates `group` into `out`, block after block; on a bad block, `out` holds the text of
/// those before it, and the problem is returned.
fn inflate(group: &[Block], out: &mut Text) -> Option<String> {
    // Where each block's text goes, from the sizes in the trailers.
    let mut ends = Vec::with_capacity(group.len());
    let mut end = 0;
    let mut bad_size = None;
    for (i, block) in group.iter().enumerate() {
        let size = block.inflated_size();
        if size > MAX_INFLATED {
            bad_size = Some((i, format!("block at byte {} declares {size} inflated bytes", block.at)));
            break;
        }
        end += size;
        ends.push(end);
    }
    if out.bytes.len() < end {
        out.bytes.resize(end, 0);
    }
    let mut slices = Vec::with_capacity(ends.len());
    let mut rest = &mut out.bytes[..end];
    let mut start = 0;
    for &end in &ends {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
        slices.push(head);
        rest = tail;
        start = end;
    }
    let first_bad = slices
        .par_iter_mut()
        .enumerate()
        .map_init(
            || Decompress::new(false),
            |z, (i, text)| group[i].inflate_into(text, z).err().map(|problem| (i, problem)),
        )
        .flatten()
        .min_by_key(|(i, _)| *i);
    let (good, problem) = match first_bad.or(bad_size) {
        Some((i, problem)) => (i, Some(problem)),
        None => (ends.len(), None),
    };
    out.len = if good == 0 { 0 } else { ends[good - 1] };
    problem
}

impl Block {
    fn inflated_size(&self) -> usize {
        let n = self.rest.len();
        u32::from_le_bytes([self.rest[n - 4], self.rest[n - 3], self.rest[n - 2], self.rest[n - 1]]) as usize
    }

    fn crc32(&self) -> u32 {
        let n = self.rest.len();
        u32::from_le_bytes([self.rest[n - 8], self.rest[n - 7], self.rest[n - 6], self.rest[n - 5]])
    }

    /// Inflates the block into `text`, which has its declared size, and checks its CRC32.
    fn inflate_into(&self, text: &mut [u8], z: &mut Decompress) -> Result<(), String> {
        let deflated = &self.rest[..self.rest.len() - TRAILER];
        let bad = |what: &str| format!("block at byte {}: {what}", self.at);
        z.reset(false);
        // An empty block (the end-of-file marker) still needs room to finish in.
        let mut room = [0u8; 1];
        let target = if text.is_empty() { &mut room[..] } else { &mut *text };
        let status = z.decompress(deflated, target, FlushDecompress::Finish).map_err(|e| bad(&e.to_string()))?;
        if status != Status::StreamEnd || z.total_out() as usize != text.len() {
            return Err(bad("its deflate data do not inflate to the size in its trailer"));
        }
        let mut crc = Crc::new();
        crc.update(text);
        if crc.sum() != self.crc32() {
            return Err(bad("CRC32 mismatch"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// BGZF as bgzip writes it, with its end-of-file block.
    fn bgzf(text: &[u8]) -> Vec<u8> {
        let mut w = noodles_bgzf::io::Writer::new(Vec::new());
        w.write_all(text).unwrap();
        w.finish().unwrap()
    }

    fn text(n: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"ACGT\n"[(x % 5) as usize]
            })
            .collect()
    }

    /// A raw stream that hands out at most `step` bytes a read, like a slow pipe.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// Everything read, and the error that ended it.
    fn read(data: Vec<u8>, step: usize) -> (Vec<u8>, Option<String>) {
        let mut input = BgzfInput::new(Trickle { data, pos: 0, step });
        let mut out = Vec::new();
        let mut buf = vec![0u8; 100_000];
        loop {
            match input.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    /// Where each block starts, walked through the sizes in the headers, and the size of
    /// its text from its trailer.
    fn blocks(data: &[u8]) -> Vec<(usize, usize)> {
        let mut blocks = Vec::new();
        let mut at = 0;
        while at < data.len() {
            let end = at + usize::from(u16::from_le_bytes([data[at + 16], data[at + 17]])) + 1;
            blocks.push((at, u32::from_le_bytes(data[end - 4..end].try_into().unwrap()) as usize));
            at = end;
        }
        blocks
    }

    #[test]
    fn more_blocks_than_a_group_read_back_in_order_however_they_arrive() {
        // Two files concatenated (an end-of-file block in the middle), over a group.
        let (a, b) = (text((GROUP + 3) << 16), text(1000));
        let mut data = bgzf(&a);
        data.extend(bgzf(&b));
        let want = [a, b].concat();
        for step in [1 << 20, 4096, 7] {
            let (got, problem) = read(data.clone(), step);
            assert_eq!(problem, None);
            assert!(got == want, "{step}-byte reads: {} bytes, {} wanted", got.len(), want.len());
        }
        assert_eq!(read(bgzf(b""), 100), (Vec::new(), None));
    }

    #[test]
    fn a_bad_block_ends_the_text_after_the_blocks_before_it() {
        let text = text(20 << 16);
        let data = bgzf(&text);
        let blocks = blocks(&data);
        assert!(blocks.len() > 20);
        let starts: Vec<usize> = blocks.iter().map(|b| b.0).collect();
        let text_before = |k: usize| blocks[..k].iter().map(|b| b.1).sum::<usize>();
        // Block 7's deflate data, then its CRC32, changed; the input cut inside block 12's
        // body, then inside its header.
        let mut deflate = data.clone();
        deflate[starts[7] + HEADER + 100] ^= 0x55;
        let mut crc = data.clone();
        crc[starts[8] - 8] ^= 1;
        for (bad, good_blocks, problem) in [
            (deflate, 7, format!("block at byte {}", starts[7])),
            (crc, 7, format!("block at byte {}: CRC32 mismatch", starts[7])),
            (data[..starts[12] + 100].to_vec(), 12, "the data ends inside a block".to_string()),
            (data[..starts[12] + 5].to_vec(), 12, "the data ends inside a block".to_string()),
        ] {
            let (got, error) = read(bad, 1 << 16);
            assert!(got == text[..text_before(good_blocks)], "{problem}: {} bytes", got.len());
            let error = error.expect("an error");
            assert!(error.starts_with(&problem), "{error}");
        }
    }
}

//! The columnar batch the pairhmm engines consume: reads (bases and four quality strings in
//! contiguous buffers sharing one offset list), haplotypes (bases), group names, and the
//! (read, haplotype, group) pairs to compute, in output order. Appending a record copies its
//! bytes into the buffers: no allocation per record once the buffers have grown.

use super::model::{base_code, MAX_QUAL, MIN_BASE_QUAL};

/// Strings in one buffer with end offsets (as Arrow stores them).
#[derive(Debug, Clone, Default)]
pub struct Strings {
    data: String,
    ends: Vec<usize>,
}

impl Strings {
    pub fn push(&mut self, s: &str) -> u32 {
        self.data.push_str(s);
        self.ends.push(self.data.len());
        (self.ends.len() - 1) as u32
    }

    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }
}

/// One pair to compute: indexes into the batch's reads, haplotypes and groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairRef {
    pub read: u32,
    pub hap: u32,
    pub group: u32,
}

/// A read's bases (codes 0..=4) and qualities (phred), borrowed from a batch.
#[derive(Debug, Clone, Copy)]
pub struct ReadView<'a> {
    pub bases: &'a [u8],
    pub base_q: &'a [u8],
    pub ins_q: &'a [u8],
    pub del_q: &'a [u8],
    pub gcp_q: &'a [u8],
}

impl ReadView<'_> {
    pub fn len(&self) -> usize {
        self.bases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }
}

/// Why a record was refused; the reader adds file and record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

#[derive(Debug, Clone, Default)]
pub struct PairBatch {
    pub read_ids: Strings,
    read_bases: Vec<u8>,
    base_q: Vec<u8>,
    ins_q: Vec<u8>,
    del_q: Vec<u8>,
    gcp_q: Vec<u8>,
    /// End of read r in the read buffers.
    read_ends: Vec<usize>,
    pub hap_ids: Strings,
    hap_bases: Vec<u8>,
    hap_ends: Vec<usize>,
    pub groups: Strings,
    pub pairs: Vec<PairRef>,
}

/// Qualities of one read as given: phred+33 text, or one constant for the whole read (gcp).
#[derive(Debug, Clone, Copy)]
pub enum Quals<'a> {
    Text(&'a [u8]),
    Constant(u8),
}

impl PairBatch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn clear(&mut self) {
        self.read_ids.clear();
        for v in [&mut self.read_bases, &mut self.base_q, &mut self.ins_q, &mut self.del_q, &mut self.gcp_q] {
            v.clear();
        }
        self.read_ends.clear();
        self.hap_ids.clear();
        self.hap_bases.clear();
        self.hap_ends.clear();
        self.groups.clear();
        self.pairs.clear();
    }

    pub fn read_count(&self) -> usize {
        self.read_ends.len()
    }

    pub fn hap_count(&self) -> usize {
        self.hap_ends.len()
    }

    /// The read buffers whole (bases, base, insertion, deletion, gap-continuation
    /// qualities; read r starts at [`read_start`](Self::read_start)`(r)` in each).
    pub fn read_buffers(&self) -> [&[u8]; 5] {
        [&self.read_bases, &self.base_q, &self.ins_q, &self.del_q, &self.gcp_q]
    }

    pub fn read_start(&self, r: usize) -> usize {
        if r == 0 {
            0
        } else {
            self.read_ends[r - 1]
        }
    }

    /// The haplotype bases whole; haplotype h starts at [`hap_start`](Self::hap_start)`(h)`.
    pub fn hap_buffer(&self) -> &[u8] {
        &self.hap_bases
    }

    pub fn hap_start(&self, h: usize) -> usize {
        if h == 0 {
            0
        } else {
            self.hap_ends[h - 1]
        }
    }

    /// Read r's bases and qualities.
    pub fn read(&self, r: usize) -> ReadView<'_> {
        let start = if r == 0 { 0 } else { self.read_ends[r - 1] };
        let range = start..self.read_ends[r];
        ReadView {
            bases: &self.read_bases[range.clone()],
            base_q: &self.base_q[range.clone()],
            ins_q: &self.ins_q[range.clone()],
            del_q: &self.del_q[range.clone()],
            gcp_q: &self.gcp_q[range],
        }
    }

    /// Haplotype h's bases (codes 0..=4).
    pub fn hap(&self, h: usize) -> &[u8] {
        let start = if h == 0 { 0 } else { self.hap_ends[h - 1] };
        &self.hap_bases[start..self.hap_ends[h]]
    }

    /// Sum of read length x haplotype length over the pairs.
    pub fn cells(&self) -> u64 {
        self.pairs.iter().map(|p| (self.read(p.read as usize).len() * self.hap(p.hap as usize).len()) as u64).sum()
    }

    /// Bytes held, for batch size limits.
    pub fn bytes(&self) -> usize {
        self.read_bases.len() * 5 + self.hap_bases.len() + self.pairs.len() * 12
    }

    /// Appends a read after checking it; on error the batch is unchanged.
    pub fn push_read(
        &mut self,
        id: &str,
        bases: &[u8],
        base_q: &[u8],
        ins_q: &[u8],
        del_q: &[u8],
        gcp: Quals<'_>,
    ) -> Result<u32, Invalid> {
        if bases.is_empty() {
            return Err(Invalid("empty read".into()));
        }
        let n = bases.len();
        let start = self.read_bases.len();
        let result = (|| {
            check_len("base qualities", base_q.len(), n)?;
            check_len("insertion qualities", ins_q.len(), n)?;
            check_len("deletion qualities", del_q.len(), n)?;
            if let Quals::Text(g) = gcp {
                check_len("gap-continuation qualities", g.len(), n)?;
            }
            push_bases(&mut self.read_bases, bases, "read")?;
            push_quals(&mut self.base_q, base_q, "base", MIN_BASE_QUAL)?;
            push_quals(&mut self.ins_q, ins_q, "insertion", 0)?;
            push_quals(&mut self.del_q, del_q, "deletion", 0)?;
            match gcp {
                Quals::Text(g) => push_quals(&mut self.gcp_q, g, "gap-continuation", 0),
                Quals::Constant(q) if q <= MAX_QUAL => {
                    self.gcp_q.resize(start + n, q);
                    Ok(())
                }
                Quals::Constant(q) => Err(Invalid(format!("gap-continuation quality {q} is above {MAX_QUAL}"))),
            }
        })();
        if let Err(e) = result {
            for v in [&mut self.read_bases, &mut self.base_q, &mut self.ins_q, &mut self.del_q, &mut self.gcp_q] {
                v.truncate(start);
            }
            return Err(e);
        }
        self.read_ends.push(self.read_bases.len());
        Ok(self.read_ids.push(id))
    }

    /// Appends a haplotype after checking it.
    pub fn push_hap(&mut self, id: &str, bases: &[u8]) -> Result<u32, Invalid> {
        if bases.is_empty() {
            return Err(Invalid("empty haplotype".into()));
        }
        let start = self.hap_bases.len();
        if let Err(e) = push_bases(&mut self.hap_bases, bases, "haplotype") {
            self.hap_bases.truncate(start);
            return Err(e);
        }
        self.hap_ends.push(self.hap_bases.len());
        Ok(self.hap_ids.push(id))
    }
}

impl PairBatch {
    /// Appends haplotype `h` of `other` (already checked there).
    pub fn push_hap_from(&mut self, other: &PairBatch, h: usize) -> u32 {
        self.hap_bases.extend_from_slice(other.hap(h));
        self.hap_ends.push(self.hap_bases.len());
        self.hap_ids.push(other.hap_ids.get(h))
    }
}

fn check_len(what: &str, got: usize, bases: usize) -> Result<(), Invalid> {
    if got == bases {
        Ok(())
    } else {
        Err(Invalid(format!("{got} {what} for {bases} bases")))
    }
}

fn push_bases(out: &mut Vec<u8>, bases: &[u8], what: &str) -> Result<(), Invalid> {
    for (i, &b) in bases.iter().enumerate() {
        match base_code(b) {
            Some(c) => out.push(c),
            None => {
                return Err(Invalid(format!("{what} base {} is {}: expected A, C, G, T or N", i + 1, describe_byte(b))))
            }
        }
    }
    Ok(())
}

fn push_quals(out: &mut Vec<u8>, quals: &[u8], what: &str, floor: u8) -> Result<(), Invalid> {
    for (i, &c) in quals.iter().enumerate() {
        if !(33..=33 + MAX_QUAL).contains(&c) {
            return Err(Invalid(format!(
                "{what} quality {} is {}: expected phred+33 text ('!' to '~', quality 0 to {MAX_QUAL})",
                i + 1,
                describe_byte(c)
            )));
        }
        out.push((c - 33).max(floor));
    }
    Ok(())
}

fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_checked_and_floored() {
        let mut b = PairBatch::new();
        let r = b.push_read("r", b"ACgtN", b"!!5II", b"IIIII", b"HHHHH", Quals::Constant(10)).unwrap();
        let v = b.read(r as usize);
        assert_eq!(v.bases, &[0, 1, 2, 3, 4]);
        assert_eq!(v.base_q, &[6, 6, 20, 40, 40]);
        assert_eq!(v.gcp_q, &[10; 5]);
        let bad = [
            b.push_read("x", b"ACGX", b"IIII", b"IIII", b"IIII", Quals::Constant(10)),
            b.push_read("x", b"ACG", b"II", b"III", b"III", Quals::Constant(10)),
            b.push_read("x", b"ACG", b"II\x7f", b"III", b"III", Quals::Constant(10)),
            b.push_read("x", b"", b"", b"", b"", Quals::Constant(10)),
            b.push_read("x", b"ACG", b"III", b"III", b"III", Quals::Text(b"II")),
        ];
        assert!(bad.iter().all(|r| r.is_err()), "{bad:?}");
        assert_eq!(b.read_count(), 1);
        assert_eq!(b.read(0).bases.len(), 5);
    }
}

//! The in-memory protein database that search scans: sequences sorted by length (so
//! engines can bin them), each remembering its position in the input file (so ranking and
//! output never depend on that sort). Built from FASTA or mapped from a `makedb` file.

use std::sync::Arc;

/// Bytes owned in memory or borrowed from a memory map.
#[derive(Clone)]
pub enum Bytes {
    Owned(Arc<Vec<u8>>),
    Mapped { map: Arc<memmap2::Mmap>, start: usize, len: usize },
}

impl Bytes {
    /// The same bytes of the same allocation (a clone, not equal content). Sound as an
    /// identity while `self` is held: the allocation cannot be freed and reused meanwhile.
    pub fn same(&self, other: &Bytes) -> bool {
        match (self, other) {
            (Bytes::Owned(a), Bytes::Owned(b)) => Arc::ptr_eq(a, b),
            (Bytes::Mapped { map: a, start: s1, len: l1 }, Bytes::Mapped { map: b, start: s2, len: l2 }) => {
                Arc::ptr_eq(a, b) && s1 == s2 && l1 == l2
            }
            _ => false,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped { map, start, len } => &map[*start..*start + *len],
        }
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.as_slice().len())
    }
}

#[derive(Clone, Debug)]
pub struct Database {
    /// File name the database was read from, for metadata and messages.
    pub name: String,
    /// Encoded residues of all sequences, concatenated in length order.
    pub residues: Bytes,
    /// `offsets[i]..offsets[i + 1]` is sequence i in `residues`; `len() + 1` entries.
    pub offsets: Vec<u64>,
    /// Ids concatenated, split like `residues` by `id_offsets`.
    pub ids: Bytes,
    pub id_offsets: Vec<u64>,
    /// Position of sequence i in the input FASTA (0-based): the tie-breaker of ranking.
    pub original: Vec<u32>,
    /// FASTA header lines in the same order; empty where the source keeps none (a `makedb`
    /// file stores ids only).
    pub headers: Arc<Vec<String>>,
}

impl Database {
    /// Builds a database from records in input order, sorting by length (stable, so
    /// equal lengths keep input order).
    pub fn from_records(name: &str, records: Vec<crate::seq::Record>) -> Database {
        let mut order: Vec<u32> = (0..records.len() as u32).collect();
        order.sort_by_key(|&i| records[i as usize].seq.len());
        let total: usize = records.iter().map(|r| r.seq.len()).sum();
        let mut residues = Vec::with_capacity(total);
        let mut ids = Vec::new();
        let mut offsets = Vec::with_capacity(records.len() + 1);
        let mut id_offsets = Vec::with_capacity(records.len() + 1);
        let mut headers = Vec::with_capacity(records.len());
        offsets.push(0);
        id_offsets.push(0);
        for &i in &order {
            let r = &records[i as usize];
            residues.extend_from_slice(&r.seq);
            ids.extend_from_slice(r.id.as_bytes());
            headers.push(r.header.clone());
            offsets.push(residues.len() as u64);
            id_offsets.push(ids.len() as u64);
        }
        Database {
            name: name.to_string(),
            residues: Bytes::Owned(Arc::new(residues)),
            offsets,
            ids: Bytes::Owned(Arc::new(ids)),
            id_offsets,
            original: order,
            headers: Arc::new(headers),
        }
    }

    /// The FASTA header of sequence `i`, where the database has headers.
    pub fn header(&self, i: usize) -> Option<&str> {
        self.headers.get(i).map(String::as_str).filter(|h| !h.is_empty())
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Encoded residues of sequence i (length order).
    #[inline]
    pub fn seq(&self, i: usize) -> &[u8] {
        &self.residues.as_slice()[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub fn seq_len(&self, i: usize) -> usize {
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    pub fn id(&self, i: usize) -> &str {
        let b = &self.ids.as_slice()[self.id_offsets[i] as usize..self.id_offsets[i + 1] as usize];
        std::str::from_utf8(b).unwrap_or("?")
    }

    /// Total residues.
    pub fn total_residues(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }
}

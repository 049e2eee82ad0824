//! A resident sequence set for pairs by id (`align --pairs CANDIDATES --seqs SEQS`): every
//! sequence of a FASTA file (plain or gzip), a `makedb` file (memory-mapped, not copied) or
//! an Arrow/Parquet table of (id, sequence), encoded once into one buffer and found by id
//! through a hash index. Ids are unique: a duplicate is an error naming both records.

use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::Schema;

use super::breaks_rows;
use super::table::{open_table, string_columns, StrColumn, Table, Wanted};
use crate::database::{Bytes, Database};
use crate::error::{Error, Result, Where};
use crate::io::fasta_blocks::BlockFastaReader;
use crate::io::input::SWDB_MAGIC;
use crate::io::input::{peek, Head};
use crate::io::makedb::{map_swdb_head, not_mappable};
use crate::scoring::alphabet::describe_residue;
use crate::scoring::Alphabet;

/// The columns of a sequence set given as an Arrow/Parquet table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetColumns {
    pub id: String,
    pub seq: String,
    /// Keep FASTA header lines (for the `qheader`/`theader` columns); without them a pair
    /// copies only its two ids.
    pub headers: bool,
    /// Keep FASTQ qualities (for SAM's QUAL: `SeqSet::quals`); without them a FASTQ set
    /// keeps its sequences only.
    pub quals: bool,
}

impl Default for SetColumns {
    fn default() -> Self {
        SetColumns { id: "id".into(), seq: "sequence".into(), headers: true, quals: false }
    }
}

/// Sequences kept in memory for the whole run, found by id.
pub struct SeqSet {
    place: Where,
    /// Encoded residues, sequence i at `offsets[i]..offsets[i + 1]`.
    residues: Bytes,
    offsets: Vec<u64>,
    ids: Bytes,
    id_offsets: Vec<u64>,
    /// FASTA header lines (split by `header_offsets`); empty where the source has none.
    headers: Vec<u8>,
    header_offsets: Vec<u64>,
    /// FASTQ qualities (split by `qual_offsets`); empty where none are kept.
    quals: Vec<u8>,
    qual_offsets: Vec<u64>,
    alphabet: Alphabet,
    hasher: ahash::RandomState,
    /// Sequence numbers, hashed by id.
    index: hashbrown::HashTable<u32>,
    /// Every id and header is UTF-8 on its own (checked once here, not per batch).
    utf8: bool,
    /// Read from an Arrow/Parquet table (whose columns `SetColumns` names).
    table: bool,
    /// The ids are their text ([`crate::error::id_text`]), as a `makedb` file stores them:
    /// an id is looked up by its text, so the bytes of a FASTA id that is not UTF-8 find
    /// their sequence in the database made from that FASTA.
    ids_as_text: bool,
}

impl std::fmt::Debug for SeqSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SeqSet({}, {} sequences)", self.place, self.len())
    }
}

/// Sequences appended in input order while a set is read.
struct Builder {
    place: Where,
    alphabet: Alphabet,
    residues: Vec<u8>,
    offsets: Vec<u64>,
    ids: Vec<u8>,
    id_offsets: Vec<u64>,
    headers: Vec<u8>,
    header_offsets: Vec<u64>,
    quals: Vec<u8>,
    qual_offsets: Vec<u64>,
}

impl Builder {
    fn new(place: Where, alphabet: Alphabet) -> Builder {
        Builder {
            place,
            alphabet,
            residues: Vec::new(),
            offsets: vec![0],
            ids: Vec::new(),
            id_offsets: vec![0],
            headers: Vec::new(),
            header_offsets: vec![0],
            quals: Vec::new(),
            qual_offsets: vec![0],
        }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn check_count(&self) -> Result<()> {
        if self.len() >= u32::MAX as usize {
            return Err(Error::file(&self.place, format!("more than {} sequences", u32::MAX - 1)));
        }
        Ok(())
    }

    /// Appends a FASTA or FASTQ record (already encoded), its qualities where kept.
    fn push_record(&mut self, id: &[u8], seq: &[u8], header: &[u8], quals: &[u8]) -> Result<()> {
        self.check_count()?;
        self.residues.extend_from_slice(seq);
        self.offsets.push(self.residues.len() as u64);
        self.ids.extend_from_slice(id);
        self.id_offsets.push(self.ids.len() as u64);
        self.headers.extend_from_slice(header);
        self.header_offsets.push(self.headers.len() as u64);
        self.quals.extend_from_slice(quals);
        self.qual_offsets.push(self.quals.len() as u64);
        Ok(())
    }

    /// Appends a table row, checking it as the FASTA reader checks a record: `row` is
    /// 0-based, `columns` the id and sequence column names.
    fn push_row(&mut self, row: usize, id: Option<&[u8]>, seq: Option<&[u8]>, columns: &SetColumns) -> Result<()> {
        self.check_count()?;
        let place = &self.place;
        let Some(id) = id else { return Err(Error::record(place, row, "", format!("{} is null", columns.id))) };
        // Ids are bytes (a binary column may hold any): looked up as such, made UTF-8 only
        // in the output's id columns.
        if id.is_empty() {
            return Err(Error::record(place, row, "", format!("{} is empty", columns.id)));
        }
        if breaks_rows(id) {
            return Err(Error::record(place, row, id, format!("{} contains a tab or line break", columns.id)));
        }
        let seq = match seq {
            None => return Err(Error::record(place, row, id, format!("{} is null", columns.seq))),
            Some([]) => return Err(Error::record(place, row, id, format!("{} is empty", columns.seq))),
            Some(seq) => seq,
        };
        let start = self.residues.len();
        self.residues.resize(start + seq.len(), 0);
        if let Err(i) = self.alphabet.encode_to_slice(seq, &mut self.residues[start..]) {
            let problem = format!("{}: {} at position {}", columns.seq, describe_residue(self.alphabet, seq[i]), i + 1);
            return Err(Error::record(place, row, id, problem));
        }
        self.offsets.push(self.residues.len() as u64);
        self.ids.extend_from_slice(id);
        self.id_offsets.push(self.ids.len() as u64);
        self.header_offsets.push(0);
        self.qual_offsets.push(0);
        Ok(())
    }

    /// The set, indexed; sequence i is record i + 1 of the input.
    fn finish(self) -> Result<SeqSet> {
        let with_headers = !self.headers.is_empty();
        let with_quals = !self.quals.is_empty();
        let n = self.len() as u32;
        let mut set = SeqSet {
            place: self.place,
            residues: Bytes::Owned(Arc::new(self.residues)),
            offsets: self.offsets,
            ids: Bytes::Owned(Arc::new(self.ids)),
            id_offsets: self.id_offsets,
            headers: self.headers,
            header_offsets: if with_headers { self.header_offsets } else { Vec::new() },
            quals: self.quals,
            qual_offsets: if with_quals { self.qual_offsets } else { Vec::new() },
            alphabet: self.alphabet,
            hasher: ahash::RandomState::new(),
            index: hashbrown::HashTable::new(),
            utf8: false,
            table: false,
            ids_as_text: false,
        };
        set.utf8 = set.all_utf8();
        set.build_index(0..n, |i| i as usize)?;
        Ok(set)
    }
}

impl SeqSet {
    /// Reads the set at `path` (`-` = stdin): a `makedb` file, an Arrow IPC stream or file or
    /// a Parquet file (columns `columns`), else FASTA (plain or gzip), told apart by content.
    /// An input without sequences gives an empty set.
    pub fn load(path: &Path, alphabet: Alphabet, columns: &SetColumns) -> Result<SeqSet> {
        let raw = Head::open(path, 8)?;
        let place = raw.place.clone();
        if raw.bytes == SWDB_MAGIC {
            return SeqSet::from_database(place, map_swdb_head(raw, alphabet)?, alphabet);
        }
        let project = |place: &Where, schema: &Schema| Wanted::new(&set_columns(place, schema, columns)?, Vec::new());
        let input = match open_table(raw, &project)? {
            Ok((schema, batches)) => return SeqSet::from_table(Table { place, schema, batches }, alphabet, columns),
            Err(input) => input,
        };
        let (head, input) = peek(&place, input, SWDB_MAGIC.len())?;
        if head == SWDB_MAGIC {
            return Err(not_mappable(&place)); // gzip-compressed
        }
        let mut set = Builder::new(place.clone(), alphabet);
        let mut reader = BlockFastaReader::new(place, input, alphabet).allow_empty().keep_quals(columns.quals);
        while let Some(part) = reader.next_part() {
            let part = part?;
            for i in 0..part.len() {
                let header = if columns.headers { part.header(i) } else { b"" };
                set.push_record(part.id(i), part.seq(i), header, part.quals(i))?;
            }
        }
        set.finish()
    }

    /// The set of an in-memory table of ids and sequences (`columns`), checked as a table
    /// file is.
    pub fn from_table(table: Table, alphabet: Alphabet, columns: &SetColumns) -> Result<SeqSet> {
        let mut set = Builder::new(table.place.clone(), alphabet);
        for_each_row(table, columns, |row, id, seq| set.push_row(row, id, seq, columns))?;
        Ok(SeqSet { table: true, ..set.finish()? })
    }

    /// A `makedb` database as a set: its mapped residues and ids are used in place; records
    /// are numbered in the order of the FASTA it was made from.
    fn from_database(place: Where, db: Database, alphabet: Alphabet) -> Result<SeqSet> {
        let original = db.original;
        let mut set = SeqSet {
            place,
            residues: db.residues,
            offsets: db.offsets,
            ids: db.ids,
            id_offsets: db.id_offsets,
            headers: Vec::new(),
            header_offsets: Vec::new(),
            quals: Vec::new(),
            qual_offsets: Vec::new(),
            alphabet,
            hasher: ahash::RandomState::new(),
            index: hashbrown::HashTable::new(),
            utf8: false,
            table: false,
            ids_as_text: true,
        };
        set.utf8 = set.all_utf8();
        // Indexed in input order, so that the first duplicate met is the first in the file.
        let mut order: Vec<u32> = (0..original.len() as u32).collect();
        order.sort_unstable_by_key(|&i| original[i as usize]);
        set.build_index(order.into_iter(), |i| original[i as usize] as usize)?;
        Ok(set)
    }

    /// Whether every id and header is UTF-8 on its own (checked once, in parallel).
    fn all_utf8(&self) -> bool {
        use rayon::prelude::*;
        let utf8 = |text: &[u8]| std::str::from_utf8(text).is_ok();
        (0..self.len() as u32).into_par_iter().with_min_len(4096).all(|i| utf8(self.id(i)) && utf8(self.header(i)))
    }

    /// Indexes sequences in `order`; `record(i)` is sequence i's 0-based input position.
    fn build_index(&mut self, order: impl Iterator<Item = u32>, record: impl Fn(u32) -> usize) -> Result<()> {
        use rayon::prelude::*;
        // Hashed on every core first; the inserts, in order, only compare ids.
        let hashes: Vec<u64> = (0..self.len() as u32)
            .into_par_iter()
            .with_min_len(4096)
            .map(|i| self.hasher.hash_one(self.id(i)))
            .collect();
        let mut index = hashbrown::HashTable::with_capacity(self.len());
        for i in order {
            let id = self.id(i);
            let hash = hashes[i as usize];
            match index.entry(hash, |&j| self.id(j) == id, |&j| hashes[j as usize]) {
                hashbrown::hash_table::Entry::Occupied(e) => {
                    let first = record(*e.get());
                    return Err(Error::record(
                        &self.place,
                        record(i),
                        id,
                        format!(
                            "duplicate id: record {} has the same id (ids of a sequence set must be unique)",
                            first + 1
                        ),
                    ));
                }
                hashbrown::hash_table::Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
        self.index = index;
        Ok(())
    }

    pub fn place(&self) -> &Where {
        &self.place
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every id and header is UTF-8 on its own (what a batch's id columns need).
    pub fn is_utf8(&self) -> bool {
        self.utf8
    }

    /// The number of the sequence with this id.
    pub fn find(&self, id: &[u8]) -> Option<u32> {
        let text;
        let id = match self.ids_as_text {
            true => {
                text = crate::error::id_text(id);
                text.as_bytes()
            }
            false => id,
        };
        let hash = self.hasher.hash_one(id);
        self.index.find(hash, |&j| self.id(j) == id).copied()
    }

    /// Encoded residues of sequence `i`.
    pub fn seq(&self, i: u32) -> &[u8] {
        let i = i as usize;
        &self.residues.as_slice()[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub fn id(&self, i: u32) -> &[u8] {
        let i = i as usize;
        &self.ids.as_slice()[self.id_offsets[i] as usize..self.id_offsets[i + 1] as usize]
    }

    /// Whether the set was read from an Arrow/Parquet table (named columns), not FASTA or
    /// a makedb file.
    pub fn is_table(&self) -> bool {
        self.table
    }

    /// Whether the set has FASTA headers.
    pub fn has_headers(&self) -> bool {
        !self.header_offsets.is_empty()
    }

    /// The FASTA header of sequence `i` ("" without one).
    pub fn header(&self, i: u32) -> &[u8] {
        let i = i as usize;
        match self.header_offsets.get(i + 1) {
            Some(&end) => &self.headers[self.header_offsets[i] as usize..end as usize],
            None => b"",
        }
    }

    /// The FASTQ qualities of sequence `i` ("" where the set keeps none: FASTA, or
    /// `SetColumns::quals` off).
    pub fn quals(&self, i: u32) -> &[u8] {
        let i = i as usize;
        match self.qual_offsets.get(i + 1) {
            Some(&end) => &self.quals[self.qual_offsets[i] as usize..end as usize],
            None => b"",
        }
    }

    /// The alphabet the residues are encoded in.
    pub fn alphabet(&self) -> Alphabet {
        self.alphabet
    }

    pub fn total_residues(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Says which set an id was looked for in, for messages.
    pub(super) fn describe(&self) -> String {
        match self.len() {
            0 => format!("{} (it has no sequences)", self.place),
            1 => format!("{} (1 sequence)", self.place),
            n => format!("{} ({n} sequences)", self.place),
        }
    }
}

/// Calls `f(row, id, sequence)` for every row of a table of ids and sequences (`columns`),
/// rows numbered from 0.
fn for_each_row(
    table: Table,
    columns: &SetColumns,
    mut f: impl FnMut(usize, Option<&[u8]>, Option<&[u8]>) -> Result<()>,
) -> Result<()> {
    let found = set_columns(&table.place, &table.schema, columns)?;
    let mut row = 0;
    for batch in table.batches {
        let batch = batch?;
        let (id, seq) =
            (StrColumn::new(batch.column(found[0]).clone()), StrColumn::new(batch.column(found[1]).clone()));
        for r in 0..batch.num_rows() {
            f(row, id.get(r), seq.get(r))?;
            row += 1;
        }
    }
    Ok(())
}

fn set_columns(place: &Where, schema: &Schema, columns: &SetColumns) -> Result<Vec<usize>> {
    let names = [columns.id.clone(), columns.seq.clone()];
    string_columns(place, schema, &names, "a sequence set needs", "--seqs-id-col, --seqs-col")
}

/// The records of a table of ids and sequences (`columns`), in order, checked as a
/// sequence set's rows are (ids unchecked for uniqueness): a search's queries or database
/// handed over as a table.
pub fn table_records(table: Table, alphabet: Alphabet, columns: &SetColumns) -> Result<Vec<crate::seq::Record>> {
    let mut set = Builder::new(table.place.clone(), alphabet);
    for_each_row(table, columns, |row, id, seq| set.push_row(row, id, seq, columns))?;
    let mut records = Vec::with_capacity(set.len());
    for i in 0..set.len() {
        let (s, e) = (set.offsets[i] as usize, set.offsets[i + 1] as usize);
        let (is, ie) = (set.id_offsets[i] as usize, set.id_offsets[i + 1] as usize);
        let id = crate::error::id_text(&set.ids[is..ie]).into_owned();
        records.push(crate::seq::Record { id, seq: set.residues[s..e].to_vec(), header: String::new() });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, data).unwrap();
        path
    }

    #[test]
    fn fasta_sets_are_found_by_id_with_headers() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "s.fa", b">a first\nMK\nV\n>b\nW\n");
        let set = SeqSet::load(&path, Alphabet::Protein, &SetColumns::default()).unwrap();
        assert_eq!(set.len(), 2);
        let a = set.find(b"a").unwrap();
        assert_eq!(Alphabet::Protein.decode(set.seq(a)), b"MKV");
        assert_eq!(set.header(a), b"a first");
        assert_eq!(set.find(b"c"), None);
        assert!(set.has_headers());
    }

    #[test]
    fn duplicate_ids_name_both_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "d.fa", b">a\nM\n>b\nK\n>a x\nW\n");
        let msg = SeqSet::load(&path, Alphabet::Protein, &SetColumns::default()).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!(
                "{}: record 3 (a): duplicate id: record 1 has the same id (ids of a sequence set must be unique)",
                path.display()
            )
        );
    }

    #[test]
    fn empty_fasta_is_an_empty_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "e.fa", b"");
        let set = SeqSet::load(&path, Alphabet::Protein, &SetColumns::default()).unwrap();
        assert!(set.is_empty());
        assert!(set.describe().ends_with("(it has no sequences)"));
    }
}

//! The `makedb` database file (`.swdb`): a length-sorted [`Database`] laid out so that it
//! is memory-mapped instead of parsed.
//!
//! Format version 2. All integers little-endian. A 64-byte header:
//!
//! | bytes  | field                                              |
//! |--------|----------------------------------------------------|
//! | 0..8   | magic `\x89SWDB\r\n\x1a`                           |
//! | 8..12  | format version (u32) = 1                           |
//! | 12..16 | alphabet (u32): 0 protein, 1 DNA                   |
//! | 16..24 | number of sequences n (u64)                        |
//! | 24..32 | total residues (u64)                               |
//! | 32..40 | total id bytes (u64)                               |
//! | 40..48 | file size in bytes (u64)                           |
//! | 48..52 | CRC-32 of bytes 0..48 and of everything after the header (u32) |
//! | 52..64 | reserved, zero                                     |
//!
//! then five sections, each starting at a multiple of 8 bytes (zero padding between):
//! 1. sequence offsets: n + 1 u64 (`Database::offsets`);
//! 2. original input positions: n u32 (`Database::original`);
//! 3. id offsets: n + 1 u64 (`Database::id_offsets`);
//! 4. id bytes (UTF-8), concatenated;
//! 5. residue codes of the alphabet, concatenated, to the end of the file.
//!
//! Sequences are in the order of `Database::from_records` (stable sort by length). Opening
//! checks the checksum, every offset, the order, the permutation and every residue code, and
//! refuses what the FASTA reader refuses (empty sequences, empty ids), so engines can trust a
//! mapped database as they trust one built from FASTA. Version 1 files (no checksum) are
//! refused with a request to rebuild them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use crate::atomic::AtomicFile;
use crate::database::{Bytes, Database};
use crate::error::{Error, Result, Where};
use crate::io::fasta::FastaReader;
use crate::io::input::{open_file, peek, Head, Input, SWDB_MAGIC};
use crate::scoring::Alphabet;
use crate::seq::Record;

pub const SWDB_VERSION: u32 = 2;
const HEADER_LEN: u64 = 64;

fn alphabet_code(alphabet: Alphabet) -> u32 {
    match alphabet {
        Alphabet::Protein => 0,
        Alphabet::Dna => 1,
    }
}

fn alphabet_name(alphabet: Alphabet) -> &'static str {
    match alphabet {
        Alphabet::Protein => "protein",
        Alphabet::Dna => "DNA",
    }
}

/// Byte ranges of the sections, computed from the header counts.
#[derive(Debug, PartialEq, Eq)]
struct Layout {
    offsets: (u64, u64),
    original: (u64, u64),
    id_offsets: (u64, u64),
    ids: (u64, u64),
    residues: (u64, u64),
}

impl Layout {
    /// `None` when the counts overflow (a corrupt header).
    fn new(n: u64, residues: u64, id_bytes: u64) -> Option<Layout> {
        let pad = |x: u64| x.checked_add(7).map(|v| v & !7);
        let section = |start: u64, len: u64| Some((start, start.checked_add(len)?));
        let offsets = section(HEADER_LEN, n.checked_add(1)?.checked_mul(8)?)?;
        let original = section(offsets.1, n.checked_mul(4)?)?;
        let id_offsets = section(pad(original.1)?, n.checked_add(1)?.checked_mul(8)?)?;
        let ids = section(id_offsets.1, id_bytes)?;
        let residues = section(pad(ids.1)?, residues)?;
        Some(Layout { offsets, original, id_offsets, ids, residues })
    }

    fn file_size(&self) -> u64 {
        self.residues.1
    }
}

/// Writes `db` (built for `alphabet`) as a `.swdb` file, under a temporary name renamed on
/// success ([`AtomicFile`]), so a failed write never leaves a file that looks complete.
pub fn write_swdb(db: &Database, alphabet: Alphabet, out: &Path) -> Result<()> {
    let n = db.len() as u64;
    let residues = db.residues.as_slice();
    let ids = db.ids.as_slice();
    let layout = Layout::new(n, residues.len() as u64, ids.len() as u64)
        .ok_or_else(|| Error::Internal("database too large for the swdb format".into()))?;
    let u64s = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (offsets, original, id_offsets) = (u64s(&db.offsets), u32s(&db.original), u64s(&db.id_offsets));
    // The body after the header, as (start, bytes) pieces with zero padding before each.
    let sections: [(u64, &[u8]); 5] = [
        (layout.offsets.0, &offsets),
        (layout.original.0, &original),
        (layout.id_offsets.0, &id_offsets),
        (layout.ids.0, ids),
        (layout.residues.0, residues),
    ];
    let body = |put: &mut dyn FnMut(&[u8]) -> std::io::Result<()>| -> std::io::Result<()> {
        let mut at = HEADER_LEN;
        for (start, bytes) in sections {
            put(&vec![0u8; (start - at) as usize])?;
            put(bytes)?;
            at = start + bytes.len() as u64;
        }
        Ok(())
    };
    let mut header = [0u8; HEADER_LEN as usize];
    header[0..8].copy_from_slice(&SWDB_MAGIC);
    header[8..12].copy_from_slice(&SWDB_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&alphabet_code(alphabet).to_le_bytes());
    header[16..24].copy_from_slice(&n.to_le_bytes());
    header[24..32].copy_from_slice(&(residues.len() as u64).to_le_bytes());
    header[32..40].copy_from_slice(&(ids.len() as u64).to_le_bytes());
    header[40..48].copy_from_slice(&layout.file_size().to_le_bytes());
    let mut crc = flate2::Crc::new();
    crc.update(&header[..48]);
    body(&mut |b: &[u8]| {
        crc.update(b);
        Ok(())
    })
    .map_err(|e| Error::Internal(format!("checksum: {e}")))?;
    header[48..52].copy_from_slice(&crc.sum().to_le_bytes());

    let mut file = AtomicFile::create(out)?;
    let context = || format!("writing {}", out.display());
    let write = |file: &mut File| -> std::io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.write_all(&header)?;
        body(&mut |b: &[u8]| w.write_all(b))?;
        w.flush()
    };
    write(file.file().map_err(|e| Error::io(context(), e))?).map_err(|e| Error::io(context(), e))?;
    file.commit()
}

/// Maps a `.swdb` file. Fails with an input error on a file that is not one, has another
/// format version or alphabet, or is truncated or corrupt.
pub fn open_swdb(path: &Path, alphabet: Alphabet) -> Result<Database> {
    map_swdb(path, open_file(path)?, alphabet)
}

/// [`open_swdb`] on a file already open (the one whose magic bytes were sniffed).
fn map_swdb(path: &Path, file: File, alphabet: Alphabet) -> Result<Database> {
    let place = Where::Path(path.to_path_buf());
    let corrupt = |what: String| Error::file(&place, format!("corrupt swdb database: {}", what));
    // SAFETY: the map is read-only; like every mmap reader we rely on nobody truncating
    // the file while it is open (makedb writes a new file and renames it).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(format!("mapping {}", path.display()), e))?;
    let map = Arc::new(map);
    let data: &[u8] = &map;
    if data.len() < 8 || data[..8] != SWDB_MAGIC {
        return Err(Error::file(&place, "not a swarrow database (.swdb)"));
    }
    if data.len() < HEADER_LEN as usize {
        return Err(corrupt(format!("truncated header ({} bytes)", data.len())));
    }
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != SWDB_VERSION {
        return Err(Error::file(
            &place,
            format!(
                "swdb format version {}, this swarrow reads version {}: rebuild it with makedb",
                version, SWDB_VERSION
            ),
        ));
    }
    let stored = match u32_at(12) {
        0 => Alphabet::Protein,
        1 => Alphabet::Dna,
        other => return Err(corrupt(format!("unknown alphabet code {}", other))),
    };
    if stored != alphabet {
        return Err(Error::file(
            &place,
            format!(
                "database was built for {} sequences, but this run scores {}",
                alphabet_name(stored),
                alphabet_name(alphabet)
            ),
        ));
    }
    let (n, total_residues, id_bytes, size) = (u64_at(16), u64_at(24), u64_at(32), u64_at(40));
    let layout =
        Layout::new(n, total_residues, id_bytes).ok_or_else(|| corrupt("impossible counts in header".into()))?;
    if layout.file_size() != size || size != data.len() as u64 {
        return Err(corrupt(format!(
            "truncated or damaged: header says {} bytes, sections need {}, file has {}",
            size,
            layout.file_size(),
            data.len()
        )));
    }
    // Every section lies inside the file now, so these conversions and slices are safe.
    let mut crc = flate2::Crc::new();
    crc.update(&data[..48]);
    crc.update(&data[HEADER_LEN as usize..]);
    if crc.sum() != u32_at(48) {
        return Err(corrupt(format!(
            "checksum mismatch (stored {:08x}, computed {:08x}): the file was changed or damaged; rebuild it with makedb",
            u32_at(48),
            crc.sum()
        )));
    }
    let n = n as usize;
    let section = |(a, b): (u64, u64)| &data[a as usize..b as usize];
    let read_u64s =
        |s: &[u8]| s.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect::<Vec<u64>>();
    let offsets = read_u64s(section(layout.offsets));
    let id_offsets = read_u64s(section(layout.id_offsets));
    let original: Vec<u32> =
        section(layout.original).chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
    check_offsets(&offsets, total_residues).map_err(|p| corrupt(format!("sequence offsets {}", p)))?;
    check_offsets(&id_offsets, id_bytes).map_err(|p| corrupt(format!("id offsets {}", p)))?;
    if let Some(i) = (1..n).find(|&i| offsets[i + 1] - offsets[i] < offsets[i] - offsets[i - 1]) {
        return Err(corrupt(format!("sequence {} is shorter than the one before it", i + 1)));
    }
    // What the FASTA reader refuses, a database must not hold either.
    if let Some(i) = offsets.windows(2).position(|w| w[1] == w[0]) {
        return Err(corrupt(format!("sequence {} is empty", i + 1)));
    }
    if let Some(i) = id_offsets.windows(2).position(|w| w[1] == w[0]) {
        return Err(corrupt(format!("sequence {} has an empty id", i + 1)));
    }
    let mut seen = vec![false; n];
    for &o in &original {
        if o as usize >= n || std::mem::replace(&mut seen[o as usize], true) {
            return Err(corrupt(format!("original positions are not a permutation (at {})", o)));
        }
    }
    let ids = section(layout.ids);
    for i in 0..n {
        let id = &ids[id_offsets[i] as usize..id_offsets[i + 1] as usize];
        if std::str::from_utf8(id).is_err() {
            return Err(corrupt(format!("id of sequence {} is not UTF-8", i + 1)));
        }
        // A FASTA id ends at the first whitespace; a tab or newline would break TSV output.
        if id.iter().any(u8::is_ascii_whitespace) {
            return Err(corrupt(format!("id of sequence {} contains whitespace", i + 1)));
        }
    }
    // `max` vectorises; the position is only looked for on a corrupt file.
    let codes = section(layout.residues);
    let size = alphabet.size() as u8;
    if codes.iter().copied().max().is_some_and(|m| m >= size) {
        let at = codes.iter().position(|&c| c >= size).unwrap_or(0);
        return Err(corrupt(format!("residue code out of range at residue {}", at + 1)));
    }
    let mapped = |(a, b): (u64, u64)| Bytes::Mapped { map: Arc::clone(&map), start: a as usize, len: (b - a) as usize };
    Ok(Database {
        name: file_name(path),
        residues: mapped(layout.residues),
        offsets,
        ids: mapped(layout.ids),
        id_offsets,
        original,
        headers: Default::default(),
    })
}

/// Offsets start at 0, never decrease and end at `total`.
fn check_offsets(offsets: &[u64], total: u64) -> std::result::Result<(), String> {
    if offsets.first() != Some(&0) || offsets.last() != Some(&total) {
        return Err(format!("do not run from 0 to {}", total));
    }
    match offsets.windows(2).position(|w| w[1] < w[0]) {
        Some(i) => Err(format!("decrease at entry {}", i + 2)),
        None => Ok(()),
    }
}

fn file_name(path: &Path) -> String {
    match path.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => path.display().to_string(),
    }
}

/// Loads a search database: a `.swdb` file (recognised by its magic bytes) is mapped,
/// anything else is read as FASTA (plain, gzip, or `-` for stdin) and sorted. The input is
/// opened once and sniffed from its first bytes, so pipes (`-d <(zcat db.fa.gz)`) work.
pub fn load_database(path: &Path, alphabet: Alphabet) -> Result<Database> {
    let head = Head::open(path, SWDB_MAGIC.len())?;
    let place = head.place.clone();
    let name = match &place {
        Where::Path(p) => file_name(p),
        Where::Stdin => "stdin".to_string(),
        Where::Named(name) => name.clone(),
    };
    if head.bytes == SWDB_MAGIC {
        return map_swdb_head(head, alphabet);
    }
    let input = head.into_input()?;
    let (head, input) = peek(&place, input, SWDB_MAGIC.len())?;
    if head == SWDB_MAGIC {
        return Err(not_mappable(&place)); // gzip-compressed
    }
    database_from_fasta(&name, place, input, alphabet)
}

/// Maps the `.swdb` file whose head (magic bytes) was read; refused from stdin or a pipe.
pub(crate) fn map_swdb_head(head: Head, alphabet: Alphabet) -> Result<Database> {
    let place = head.place.clone();
    let Where::Path(p) = &place else { return Err(not_mappable(&place)) };
    match head.into_regular_file()? {
        Some(file) => map_swdb(p, file, alphabet),
        None => Err(not_mappable(&place)),
    }
}

/// A `.swdb` database found where it cannot be memory-mapped (stdin, a pipe, gzip).
pub(crate) fn not_mappable(place: &Where) -> Error {
    Error::file(place, "a .swdb database must be given as an uncompressed file, not gzip, a pipe or stdin")
}

fn database_from_fasta(name: &str, place: Where, input: Input, alphabet: Alphabet) -> Result<Database> {
    let records: Vec<Record> = FastaReader::new(place, input, alphabet).collect::<Result<_>>()?;
    if records.len() > u32::MAX as usize {
        return Err(Error::usage(format!("{}: more than {} sequences", name, u32::MAX)));
    }
    Ok(Database::from_records(name, records))
}

/// `swarrow makedb`: reads a FASTA (or swdb) database and writes it as `.swdb`.
pub fn makedb(input: &Path, out: &Path, alphabet: Alphabet) -> Result<Database> {
    let db = load_database(input, alphabet)?;
    write_swdb(&db, alphabet, out)?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Alphabet = Alphabet::Protein;

    fn records() -> Vec<Record> {
        // Lengths 3, 1, 3, 2, 1: ties check that the stable order survives the round trip.
        [("a", vec![0, 1, 2]), ("bb", vec![5]), ("c", vec![23, 22, 7]), ("dé", vec![3, 4]), ("e", vec![19])]
            .into_iter()
            .map(|(id, seq)| Record { id: id.to_string(), seq, header: String::new() })
            .collect()
    }

    fn same(a: &Database, b: &Database) {
        assert_eq!(a.offsets, b.offsets);
        assert_eq!(a.id_offsets, b.id_offsets);
        assert_eq!(a.original, b.original);
        assert_eq!(a.residues.as_slice(), b.residues.as_slice());
        assert_eq!(a.ids.as_slice(), b.ids.as_slice());
    }

    fn written(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("db.swdb");
        write_swdb(&Database::from_records("x", records()), P, &path).unwrap();
        path
    }

    #[test]
    fn swdb_round_trip_equals_from_records_and_is_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path());
        let db = open_swdb(&path, P).unwrap();
        same(&db, &Database::from_records("x", records()));
        assert_eq!(db.name, "db.swdb");
        assert!(matches!(db.residues, Bytes::Mapped { .. }) && matches!(db.ids, Bytes::Mapped { .. }));
        // Independent check of the order: by length, ties in input order.
        let ids: Vec<&str> = (0..db.len()).map(|i| db.id(i)).collect();
        assert_eq!(ids, ["bb", "e", "dé", "a", "c"]);
        assert_eq!(db.original, [1, 4, 3, 0, 2]);
        assert_eq!(db.seq(4), &[23, 22, 7]);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["db.swdb"]);
    }

    #[test]
    fn empty_database_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.swdb");
        write_swdb(&Database::from_records("x", vec![]), P, &path).unwrap();
        assert!(open_swdb(&path, P).unwrap().is_empty());
    }

    #[test]
    fn load_database_reads_fasta_and_swdb_alike() {
        let dir = tempfile::tempdir().unwrap();
        let fasta = dir.path().join("db.fa");
        std::fs::write(&fasta, ">a x\nARN\n>bb\nQ\n>c\n*XG\n>dé\nDC\n>e\nV\n").unwrap();
        let from_fasta = load_database(&fasta, P).unwrap();
        assert_eq!(from_fasta.name, "db.fa");
        same(&from_fasta, &Database::from_records("x", records()));
        let swdb = dir.path().join("db.swdb");
        let built = makedb(&fasta, &swdb, P).unwrap();
        same(&built, &from_fasta);
        let loaded = load_database(&swdb, P).unwrap();
        assert_eq!(loaded.name, "db.swdb");
        same(&loaded, &from_fasta);
    }

    /// The test database with `bytes` written at `at` and the checksum made to match, as a
    /// deliberately crafted file would: the structural checks must catch it on their own.
    fn patched(dir: &Path, at: usize, bytes: &[u8]) -> std::path::PathBuf {
        let mut data = std::fs::read(written(dir)).unwrap();
        data[at..at + bytes.len()].copy_from_slice(bytes);
        let mut crc = flate2::Crc::new();
        crc.update(&data[..48]);
        crc.update(&data[64..]);
        data[48..52].copy_from_slice(&crc.sum().to_le_bytes());
        let path = dir.join("bad.swdb");
        std::fs::write(&path, data).unwrap();
        path
    }

    #[test]
    fn a_changed_byte_fails_the_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(written(dir.path())).unwrap();
        let path = dir.path().join("flip.swdb");
        // A residue code changed into another valid one: only the checksum can tell.
        let mut data = good.clone();
        let last = data.len() - 1;
        data[last] = (data[last] + 1) % 24;
        std::fs::write(&path, &data).unwrap();
        let msg = open_err(&path, P);
        assert!(msg.contains("corrupt swdb database: checksum mismatch"), "{}", msg);
        // So can a changed id byte.
        let mut data = good;
        let at = data.iter().position(|&b| b == b'b').unwrap();
        data[at] = b'c';
        std::fs::write(&path, &data).unwrap();
        assert!(open_err(&path, P).contains("checksum mismatch"));
    }

    #[test]
    fn empty_sequences_and_ids_are_refused_like_fasta() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.swdb");
        let recs = |a: &str, b: Vec<u8>| {
            vec![
                Record { id: a.into(), seq: b, header: String::new() },
                Record { id: "z".into(), seq: vec![1], header: String::new() },
            ]
        };
        write_swdb(&Database::from_records("x", recs("a", vec![])), P, &path).unwrap();
        assert!(open_err(&path, P).contains("corrupt swdb database: sequence 1 is empty"));
        write_swdb(&Database::from_records("x", recs("", vec![2])), P, &path).unwrap();
        let msg = open_err(&path, P);
        assert!(msg.contains("corrupt swdb database: sequence 1 has an empty id"), "{}", msg);
        write_swdb(&Database::from_records("x", recs("a\tb", vec![2])), P, &path).unwrap();
        let msg = open_err(&path, P);
        assert!(msg.contains("corrupt swdb database: id of sequence 1 contains whitespace"), "{}", msg);
    }

    #[test]
    fn version_1_files_ask_for_a_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let msg = open_err(&patched(dir.path(), 8, &1u32.to_le_bytes()), P);
        assert!(msg.contains("swdb format version 1, this swarrow reads version 2: rebuild it with makedb"), "{}", msg);
    }

    #[test]
    fn a_database_through_a_pipe_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("db.fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // First record shorter than the 8 sniffed bytes: it must survive.
        let text = b">a\nMK\n>bb\nQ\n";
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(&fifo, text).unwrap())
        };
        let db = load_database(&fifo, P).unwrap();
        writer.join().unwrap();
        let mut ids: Vec<&str> = (0..db.len()).map(|i| db.id(i)).collect();
        ids.sort();
        assert_eq!(ids, ["a", "bb"]);
        assert_eq!(db.total_residues(), 3);
    }

    fn open_err(path: &Path, alphabet: Alphabet) -> String {
        let err = open_swdb(path, alphabet).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        err.to_string()
    }

    #[test]
    fn corrupt_swdb_files_are_rejected_with_clear_messages() {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(written(dir.path())).unwrap();
        let cut = dir.path().join("cut.swdb");
        std::fs::write(&cut, &good[..good.len() - 1]).unwrap();
        let msg = open_err(&cut, P);
        assert!(msg.starts_with(&format!("{}: corrupt swdb database: truncated", cut.display())), "{}", msg);
        std::fs::write(&cut, &good[..20]).unwrap();
        assert!(open_err(&cut, P).contains("truncated header"));

        let d = dir.path();
        let msg = open_err(&patched(d, 8, &3u32.to_le_bytes()), P);
        assert!(msg.contains("swdb format version 3, this swarrow reads version 2"), "{}", msg);
        let msg = open_err(&patched(d, 0, b"XSWDB"), P);
        assert!(msg.ends_with("bad.swdb: not a swarrow database (.swdb)"), "{}", msg);
        let msg = open_err(&written(d), Alphabet::Dna);
        assert!(msg.contains("built for protein sequences, but this run scores DNA"), "{}", msg);
        // Header counts that no longer match the file.
        let msg = open_err(&patched(d, 16, &6u64.to_le_bytes()), P);
        assert!(msg.contains("corrupt swdb database: truncated or damaged"), "{}", msg);
        let msg = open_err(&patched(d, 16, &u64::MAX.to_le_bytes()), P);
        assert!(msg.contains("impossible counts"), "{}", msg);
        // Sequence offsets start at 64: make the second one exceed the third.
        let msg = open_err(&patched(d, 64 + 8, &9u64.to_le_bytes()), P);
        assert!(msg.contains("sequence offsets decrease at entry 3"), "{}", msg);
        // Original positions start at 64 + 6*8 = 112: duplicate one.
        let msg = open_err(&patched(d, 112, &4u32.to_le_bytes()), P);
        assert!(msg.contains("not a permutation"), "{}", msg);
        // The residues are the last 10 bytes: put a code outside the protein alphabet.
        let at = good.len() - 1;
        let msg = open_err(&patched(d, at, &[24]), P);
        assert!(msg.contains("residue code out of range at residue 10"), "{}", msg);
        // Swap lengths so the length order breaks: offsets 0,1,2,4,7,10 -> 0,2,3,...
        let msg = open_err(&patched(d, 64 + 8, &2u64.to_le_bytes()), P);
        assert!(msg.contains("shorter than the one before it"), "{}", msg);
    }

    #[test]
    fn compressed_swdb_is_refused_with_a_reason() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let raw = std::fs::read(written(dir.path())).unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&raw).unwrap();
        let path = dir.path().join("db.swdb.gz");
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        let msg = load_database(&path, P).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("{}: a .swdb database must be given as an uncompressed", path.display())),
            "{}",
            msg
        );
    }

    #[test]
    fn missing_database_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.swdb");
        let msg = load_database(&missing, P).unwrap_err().to_string();
        assert_eq!(msg, format!("{}: no such file", missing.display()));
    }
}

//! SAM and BAM, written with noodles: `noodles-sam` builds and writes the header,
//! `noodles-bam` encodes BAM's header and records (noodles' `RecordBuf`), `noodles-bgzf`
//! compresses BAM on several threads. SAM's record lines are formatted here from the same
//! fields ([`push_sam_line`]: a few appends a line, where a noodles record costs a dozen
//! allocations), checked against noodles' SAM encoding of the same records in the unit tests
//! and against the BAM records through samtools in `tests/alignment_formats.rs`. Records are
//! encoded on the rayon pool, in pieces of a batch written in order.
//!
//! # Header
//! `@HD VN:1.6 SO:unsorted`, one `@SQ SN LN` per target, `@PG ID:swarrow PN:swarrow VN CL`.
//! - Targets known up front (pairs by id: the target set of `--seqs`/`--target-seqs`;
//!   [`AlignmentOutput::targets`]): every target of the set, in the set's order (targets of
//!   length 0, which SAM cannot list, left out), and the header is written first.
//! - Targets that arrive inline (pairs with their residues: TSV, Arrow, Parquet, two FASTA;
//!   search): the records are spooled, already encoded, into a temporary file beside the
//!   output (in the temporary directory for standard output) and the header, listing the
//!   targets seen in order of first appearance, is written at the end, followed by the
//!   spooled records. Memory stays bounded (the targets' names and lengths); the spool is
//!   removed on every exit path ([`crate::atomic`]: dropped, or SIGINT/SIGTERM/SIGHUP).
//!
//! # Records
//! One per pair whose alignment holds a residue of each sequence (pairs without one, such
//! as score 0 in local mode, have no record, as in the PAF output; `samtools flagstat`
//! counts the records written).
//! - FLAG 16 on the minus strand; 256 (secondary) for every record of a query after its
//!   first (queries tracked across batches, in output order).
//! - RNAME, POS (1-based `tstart`), MAPQ 255, CIGAR in target order (`M`/`I`/`D`, `=`/`X`
//!   with `--eqx`) with the unaligned ends of the query as soft clips, so that it covers the
//!   whole SEQ; on the minus strand the clips swap (leading `qlen - qend`, trailing
//!   `qstart - 1`).
//! - SEQ: the whole query, reverse-complemented on the minus strand; QUAL: the FASTQ
//!   qualities (reversed on minus), else `*`. Where the input gives no whole query
//!   ([`ResultBatch::query_text`]), SEQ is the aligned part and the ends are hard clips.
//! - Tags `AS:i` (score), `NM:i` (mismatches + inserted + deleted residues) and `MD:Z`, both
//!   from the aligned strings, with samtools' rule for a match: same letter, and for DNA not
//!   `N` (so `samtools calmd` agrees with them).
//! - Protein: SAM is written (residue letters in SEQ); BAM is refused (its 4-bit SEQ holds
//!   nucleotide codes only).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::num::NonZero;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use noodles_sam::alignment::io::Write as _;
use noodles_sam::alignment::record::cigar::{op::Kind, Op};
use noodles_sam::alignment::record::data::field::Tag;
use noodles_sam::alignment::record::Flags;
use noodles_sam::alignment::record_buf::{data::field::Value, Cigar, QualityScores, Sequence};
use noodles_sam::alignment::RecordBuf;
use noodles_sam::header::record::value::map::{self, header::Version, Map, Program, ReferenceSequence};

use super::sink::{Sink, Status};
use super::{AlignmentOutput, ResultBatch, ResultWriter};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::scoring::Alphabet;
use crate::seq::Strand;

/// SAM text or BAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind2 {
    Sam,
    Bam,
}

/// The message for BAM of protein alignments.
pub const BAM_PROTEIN: &str = "BAM cannot hold protein alignments: its 4-bit SEQ stores nucleotide codes only; \
                               write SAM (--format sam, -o NAME.sam) or PAF";

/// Where encoded records go.
enum Body {
    /// The header is written: records go straight to the output.
    Direct(Encoder),
    /// Targets arrive inline: records wait in a temporary file until the header is known.
    Spool { sink: Sink, spool: Spool },
}

/// The output's encoder: SAM text through a buffer, BAM through BGZF on several threads.
enum Encoder {
    Sam(BufWriter<Sink>),
    Bam(super::bgzf::BgzfWriter<Swallowing>),
}

/// The sink under the BGZF writer's own thread: an I/O error is kept by the sink's status
/// (and reported by the next write or by `finish`), never handed to noodles' writer thread,
/// which would leave its channels closed and its caller's next send panicking.
struct Swallowing(Sink);

impl Write for Swallowing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

impl Encoder {
    fn start(kind: Kind2, sink: Sink) -> Encoder {
        match kind {
            Kind2::Sam => Encoder::Sam(sink.buffered()),
            Kind2::Bam => Encoder::Bam(super::bgzf::BgzfWriter::new(Swallowing(sink))),
        }
    }

    fn write_header(&mut self, header: &noodles_sam::Header) -> io::Result<()> {
        match self {
            Encoder::Sam(out) => noodles_sam::io::Writer::new(out).write_header(header),
            Encoder::Bam(out) => noodles_bam::io::Writer::from(out).write_header(header),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Sam(out) => out.write_all(bytes),
            Encoder::Bam(out) => out.write_all(bytes),
        }
    }

    /// Flushes (SAM into a pipe: a reader sees each batch).
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Sam(out) => out.flush(),
            Encoder::Bam(_) => Ok(()),
        }
    }

    /// Ends the stream (BGZF's EOF block) and commits the output.
    fn finish(self, status: &Status) -> Result<()> {
        match self {
            Encoder::Sam(out) => Sink::commit_buffered(out, status),
            Encoder::Bam(out) => {
                let Swallowing(sink) = out.finish().map_err(|e| status.io_fail(e))?;
                if status.has_failed() {
                    return Err(status.fail("BGZF"));
                }
                sink.commit()
            }
        }
    }
}

/// The temporary file of spooled records.
struct Spool {
    file: AtomicFile,
    out: BufWriter<File>,
    path: PathBuf,
}

impl Spool {
    fn create(output: Option<&Path>) -> Result<Spool> {
        // Beside a file output; in the temporary directory for standard output and for a
        // device or FIFO given as -o (no file can be made beside /dev/stdout).
        let is_file = |p: &&Path| std::fs::metadata(p).map_or(true, |m| m.is_file());
        let beside = match output.filter(|p| p.as_os_str() != "-").filter(is_file) {
            Some(p) => {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                p.with_file_name(format!("{name}.records"))
            }
            None => std::env::temp_dir().join("swarrow-sam.records"),
        };
        let mut file = AtomicFile::create(&beside)?;
        let path = file.writing_to().to_path_buf();
        let handle =
            file.file().and_then(|f| f.try_clone()).map_err(|e| Error::io(format!("spool {}", path.display()), e))?;
        Ok(Spool { file, out: BufWriter::with_capacity(1 << 20, handle), path })
    }

    fn failed(&self, e: io::Error) -> Error {
        Error::io(format!("writing the records' spool {}", self.path.display()), e)
    }
}

/// The targets of the header: names with their index (the records' reference ids) and
/// lengths, in header order.
struct TargetIndex {
    index: HashMap<Box<[u8]>, usize>,
    list: Vec<(Box<[u8]>, usize)>,
    /// Known up front (the header lists exactly these; a record's target outside them is an
    /// internal error), or growing as records arrive.
    fixed: bool,
}

impl TargetIndex {
    fn new(targets: Option<&[(Vec<u8>, usize)]>) -> TargetIndex {
        let mut t = TargetIndex { index: HashMap::new(), list: Vec::new(), fixed: targets.is_some() };
        for (name, len) in targets.into_iter().flatten() {
            if *len > 0 && !t.index.contains_key(name.as_slice()) {
                t.index.insert(name.clone().into_boxed_slice(), t.list.len());
                t.list.push((name.clone().into_boxed_slice(), *len));
            }
        }
        t
    }

    /// The reference id of `name` (`len` residues); a new one where the list grows.
    fn id(&mut self, name: &str, len: i32) -> Result<usize> {
        if let Some(&id) = self.index.get(name.as_bytes()) {
            return Ok(id);
        }
        if self.fixed {
            return Err(Error::Internal(format!(
                "SAM: target {} is not in the target set the header lists",
                crate::error::shown_id(name.as_bytes())
            )));
        }
        let id = self.list.len();
        self.index.insert(name.as_bytes().into(), id);
        self.list.push((name.as_bytes().into(), len.max(0) as usize));
        Ok(id)
    }

    fn header(&self, command_line: &str) -> Result<noodles_sam::Header> {
        let failed = |e: &dyn std::fmt::Display| Error::Internal(format!("SAM header: {e}"));
        let hd = Map::<map::Header>::builder()
            .set_version(Version::new(1, 6))
            .insert(map::header::tag::SORT_ORDER, "unsorted")
            .build()
            .map_err(|e| failed(&e))?;
        // A header field holds no tab or line break, and no empty value.
        let command_line: String =
            command_line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_string();
        let mut pg = Map::<Program>::builder()
            .insert(map::program::tag::NAME, "swarrow")
            .insert(map::program::tag::VERSION, env!("CARGO_PKG_VERSION"));
        if !command_line.is_empty() {
            pg = pg.insert(map::program::tag::COMMAND_LINE, command_line);
        }
        let pg = pg.build().map_err(|e| failed(&e))?;
        let mut builder = noodles_sam::Header::builder().set_header(hd);
        for (name, len) in &self.list {
            check_reference_name(name)?;
            // Length 0: no alignment can land on it, and SAM's LN is at least 1.
            if let Some(len) = NonZero::new(*len) {
                builder = builder.add_reference_sequence(name.to_vec(), Map::<ReferenceSequence>::new(len));
            }
        }
        Ok(builder.add_program("swarrow", pg).build())
    }
}

/// SAM's rule for a reference name (`@SQ SN`, RNAME): `[0-9A-Za-z!#$%&+./:;?@^_|~-]`, then
/// `*` and `=` allowed too.
fn check_reference_name(name: &[u8]) -> Result<()> {
    let allowed = |b: u8, first: bool| {
        b.is_ascii_alphanumeric() || b"!#$%&+./:;?@^_|~-".contains(&b) || (!first && (b == b'*' || b == b'='))
    };
    let ok = !name.is_empty() && name.iter().enumerate().all(|(k, &b)| allowed(b, k == 0));
    match ok {
        true => Ok(()),
        false => Err(Error::Input(format!(
            "SAM/BAM output: target {} is no valid SAM reference name (letters, digits and !#$%&+./:;?@^_|~- , \
             then * and = too); rename it, or write PAF or TSV",
            crate::error::quoted_id(name)
        ))),
    }
}

pub(super) struct SamWriter {
    kind: Kind2,
    status: Status,
    body: Option<Body>,
    targets: TargetIndex,
    /// The header records are encoded against (in spool mode: its reference list grows).
    header: Arc<noodles_sam::Header>,
    /// Queries with a record written (for the secondary flag).
    seen: std::collections::HashSet<Box<[u8]>>,
    options: AlignmentOutput,
}

impl SamWriter {
    pub(super) fn new(sink: Sink, kind: Kind2, options: &AlignmentOutput, output: Option<&Path>) -> Result<SamWriter> {
        if kind == Kind2::Bam && options.alphabet == Some(Alphabet::Protein) {
            return Err(Error::usage(BAM_PROTEIN));
        }
        let status = sink.status();
        let targets = TargetIndex::new(options.targets.as_deref().map(|t| t.as_slice()));
        let header = Arc::new(targets.header(&options.command_line)?);
        let body = if targets.fixed {
            let mut encoder = Encoder::start(kind, sink);
            encoder.write_header(&header).map_err(|e| status.io_fail(e))?;
            Body::Direct(encoder)
        } else {
            Body::Spool { sink, spool: Spool::create(output)? }
        };
        Ok(SamWriter {
            kind,
            status,
            body: Some(body),
            targets,
            header,
            seen: Default::default(),
            options: options.clone(),
        })
    }
}

/// Rows encoded per task.
const ROWS_PER_TASK: usize = 2048;

impl ResultWriter for SamWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        use rayon::prelude::*;
        if self.status.has_failed() {
            return Err(self.status.fail("an earlier write"));
        }
        // In order: each record's reference id and whether its query was seen before.
        let mut plan: Vec<Option<(usize, bool)>> = Vec::with_capacity(batch.len());
        let grown = self.targets.list.len();
        for i in 0..batch.len() {
            if !super::paf::is_aligned(batch, i) {
                plan.push(None);
                continue;
            }
            let row = batch.row(i);
            let id = self.targets.id(row.target, row.tlen)?;
            let secondary = self.seen.contains(row.query.as_bytes());
            if !secondary {
                self.seen.insert(row.query.as_bytes().into());
            }
            plan.push(Some((id, secondary)));
        }
        if self.targets.list.len() > grown {
            let header = Arc::make_mut(&mut self.header);
            for (name, len) in &self.targets.list[grown..] {
                check_reference_name(name)?;
                let len = NonZero::new(*len).ok_or_else(|| {
                    Error::Internal(format!("SAM: an alignment on target {} of length 0", crate::error::shown_id(name)))
                })?;
                header.reference_sequences_mut().insert(name.to_vec().into(), Map::<ReferenceSequence>::new(len));
            }
        }
        let (header, kind, options, names) = (&*self.header, self.kind, &self.options, &self.targets.list);
        let tasks = batch.len().div_ceil(ROWS_PER_TASK);
        let parts: Vec<Result<Vec<u8>>> = (0..tasks)
            .into_par_iter()
            .map(|k| {
                let rows = k * ROWS_PER_TASK..((k + 1) * ROWS_PER_TASK).min(batch.len());
                let mut bytes = Vec::with_capacity(rows.len() * 256);
                for i in rows {
                    let Some((id, secondary)) = plan[i] else { continue };
                    let failed = |e: io::Error| {
                        Error::Input(format!(
                            "{kind:?} output: the record of query {} and target {}: {e}",
                            crate::error::quoted_id(batch.row(i).query.as_bytes()),
                            crate::error::quoted_id(batch.row(i).target.as_bytes())
                        ))
                    };
                    let r = row_of(batch, i)?;
                    let protein = options.alphabet == Some(Alphabet::Protein);
                    match kind {
                        Kind2::Sam => push_sam_line(&mut bytes, &r, &names[id].0, secondary, options.eqx, protein)?,
                        Kind2::Bam => {
                            check_query_name(r.query)?;
                            let record = sam_record(&r, id, secondary, options.eqx, protein)?;
                            noodles_bam::io::Writer::from(&mut bytes)
                                .write_alignment_record(header, &record)
                                .map_err(failed)?
                        }
                    }
                }
                Ok(bytes)
            })
            .collect();
        let status = &self.status;
        match self.body.as_mut() {
            Some(Body::Direct(encoder)) => {
                for part in parts {
                    encoder.write_all(&part?).map_err(|e| status.io_fail(e))?;
                }
                if status.is_stdout() {
                    encoder.flush().map_err(|e| status.io_fail(e))?;
                }
            }
            Some(Body::Spool { spool, .. }) => {
                for part in parts {
                    spool.out.write_all(&part?).map_err(|e| spool.failed(e))?;
                }
            }
            None => return Err(Error::Internal("SAM writer used after it finished".into())),
        }
        if status.has_failed() {
            return Err(status.fail("writing"));
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        let status = self.status.clone();
        match self.body.take() {
            Some(Body::Direct(encoder)) => encoder.finish(&status),
            Some(Body::Spool { sink, spool }) => {
                let Spool { file, out, path } = spool;
                let failed = |e: io::Error| Error::io(format!("reading back the records' spool {}", path.display()), e);
                let handle = out.into_inner().map_err(|e| failed(e.into_error()))?;
                drop(handle);
                let header = self.targets.header(&self.options.command_line)?;
                let mut encoder = Encoder::start(self.kind, sink);
                encoder.write_header(&header).map_err(|e| status.io_fail(e))?;
                let mut records = File::open(&path).map_err(failed)?;
                let mut buf = vec![0u8; 1 << 20];
                loop {
                    let n = io::Read::read(&mut records, &mut buf).map_err(failed)?;
                    if n == 0 {
                        break;
                    }
                    encoder.write_all(&buf[..n]).map_err(|e| status.io_fail(e))?;
                }
                let done = encoder.finish(&status);
                drop(file); // the spool, never committed: removed
                done
            }
            None => Err(Error::Internal("SAM writer finished twice".into())),
        }
    }
}

/// Row `i` of `batch`, as a SAM record is made of it.
fn row_of(batch: &ResultBatch, i: usize) -> Result<SamRow<'_>> {
    let row = batch.row(i);
    let (_, qaln, taln) = batch.path_of(i).ok_or_else(|| Error::Internal("SAM: the path was not computed".into()))?;
    Ok(SamRow {
        query: row.query,
        strand: batch.strand(i),
        qstart: row.qstart,
        qend: row.qend,
        qlen: row.qlen,
        tstart: row.tstart,
        score: row.score,
        qaln,
        taln,
        text: batch.query_text(i),
        qual: batch.query_qual(i),
    })
}

/// What a SAM record is made of: one row of results.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SamRow<'a> {
    pub query: &'a str,
    pub strand: Strand,
    /// 1-based inclusive, on the query as given.
    pub qstart: i32,
    pub qend: i32,
    pub qlen: i32,
    /// 1-based, on the target's forward strand.
    pub tstart: i32,
    pub score: i32,
    /// Aligned strings in target order (the query reverse-complemented on minus), `-` gaps.
    pub qaln: &'a str,
    pub taln: &'a str,
    /// The whole query on its forward strand, and its FASTQ qualities, where known.
    pub text: Option<&'a str>,
    pub qual: Option<&'a str>,
}

/// The SAM record of `r` (see the module's rules).
/// The fields of a SAM record that the row decides, before encoding.
#[derive(Debug, Clone)]
pub(crate) struct Parts {
    pub flags: Flags,
    pub cigar: Vec<Op>,
    pub seq: Vec<u8>,
    /// Phred scores (no offset); empty: none (`*`).
    pub quals: Vec<u8>,
    pub nm: i32,
    pub md: String,
}

/// The SAM record of `r` (see the module's rules), as noodles' record (BAM).
pub(crate) fn sam_record(
    r: &SamRow<'_>,
    reference: usize,
    secondary: bool,
    eqx: bool,
    protein: bool,
) -> Result<RecordBuf> {
    let p = record_parts(r, secondary, eqx, protein)?;
    let position = noodles_core::Position::new(r.tstart as usize)
        .ok_or_else(|| Error::Internal(format!("SAM record of query {}: target start {}", r.query, r.tstart)))?;
    let data = [
        (Tag::ALIGNMENT_SCORE, Value::from(r.score)),
        (Tag::EDIT_DISTANCE, Value::from(p.nm)),
        (Tag::MISMATCHED_POSITIONS, Value::String(p.md.into())),
    ]
    .into_iter()
    .collect();
    Ok(RecordBuf::builder()
        .set_name(r.query.as_bytes().to_vec())
        .set_flags(p.flags)
        .set_reference_sequence_id(reference)
        .set_alignment_start(position)
        .set_cigar(Cigar::from(p.cigar))
        .set_sequence(Sequence::from(p.seq))
        .set_quality_scores(QualityScores::from(p.quals))
        .set_data(data)
        .build())
}

/// Appends the SAM text line of `r` on reference `rname`: the same fields as
/// [`sam_record`], formatted here (a line costs a few appends, where building and encoding a
/// noodles record costs a dozen allocations), checked against noodles' encoding in the tests.
pub(crate) fn push_sam_line(
    out: &mut Vec<u8>,
    r: &SamRow<'_>,
    rname: &[u8],
    secondary: bool,
    eqx: bool,
    protein: bool,
) -> Result<()> {
    use std::io::Write as _;
    check_query_name(r.query)?;
    let p = record_parts(r, secondary, eqx, protein)?;
    let _ = write!(out, "{}\t{}\t", r.query, p.flags.bits());
    out.extend_from_slice(rname);
    let _ = write!(out, "\t{}\t255\t", r.tstart);
    for op in &p.cigar {
        let letter = match op.kind() {
            Kind::Match => 'M',
            Kind::Insertion => 'I',
            Kind::Deletion => 'D',
            Kind::SoftClip => 'S',
            Kind::HardClip => 'H',
            Kind::SequenceMatch => '=',
            Kind::SequenceMismatch => 'X',
            Kind::Skip => 'N',
            Kind::Pad => 'P',
        };
        let _ = write!(out, "{}{letter}", op.len());
    }
    out.extend_from_slice(b"\t*\t0\t0\t");
    match p.seq.is_empty() {
        true => out.push(b'*'),
        false => out.extend_from_slice(&p.seq),
    }
    out.push(b'\t');
    match p.quals.is_empty() {
        true => out.push(b'*'),
        false => out.extend(p.quals.iter().map(|q| q.min(&93) + 33)),
    }
    let _ = writeln!(out, "\tAS:i:{}\tNM:i:{}\tMD:Z:{}", r.score, p.nm, p.md);
    Ok(())
}

/// SAM's rule for QNAME: 1 to 254 printable characters, no `@` (`[!-?A-~]{1,254}`).
fn check_query_name(name: &str) -> Result<()> {
    let ok = (1..=254).contains(&name.len()) && name.bytes().all(|b| matches!(b, b'!'..=b'?' | b'A'..=b'~'));
    match ok {
        true => Ok(()),
        false => Err(Error::Input(format!(
            "SAM/BAM output: query {} is no valid SAM read name (1 to 254 printable characters, no @); rename it, \
             or write PAF or TSV",
            crate::error::quoted_id(name.as_bytes())
        ))),
    }
}

/// The fields of `r`'s record.
fn record_parts(r: &SamRow<'_>, secondary: bool, eqx: bool, protein: bool) -> Result<Parts> {
    let wrong = |problem: String| Error::Internal(format!("SAM record of query {}: {problem}", r.query));
    let (q, t) = (r.qaln.as_bytes(), r.taln.as_bytes());
    if q.len() != t.len() {
        return Err(wrong(format!("aligned strings of {} and {} columns", q.len(), t.len())));
    }
    let mut ops: Vec<Op> = Vec::with_capacity(8);
    let push = |ops: &mut Vec<Op>, kind: Kind, n: usize| match ops.last_mut() {
        Some(last) if last.kind() == kind => *last = Op::new(kind, last.len() + n),
        _ => ops.push(Op::new(kind, n)),
    };
    let mut md = String::with_capacity(16);
    let (mut run, mut nm, mut in_deletion) = (0usize, 0i32, false);
    let mut aligned: Vec<u8> = Vec::with_capacity(q.len());
    for (&qc, &tc) in q.iter().zip(t) {
        let (qc, tc) = (qc.to_ascii_uppercase(), tc.to_ascii_uppercase());
        match (qc, tc) {
            (b'-', b'-') => return Err(wrong("a column of two gaps".into())),
            (b'-', _) => {
                if !in_deletion {
                    md.push_str(&run.to_string());
                    md.push('^');
                    run = 0;
                    in_deletion = true;
                }
                md.push(tc as char);
                nm += 1;
                push(&mut ops, Kind::Deletion, 1);
            }
            (_, b'-') => {
                aligned.push(qc);
                nm += 1;
                in_deletion = false;
                push(&mut ops, Kind::Insertion, 1);
            }
            _ => {
                aligned.push(qc);
                in_deletion = false;
                let same = qc == tc && (protein || qc != b'N');
                if same {
                    run += 1;
                } else {
                    md.push_str(&run.to_string());
                    md.push(tc as char);
                    run = 0;
                    nm += 1;
                }
                let kind = match (eqx, same) {
                    (false, _) => Kind::Match,
                    (true, true) => Kind::SequenceMatch,
                    (true, false) => Kind::SequenceMismatch,
                };
                push(&mut ops, kind, 1);
            }
        }
    }
    md.push_str(&run.to_string());
    let (qstart, qend, qlen) = (r.qstart as i64, r.qend as i64, r.qlen as i64);
    if qstart < 1 || qend < qstart || qend > qlen || r.tstart < 1 {
        return Err(wrong(format!("coordinates {qstart}-{qend} of {qlen}, target start {}", r.tstart)));
    }
    if aligned.len() as i64 != qend - qstart + 1 {
        return Err(wrong(format!("{} aligned residues for query {qstart}-{qend}", aligned.len())));
    }
    let (lead, trail) = match r.strand {
        Strand::Plus => (qstart - 1, qlen - qend),
        Strand::Minus => (qlen - qend, qstart - 1),
    };
    let (lead, trail) = (lead as usize, trail as usize);
    let minus = r.strand == Strand::Minus;
    let (seq, quals, clip) = match r.text {
        Some(text) => {
            if text.len() as i64 != qlen {
                return Err(wrong(format!("whole query of {} letters, the alignment says {qlen}", text.len())));
            }
            let seq: Vec<u8> = match minus {
                false => text.bytes().map(|b| b.to_ascii_uppercase()).collect(),
                true => text.bytes().rev().map(|b| Alphabet::complement_letter(b).to_ascii_uppercase()).collect(),
            };
            if seq[lead..lead + aligned.len()] != aligned[..] {
                return Err(wrong("the whole query does not hold its aligned residues".into()));
            }
            let quals: Vec<u8> = match r.qual {
                Some(qual) if qual.len() as i64 == qlen => match minus {
                    false => qual.bytes().map(|b| b.saturating_sub(33)).collect(),
                    true => qual.bytes().rev().map(|b| b.saturating_sub(33)).collect(),
                },
                Some(qual) => {
                    return Err(wrong(format!("{} qualities for {qlen} letters", qual.len())));
                }
                None => Vec::new(),
            };
            (seq, quals, Kind::SoftClip)
        }
        None => (aligned, Vec::new(), Kind::HardClip),
    };
    let mut cigar = Vec::with_capacity(ops.len() + 2);
    if lead > 0 {
        cigar.push(Op::new(clip, lead));
    }
    cigar.extend(ops);
    if trail > 0 {
        cigar.push(Op::new(clip, trail));
    }
    let mut flags = Flags::empty();
    if minus {
        flags |= Flags::REVERSE_COMPLEMENTED;
    }
    if secondary {
        flags |= Flags::SECONDARY;
    }
    Ok(Parts { flags, cigar, seq, quals, nm, md })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(r: &SamRow<'_>, secondary: bool, eqx: bool) -> String {
        let targets = TargetIndex::new(Some(&[(b"ctg1".to_vec(), 100)]));
        let header = targets.header("swarrow align test").unwrap();
        let record = sam_record(r, 0, secondary, eqx, false).unwrap();
        let mut out = Vec::new();
        noodles_sam::io::Writer::new(&mut out).write_alignment_record(&header, &record).unwrap();
        let by_noodles = String::from_utf8(out).unwrap();
        let mut ours = Vec::new();
        push_sam_line(&mut ours, r, b"ctg1", secondary, eqx, false).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), by_noodles, "our SAM line differs from noodles' encoding");
        by_noodles
    }

    /// Query `AACCGTTGCA` (10): its residues 3..=8 on the minus strand. Its reverse
    /// complement is `TGCAACGGTT`; residues 3..=8 of the query as given (`CCGTTG`) are, on
    /// the reverse complement, positions 3..=8 from its start too (10-8+1 = 3): `CAACGG`.
    /// Aligned against target `CATACGG` at 21: `CA-ACGG` / `CATACGG` (one deletion), with
    /// the target's last G read as a mismatch in the second case. Expected records written
    /// by hand from the SAM specification.
    #[test]
    fn minus_strand_records_have_swapped_soft_clips_and_reversed_sequence() {
        let r = SamRow {
            query: "r1",
            strand: Strand::Minus,
            qstart: 3,
            qend: 8,
            qlen: 10,
            tstart: 21,
            score: 7,
            qaln: "CA-ACGG",
            taln: "CATACGG",
            text: Some("AACCGTTGCA"),
            qual: Some("ABCDEFGHIJ"),
        };
        // Leading clip qlen - qend = 2, trailing qstart - 1 = 2; SEQ the reverse complement,
        // QUAL reversed.
        assert_eq!(
            line(&r, false, false),
            "r1\t16\tctg1\t21\t255\t2S2M1D4M2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n"
        );
        let mismatch = SamRow { taln: "CATACGA", ..r };
        assert_eq!(
            line(&mismatch, true, true),
            "r1\t272\tctg1\t21\t255\t2S2=1D3=1X2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:2\tMD:Z:2^T3A0\n"
        );
        // Plus strand of the same query: residues 3..=8 `CCGTTG`, clips 2 and 2, no reverse.
        let plus = SamRow { strand: Strand::Plus, qaln: "CCG-TTG", taln: "CCGATTG", qual: None, ..r };
        assert_eq!(
            line(&plus, false, false),
            "r1\t0\tctg1\t21\t255\t2S3M1D3M2S\t*\t0\t0\tAACCGTTGCA\t*\tAS:i:7\tNM:i:1\tMD:Z:3^A3\n"
        );
        // Unequal clips on minus: residues 1..=7 of 10 are the last 7 of the reverse
        // complement (AACGGTT), so 3 clipped before (10 - 7) and none after; a deletion, then
        // an insertion (which MD does not show).
        let r2 = SamRow { qstart: 1, qend: 7, qaln: "AAC-GGTT", taln: "AACAGG-T", qual: None, ..r };
        assert_eq!(
            line(&r2, false, false),
            "r1\t16\tctg1\t21\t255\t3S3M1D2M1I1M\t*\t0\t0\tTGCAACGGTT\t*\tAS:i:7\tNM:i:2\tMD:Z:3^A3\n"
        );
        // Without the whole query: the aligned part, hard clips.
        let bare = SamRow { text: None, qual: None, ..r };
        assert_eq!(
            line(&bare, false, false),
            "r1\t16\tctg1\t21\t255\t2H2M1D4M2H\t*\t0\t0\tCAACGG\t*\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n"
        );
    }

    #[derive(Clone, Default)]
    struct Kept(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Kept {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The writer takes strands, whole queries and qualities from the rows, flags a
    /// query's second record secondary across batches, and lists the set's targets.
    #[test]
    fn the_writer_uses_each_rows_strand_query_and_qualities() {
        use crate::output::ResultRow;
        let row = |qstart, qend| ResultRow {
            query: "r1",
            target: "ctg1",
            score: 7,
            bits: None,
            evalue: None,
            qstart,
            qend,
            tstart: 21,
            tend: 27,
            qlen: 10,
            tlen: 100,
            recomputed: false,
            rank: 0,
        };
        let batch = |strand: Strand| {
            let mut b = ResultBatch::new();
            b.push(row(3, 8));
            b.push_stats(Default::default());
            match strand {
                Strand::Minus => b.push_path("2=1D4=", "CA-ACGG", "CATACGG").unwrap(),
                Strand::Plus => b.push_path("3=1D3=", "CCG-TTG", "CCGATTG").unwrap(),
            }
            b.set_strands(vec![strand]);
            let (mut text, mut qual) = (crate::seq::Ids::default(), crate::seq::Ids::default());
            text.push("AACCGTTGCA").unwrap();
            qual.push("ABCDEFGHIJ").unwrap();
            b.set_query_text(text, qual);
            b
        };
        let kept = Kept::default();
        let options = AlignmentOutput {
            targets: Some(Arc::new(vec![(b"ctg0".to_vec(), 5), (b"ctg1".to_vec(), 100)])),
            command_line: "swarrow align".into(),
            ..Default::default()
        };
        let mut w = SamWriter::new(Sink::test(Box::new(kept.clone())), Kind2::Sam, &options, None).unwrap();
        w.write(&batch(Strand::Minus)).unwrap();
        w.write(&batch(Strand::Plus)).unwrap();
        Box::new(w).finish().unwrap();
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        let want = format!(
            "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:ctg0\tLN:5\n@SQ\tSN:ctg1\tLN:100\n\
             @PG\tID:swarrow\tPN:swarrow\tVN:{}\tCL:swarrow align\n\
             r1\t16\tctg1\t21\t255\t2S2M1D4M2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n\
             r1\t256\tctg1\t21\t255\t2S3M1D3M2S\t*\t0\t0\tAACCGTTGCA\tABCDEFGHIJ\tAS:i:7\tNM:i:1\tMD:Z:3^A3\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, want);
    }

    #[test]
    fn reference_names_follow_sams_rule() {
        for good in ["ctg1", "sp|P1|A_HUMAN", "chr1:2-3", "a*b=c"] {
            assert!(check_reference_name(good.as_bytes()).is_ok(), "{good}");
        }
        for bad in ["", "*x", "=x", "a,b", "a b", "x(1)"] {
            assert!(check_reference_name(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn inconsistent_rows_are_internal_errors() {
        let r = SamRow {
            query: "r1",
            strand: Strand::Plus,
            qstart: 1,
            qend: 4,
            qlen: 4,
            tstart: 1,
            score: 4,
            qaln: "ACGT",
            taln: "ACGT",
            text: Some("ACGA"),
            qual: None,
        };
        assert!(sam_record(&r, 0, false, false, false).is_err());
        assert!(sam_record(&SamRow { text: Some("ACG"), ..r }, 0, false, false, false).is_err());
        assert!(sam_record(&SamRow { qaln: "AC-T", ..r }, 0, false, false, false).is_err());
        assert!(sam_record(&SamRow { text: Some("ACGT"), ..r }, 0, false, false, false).is_ok());
    }
}

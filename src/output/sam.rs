//! SAM and BAM, written with noodles: `noodles-sam` builds and writes the header,
//! `noodles-bam` encodes BAM's header (and a record whose CIGAR exceeds BAM's 65,535
//! operations), `noodles-bgzf` compresses BAM on several threads. SAM's record lines and BAM's
//! records are encoded here from the same fields ([`push_sam_line`], [`push_bam_record`]: a
//! few appends a record, where a noodles `RecordBuf` costs a dozen allocations), checked
//! against noodles' encoding of the same records in the unit tests (BAM byte for byte, on
//! random alignments) and through samtools in `tests/alignment_formats.rs`. Records are
//! encoded on the rayon pool, in pieces of a batch concatenated in order; the writer thread
//! only looks up the targets' ids in order and hands the bytes on.
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
//! - FLAG 16 on the minus strand; 256 (secondary) or 2048 (supplementary), MAPQ and `SA:Z`
//!   as [`super::mapping`] decides them for the read's group of rows, before encoding (a
//!   record is encoded from its row and that decision alone).
//! - RNAME, POS (1-based `tstart`), CIGAR in target order (`M`/`I`/`D`, `=`/`X`
//!   with `--eqx`) with the unaligned ends of the query as soft clips, so that it covers the
//!   whole SEQ; on the minus strand the clips swap (leading `qlen - qend`, trailing
//!   `qstart - 1`).
//! - SEQ: the whole query, reverse-complemented on the minus strand; QUAL: the FASTQ
//!   qualities (reversed on minus), else `*`. Where the input gives no whole query
//!   ([`ResultBatch::query_text`]), SEQ is the aligned part and the ends are hard clips.
//! - Tags `AS:i` (score), `NM:i` (mismatches + inserted + deleted residues; in BAM the
//!   smallest unsigned integer type that holds it, as htslib stores it) and `MD:Z`, both
//!   from the aligned strings, with samtools' rule for a match: same letter, and for DNA not
//!   `N` (so `samtools calmd` agrees with them); `SA:Z` on a chimeric read's primary and
//!   supplementary records (its CIGAR elements as the records' own, soft clips included).
//! - One target name with two lengths (two sequences of one name: a sequence set, a search
//!   database, pairs with their residues) is refused, naming both lengths; the same name
//!   with the same length is one target (the residues are not compared).
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
use noodles_sam::alignment::record::{Flags, MappingQuality};
use noodles_sam::alignment::record_buf::{data::field::Value, Cigar, QualityScores, Sequence};
use noodles_sam::alignment::RecordBuf;
use noodles_sam::header::record::value::map::{self, header::Version, Map, Program, ReferenceSequence};

use super::mapping::Decision;
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
    fn new(targets: Option<&[(Vec<u8>, usize)]>) -> Result<TargetIndex> {
        let mut t = TargetIndex { index: HashMap::new(), list: Vec::new(), fixed: targets.is_some() };
        for (name, len) in targets.into_iter().flatten() {
            match t.index.get(name.as_slice()) {
                Some(&id) if t.list[id].1 != *len => return Err(name_clash(name, t.list[id].1, *len)),
                Some(_) => {}
                None if *len > 0 => {
                    t.index.insert(name.clone().into_boxed_slice(), t.list.len());
                    t.list.push((name.clone().into_boxed_slice(), *len));
                }
                None => {}
            }
        }
        Ok(t)
    }

    /// The reference id of `name` (`len` residues); a new one where the list grows. One
    /// name with two lengths is refused (SAM's `@SQ` holds one length a name); one name with
    /// the same length twice is taken as one target (its residues are not compared).
    fn id(&mut self, name: &str, len: i32) -> Result<usize> {
        if let Some(&id) = self.index.get(name.as_bytes()) {
            let known = self.list[id].1;
            if known != len.max(0) as usize {
                return Err(name_clash(name.as_bytes(), known, len.max(0) as usize));
            }
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

/// The refusal of one target name with two lengths (SAM/BAM's `@SQ`, PAF's column 7).
pub(super) fn name_clash(name: &[u8], first: usize, second: usize) -> Error {
    Error::Input(format!(
        "target {} has two lengths, {first} and {second}: two sequences share its name, and an alignment \
         output holds one length a target name (SAM/BAM @SQ LN, PAF column 7); rename one of them",
        crate::error::quoted_id(name)
    ))
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
    options: AlignmentOutput,
}

impl SamWriter {
    pub(super) fn new(sink: Sink, kind: Kind2, options: &AlignmentOutput, output: Option<&Path>) -> Result<SamWriter> {
        if kind == Kind2::Bam && options.alphabet == Some(Alphabet::Protein) {
            return Err(Error::usage(BAM_PROTEIN));
        }
        let status = sink.status();
        let targets = TargetIndex::new(options.targets.as_deref().map(|t| t.as_slice()))?;
        let header = Arc::new(targets.header(&options.command_line)?);
        let body = if targets.fixed {
            let mut encoder = Encoder::start(kind, sink);
            encoder.write_header(&header).map_err(|e| status.io_fail(e))?;
            Body::Direct(encoder)
        } else {
            Body::Spool { sink, spool: Spool::create(output)? }
        };
        Ok(SamWriter { kind, status, body: Some(body), targets, header, options: options.clone() })
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
        // In order: each record's reference id (the header's list grows in output order).
        let mut plan: Vec<Option<usize>> = Vec::with_capacity(batch.len());
        let grown = self.targets.list.len();
        for i in 0..batch.len() {
            if !super::paf::is_aligned(batch, i) {
                plan.push(None);
                continue;
            }
            let row = batch.row(i);
            plan.push(Some(self.targets.id(row.target, row.tlen)?));
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
                    let Some(id) = plan[i] else { continue };
                    let decision = decision_of(batch, i)?;
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
                        Kind2::Sam => push_sam_line(&mut bytes, &r, &names[id].0, decision, options.eqx, protein)?,
                        Kind2::Bam => {
                            check_query_name(r.query)?;
                            if !push_bam_record(&mut bytes, &r, id, decision, options.eqx, protein)? {
                                let record = sam_record(&r, id, decision, options.eqx, protein)?;
                                noodles_bam::io::Writer::from(&mut bytes)
                                    .write_alignment_record(header, &record)
                                    .map_err(failed)?
                            }
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

/// Row `i`'s decision ([`super::mapping`]: every SAM/BAM writer's rows are decided).
fn decision_of(batch: &ResultBatch, i: usize) -> Result<&Decision> {
    batch.decision(i).ok_or_else(|| Error::Internal("SAM: the reads' records were not decided".into()))
}

/// How [`super::mapping`] makes `SA:Z` elements: `rname,pos,strand,CIGAR,` and NM of a
/// row's record, as this writer encodes it.
pub(super) fn sa_maker(options: &AlignmentOutput) -> super::mapping::SaMaker {
    let (eqx, protein) = (options.eqx, options.alphabet == Some(Alphabet::Protein));
    Box::new(move |batch: &ResultBatch, i: usize| {
        let r = row_of(batch, i)?;
        let p = record_parts(&r, eqx, protein)?;
        let mut head = format!("{},{},{},", r.target, r.tstart, if r.strand == Strand::Minus { '-' } else { '+' });
        let mut cigar = Vec::new();
        push_cigar_text(&mut cigar, &p.cigar);
        head.push_str(&String::from_utf8_lossy(&cigar));
        head.push(',');
        Ok((head, p.nm))
    })
}

/// Row `i` of `batch`, as a SAM record is made of it.
fn row_of(batch: &ResultBatch, i: usize) -> Result<SamRow<'_>> {
    let row = batch.row(i);
    let (_, qaln, taln) = batch.path_of(i).ok_or_else(|| Error::Internal("SAM: the path was not computed".into()))?;
    Ok(SamRow {
        query: row.query,
        target: row.target,
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
    pub target: &'a str,
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
    pub cigar: Vec<Op>,
    pub seq: Vec<u8>,
    /// Phred scores (no offset); empty: none (`*`).
    pub quals: Vec<u8>,
    pub nm: u32,
    pub md: String,
}

/// The SAM record of `r` (see the module's rules), as noodles' record (BAM).
pub(crate) fn sam_record(
    r: &SamRow<'_>,
    reference: usize,
    decision: &Decision,
    eqx: bool,
    protein: bool,
) -> Result<RecordBuf> {
    let p = record_parts(r, eqx, protein)?;
    let position = noodles_core::Position::new(r.tstart as usize)
        .ok_or_else(|| Error::Internal(format!("SAM record of query {}: target start {}", r.query, r.tstart)))?;
    // Integers in the smallest type that holds them, unsigned where not negative (NM: C, S
    // or I, as htslib stores it; noodles' rule).
    let nm = Value::from(p.nm);
    let mut data: noodles_sam::alignment::record_buf::Data = [
        (Tag::ALIGNMENT_SCORE, Value::from(r.score)),
        (Tag::EDIT_DISTANCE, nm),
        (Tag::MISMATCHED_POSITIONS, Value::String(p.md.into())),
    ]
    .into_iter()
    .collect();
    if let Some(sa) = &decision.sa {
        data.insert(Tag::OTHER_ALIGNMENTS, Value::String(sa.as_bytes().into()));
    }
    let flags = Flags::from(decision.flag(r.strand == Strand::Minus));
    Ok(RecordBuf::builder()
        .set_name(r.query.as_bytes().to_vec())
        .set_flags(flags)
        .set_mapping_quality(
            MappingQuality::new(decision.mapq)
                .ok_or_else(|| Error::Internal(format!("SAM record of query {}: MAPQ {}", r.query, decision.mapq)))?,
        )
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
    decision: &Decision,
    eqx: bool,
    protein: bool,
) -> Result<()> {
    use std::io::Write as _;
    check_query_name(r.query)?;
    let p = record_parts(r, eqx, protein)?;
    let _ = write!(out, "{}\t{}\t", r.query, decision.flag(r.strand == Strand::Minus));
    out.extend_from_slice(rname);
    let _ = write!(out, "\t{}\t{}\t", r.tstart, decision.mapq);
    push_cigar_text(out, &p.cigar);
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
    let _ = write!(out, "\tAS:i:{}\tNM:i:{}\tMD:Z:{}", r.score, p.nm, p.md);
    if let Some(sa) = &decision.sa {
        out.extend_from_slice(b"\tSA:Z:");
        out.extend_from_slice(sa.as_bytes());
    }
    out.push(b'\n');
    Ok(())
}

/// Appends the BAM record of `r` on reference `reference` (block size first), encoded here
/// from the same fields as [`sam_record`] (a record costs a few appends, where building and
/// encoding a noodles record costs a dozen allocations), checked byte for byte against
/// noodles' encoding in the tests. False, with nothing appended, for a CIGAR of more than
/// 65,535 operations: noodles encodes those (BAM's `CG:B,I` tag).
pub(crate) fn push_bam_record(
    out: &mut Vec<u8>,
    r: &SamRow<'_>,
    reference: usize,
    decision: &Decision,
    eqx: bool,
    protein: bool,
) -> Result<bool> {
    let p = record_parts(r, eqx, protein)?;
    let Ok(n_ops) = u16::try_from(p.cigar.len()) else { return Ok(false) };
    let wrong = |problem: &str| {
        Error::Input(format!(
            "BAM output: the record of query {} and target {}: {problem}",
            crate::error::quoted_id(r.query.as_bytes()),
            crate::error::quoted_id(r.target.as_bytes())
        ))
    };
    if p.quals.iter().any(|&q| q > 93) {
        return Err(wrong("a quality score above 93"));
    }
    let (reference, start) = (i32::try_from(reference), r.tstart - 1);
    let reference = reference.map_err(|_| wrong("too many targets"))?;
    let code = |kind: Kind| match kind {
        Kind::Match => 0u32,
        Kind::Insertion => 1,
        Kind::Deletion => 2,
        Kind::Skip => 3,
        Kind::SoftClip => 4,
        Kind::HardClip => 5,
        Kind::Pad => 6,
        Kind::SequenceMatch => 7,
        Kind::SequenceMismatch => 8,
    };
    let span: usize = p
        .cigar
        .iter()
        .filter(|op| {
            matches!(
                op.kind(),
                Kind::Match | Kind::Deletion | Kind::Skip | Kind::SequenceMatch | Kind::SequenceMismatch
            )
        })
        .map(|op| op.len())
        .sum();
    let at = out.len();
    out.extend_from_slice(&[0; 4]); // block_size, set at the end
    out.extend_from_slice(&reference.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.push((r.query.len() + 1) as u8);
    out.push(decision.mapq);
    out.extend_from_slice(&region_to_bin(start as usize, start as usize + span.max(1) - 1).to_le_bytes());
    out.extend_from_slice(&n_ops.to_le_bytes());
    out.extend_from_slice(&decision.flag(r.strand == Strand::Minus).to_le_bytes());
    out.extend_from_slice(&(p.seq.len() as u32).to_le_bytes());
    out.extend_from_slice(&(-1i32).to_le_bytes());
    out.extend_from_slice(&(-1i32).to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(r.query.as_bytes());
    out.push(0);
    for op in &p.cigar {
        out.extend_from_slice(&(((op.len() as u32) << 4) | code(op.kind())).to_le_bytes());
    }
    for pair in p.seq.chunks(2) {
        let low = pair.get(1).map_or(0, |&b| BAM_BASE[b as usize]);
        out.push(BAM_BASE[pair[0] as usize] << 4 | low);
    }
    match p.quals.is_empty() {
        true => out.extend(std::iter::repeat_n(0xff, p.seq.len())),
        false => out.extend_from_slice(&p.quals),
    }
    push_int_tag(out, b"AS", i64::from(r.score));
    push_int_tag(out, b"NM", i64::from(p.nm));
    out.extend_from_slice(b"MDZ");
    out.extend_from_slice(p.md.as_bytes());
    out.push(0);
    if let Some(sa) = &decision.sa {
        out.extend_from_slice(b"SAZ");
        out.extend_from_slice(sa.as_bytes());
        out.push(0);
    }
    let size = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&size.to_le_bytes());
    Ok(true)
}

/// An integer tag in the smallest BAM type that holds it, unsigned where it is not negative
/// (htslib's and noodles' rule).
fn push_int_tag(out: &mut Vec<u8>, tag: &[u8; 2], n: i64) {
    out.extend_from_slice(tag);
    if let Ok(n) = u8::try_from(n) {
        out.extend_from_slice(&[b'C', n]);
    } else if let Ok(n) = u16::try_from(n) {
        out.push(b'S');
        out.extend_from_slice(&n.to_le_bytes());
    } else if let Ok(n) = u32::try_from(n) {
        out.push(b'I');
        out.extend_from_slice(&n.to_le_bytes());
    } else if let Ok(n) = i8::try_from(n) {
        out.extend_from_slice(&[b'c', n as u8]);
    } else if let Ok(n) = i16::try_from(n) {
        out.push(b's');
        out.extend_from_slice(&n.to_le_bytes());
    } else {
        out.push(b'i');
        out.extend_from_slice(&(n as i32).to_le_bytes());
    }
}

/// BAM's 4-bit base codes (`=ACMGRSVTWYHKDBN`, either case; anything else `N`).
const BAM_BASE: [u8; 256] = {
    let bases = *b"=ACMGRSVTWYHKDBN";
    let mut codes = [15u8; 256];
    let mut i = 0;
    while i < 16 {
        codes[bases[i] as usize] = i as u8;
        codes[bases[i].to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    codes
};

/// The SAM specification's `reg2bin` of 0-based `start..=end` (its section 5.3, written as
/// there: `((1 << 3) - 1) / 7` is its level 1 offset).
#[allow(clippy::eq_op)]
fn region_to_bin(start: usize, end: usize) -> u16 {
    let bin = if start >> 14 == end >> 14 {
        ((1 << 15) - 1) / 7 + (start >> 14)
    } else if start >> 17 == end >> 17 {
        ((1 << 12) - 1) / 7 + (start >> 17)
    } else if start >> 20 == end >> 20 {
        ((1 << 9) - 1) / 7 + (start >> 20)
    } else if start >> 23 == end >> 23 {
        ((1 << 6) - 1) / 7 + (start >> 23)
    } else if start >> 26 == end >> 26 {
        ((1 << 3) - 1) / 7 + (start >> 26)
    } else {
        0
    };
    bin as u16
}

/// Appends a CIGAR's text (`2S10M1D3M`).
fn push_cigar_text(out: &mut Vec<u8>, cigar: &[Op]) {
    use std::io::Write as _;
    for op in cigar {
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
fn record_parts(r: &SamRow<'_>, eqx: bool, protein: bool) -> Result<Parts> {
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
    let (mut run, mut nm, mut in_deletion) = (0usize, 0u32, false);
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
                // Every DNA ambiguity code mismatches, itself included (Scoring::identity_codes).
                let same = qc == tc && (protein || matches!(qc, b'A' | b'C' | b'G' | b'T'));
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
    Ok(Parts { cigar, seq, quals, nm, md })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::mapping::Role;

    fn decided(role: Role, mapq: u8, sa: Option<&str>) -> Decision {
        Decision { role, mapq, sa: sa.map(Into::into) }
    }

    fn line(r: &SamRow<'_>, decision: &Decision, eqx: bool) -> String {
        let targets = TargetIndex::new(Some(&[(b"ctg1".to_vec(), 100)])).unwrap();
        let header = targets.header("swarrow align test").unwrap();
        let record = sam_record(r, 0, decision, eqx, false).unwrap();
        let mut out = Vec::new();
        noodles_sam::io::Writer::new(&mut out).write_alignment_record(&header, &record).unwrap();
        let by_noodles = String::from_utf8(out).unwrap();
        let mut ours = Vec::new();
        push_sam_line(&mut ours, r, b"ctg1", decision, eqx, false).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), by_noodles, "our SAM line differs from noodles' encoding");
        assert_eq!(bam_ours(r, decision, eqx), bam_noodles(r, decision, eqx), "our BAM record differs from noodles'");
        by_noodles
    }

    fn bam_noodles(r: &SamRow<'_>, decision: &Decision, eqx: bool) -> Vec<u8> {
        let targets = TargetIndex::new(Some(&[(b"ctg0".to_vec(), 5), (b"ctg1".to_vec(), 1 << 30)])).unwrap();
        let header = targets.header("t").unwrap();
        let record = sam_record(r, 1, decision, eqx, false).unwrap();
        let mut bytes = Vec::new();
        noodles_bam::io::Writer::from(&mut bytes).write_alignment_record(&header, &record).unwrap();
        bytes
    }

    fn bam_ours(r: &SamRow<'_>, decision: &Decision, eqx: bool) -> Vec<u8> {
        let mut bytes = vec![7u8; 3]; // appended after what the buffer holds
        assert!(push_bam_record(&mut bytes, r, 1, decision, eqx, false).unwrap());
        bytes.split_off(3)
    }

    /// Random alignments (every operation, both strands, clips, qualities or none, whole
    /// query or the aligned part, positions in every BAM bin level, large NM, SA:Z): our BAM
    /// records are noodles' byte for byte.
    #[test]
    fn bam_records_are_noodles_encoding_byte_for_byte() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for case in 0..300 {
            let columns = 1 + next(if case % 10 == 0 { 400 } else { 40 });
            let (mut qaln, mut taln) = (String::new(), String::new());
            for _ in 0..columns {
                let base = |k: usize| b"ACGTN"[k] as char;
                match next(10) {
                    0 => {
                        qaln.push('-');
                        taln.push(base(next(5)));
                    }
                    1 => {
                        qaln.push(base(next(5)));
                        taln.push('-');
                    }
                    2 => {
                        qaln.push(base(next(5)));
                        taln.push(base(next(5)));
                    }
                    _ => {
                        let b = base(next(4));
                        qaln.push(b);
                        taln.push(b);
                    }
                }
            }
            if !taln.bytes().any(|b| b != b'-') || !qaln.bytes().any(|b| b != b'-') {
                continue;
            }
            let aligned: String = qaln.chars().filter(|&c| c != '-').collect();
            let (lead, trail) = (next(4) * next(3), next(5));
            let mut seq = String::new();
            (0..lead).for_each(|_| seq.push(b"ACGT"[next(4)] as char));
            seq.push_str(&aligned);
            (0..trail).for_each(|_| seq.push(b"ACGT"[next(4)] as char));
            let strand = if next(2) == 0 { Strand::Plus } else { Strand::Minus };
            let text: String = match strand {
                Strand::Plus => seq.clone(),
                Strand::Minus => seq.bytes().rev().map(|b| Alphabet::complement_letter(b) as char).collect(),
            };
            let qual: String = (0..text.len()).map(|_| (33 + next(60) as u8) as char).collect();
            let qlen = text.len() as i32;
            let (qstart, qend) = match strand {
                Strand::Plus => (lead as i32 + 1, (lead + aligned.len()) as i32),
                Strand::Minus => (trail as i32 + 1, (trail + aligned.len()) as i32),
            };
            let r = SamRow {
                query: if case % 2 == 0 { "read" } else { "r:1/2" },
                target: "ctg1",
                strand,
                qstart,
                qend,
                qlen,
                tstart: 1 + [next(1000), next(1 << 16), next(1 << 21), next(1 << 25), next(1 << 29)][case % 5] as i32,
                score: next(500) as i32 - 50,
                qaln: &qaln,
                taln: &taln,
                text: (case % 7 != 0).then_some(text.as_str()),
                qual: (case % 3 != 0 && case % 7 != 0).then_some(qual.as_str()),
            };
            let role = [Role::Primary, Role::Secondary, Role::Supplementary][case % 3];
            let sa = (case % 4 == 0).then_some("ctg0,3,-,2S3M,7,1;");
            let d = decided(role, next(61) as u8, sa);
            for eqx in [false, true] {
                assert_eq!(bam_ours(&r, &d, eqx), bam_noodles(&r, &d, eqx), "case {case}: {r:?}");
            }
        }
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
            target: "ctg1",
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
        let primary = decided(Role::Primary, 60, None);
        assert_eq!(
            line(&r, &primary, false),
            "r1\t16\tctg1\t21\t60\t2S2M1D4M2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n"
        );
        let mismatch = SamRow { taln: "CATACGA", ..r };
        assert_eq!(
            line(&mismatch, &decided(Role::Secondary, 0, None), true),
            "r1\t272\tctg1\t21\t0\t2S2=1D3=1X2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:2\tMD:Z:2^T3A0\n"
        );
        // Supplementary, with SA:Z after MD (0x800 + 0x10).
        assert_eq!(
            line(&r, &decided(Role::Supplementary, 17, Some("ctg1,5,+,4M6S,60,0;")), false),
            "r1\t2064\tctg1\t21\t17\t2S2M1D4M2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:1\tMD:Z:2^T4\t\
             SA:Z:ctg1,5,+,4M6S,60,0;\n"
        );
        // Plus strand of the same query: residues 3..=8 `CCGTTG`, clips 2 and 2, no reverse.
        let plus = SamRow { strand: Strand::Plus, qaln: "CCG-TTG", taln: "CCGATTG", qual: None, ..r };
        assert_eq!(
            line(&plus, &primary, false),
            "r1\t0\tctg1\t21\t60\t2S3M1D3M2S\t*\t0\t0\tAACCGTTGCA\t*\tAS:i:7\tNM:i:1\tMD:Z:3^A3\n"
        );
        // Unequal clips on minus: residues 1..=7 of 10 are the last 7 of the reverse
        // complement (AACGGTT), so 3 clipped before (10 - 7) and none after; a deletion, then
        // an insertion (which MD does not show).
        let r2 = SamRow { qstart: 1, qend: 7, qaln: "AAC-GGTT", taln: "AACAGG-T", qual: None, ..r };
        assert_eq!(
            line(&r2, &primary, false),
            "r1\t16\tctg1\t21\t60\t3S3M1D2M1I1M\t*\t0\t0\tTGCAACGGTT\t*\tAS:i:7\tNM:i:2\tMD:Z:3^A3\n"
        );
        // Without the whole query: the aligned part, hard clips.
        let bare = SamRow { text: None, qual: None, ..r };
        assert_eq!(
            line(&bare, &primary, false),
            "r1\t16\tctg1\t21\t60\t2H2M1D4M2H\t*\t0\t0\tCAACGG\t*\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n"
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

    /// The writer takes strands, whole queries and qualities from the rows, decides a
    /// read's records across batches (two equal rows of one read: the first primary with
    /// MAPQ 0, the second secondary), and lists the set's targets.
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
        let w = SamWriter::new(Sink::test(Box::new(kept.clone())), Kind2::Sam, &options, None).unwrap();
        let mut w = super::super::mapping::Grouped::new(Box::new(w), Some(sa_maker(&options)));
        w.write(&batch(Strand::Minus)).unwrap();
        w.write(&batch(Strand::Plus)).unwrap();
        Box::new(w).finish().unwrap();
        let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
        let want = format!(
            "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:ctg0\tLN:5\n@SQ\tSN:ctg1\tLN:100\n\
             @PG\tID:swarrow\tPN:swarrow\tVN:{}\tCL:swarrow align\n\
             r1\t16\tctg1\t21\t0\t2S2M1D4M2S\t*\t0\t0\tTGCAACGGTT\tJIHGFEDCBA\tAS:i:7\tNM:i:1\tMD:Z:2^T4\n\
             r1\t256\tctg1\t21\t0\t2S3M1D3M2S\t*\t0\t0\tAACCGTTGCA\tABCDEFGHIJ\tAS:i:7\tNM:i:1\tMD:Z:3^A3\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, want);
    }

    /// BAM stores NM in the smallest unsigned integer type (htslib's rule: CoverM and
    /// MetaBAT2's depth read it so), MAPQ as decided, and SA:Z as a string.
    #[test]
    fn bam_records_store_nm_unsigned_and_the_decided_mapq() {
        let targets = TargetIndex::new(Some(&[(b"ctg1".to_vec(), 1000)])).unwrap();
        let header = targets.header("t").unwrap();
        let bam = |nm_columns: usize, decision: &Decision| {
            let (q, t) = ("A".repeat(nm_columns + 2), format!("AC{}", "G".repeat(nm_columns)));
            let r = SamRow {
                query: "r1",
                target: "ctg1",
                strand: Strand::Plus,
                qstart: 1,
                qend: q.len() as i32,
                qlen: q.len() as i32,
                tstart: 1,
                score: 1,
                qaln: &q,
                taln: &t,
                text: None,
                qual: None,
            };
            let record = sam_record(&r, 0, decision, false, false).unwrap();
            let mut bytes = Vec::new();
            noodles_bam::io::Writer::from(&mut bytes).write_alignment_record(&header, &record).unwrap();
            bytes
        };
        let primary = decided(Role::Primary, 37, None);
        // BAM's fixed fields: block_size, refID, pos (4 bytes each), l_read_name, mapq (1 each),
        // bin, n_cigar_op, flag (2 each).
        let small = bam(3, &primary);
        assert_eq!(small[13], 37);
        assert!(small.windows(4).any(|w| w == [b'N', b'M', b'C', 4]), "NM:C:4");
        let large = bam(300, &primary);
        assert!(large.windows(5).any(|w| w == [b'N', b'M', b'S', 45, 1]), "NM:S:301");
        let sa = bam(3, &decided(Role::Supplementary, 0, Some("ctg1,5,+,4M,60,0;")));
        assert!(sa.windows(21).any(|w| w == b"SAZctg1,5,+,4M,60,0;\0"), "SA:Z");
        assert_eq!(u16::from_le_bytes([sa[18], sa[19]]), 0x800, "FLAG");
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
            target: "ctg1",
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
        let d = decided(Role::Primary, 60, None);
        assert!(sam_record(&r, 0, &d, false, false).is_err());
        assert!(sam_record(&SamRow { text: Some("ACG"), ..r }, 0, &d, false, false).is_err());
        assert!(sam_record(&SamRow { qaln: "AC-T", ..r }, 0, &d, false, false).is_err());
        assert!(sam_record(&SamRow { text: Some("ACGT"), ..r }, 0, &d, false, false).is_ok());
    }
}

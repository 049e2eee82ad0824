//! Output formats and how one is chosen: `--format`, else the output file's extension, else
//! (standard output) TSV onto a terminal, by the extension of the file standard output is
//! redirected to (`> hits.parquet`), TSV for any other file (`> hits.out`), and an Arrow IPC
//! stream into a pipe.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Arrow IPC stream (`arrow`): readable while it is written; the default into a pipe.
    ArrowStream,
    /// Arrow IPC file (`arrow-file`, a.k.a. Feather v2): random access, footer at the end.
    ArrowFile,
    /// Parquet (`parquet`), zstd-compressed.
    Parquet,
    /// Tab-separated text with one header line (`tsv`).
    Tsv,
    /// BLAST tabular (`blast`): `-outfmt 6`'s twelve columns `qseqid sseqid pident length
    /// mismatch gapopen qstart qend sstart send evalue bitscore` by default, no header.
    Blast,
    /// BLAST tabular with comment lines (`-outfmt 7`): per query `# BLASTP ...`, `# Query:`,
    /// `# Database:`, `# Fields:` (where it has hits) and `# N hits found` before its lines,
    /// `# BLAST processed N queries` at the end. Search only: the comments list every query,
    /// those without hits included.
    BlastCommented,
    /// minimap2's PAF (`paf`): its 12 columns, then `tp:A:P NM:i AS:i de:f`, and `cg:Z` when
    /// a path is asked (`src/output/paf.rs`).
    Paf,
    /// SAM text (`sam`): header `@HD @SQ @PG`, one record per alignment (`src/output/sam.rs`).
    Sam,
    /// BAM (`bam`): SAM's header and records, BGZF-compressed on several threads; DNA only.
    Bam,
}

impl Format {
    /// A `--format`/`--outfmt` value that may carry BLAST's column list (`6 qseqid sseqid
    /// pident`): the format, and the list when given.
    /// BLAST's `7` (commented tabular) is read here only: search writes it.
    pub fn parse_with_columns(s: &str) -> Result<(Format, Option<String>)> {
        let trimmed = s.trim();
        let tabular = |number: &str| match number {
            "6" => Some(Format::Blast),
            "7" => Some(Format::BlastCommented),
            _ => None,
        };
        match trimmed.split_once(char::is_whitespace) {
            Some((number, list)) if tabular(number).is_some() => {
                Ok((tabular(number).unwrap_or(Format::Blast), Some(list.trim().to_string())))
            }
            _ => match tabular(trimmed) {
                Some(Format::BlastCommented) => Ok((Format::BlastCommented, None)),
                _ => Ok((Format::parse(trimmed)?, None)),
            },
        }
    }

    /// BLAST tabular, with or without comment lines: BLAST's columns and number formats.
    pub fn is_blast_tabular(self) -> bool {
        matches!(self, Format::Blast | Format::BlastCommented)
    }

    /// The alignment formats (PAF, SAM, BAM): their own fixed fields, which decide what is
    /// computed ([`super::columns::for_alignment_format`]), not the column registry's order.
    pub fn is_alignment_format(self) -> bool {
        matches!(self, Format::Paf | Format::Sam | Format::Bam)
    }

    /// SAM and BAM write each query whole (SEQ, QUAL): the readers fill
    /// `PairBatch::query_text`/`query_quals` for them, and the pipeline hands them to the rows
    /// (`ResultBatch::set_query_text`); without them SEQ is the aligned part, hard-clipped.
    pub fn writes_whole_queries(self) -> bool {
        matches!(self, Format::Sam | Format::Bam)
    }

    /// Every format with its `--format` name, in the order help texts list them.
    pub const ALL: [(Format, &'static str); 8] = [
        (Format::ArrowStream, "arrow"),
        (Format::ArrowFile, "arrow-file"),
        (Format::Parquet, "parquet"),
        (Format::Tsv, "tsv"),
        (Format::Blast, "blast"),
        (Format::Paf, "paf"),
        (Format::Sam, "sam"),
        (Format::Bam, "bam"),
    ];

    /// The `--format` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::BlastCommented => "7",
            _ => Format::ALL.iter().find(|(f, _)| *f == self).map(|(_, n)| *n).unwrap_or("?"),
        }
    }

    /// Parses a `--format` (or `--outfmt`) value, case-insensitive: a name, or the names
    /// BLAST, DIAMOND and MMseqs2 users know for the tabular format: `6`, `m8`, `tabular`.
    pub fn parse(s: &str) -> Result<Format> {
        let wanted = s.trim().to_ascii_lowercase();
        if let Some(columns) = wanted.strip_prefix("6 ") {
            return Err(Error::usage(format!(
                "--outfmt '6 {}': BLAST's column list is accepted by search and align only \
                 (`6` alone writes qseqid sseqid pident length mismatch gapopen qstart qend \
                 sstart send evalue bitscore)",
                columns.trim()
            )));
        }
        if wanted == "7" || wanted.starts_with("7 ") {
            return Err(Error::usage(
                "--outfmt 7 (BLAST tabular with comment lines per query) is written by search only; \
                 use 6 (or blast) for tabular lines without comments",
            ));
        }
        if matches!(wanted.as_str(), "6" | "m8" | "tabular") {
            return Ok(Format::Blast);
        }
        Format::ALL.iter().find(|(_, n)| *n == wanted).map(|(f, _)| *f).ok_or_else(|| {
            Error::usage(format!(
                "unknown output format '{s}': expected one of {} (or 6, m8: blast)",
                Format::ALL.map(|(_, n)| n).join(", ")
            ))
        })
    }

    /// The format an output file name implies, if its extension is one we know.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" | "pq" => Format::Parquet,
            "arrows" => Format::ArrowStream,
            "arrow" | "ipc" | "feather" => Format::ArrowFile,
            "tsv" | "txt" => Format::Tsv,
            "m8" | "blast" | "tab" => Format::Blast,
            "paf" => Format::Paf,
            "sam" => Format::Sam,
            "bam" => Format::Bam,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Format> {
        Format::parse(s)
    }
}

/// What standard output is, as far as the default format cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdout {
    Terminal,
    /// A regular file (`> hits.tsv`), with its path where the system tells it (Linux).
    File(Option<PathBuf>),
    /// A pipe or a socket: another program reads it.
    Pipe,
    /// Anything else (`/dev/null`, another device): written as into a pipe, without a note.
    Device,
}

impl Stdout {
    pub fn detect() -> Stdout {
        use std::io::IsTerminal;
        let out = std::io::stdout();
        if out.is_terminal() {
            return Stdout::Terminal;
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let is_file = out
                .as_fd()
                .try_clone_to_owned()
                .and_then(|fd| std::fs::File::from(fd).metadata())
                .is_ok_and(|m| m.is_file());
            if is_file {
                return Stdout::File(std::fs::read_link("/proc/self/fd/1").ok());
            }
            let is_device = out
                .as_fd()
                .try_clone_to_owned()
                .and_then(|fd| std::fs::File::from(fd).metadata())
                .is_ok_and(|m| is_device(&m.file_type()));
            if is_device {
                return Stdout::Device;
            }
        }
        Stdout::Pipe
    }
}

#[cfg(unix)]
fn is_device(t: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_char_device() || t.is_block_device()
}

/// True for a FIFO, socket or device given as `-o` (`-o /dev/null`, `-o >(...)`): written
/// directly, like standard output into a pipe.
fn is_stream_target(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_socket() || is_device(&t)
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// What a run says when standard output is a pipe and the format was not chosen.
pub const PIPE_NOTE: &str = "note: stdout is a pipe, so results are written as an Arrow IPC stream (binary, \
                             for pyarrow, Polars, DuckDB); for text tools (cut, sort, awk) add --format tsv";

/// The note for a run whose output became an Arrow IPC stream only because standard output
/// is a pipe (`swarrow search ... | awk` would otherwise read binary without a word): None
/// when the user chose the format (`--format`, `-o` with an extension) or output goes
/// elsewhere.
pub fn default_format_note(explicit: Option<Format>, output: Option<&Path>, stdout: &Stdout) -> Option<&'static str> {
    let to_stdout = output.is_none_or(|p| p.as_os_str() == "-");
    (explicit.is_none() && to_stdout && *stdout == Stdout::Pipe).then_some(PIPE_NOTE)
}

/// The format to write: `explicit` (`--format`) wins; else the extension of `output`; else
/// (standard output: `None` or `-`) TSV onto a terminal, the extension of the file standard
/// output is redirected to, TSV for a file without a known extension, and an Arrow IPC
/// stream into a pipe or device. An output file (`-o`) without a known extension is TSV, as
/// the same name behind `>` is (BLAST users name their tables `.out`, `.m8`, `.blast`), unless
/// it is a FIFO, socket or device (`-o /dev/null`): an Arrow IPC stream, as into a pipe.
pub fn resolve_format(explicit: Option<Format>, output: Option<&Path>, stdout: &Stdout) -> Result<Format> {
    if let Some(path) = output.filter(|p| p.as_os_str() != "-") {
        check_output_name(explicit, path)?;
    }
    if let Some(format) = explicit {
        return Ok(format);
    }
    Ok(match output {
        Some(path) if path.as_os_str() != "-" => match Format::from_extension(path) {
            Some(format) => format,
            None if is_stream_target(path) => Format::ArrowStream,
            None => Format::Tsv,
        },
        _ => match stdout {
            Stdout::Terminal => Format::Tsv,
            Stdout::File(path) => path.as_deref().and_then(Format::from_extension).unwrap_or(Format::Tsv),
            Stdout::Pipe | Stdout::Device => Format::ArrowStream,
        },
    })
}

/// Extensions of formats swarrow does not write, with the format's name: an output named so
/// would hold another format than its name says (`-o x.vcf` as TSV), so it is refused.
const OTHER_FORMATS: [(&str, &str); 5] =
    [("cram", "CRAM"), ("vcf", "VCF"), ("gff", "GFF"), ("json", "JSON"), ("xml", "XML")];

/// An `-o` name that promises what the output would not be is refused: a compression
/// extension (`.gz`, `.zst`, ...: swarrow writes no compressed text), or an extension of
/// another kind of format than `--format` (`-o x.parquet --format tsv`; text formats may
/// take each other's names).
fn check_output_name(explicit: Option<Format>, path: &Path) -> Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if let Some(ext) = ext.as_deref().filter(|e| matches!(*e, "gz" | "bgz" | "zst" | "zstd" | "bz2" | "xz" | "zip")) {
        return Err(Error::usage(format!(
            "-o {}: swarrow does not compress its output, and a .{ext} name would hold plain data; write Parquet \
             (-o NAME.parquet, compressed), or pipe text through the compressor (--format tsv | gzip > NAME.tsv.gz)",
            path.display()
        )));
    }
    if let Some((_, format)) = ext.as_deref().and_then(|e| OTHER_FORMATS.iter().find(|(x, _)| *x == e)) {
        return Err(Error::usage(format!(
            "-o {}: swarrow does not write {format}; it writes Arrow IPC (.arrows, .arrow), Parquet (.parquet), \
             TSV (.tsv) and BLAST tabular (.m8): name the output after one of them",
            path.display()
        )));
    }
    // Text formats share names (BLAST users write `-outfmt 6 -out hits.tsv`): only a binary
    // name with text, or text or another binary format in a binary name, conflicts.
    let family = |f: Format| match f {
        Format::ArrowStream | Format::ArrowFile => 0,
        Format::Parquet => 1,
        Format::Tsv | Format::Blast | Format::BlastCommented => 2,
        Format::Paf => 3,
        Format::Sam => 4,
        Format::Bam => 5,
    };
    if let (Some(chosen), Some(named)) = (explicit, Format::from_extension(path)) {
        if family(chosen) != family(named) {
            return Err(Error::usage(format!(
                "-o {} names a {} file but --format asks for {}: choose one (drop --format, or rename the output)",
                path.display(),
                named,
                chosen
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_default_follows_what_it_is() {
        let file = |p: &str| Stdout::File(Some(PathBuf::from(p)));
        let cases = [
            (Stdout::Terminal, Format::Tsv),
            (file("/tmp/hits.tsv"), Format::Tsv),
            (file("/tmp/hits.parquet"), Format::Parquet),
            (file("/tmp/hits.m8"), Format::Blast),
            (file("/tmp/hits.arrows"), Format::ArrowStream),
            (file("/tmp/hits.out"), Format::Tsv),
            (Stdout::File(None), Format::Tsv),
            (Stdout::Pipe, Format::ArrowStream),
            (Stdout::Device, Format::ArrowStream),
        ];
        for (stdout, want) in cases {
            assert_eq!(resolve_format(None, None, &stdout).unwrap(), want, "{stdout:?}");
            assert_eq!(resolve_format(None, Some(Path::new("-")), &stdout).unwrap(), want);
        }
        // --format and -o win over standard output.
        assert_eq!(resolve_format(Some(Format::Tsv), None, &Stdout::Pipe).unwrap(), Format::Tsv);
        assert_eq!(resolve_format(None, Some(Path::new("x.parquet")), &Stdout::Terminal).unwrap(), Format::Parquet);
    }

    #[test]
    fn alignment_formats_by_name_and_extension() {
        for (name, want) in [("paf", Format::Paf), ("SAM", Format::Sam), ("bam", Format::Bam)] {
            assert_eq!(Format::parse(name).unwrap(), want);
            let path = format!("out.{name}");
            assert_eq!(resolve_format(None, Some(Path::new(&path)), &Stdout::Pipe).unwrap(), want, "{path}");
            assert!(want.is_alignment_format());
        }
        assert_eq!(resolve_format(None, None, &Stdout::File(Some("/tmp/x.paf".into()))).unwrap(), Format::Paf);
        // A name of one kind with --format of another is refused; BGZF-compressed names too.
        assert!(resolve_format(Some(Format::Sam), Some(Path::new("x.bam")), &Stdout::Pipe).is_err());
        assert!(resolve_format(Some(Format::Paf), Some(Path::new("x.tsv")), &Stdout::Pipe).is_err());
        assert!(resolve_format(None, Some(Path::new("x.paf.gz")), &Stdout::Pipe).is_err());
    }

    #[test]
    fn devices_need_no_format_and_only_a_pipe_chosen_by_default_gets_the_note() {
        assert_eq!(resolve_format(None, Some(Path::new("/dev/null")), &Stdout::Terminal).unwrap(), Format::ArrowStream);
        // Any other name is TSV, as behind `>` (issue 35, item 11).
        for name in ["/tmp/no-such-dir/x.out", "hits.out", "hits.blast6", "hits"] {
            assert_eq!(resolve_format(None, Some(Path::new(name)), &Stdout::Terminal).unwrap(), Format::Tsv, "{name}");
        }
        let note =
            |explicit, output: Option<&str>, stdout| default_format_note(explicit, output.map(Path::new), &stdout);
        assert_eq!(note(None, None, Stdout::Pipe), Some(PIPE_NOTE));
        assert!(note(None, Some("-"), Stdout::Pipe).is_some());
        assert_eq!(note(Some(Format::ArrowStream), None, Stdout::Pipe), None);
        assert_eq!(note(None, Some("x.arrows"), Stdout::Pipe), None);
        assert_eq!(note(None, None, Stdout::Device), None);
        assert_eq!(note(None, None, Stdout::Terminal), None);
        assert_eq!(note(None, None, Stdout::File(None)), None);
    }

    #[test]
    fn names_of_formats_swarrow_does_not_write_are_refused() {
        for name in ["x.cram", "x.vcf", "x.GFF", "x.json", "dir/x.xml"] {
            for explicit in [None, Some(Format::Tsv)] {
                let e = resolve_format(explicit, Some(Path::new(name)), &Stdout::Terminal).unwrap_err();
                assert!(e.to_string().contains("does not write") && e.to_string().contains("Parquet"), "{e}");
            }
        }
        // Standard output and the names of the formats it writes are unaffected.
        assert_eq!(resolve_format(None, Some(Path::new("x.json.tsv")), &Stdout::Terminal).unwrap(), Format::Tsv);
    }

    #[test]
    fn blast_habits_name_the_tabular_format() {
        for name in ["6", "m8", "M8", "tabular", "blast", " 6 "] {
            assert_eq!(Format::parse(name).unwrap(), Format::Blast, "{name}");
        }
        assert!(Format::parse("6 qseqid sseqid pident").is_err());
        assert_eq!(Format::parse_with_columns("7").unwrap(), (Format::BlastCommented, None));
        assert_eq!(
            Format::parse_with_columns(" 7 std qlen").unwrap(),
            (Format::BlastCommented, Some("std qlen".into()))
        );
        assert!(Format::parse("7").unwrap_err().to_string().contains("search only"));
        assert!(Format::parse("5").is_err());
    }
}

//! Output formats and how one is chosen: `--format`, else the output file's extension, else
//! (standard output) Arrow IPC stream into a pipe and TSV onto a terminal.

use std::path::Path;

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
    /// BLAST tabular (`blast`): `-outfmt "6 qseqid sseqid score bitscore evalue qstart qend
    /// sstart send qlen slen"`, no header.
    Blast,
}

impl Format {
    /// Every format with its `--format` name, in the order help texts list them.
    pub const ALL: [(Format, &'static str); 5] = [
        (Format::ArrowStream, "arrow"),
        (Format::ArrowFile, "arrow-file"),
        (Format::Parquet, "parquet"),
        (Format::Tsv, "tsv"),
        (Format::Blast, "blast"),
    ];

    /// The `--format` name.
    pub fn name(self) -> &'static str {
        Format::ALL.iter().find(|(f, _)| *f == self).map(|(_, n)| *n).unwrap_or("?")
    }

    /// Parses a `--format` value (case-insensitive).
    pub fn parse(s: &str) -> Result<Format> {
        let wanted = s.trim().to_ascii_lowercase();
        Format::ALL.iter().find(|(_, n)| *n == wanted).map(|(f, _)| *f).ok_or_else(|| {
            Error::usage(format!(
                "unknown output format '{s}': expected one of {}",
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

/// The format to write: `explicit` (`--format`) wins; else the extension of `output`; else
/// (standard output: `None` or `-`) an Arrow IPC stream when standard output is not a
/// terminal, TSV when it is. An output file without a known extension is an error asking for
/// `--format`.
pub fn resolve_format(
    explicit: Option<Format>,
    output: Option<&Path>,
    stdout_is_terminal: bool,
) -> Result<Format> {
    if let Some(format) = explicit {
        return Ok(format);
    }
    match output {
        Some(path) if path.as_os_str() != "-" => Format::from_extension(path).ok_or_else(|| {
            let ext = match path.extension() {
                Some(ext) => format!("extension '.{}'", ext.to_string_lossy()),
                None => "no extension".to_string(),
            };
            Error::usage(format!(
                "{}: cannot tell the output format from {ext}; use --format ({}) or one of the \
                 extensions .parquet .pq .arrows .arrow .ipc .feather .tsv .txt .m8 .blast .tab",
                path.display(),
                Format::ALL.map(|(_, n)| n).join(", ")
            ))
        }),
        _ if stdout_is_terminal => Ok(Format::Tsv),
        _ => Ok(Format::ArrowStream),
    }
}

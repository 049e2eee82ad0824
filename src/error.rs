//! One error type for the whole crate. Its variant decides the exit status:
//! bad input (the user's to fix) exits 2, everything else exits 1.

use std::fmt;
use std::path::Path;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or bad arguments: the message names the file, the record and the problem.
    #[error("{0}")]
    Input(String),
    /// An I/O failure that is not the input's fault (disk full, permission on output, ...).
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// GPU runtime, driver or kernel-compilation failures.
    #[error("{0}")]
    Device(String),
    /// A broken invariant inside swarrow: a bug, reported instead of a panic.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            _ => 1,
        }
    }

    /// A problem with one input record: `FILE: record N (ID): PROBLEM`, the id shown by
    /// [`shown_id`].
    pub fn record(file: &Where, index: usize, id: impl AsRef<[u8]>, problem: impl fmt::Display) -> Error {
        Error::Input(format!("{}: record {} ({}): {}", file, index + 1, shown_id(id), problem))
    }

    /// A problem with an input file as a whole: `FILE: PROBLEM`.
    pub fn file(file: &Where, problem: impl fmt::Display) -> Error {
        Error::Input(format!("{}: {}", file, problem))
    }

    /// Downstream closed our stdout (`swarrow ... | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub fn usage(problem: impl fmt::Display) -> Error {
        Error::Input(problem.to_string())
    }

    pub fn io(context: impl fmt::Display, source: std::io::Error) -> Error {
        Error::Io { context: context.to_string(), source }
    }
}

/// Longest id shown in a message, in characters, before it is cut with an ellipsis.
pub const SHOWN_ID_CHARS: usize = 80;

/// An id (or any other input text) as messages show it: at most [`SHOWN_ID_CHARS`]
/// characters then `...`, control characters escaped (`\u{1b}`) and bytes that are not
/// UTF-8 written as `\xe9`, so that a huge id cannot flood stderr, terminal escape sequences
/// in the input never reach the terminal raw, and ids that differ only in such bytes read
/// apart. Ids are bytes: they are looked up and compared as such, never as decoded text.
pub fn shown_id(id: impl AsRef<[u8]>) -> String {
    let id = id.as_ref();
    if id.is_empty() {
        return "no id".to_string();
    }
    let mut out = String::new();
    let mut n = 0;
    let mut room = |out: &mut String| {
        n += 1;
        if n > SHOWN_ID_CHARS {
            out.push_str("...");
            return false;
        }
        true
    };
    for chunk in id.utf8_chunks() {
        for c in chunk.valid().chars() {
            if !room(&mut out) {
                return out;
            }
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            if !room(&mut out) {
                return out;
            }
            let _ = fmt::Write::write_fmt(&mut out, format_args!("\\x{b:02x}"));
        }
    }
    out
}

/// An id (or header) as the outputs' UTF-8 id columns hold it: a UTF-8 id as it is; an id
/// that is not UTF-8 with each byte that is not UTF-8 written as `\xNN` and each backslash
/// doubled (`\\`), so that two ids that differ only in such bytes stay apart in every output
/// (and in `merge`), and messages show them as [`shown_id`] does. Ids are looked up as the
/// bytes they are; this is only their text.
pub fn id_text(id: &[u8]) -> std::borrow::Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(id) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(id.len() + 8);
    for chunk in id.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        for b in chunk.invalid() {
            let _ = fmt::Write::write_fmt(&mut out, format_args!("\\x{b:02x}"));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` on one line: its lines trimmed and joined with "; " (a decoder's nested "while
/// verifying ..." lines, for one), so that a message is one line of stderr.
pub fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

/// The names of `known` nearest to `word` (case-insensitive edit distance, at most a third of
/// the word's length and at least 2; or `word` a prefix of the name), best first, at most
/// three: what a message suggests for a mistyped name instead of listing every name.
pub fn nearest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word = word.trim().to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_ascii_lowercase();
            let d = edit_distance(&word, &lower);
            let prefix = word.len() >= 2 && lower.starts_with(&word);
            (d <= limit || prefix).then_some((if prefix { d.min(1) } else { d }, name))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// An id inside a sentence of a message: [`shown_id`] in double quotes, so that leading or
/// trailing spaces show (`target_id "b " not found`).
pub fn quoted_id(id: impl AsRef<[u8]>) -> String {
    format!("\"{}\"", shown_id(id))
}

/// Where an input comes from, for error messages: a path, or standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    Stdin,
    Path(std::path::PathBuf),
    /// An in-memory table handed over by a caller (the Python package's `pairs`, `seqs`...).
    Named(String),
}

impl Where {
    pub fn from_arg(arg: &Path) -> Where {
        if arg.as_os_str() == "-" {
            Where::Stdin
        } else {
            Where::Path(arg.to_path_buf())
        }
    }
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Where::Stdin => write!(f, "<stdin>"),
            Where::Path(p) => write!(f, "{}", p.display()),
            Where::Named(name) => write!(f, "{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_ids_are_capped_and_escaped() {
        assert_eq!(shown_id(""), "no id");
        assert_eq!(shown_id("sp|P1|x"), "sp|P1|x");
        let long = "é".repeat(200);
        assert_eq!(shown_id(&long), format!("{}...", "é".repeat(80)));
        assert_eq!(shown_id(&"a".repeat(80)), "a".repeat(80));
        assert_eq!(shown_id("a\u{1b}[31mred\t\n"), "a\\u{1b}[31mred\\t\\n");
        let msg = Error::record(&Where::Stdin, 0, "x\u{7}", "bad").to_string();
        assert_eq!(msg, "<stdin>: record 1 (x\\u{7}): bad");
        // Bytes that are not UTF-8 are escaped one by one, so such ids read apart.
        assert_eq!(shown_id(b"\xe9a"), "\\xe9a");
        assert_eq!(shown_id(b"\xe8a\xff"), "\\xe8a\\xff");
        assert_eq!(shown_id([b'\xe9'; 100]), format!("{}...", "\\xe9".repeat(80)));
        assert_eq!(quoted_id("b "), "\"b \"");
    }

    #[test]
    fn nearest_names_are_suggested() {
        let known = ["pident", "qcovhsp", "qcov", "tcov", "evalue", "bits", "bitscore", "qstart", "query"];
        assert_eq!(nearest("pidnet", known), ["pident"]);
        assert_eq!(nearest("QCOVHSP2", known), ["qcovhsp"]);
        assert_eq!(nearest("bit", known), ["bits", "bitscore"]);
        assert!(nearest("staxids", known).is_empty());
    }

    #[test]
    fn id_text_keeps_utf8_and_escapes_the_rest_apart() {
        assert_eq!(id_text("sp|P1|a\\b é".as_bytes()), "sp|P1|a\\b é");
        assert_eq!(id_text(b"q\xe9"), "q\\xe9");
        assert_eq!(id_text(b"q\xe8"), "q\\xe8");
        // Backslashes of an id that is not UTF-8 are doubled, so its text cannot be mistaken
        // for that of another such id.
        assert_eq!(id_text(b"a\\xe9\xff"), "a\\\\xe9\\xff");
        assert_eq!(id_text(b"a\\\xe9"), "a\\\\\\xe9");
    }
}

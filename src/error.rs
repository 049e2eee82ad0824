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

    /// A problem with one input record: `FILE: record N (ID): PROBLEM`.
    pub fn record(file: &Where, index: usize, id: &str, problem: impl fmt::Display) -> Error {
        Error::Input(format!("{}: record {} ({}): {}", file, index + 1, id_or_empty(id), problem))
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

fn id_or_empty(id: &str) -> &str {
    if id.is_empty() {
        "no id"
    } else {
        id
    }
}

/// Where an input comes from, for error messages: a path, or standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    Stdin,
    Path(std::path::PathBuf),
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
        }
    }
}

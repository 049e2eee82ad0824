//! Standard input and output closed by the caller (`swarrow ... >&-`, `<&-`). Rust's runtime
//! fills a closed standard descriptor with `/dev/null` before `main`, so a run would read an
//! empty input or "succeed" with every result lost. The binary calls [`note_closed`] before
//! that (from `.init_array`, see `main.rs`); reading stdin or writing stdout is then an error
//! ([`check_stdin`], [`check_stdout`]).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static STDIN_CLOSED: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Notes whether stdin and stdout are closed. Runs before Rust's runtime starts: it touches
/// only two atomics and calls `fcntl`.
pub extern "C" fn note_closed() {
    for (fd, flag) in [(0, &STDIN_CLOSED), (1, &STDOUT_CLOSED)] {
        // SAFETY: fcntl on a descriptor number touches no memory of ours.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// An error if standard input was closed when swarrow started.
pub fn check_stdin() -> Result<()> {
    match STDIN_CLOSED.load(Ordering::Relaxed) {
        true => Err(Error::usage("<stdin>: standard input is closed (<&-): give the input a file name or a pipe")),
        false => Ok(()),
    }
}

/// An error if standard output was closed when swarrow started.
pub fn check_stdout() -> Result<()> {
    match STDOUT_CLOSED.load(Ordering::Relaxed) {
        true => {
            Err(Error::usage("standard output is closed (>&-): the results would be lost; write them with -o FILE"))
        }
        false => Ok(()),
    }
}

//! What the end-to-end tests of the binary share: running it, feeding its stdin, reading
//! its stderr, the bundled examples. Each test file uses a part of it.
#![allow(dead_code)]

pub mod pairs;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test (`SWARROW_TEST_BIN` runs the tests against another build), with
/// no GPU selection or engine override inherited from the caller's environment.
pub fn bin() -> Command {
    let exe = std::env::var("SWARROW_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_swarrow").to_string());
    let mut c = Command::new(exe);
    c.env_remove("CUDA_VISIBLE_DEVICES").env_remove("SWARROW_ENGINE");
    c
}

pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// A bundled example file's path, as an argument.
pub fn ex(name: &str) -> String {
    examples().join(name).to_str().unwrap().to_string()
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).stdin(Stdio::null()).output().expect("run swarrow")
}

pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).stdin(Stdio::null()).output().expect("run swarrow")
}

/// Runs with `input` on stdin, written from another thread (no pipe deadlock).
pub fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child =
        bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let w = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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

/// A deterministic generator (no dependency): xorshift, so that failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random nucleotide, `ACGT`.
    pub fn base(&mut self) -> u8 {
        b"ACGT"[self.below(4)]
    }
}

/// The test's own reverse complement of nucleotide letters: A-T, C-G and the IUPAC pairs
/// R-Y, K-M, B-V, D-H (other bytes, N, S and W among them, stay).
pub fn revcomp(s: &[u8]) -> Vec<u8> {
    s.iter()
        .rev()
        .map(|&b| match b {
            b'A' => b'T',
            b'T' => b'A',
            b'C' => b'G',
            b'G' => b'C',
            b'R' => b'Y',
            b'Y' => b'R',
            b'K' => b'M',
            b'M' => b'K',
            b'B' => b'V',
            b'V' => b'B',
            b'D' => b'H',
            b'H' => b'D',
            other => other,
        })
        .collect()
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

pub fn bgzf(data: &[u8]) -> Vec<u8> {
    let mut w = noodles_bgzf::io::Writer::new(Vec::new());
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

/// Whether an external tool answers `tool ARG` (`--version`, BLAST's `-version`).
pub fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success())
}

/// Says that test file `test` is skipped for want of a tool (`why`); under `CI=true`,
/// where the tools are installed, panics instead. Returns true, for `return skip(...)`.
pub fn skip(test: &str, why: &str) -> bool {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true but {why}: scripts/install-test-deps.sh installs it");
    }
    eprintln!("\n*** SKIPPED {test}: {why} ***\n");
    true
}

/// Runs `align` on the CPU engine, quiet, with `args` after those; panics with its stderr
/// when it fails.
pub fn align_ok(args: &[&str]) -> Output {
    let mut all = vec!["align", "--device", "cpu", "--quiet"];
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "swarrow {}: {}", all.join(" "), stderr(&o));
    o
}

/// Runs `align` with `args` expected to fail on bad input: exit 2, `message` on stderr,
/// no panic, and no output file `out` (nor a temporary one beside it) left behind.
pub fn align_fails(args: &[&str], out: &Path, message: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}: {err}", args.join(" "));
    assert!(err.contains(message), "expected {message:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "no output file after an error");
    let dir = out.parent().unwrap();
    let leftovers = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("swarrow-tmp"))
        .count();
    assert_eq!(leftovers, 0, "temporary output left behind");
}

//! Diagnosis only: the pair readers alone, as `swarrow align --pairs FILE` drives them
//! (GPU-sized batches, recycled), printing bytes/s and pairs/s. No engine, no output.
//! Also the CPU time of the consumer's thread (the one `align` fills batches on) and of the
//! whole process: on a host of many cores, the consumer's busy time bounds the rate.
//!
//!   read_pairs_bench FILE|- [--batch N]        (TSV, Arrow IPC or Parquet pairs)
//!   read_pairs_bench Q.fa T.fa [--batch N]     (two FASTA files)

use std::path::PathBuf;
use std::time::Instant;
use swarrow::io::pairs::{open_pairs, BatchLimits, PairColumns, PairInput};
use swarrow::scoring::Alphabet;
use swarrow::seq::PairBatch;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let batch = args.iter().position(|a| a == "--batch").map_or(262_144, |i| args[i + 1].parse().expect("N"));
    let files: Vec<&String> = args.iter().take_while(|a| !a.starts_with("--")).collect();
    let input = match files.as_slice() {
        [one] => PairInput::File(PathBuf::from(one)),
        [q, t] => PairInput::TwoFasta { query: PathBuf::from(q), target: PathBuf::from(t) },
        _ => panic!("usage: read_pairs_bench FILE|- | Q.fa T.fa [--batch N]"),
    };
    let limits = BatchLimits { pairs: batch, residues: batch * 1024 };
    let t = Instant::now();
    let mut reader =
        open_pairs(&input, Alphabet::Protein, &PairColumns::default(), limits, &swarrow::io::PairOptions::default())
            .expect("open");
    let mut b = PairBatch::default();
    let (mut pairs, mut residues, mut batches) = (0u64, 0u64, 0u64);
    loop {
        b.clear();
        if !reader.fill(&mut b).expect("read") {
            break;
        }
        pairs += b.len() as u64;
        residues += b.seqs.residues.len() as u64;
        batches += 1;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{batches} batches, {pairs} pairs, {residues} residues in {s:.3} s: {:.0} pairs/s, {:.2} G residues/s; \
         CPU s: consumer thread {:.2}, process {:.2}",
        pairs as f64 / s,
        residues as f64 / s / 1e9,
        cpu(libc::RUSAGE_THREAD),
        cpu(libc::RUSAGE_SELF)
    );
}

/// User and system CPU seconds of `who` (a `getrusage` target).
fn cpu(who: libc::c_int) -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

//! Times `io::load_database` on a FASTA file and on the `.swdb` built from it.
//!
//! `cargo run --release --example load_database -- DB.fasta.gz /tmp/DB.swdb [runs]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use swarrow::io::{load_database, write_swdb};
use swarrow::scoring::Alphabet;

fn best_of(runs: usize, mut f: impl FnMut() -> swarrow::database::Database) -> (Duration, swarrow::database::Database) {
    let mut best = Duration::MAX;
    let mut db = None;
    for _ in 0..runs {
        let t = Instant::now();
        let d = f();
        best = best.min(t.elapsed());
        db = Some(d);
    }
    (best, db.expect("runs >= 1"))
}

fn main() -> swarrow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: load_database FASTA OUT.swdb [runs]");
        std::process::exit(2);
    }
    let fasta = PathBuf::from(&args[1]);
    let swdb = PathBuf::from(&args[2]);
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5).max(1);
    let alphabet = Alphabet::Protein;

    let (t_fasta, db) = best_of(runs, || load_database(&fasta, alphabet).expect("FASTA loads"));
    write_swdb(&db, alphabet, &swdb)?;
    let (t_swdb, mapped) = best_of(runs, || load_database(&swdb, alphabet).expect("swdb loads"));
    assert_eq!(mapped.offsets, db.offsets);
    assert_eq!(mapped.residues.as_slice(), db.residues.as_slice());
    println!(
        "{} sequences, {} residues; best of {}: FASTA {:.1} ms, swdb {:.2} ms, ratio {:.0}x",
        db.len(),
        db.total_residues(),
        runs,
        t_fasta.as_secs_f64() * 1e3,
        t_swdb.as_secs_f64() * 1e3,
        t_fasta.as_secs_f64() / t_swdb.as_secs_f64()
    );
    Ok(())
}

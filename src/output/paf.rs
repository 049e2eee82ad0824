//! PAF, as minimap2 writes it (minimap2's `PAF` man page section and `format.c`):
//!
//! | col | field | from |
//! |---|---|---|
//! | 1-4 | query name, length, start, end | 0-based half-open, on the query's forward strand |
//! | 5 | strand | `+`, or `-` where the query's reverse complement aligned |
//! | 6-9 | target name, length, start, end | 0-based half-open, on the target's forward strand |
//! | 10 | identical pairs | `nident` |
//! | 11 | alignment columns, gaps included | `length` |
//! | 12 | mapping quality | 255 (none) |
//!
//! then the tags `tp:A:P` (every alignment is a primary one: swarrow reports each pair it
//! was given), `NM:i` (columns minus identical pairs: mismatches and gap positions, as
//! minimap2's `blen - mlen + n_ambi`), `AS:i` (the score), `de:f` (gap-compressed divergence,
//! minimap2's `1 - mm_event_identity`: `1 - nident / (pairs + gap opens)`, `%.4f`, `0` for
//! none) and, when a path is asked (`--columns cigar`, or `--eqx`), `cg:Z` (M/I/D; `=`/`X`
//! with `--eqx`). The 12 columns and the first four tags come from the path's statistics,
//! which every engine computes without storing a path.
//!
//! A pair whose alignment holds no residue of one of its sequences (score 0 in local mode,
//! or a path through gaps only) has no PAF line, as minimap2 writes no line for no hit.
//! Differences from minimap2 with ambiguous bases: minimap2 counts no pair with an `N` in
//! column 11 nor in `de`; swarrow counts every column (an ambiguity code is a mismatch).

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

use super::sink::{Sink, Status};
use super::{ResultBatch, ResultWriter};
use crate::error::{Error, Result};

pub(super) struct PafWriter {
    out: BufWriter<Sink>,
    status: Status,
    /// Write `cg:Z` (a path was asked).
    path: bool,
    /// `cg:Z` with `=`/`X` (`--eqx`) instead of `M`.
    eqx: bool,
}

/// Rows formatted per task (as the text writers).
const ROWS_PER_TASK: usize = 4096;

impl PafWriter {
    pub(super) fn new(sink: Sink, path: bool, eqx: bool) -> Self {
        let status = sink.status();
        PafWriter { out: sink.buffered(), status, path, eqx }
    }
}

impl ResultWriter for PafWriter {
    fn write(&mut self, batch: &ResultBatch) -> Result<()> {
        use rayon::prelude::*;
        let (path, eqx) = (self.path, self.eqx);
        let tasks = batch.len().div_ceil(ROWS_PER_TASK);
        let texts: Vec<Result<String>> = (0..tasks)
            .into_par_iter()
            .map(|k| {
                let rows = k * ROWS_PER_TASK..((k + 1) * ROWS_PER_TASK).min(batch.len());
                let mut text = String::with_capacity(rows.len() * 128);
                for i in rows {
                    push_line(&mut text, batch, i, path, eqx)?;
                }
                Ok(text)
            })
            .collect();
        for text in texts {
            self.out.write_all(text?.as_bytes()).map_err(|e| self.status.io_fail(e))?;
        }
        if self.status.is_stdout() {
            self.out.flush().map_err(|e| self.status.io_fail(e))?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Sink::commit_buffered(self.out, &self.status)
    }
}

/// True when row `i` aligned at least one residue of each sequence (else no PAF line, no
/// SAM record).
pub(super) fn is_aligned(batch: &ResultBatch, i: usize) -> bool {
    let row = batch.row(i);
    row.qstart > 0 && row.qend > 0 && row.tstart > 0 && row.tend > 0
}

/// minimap2's `de:f`: gap-compressed divergence, `1 - nident / (pairs + gap opens)`.
pub fn gap_compressed_divergence(nident: u32, length: u32, gaps: u32, gapopen: u32) -> f64 {
    let events = (length - gaps + gapopen) as f64;
    if events == 0.0 {
        0.0
    } else {
        1.0 - nident as f64 / events
    }
}

/// minimap2's `de:f` text: `0` for none, else `%.4f`.
fn push_divergence(line: &mut String, div: f64) {
    if div == 0.0 {
        line.push('0');
    } else {
        let _ = write!(line, "{div:.4}");
    }
}

/// Appends an extended CIGAR (`=`, `X`, `I`, `D`) as PAF's `cg:Z` value: `=` and `X` runs
/// joined into `M` runs, or kept (`eqx`).
pub fn push_cigar(line: &mut String, extended: &str, eqx: bool) -> Result<()> {
    if eqx {
        line.push_str(extended);
        return Ok(());
    }
    let mut matched: u64 = 0;
    let mut n: u64 = 0;
    for b in extended.bytes() {
        match b {
            b'0'..=b'9' => n = n * 10 + u64::from(b - b'0'),
            b'=' | b'X' | b'M' => {
                matched += n;
                n = 0;
            }
            b'I' | b'D' => {
                if matched > 0 {
                    let _ = write!(line, "{matched}M");
                    matched = 0;
                }
                let _ = write!(line, "{n}{}", b as char);
                n = 0;
            }
            _ => return Err(Error::Internal(format!("CIGAR {extended:?}: unexpected operation {:?}", b as char))),
        }
    }
    if matched > 0 {
        let _ = write!(line, "{matched}M");
    }
    Ok(())
}

/// Row `i` as a PAF line (nothing for a row that aligned no residue of one sequence).
fn push_line(line: &mut String, batch: &ResultBatch, i: usize, path: bool, eqx: bool) -> Result<()> {
    if !is_aligned(batch, i) {
        return Ok(());
    }
    let row = batch.row(i);
    let stats =
        batch.stats_of(i).ok_or_else(|| Error::Internal("PAF: the path's statistics were not computed".into()))?;
    let strand = batch.strand(i).sign();
    push_name(line, row.query);
    let _ = write!(line, "\t{}\t{}\t{}\t{strand}\t", row.qlen, row.qstart - 1, row.qend);
    push_name(line, row.target);
    let _ = write!(
        line,
        "\t{}\t{}\t{}\t{}\t{}\t255\ttp:A:P\tNM:i:{}\tAS:i:{}\tde:f:",
        row.tlen,
        row.tstart - 1,
        row.tend,
        stats.nident,
        stats.length,
        stats.length - stats.nident,
        row.score
    );
    push_divergence(line, gap_compressed_divergence(stats.nident, stats.length, stats.gaps, stats.gapopen));
    if path {
        let (cigar, _, _) =
            batch.path_of(i).ok_or_else(|| Error::Internal("PAF: cg:Z asked, the path was not computed".into()))?;
        line.push_str("\tcg:Z:");
        push_cigar(line, cigar, eqx)?;
    }
    line.push('\n');
    Ok(())
}

/// A name as one PAF field: whitespace inside (impossible for FASTA ids) becomes `_`.
fn push_name(line: &mut String, name: &str) {
    if name.bytes().any(|b| b.is_ascii_whitespace()) {
        line.extend(name.chars().map(|c| if c.is_ascii_whitespace() { '_' } else { c }));
    } else {
        line.push_str(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::traceback::PathStats;
    use crate::output::ResultRow;
    use crate::seq::Strand;

    // Expected strings written by hand from minimap2's definitions.
    #[test]
    fn cigar_joins_pairs_into_m_unless_eqx() {
        let mut s = String::new();
        push_cigar(&mut s, "3=1X2=2I4=1D1X", false).unwrap();
        assert_eq!(s, "6M2I4M1D1M");
        s.clear();
        push_cigar(&mut s, "3=1X2=2I4=1D1X", true).unwrap();
        assert_eq!(s, "3=1X2=2I4=1D1X");
        s.clear();
        push_cigar(&mut s, "2D10=", false).unwrap();
        assert_eq!(s, "2D10M");
        assert!(push_cigar(&mut s, "3Q", false).is_err());
    }

    #[test]
    fn divergence_is_minimap2s_gap_compressed_one() {
        // 10 pairs (9 identical), one gap of 3: 1 - 9 / (10 + 1).
        assert!((gap_compressed_divergence(9, 13, 3, 1) - (1.0 - 9.0 / 11.0)).abs() < 1e-12);
        let mut s = String::new();
        push_divergence(&mut s, gap_compressed_divergence(10, 10, 0, 0));
        assert_eq!(s, "0");
        s.clear();
        push_divergence(&mut s, gap_compressed_divergence(9, 13, 3, 1));
        assert_eq!(s, "0.1818");
    }

    /// One minus-strand row: query 20 long aligned on 3..=15 (1-based, on the query as
    /// given), target 1000 long on 101..=114; the line written by hand.
    #[test]
    fn a_minus_strand_row_as_minimap2_writes_it() {
        let mut batch = ResultBatch::new();
        batch.push(ResultRow {
            query: "read1",
            target: "ctg7",
            score: 17,
            bits: None,
            evalue: None,
            qstart: 3,
            qend: 15,
            tstart: 101,
            tend: 114,
            qlen: 20,
            tlen: 1000,
            recomputed: false,
            rank: 0,
        });
        // 5= 1X 1D 7= : 13 query residues, 14 target residues, 14 columns, 12 identical.
        batch.push_stats(PathStats { length: 14, nident: 12, mismatch: 1, gapopen: 1, gaps: 1 });
        batch.push_path("5=1X1D7=", "ACGTAC-ACGTACG", "ACGTATTACGTACG").unwrap();
        batch.set_strands(vec![Strand::Minus]);
        let mut line = String::new();
        push_line(&mut line, &batch, 0, true, false).unwrap();
        assert_eq!(
            line,
            "read1\t20\t2\t15\t-\tctg7\t1000\t100\t114\t12\t14\t255\ttp:A:P\tNM:i:2\tAS:i:17\tde:f:0.1429\tcg:Z:6M1D7M\n"
        );
        line.clear();
        push_line(&mut line, &batch, 0, false, false).unwrap();
        assert!(line.ends_with("de:f:0.1429\n"), "{line}");
    }
}

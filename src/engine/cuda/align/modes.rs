//! The align kernel's global and semi-global variant (`-DMODE=1`, kernels/align.cu): what
//! the host tells it (borders, 16-bit range) and how its cells read. The engine around it
//! is [`crate::engine::cuda::mode_engine`].

use crate::engine::cuda::align_plan::Cell;
use crate::engine::mode::{self, AlignMode};
use crate::engine::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;

/// A pair whose cells may lie below -`PACKED_RANGE` (3 open + (m + n + 2) extend) or above
/// it (min(m, n) x the best substitution score) is flagged by the 16-bit variant and
/// aligned by the 32-bit one: every real value then stays clear of the kernel's floor
/// (-32,000) and of the 16-bit top.
pub const PACKED_RANGE: i32 = 31_000;
/// The same bound for the 32-bit variant (its floor is -2^29).
pub const WIDE_RANGE: i32 = 1 << 28;

/// Whether the kernel can align in `mode` with `sc`'s gaps. The top border is copied down
/// through padding rows scoring -128 (kernels/align.cu, "Modes"), which holds while
/// open + extend stays below 128; the floor leaves room for extensions up to 700.
pub fn supported(sc: &Scoring, mode: AlignMode) -> Result<()> {
    if mode.is_local() {
        return Ok(());
    }
    if sc.gap_open + sc.gap_extend > 127 || sc.gap_extend > 700 {
        return Err(Error::Device(format!(
            "the CUDA engine aligns in {mode} mode with gap open + extend up to 127 (here {} + {})",
            sc.gap_open, sc.gap_extend
        )));
    }
    Ok(())
}

/// The kernel's `mode_flags`: bit 0 query start free, 1 query end, 2 target start,
/// 3 target end (0 for local mode, whose kernel does not read them).
pub fn kernel_flags(mode: AlignMode) -> i32 {
    if mode.is_local() {
        return 0;
    }
    mode.free_ends().flags().iter().enumerate().map(|(k, &on)| (on as i32) << k).sum()
}

/// The score and end cell the kernel found (0-based row and column of the whole
/// matrix's cell), starts 0. Pairs with an empty side are not the kernel's (the engine
/// aligns them); a pair still flagged after the 32-bit pass is beyond the GPU's range.
pub fn finish_end(end: Cell, mode: AlignMode) -> Result<Alignment> {
    if end.overflow || end.score == i32::MIN || end.row < 0 || end.col < 0 {
        return Err(Error::Internal(format!(
            "the GPU found no {mode} end cell (score {}, cell ({}, {}), flagged {})",
            end.score, end.row, end.col, end.overflow
        )));
    }
    Ok(Alignment {
        score: end.score,
        qstart: 0,
        qend: end.row as u32 + 1,
        tstart: 0,
        tend: end.col as u32 + 1,
        recomputed: mode.recomputed(end.score),
        internal: false,
    })
}

/// The alignment of a pair at [`crate::engine::Level::Coordinates`] from the forward pass's
/// end cell and the reverse pass's cell `rev` (in reversed coordinates; read only in a mode
/// with a free start, the only ones with a reverse pass): with its start by
/// [`mode::with_start`].
pub fn finish(end: Cell, rev: Cell, sc: &Scoring, mode: AlignMode) -> Result<Alignment> {
    let end = finish_end(end, mode)?;
    let rev = match mode.reverse_pass() {
        Some(rm) => Some(finish_end(rev, rm)?),
        None => None,
    };
    mode::with_start(&end, rev.as_ref(), sc, mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mode::FreeEnds;

    #[test]
    fn flags_follow_the_free_end_order() {
        assert_eq!(kernel_flags(AlignMode::Global), 0);
        assert_eq!(kernel_flags(AlignMode::SemiGlobal(FreeEnds::ALL)), 15);
        let target_ends = FreeEnds { target_start: true, target_end: true, ..FreeEnds::NONE };
        assert_eq!(kernel_flags(AlignMode::SemiGlobal(target_ends)), 4 | 8);
        let query_start = FreeEnds { query_start: true, ..FreeEnds::NONE };
        assert_eq!(kernel_flags(AlignMode::SemiGlobal(query_start)), 1);
    }

    #[test]
    fn reverse_cells_map_to_starts() {
        let sc = Scoring::blosum62();
        let m = AlignMode::SemiGlobal(FreeEnds::ALL);
        let cell = |score, row, col| Cell { score, row, col, overflow: false };
        // End (10, 20); the reverse pass's best cell (4, 7) in reversed coordinates: the
        // alignment holds query 7..10 and target 14..20.
        let a = finish(cell(5, 9, 19), cell(5, 3, 6), &sc, m).unwrap();
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (7, 10, 14, 20));
        // The border cell (0, 20), a gap of the target's 20 residues, beats a lower cell:
        // no query residue.
        let qs = AlignMode::SemiGlobal(FreeEnds { query_start: true, ..FreeEnds::NONE });
        let a = finish(cell(-31, 9, 19), cell(-40, 3, 6), &sc, qs).unwrap();
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (0, 0, 1, 20));
        // Without a free start both starts are residue 1 (no reverse pass to read).
        let a = finish(cell(5, 9, 19), cell(0, -1, -1), &sc, AlignMode::Global).unwrap();
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 10, 1, 20));
        // A reverse pass that does not reach the forward score is an internal error.
        assert!(finish(cell(5, 9, 19), cell(4, 3, 6), &sc, m).is_err());
    }
}

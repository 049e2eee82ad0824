//! The align kernel's global and semi-global variant (`-DMODE=1`, kernels/align.cu): what
//! the host tells it (borders, 16-bit range) and how its end cells read. The engine around
//! it, with the starts, is [`crate::engine::cuda::mode_engine`].

use crate::engine::cuda::align_plan::Cell;
use crate::engine::mode::AlignMode;
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
    })
}

/// The alignment [`finish_start`] gives a pair the kernel with starts could not align (a
/// score beyond 16 bits, or a side beyond 4,095 residues, the origin's 13 bits): the engine
/// aligns it on the CPU. Never a real result (scores are above i32::MIN).
pub const FLAGGED: Alignment = Alignment { score: i32::MIN, qstart: 0, qend: 0, tstart: 0, tend: 0, recomputed: false };

/// The kernel's origin codes (kernels/align.cu, "Origins"): (0, 0), (i, 0), (0, ORG_TOP + j).
const ORG_TOP: u32 = 4096;

/// Score, end and start from the modes' kernel with starts: the start follows the stop cell
/// of the path rule's walk as in [`crate::engine::scalar_modes`] (a side of which the
/// alignment holds no residue is 0, 0); [`FLAGGED`] for a pair it left to the CPU.
pub fn finish_start(end: Cell, mode: AlignMode) -> Alignment {
    if end.overflow || end.score == i32::MIN || end.row < 0 || end.col < 0 {
        return FLAGGED;
    }
    let (i0, j0) = match end.origin {
        0 => (0, 0),
        o if o < ORG_TOP => (o, 0),
        o => (0, o - ORG_TOP),
    };
    let (qend, tend) = (end.row as u32 + 1, end.col as u32 + 1);
    let side = |stop: u32, end: u32| if stop >= end { (0, 0) } else { (stop + 1, end) };
    let ((qstart, qend), (tstart, tend)) = (side(i0, qend), side(j0, tend));
    Alignment { score: end.score, qstart, qend, tstart, tend, recomputed: mode.recomputed(end.score) }
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
    fn origins_decode_to_the_reference_starts() {
        let m = AlignMode::SemiGlobal(FreeEnds::ALL);
        let cell = |origin| Cell { score: 5, row: 9, col: 19, overflow: false, origin };
        let a = finish_start(cell(0), m);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 10, 1, 20));
        let a = finish_start(cell(4), m);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (5, 10, 1, 20));
        let a = finish_start(cell(ORG_TOP + 7), m);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (1, 10, 8, 20));
        // A walk that stops on the end's own row holds no query residue.
        let a = finish_start(cell(10), m);
        assert_eq!((a.qstart, a.qend, a.tstart, a.tend), (0, 0, 1, 20));
        assert_eq!(finish_start(Cell { overflow: true, ..cell(0) }, m), FLAGGED);
    }
}

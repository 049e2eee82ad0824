//! Align: each pair scored striped at 16 bits for its end cell, then the reversed prefixes
//! up to that end for the start cell; threads take pairs.
//!
//! Why a forward local pass over the reversed prefixes finds the reference's start: every
//! local alignment inside the prefixes that scores the best score S ends at the end cell
//! (an earlier end would have been chosen by the tie rule), so the cells reaching S are
//! exactly those of the reference's anchored reverse pass, and "first column, then
//! smallest row" is the same rule on both.

use super::intersequence::fits;
use super::striped::{Profile, Scratch};
use super::Kernels;
use crate::engine::scalar;
use crate::engine::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use rayon::prelude::*;

pub(super) fn align<K: Kernels>(sc: &Scoring, pairs: &[(&[u8], &[u8])]) -> Result<Vec<Alignment>> {
    if !fits(sc) {
        return pairs.par_iter().map(|(q, t)| scalar::align_pair(q, t, sc)).collect();
    }
    pairs.par_iter().map_init(Scratch::<K::Wide>::default, |scratch, (q, t)| align_pair::<K>(sc, q, t, scratch)).collect()
}

fn align_pair<K: Kernels>(sc: &Scoring, q: &[u8], t: &[u8], scratch: &mut Scratch<K::Wide>) -> Result<Alignment> {
    if q.is_empty() || t.is_empty() {
        return Ok(Alignment::default());
    }
    // Safe: the engine checked at construction that this CPU runs K's instruction set.
    let end = unsafe {
        let prof = Profile::<K::Wide>::new(q, false, sc);
        K::striped_end(&prof, q.len(), t, false, u32::MAX, scratch)
    };
    let Some(end) = end else {
        return Ok(Alignment { recomputed: true, ..scalar::align_pair(q, t, sc)? });
    };
    if end.score == 0 {
        return Ok(Alignment::default());
    }
    let (qe, te) = (end.qend as usize, end.tend as usize);
    let start = unsafe {
        let prof = Profile::<K::Wide>::new(&q[..qe], true, sc);
        K::striped_end(&prof, qe, &t[..te], true, end.score as u32, scratch)
    };
    match start {
        Some(s) if s.score == end.score => Ok(Alignment {
            score: end.score,
            qstart: end.qend + 1 - s.qend,
            qend: end.qend,
            tstart: end.tend + 1 - s.tend,
            tend: end.tend,
            recomputed: false,
        }),
        other => Err(Error::Internal(format!(
            "reverse pass scored {:?}, forward pass {}",
            other.map(|s| s.score),
            end.score
        ))),
    }
}

//! Global and semi-global alignment on the GPU ([`super::align::modes`]): the align
//! kernel's modes variant, two pairs per thread in 16-bit lanes (32 bits for a pair whose
//! cells could leave that range), a forward pass for score and end and, with a free start,
//! a reverse pass over the reversed prefixes for the start (src/engine/mode.rs); without a
//! free start both starts are residue 1. Pairs with an empty side go to the CPU engine of
//! the mode. Tracebacks run on the traceback kernel's modes variant (`traceback::trace_mode`'s
//! rule), statistics alone on its counting variant; what it leaves (rectangles over its
//! direction budget, alignments with a side without residues) on the CPU engine.

use super::align::GpuAligner;
use super::CudaConfig;
use crate::database::Database;
use crate::engine::mode::AlignMode;
use crate::engine::traceback::{PathStats, Traceback};
use crate::engine::{Alignment, Engine, Hit, Level};
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::{PairSeqs, SeqPairs};
use std::sync::Arc;

/// The GPU engine of the global and semi-global modes, with the CPU engine of the same
/// mode for what the GPU leaves.
pub struct GpuModeEngine {
    gpu: GpuAligner,
    cpu: Arc<dyn Engine>,
    scoring: Scoring,
    mode: AlignMode,
}

impl GpuModeEngine {
    pub fn new(scoring: Scoring, mode: AlignMode, config: &CudaConfig, cpu: Arc<dyn Engine>) -> Result<GpuModeEngine> {
        if mode.is_local() {
            return Err(Error::Internal("GpuModeEngine built for local mode".into()));
        }
        if let Some(why) = super::runtime::unavailable_reason() {
            return Err(Error::Device(format!("the CUDA engine cannot run: {why}")));
        }
        if cpu.mode() != mode {
            return Err(Error::Internal(format!("CPU engine of {} for a GPU engine of {mode}", cpu.mode())));
        }
        let gpu = GpuAligner::with_mode(&scoring, config, mode)?;
        Ok(GpuModeEngine { gpu, cpu, scoring, mode })
    }

    /// Pairs `which` of `pairs` at `level` on `engine` (the CPU's, or the GPU's again at
    /// another level), into `out`.
    fn redo(
        &self,
        engine: &dyn Fn(PairSeqs<'_>) -> Result<Vec<Alignment>>,
        pairs: PairSeqs<'_>,
        which: &[usize],
        out: &mut [Alignment],
    ) -> Result<()> {
        if which.is_empty() {
            return Ok(());
        }
        let slices: Vec<(&[u8], &[u8])> = which.iter().map(|&i| pairs.pair(i)).collect();
        let done = engine(SeqPairs::from_slices(&slices).view())?;
        for (k, &i) in which.iter().enumerate() {
            out[i] = done[k];
        }
        Ok(())
    }
}

fn empty(pairs: PairSeqs<'_>, i: usize) -> bool {
    let (q, t) = pairs.pair(i);
    q.is_empty() || t.is_empty()
}

impl Engine for GpuModeEngine {
    fn name(&self) -> String {
        format!("cuda ({}), {}", super::gpus_label(&self.gpu.gpu_names()), self.mode)
    }

    fn search(&self, _queries: &[&[u8]], _db: &Database, _top: usize, _work: &Work) -> Result<Vec<Vec<Hit>>> {
        Err(crate::engine::mode::search_refused(self.mode))
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let mut out = self.gpu.align(pairs, level)?;
        let (cpu, gpu): (Vec<usize>, Vec<usize>) = (0..pairs.len()).partition(|&i| empty(pairs, i));
        if level == Level::ScoreEnd && self.mode.reverse_pass().is_some() {
            // An end whose start may leave a side without residues: that side's end is 0.
            let starts: Vec<usize> =
                gpu.into_iter().filter(|&i| self.mode.may_empty_a_side(&out[i], &self.scoring)).collect();
            let full = |p: PairSeqs<'_>| -> Result<Vec<Alignment>> {
                Ok(self.gpu.align(p, Level::Coordinates)?.into_iter().map(Alignment::end_only).collect())
            };
            self.redo(&full, pairs, &starts, &mut out)?;
        }
        self.redo(&|p| self.cpu.align(p, level), pairs, &cpu, &mut out)?;
        Ok(out)
    }

    fn statistics(&self) -> Vec<(String, String)> {
        self.gpu.statistics()
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn mode(&self) -> AlignMode {
        self.mode
    }

    /// Paths on the GPU (the traceback kernel's modes variant), statistics alone by its
    /// counting variant; what the GPU leaves on the CPU engine of the mode (its pool, every
    /// core), as in local mode.
    fn traceback(&self, pairs: PairSeqs<'_>, alignments: &[Alignment], path: bool) -> Result<Vec<Traceback>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("traceback: alignments and pairs differ in number".into()));
        }
        let mut cpu: Vec<usize> = Vec::new();
        let mut out: Vec<Traceback> = if path {
            let traced = self.gpu.paths(pairs, alignments, &self.scoring)?;
            traced
                .into_iter()
                .enumerate()
                .map(|(i, tb)| {
                    tb.unwrap_or_else(|| {
                        cpu.push(i);
                        Traceback::default()
                    })
                })
                .collect()
        } else {
            let counts = self.gpu.path_counts(pairs, alignments)?;
            counts
                .iter()
                .zip(alignments)
                .enumerate()
                .map(|(i, (c, a))| match c {
                    // Traced rectangles hold residues of both sides.
                    Some([p, n, g]) => Traceback {
                        ops: Vec::new(),
                        stats: PathStats::from_counts(*p, *n, *g, a.qend - a.qstart + 1, a.tend - a.tstart + 1),
                    },
                    None => {
                        cpu.push(i);
                        Traceback::default()
                    }
                })
                .collect()
        };
        if !cpu.is_empty() {
            let slices: Vec<(&[u8], &[u8])> = cpu.iter().map(|&i| pairs.pair(i)).collect();
            let left: Vec<Alignment> = cpu.iter().map(|&i| alignments[i]).collect();
            let done = self.cpu.traceback(SeqPairs::from_slices(&slices).view(), &left, path)?;
            if done.len() != cpu.len() {
                return Err(Error::Internal("traceback: the CPU engine returned another number of paths".into()));
            }
            for (tb, &i) in done.into_iter().zip(&cpu) {
                out[i] = tb;
            }
        }
        Ok(out)
    }

    fn align_batch_pairs(&self) -> usize {
        262_144
    }

    fn align_calls_in_flight(&self) -> usize {
        4 * self.gpu.gpu_names().len().max(1)
    }
}

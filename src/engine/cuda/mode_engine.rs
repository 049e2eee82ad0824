//! Global and semi-global alignment on the GPU ([`super::align::modes`]):
//! - score and end: the align kernel's modes variant, two pairs per thread in 16-bit lanes;
//! - starts with no free start: the path rule's walk ends at (0, 0), so both starts are
//!   residue 1 (src/engine/mode.rs);
//! - starts with a free start: the modes variant that carries each state's origin forward
//!   (one pair per thread at 32 bits), which also gives the ends of pairs with a negative
//!   score (such an alignment may hold no residue of one sequence, whose end is then 0);
//! - on the CPU engine of the mode: pairs with an empty side, and pairs beyond the GPU's
//!   range (flagged by the kernels), and every traceback.

use super::align::modes::FLAGGED;
use super::align::GpuAligner;
use super::CudaConfig;
use crate::database::Database;
use crate::engine::mode::AlignMode;
use crate::engine::traceback::Traceback;
use crate::engine::{check_same_ends, Alignment, Engine, Hit, Level};
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::{PairSeqs, SeqPairs};
use std::sync::Arc;

/// The GPU engine of the global and semi-global modes, with the CPU engine of the same
/// mode for what the GPU leaves.
pub struct GpuModeEngine {
    /// Score and end.
    ends: GpuAligner,
    /// Score, end and start, when a start is free.
    starts: Option<GpuAligner>,
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
        let free = mode.free_ends();
        let ends = GpuAligner::with_mode(&scoring, config, mode, false)?;
        let starts = match free.query_start || free.target_start {
            true => Some(GpuAligner::with_mode(&scoring, config, mode, true)?),
            false => None,
        };
        Ok(GpuModeEngine { ends, starts, cpu, scoring, mode })
    }

    /// Pairs `which` of `pairs` aligned (`level`) or given their starts (`ends`) on the CPU,
    /// into `out`.
    fn on_cpu(
        &self,
        pairs: PairSeqs<'_>,
        which: &[usize],
        level: Level,
        ends: Option<&[Alignment]>,
        out: &mut [Alignment],
    ) -> Result<()> {
        if which.is_empty() {
            return Ok(());
        }
        let slices: Vec<(&[u8], &[u8])> = which.iter().map(|&i| pairs.pair(i)).collect();
        let sub = SeqPairs::from_slices(&slices);
        let done = match ends {
            Some(e) => self.cpu.starts(sub.view(), &which.iter().map(|&i| e[i]).collect::<Vec<_>>())?,
            None => self.cpu.align(sub.view(), level)?,
        };
        for (k, &i) in which.iter().enumerate() {
            out[i] = done[k];
        }
        Ok(())
    }

    /// Score, end and start of every pair by the kernel with starts; the pairs it leaves
    /// (an empty side, flagged) are listed in `cpu`.
    fn with_starts(&self, starts: &GpuAligner, pairs: PairSeqs<'_>, cpu: &mut Vec<usize>) -> Result<Vec<Alignment>> {
        let out = starts.align(pairs, Level::Coordinates)?;
        cpu.extend((0..pairs.len()).filter(|&i| empty(pairs, i) || out[i] == FLAGGED));
        Ok(out)
    }
}

fn empty(pairs: PairSeqs<'_>, i: usize) -> bool {
    let (q, t) = pairs.pair(i);
    q.is_empty() || t.is_empty()
}

/// The GPU's two passes disagreeing on a score: an internal error.
fn same_score(mode: AlignMode, i: usize, a: &Alignment, b: &Alignment) -> Result<()> {
    if a.score != b.score {
        return Err(Error::Internal(format!("{mode} pair {i}: the GPU's passes scored {} and {}", a.score, b.score)));
    }
    Ok(())
}

impl Engine for GpuModeEngine {
    fn name(&self) -> String {
        format!("cuda ({}), {}", super::gpus_label(&self.ends.gpu_names()), self.mode)
    }

    fn search(&self, _queries: &[&[u8]], _db: &Database, _top: usize, _work: &Work) -> Result<Vec<Vec<Hit>>> {
        Err(crate::engine::mode::search_refused(self.mode))
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let mut cpu = Vec::new();
        let mut out = match (&self.starts, level) {
            (Some(starts), Level::Coordinates) => self.with_starts(starts, pairs, &mut cpu)?,
            _ => {
                let mut out = self.ends.align(pairs, Level::ScoreEnd)?;
                cpu.extend((0..pairs.len()).filter(|&i| empty(pairs, i)));
                match &self.starts {
                    // A negative score with a free start: the ends follow the start.
                    Some(starts) => {
                        let neg: Vec<usize> =
                            (0..pairs.len()).filter(|&i| !empty(pairs, i) && out[i].score < 0).collect();
                        if !neg.is_empty() {
                            let slices: Vec<(&[u8], &[u8])> = neg.iter().map(|&i| pairs.pair(i)).collect();
                            let full = starts.align(SeqPairs::from_slices(&slices).view(), Level::Coordinates)?;
                            for (k, &i) in neg.iter().enumerate() {
                                if full[k] == FLAGGED {
                                    cpu.push(i);
                                } else {
                                    same_score(self.mode, i, &full[k], &out[i])?;
                                    out[i] = full[k].end_only();
                                }
                            }
                        }
                    }
                    None if level == Level::Coordinates => {
                        out.iter_mut().for_each(|a| (a.qstart, a.tstart) = (1, 1));
                    }
                    None => {}
                }
                out
            }
        };
        self.on_cpu(pairs, &cpu, level, None, &mut out)?;
        Ok(out)
    }

    fn starts(&self, pairs: PairSeqs<'_>, ends: &[Alignment]) -> Result<Vec<Alignment>> {
        let mut cpu = Vec::new();
        let mut out = match &self.starts {
            Some(starts) => self.with_starts(starts, pairs, &mut cpu)?,
            None => {
                cpu.extend((0..pairs.len()).filter(|&i| empty(pairs, i)));
                ends.iter().map(|a| Alignment { qstart: 1, tstart: 1, ..*a }).collect()
            }
        };
        self.on_cpu(pairs, &cpu, Level::Coordinates, Some(ends), &mut out)?;
        check_same_ends(ends, &out)?;
        Ok(out)
    }

    fn statistics(&self) -> Vec<(String, String)> {
        let mut s = self.ends.statistics();
        if let Some(starts) = &self.starts {
            s.extend(starts.statistics().into_iter().map(|(k, v)| (format!("{k} (with starts)"), v)));
        }
        s
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn mode(&self) -> AlignMode {
        self.mode
    }

    fn traceback(&self, pairs: PairSeqs<'_>, alignments: &[Alignment], path: bool) -> Result<Vec<Traceback>> {
        self.cpu.traceback(pairs, alignments, path)
    }

    fn align_batch_pairs(&self) -> usize {
        262_144
    }

    fn align_calls_in_flight(&self) -> usize {
        4 * self.ends.gpu_names().len().max(1)
    }
}

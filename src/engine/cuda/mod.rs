//! The CUDA engine: Smith-Waterman database search on NVIDIA GPUs. Kernels live in
//! `kernels/*.cu` and are compiled at run time by NVRTC (see `runtime`), so building swarrow
//! needs no CUDA toolkit and a machine without CUDA falls back cleanly.
//!
//! Search runs packed 16-bit kernels (two queries per cell, see kernels/sw_search.cu) over
//! the database split across all visible GPUs; each GPU returns only its best hits, and the
//! few scores that may have overflowed 16 bits are recomputed exactly at 32 bits.

pub mod align;
pub mod align_plan;
pub mod config;
pub mod gpu_bins;
pub mod kernels;
pub mod layout;
pub mod mode_engine;
pub mod paired;
pub mod path_plan;
pub mod prebuilt;
pub mod runtime;
pub mod search;

use super::traceback::{self, PathStats, Traceback};
use super::{topk, Alignment, Engine, Hit, Level};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::PairSeqs;
pub use config::CudaConfig;
use layout::Shape;
use std::sync::Mutex;

/// Whether the CUDA engine can run here (driver, NVRTC and at least one GPU).
pub fn available() -> bool {
    runtime::available()
}

/// Largest substitution score magnitude the 16-bit kernels accept.
const MAX_ABS_SCORE: i32 = 1000;

/// The GPUs of an engine for its name: "2 x NVIDIA H100", or each name when they differ.
pub(crate) fn gpus_label(names: &[String]) -> String {
    match names.first() {
        Some(first) if names.iter().all(|n| n == first) => format!("{} x {first}", names.len()),
        _ => names.join(", "),
    }
}

pub struct CudaEngine {
    scoring: Scoring,
    devices: Vec<Mutex<search::Device>>,
    names: Vec<String>,
    bins: Vec<(u32, Shape)>,
    /// One-to-one aligner, opened on the first `align` call (its kernels compile then).
    aligner: Mutex<Option<std::sync::Arc<align::GpuAligner>>>,
    config: CudaConfig,
}

impl CudaEngine {
    /// Opens every visible GPU and compiles the kernels for it (cached on disk).
    pub fn new(scoring: Scoring) -> Result<CudaEngine> {
        Self::with_config(scoring, CudaConfig::default())
    }

    pub fn with_config(scoring: Scoring, config: CudaConfig) -> Result<CudaEngine> {
        if let Some(why) = runtime::unavailable_reason() {
            return Err(Error::Device(format!("the CUDA engine cannot run: {}", why)));
        }
        let (lo, hi) = (scoring.matrix.min_score(), scoring.matrix.max_score());
        if lo < -MAX_ABS_SCORE || hi > MAX_ABS_SCORE {
            return Err(Error::Device(format!(
                "the CUDA engine supports substitution scores in [-{m}, {m}]; {} has [{}, {}]",
                scoring.matrix.name,
                lo,
                hi,
                m = MAX_ABS_SCORE
            )));
        }
        let n = runtime::device_count()?;
        // Contexts and modules of several GPUs load in parallel: each takes a while.
        let opened: Vec<Result<search::Device>> = std::thread::scope(|s| {
            let config = &config;
            let handles: Vec<_> = (0..n)
                .map(|i| crate::threads::spawn_scoped(s, "sw-gpu-open", move || search::Device::open(i, config)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("GPU setup panicked".into()))))
                .collect()
        });
        let mut devices = Vec::with_capacity(n);
        let mut names = Vec::with_capacity(n);
        for d in opened {
            let d = d?;
            names.push(d.gpu.name.clone());
            devices.push(Mutex::new(d));
        }
        Ok(CudaEngine { scoring, devices, names, bins: layout::default_bins(), aligner: Mutex::new(None), config })
    }

    /// Replaces the length bins (which kernel specialisation runs which target lengths);
    /// for tuning. Every shape must be one of `kernels::SEARCH_SHAPES`.
    pub fn set_bins(&mut self, bins: Vec<(u32, Shape)>) -> Result<()> {
        if let Some(v) = bins.iter().map(|b| b.1).find(|v| !kernels::SEARCH_SHAPES.contains(v)) {
            return Err(Error::usage(format!("no CUDA search kernel for {} threads x {} rows", v.threads, v.rows)));
        }
        if bins.last().map(|b| b.0) != Some(u32::MAX) {
            return Err(Error::usage("the last CUDA length bin must cover all lengths"));
        }
        self.bins = bins;
        Ok(())
    }

    pub fn gpu_count(&self) -> usize {
        self.devices.len()
    }
}

impl Engine for CudaEngine {
    fn name(&self) -> String {
        format!("cuda ({})", gpus_label(&self.names))
    }

    fn search(&self, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>> {
        let ngpus = self.devices.len();
        let key = search::DbKey::of(db);
        let sc = &self.scoring;
        let per_gpu: Vec<Result<Vec<search::RawHits>>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .devices
                .iter()
                .enumerate()
                .map(|(g, dev)| {
                    let key = key.clone();
                    crate::threads::spawn_scoped(s, "sw-gpu-search", move || {
                        let mut dev = dev.lock().map_err(|_| Error::Internal("GPU state poisoned".into()))?;
                        dev.search(key, db, g, ngpus, queries, sc, &self.bins, top, work)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("GPU worker panicked".into()))))
                .collect()
        });
        let per_gpu: Vec<Vec<search::RawHits>> = per_gpu.into_iter().collect::<Result<_>>()?;

        // Exact 32-bit scores for lanes that may have overflowed 16 bits.
        let mut overflow: Vec<(usize, u32)> = Vec::new();
        for g in &per_gpu {
            for (q, hits) in g.iter().enumerate() {
                overflow.extend(hits.iter().filter(|h| h.1 == search::OVERFLOW).map(|h| (q, h.0)));
            }
        }
        // On the GPU too: the pair aligner's kernels fall back to exact 32-bit arithmetic for
        // the pairs that overflow its own 16-bit lanes.
        let exact: std::collections::HashMap<(usize, u32), i32> = if overflow.is_empty() {
            Default::default()
        } else {
            let pairs: Vec<(&[u8], &[u8])> = overflow.iter().map(|&(q, t)| (queries[q], db.seq(t as usize))).collect();
            let scores = self.align_slices(&pairs, Level::ScoreEnd)?;
            overflow.iter().zip(&scores).map(|(&k, a)| (k, a.score)).collect()
        };

        Ok((0..queries.len())
            .map(|q| {
                let lists = per_gpu.iter().map(|g| {
                    g[q].iter()
                        .map(|&(t, s)| match exact.get(&(q, t)) {
                            Some(&x) if s == search::OVERFLOW => {
                                Hit { target: t, score: x, recomputed: super::recomputed(x) }
                            }
                            _ => Hit { target: t, score: s as i32, recomputed: super::recomputed(s as i32) },
                        })
                        .collect::<Vec<_>>()
                });
                topk::merge_ranked(db, top, lists)
            })
            .collect())
    }

    /// Each call ends in a barrier (every worker of its GPUs drains): calls must be long
    /// enough that it costs little, and split into several pieces per stream.
    fn align_batch_pairs(&self) -> usize {
        262_144
    }

    /// A call leaves the GPU idle while it plans its pieces and after its last one, and
    /// CIGAR and aligned strings are made on the host after the GPU passes: four calls at
    /// once kept it busy (H100, 20M pairs by id: 6.95 s at 2, 5.28 at 3, 4.91 at 4, 4.81
    /// at 6; 10M DNA pairs with paths: 14.1 s at 2, 12.1 at 4).
    fn align_calls_in_flight(&self) -> usize {
        // Per GPU: overlapping calls each take one GPU (`GpuAligner::claim_gpus`).
        4 * self.devices.len().max(1)
    }

    fn statistics(&self) -> Vec<(String, String)> {
        match self.aligner.lock() {
            Ok(slot) => slot.as_ref().map(|a| a.statistics()).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    /// Paths on the GPU (the traceback kernel), statistics alone by its counting variant;
    /// rectangles over the GPU's direction budget on the CPU (bounded memory, all cores).
    fn traceback(&self, pairs: PairSeqs<'_>, alignments: &[Alignment], path: bool) -> Result<Vec<Traceback>> {
        if path {
            let traced = self.aligner()?.paths(pairs, alignments, &self.scoring)?;
            return traced
                .into_iter()
                .enumerate()
                .map(|(i, tb)| match tb {
                    Some(tb) => Ok(tb),
                    None => {
                        let (q, t) = pairs.pair(i);
                        traceback::trace(q, t, &self.scoring, &alignments[i])
                    }
                })
                .collect();
        }
        let counts = self.aligner()?.path_counts(pairs, alignments)?;
        counts
            .iter()
            .zip(alignments)
            .enumerate()
            .map(|(i, (c, a))| match c {
                _ if a.score <= 0 => Ok(Traceback::default()),
                Some([p, n, g]) => Ok(Traceback {
                    ops: Vec::new(),
                    stats: PathStats::from_counts(*p, *n, *g, a.qend - a.qstart + 1, a.tend - a.tstart + 1),
                }),
                None => {
                    let (q, t) = pairs.pair(i);
                    Ok(Traceback { ops: Vec::new(), stats: traceback::path_stats(q, t, &self.scoring, a)? })
                }
            })
            .collect()
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        self.aligner()?.align(pairs, level)
    }

    fn prepare_align(&self) -> Result<()> {
        self.aligner().map(|_| ())
    }
}

impl CudaEngine {
    /// The one-to-one aligner, opened on first use (its kernels compile then).
    fn aligner(&self) -> Result<std::sync::Arc<align::GpuAligner>> {
        let aligner = {
            let mut slot = self.aligner.lock().map_err(|_| Error::Internal("GPU aligner poisoned".into()))?;
            match &*slot {
                Some(a) => a.clone(),
                None => {
                    let a = std::sync::Arc::new(align::GpuAligner::new(&self.scoring, &self.config)?);
                    *slot = Some(a.clone());
                    a
                }
            }
        };
        Ok(aligner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_cuda_new_is_a_device_error() {
        // Only meaningful where CUDA is absent (CI, most laptops): the engine must refuse
        // with Error::Device instead of panicking inside cudarc.
        if available() {
            return;
        }
        match CudaEngine::new(Scoring::blosum62()) {
            Err(Error::Device(msg)) => assert!(msg.contains("CUDA"), "{}", msg),
            Err(e) => panic!("expected Error::Device, got {:?}", e),
            Ok(_) => panic!("CudaEngine::new succeeded although CUDA is unavailable"),
        }
    }
}

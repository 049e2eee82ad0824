//! Engines compute alignments; everything else (reading, ranking, statistics, writing)
//! lives in the pipelines. Every engine gives exactly the results of the scalar reference.
//!
//! Tie rule, shared by all engines: the end cell is the highest-scoring cell with the
//! smallest target end, then the smallest query end. The start cell is found by a reverse
//! pass anchored at the end cell, applying the same rule to the reversed sequences: the
//! highest-scoring start with the largest target start, then the largest query start.

pub mod cuda;
pub mod mode;
pub mod overlap;
pub mod scalar;
pub mod scalar_modes;
pub mod simd;
pub mod topk;
pub mod traceback;
pub mod wavefront;

use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::{PairSeqs, SeqPairs};
use std::sync::Arc;

/// One database hit of a search: scores only; coordinates come from `align` later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Index of the target in the database's length order.
    pub target: u32,
    pub score: i32,
    /// [`recomputed`]`(score)`, whatever path the engine took.
    pub recomputed: bool,
}

/// A full local alignment: score with 1-based inclusive coordinates (all 0 when score is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Alignment {
    pub score: i32,
    pub qstart: u32,
    pub qend: u32,
    pub tstart: u32,
    pub tend: u32,
    /// [`recomputed`]`(score)`, whatever path the engine took.
    pub recomputed: bool,
    /// The overlap mode chose the pair's local alignment: an internal match
    /// ([`mode::overlap_choice`]); false in every other mode.
    pub internal: bool,
}

impl Alignment {
    /// The alignment with its start cell dropped ([`Level::ScoreEnd`]): what every engine
    /// returns at that level, whatever its path computed.
    pub fn end_only(self) -> Alignment {
        Alignment { qstart: 0, tstart: 0, ..self }
    }

    /// The [`Level::ScoreEnd`] alignment of a forward pass's best cell.
    pub fn from_end(end: scalar::ScoreEnd) -> Alignment {
        Alignment {
            score: end.score,
            qend: end.qend,
            tend: end.tend,
            recomputed: recomputed(end.score),
            ..Default::default()
        }
    }
}

/// How much of each alignment an [`Engine::align`] call computes: the forward pass alone
/// (score and end cell), or the reverse pass too (start cell). The pipelines ask for the
/// least level their columns and thresholds need (`output::Need::level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Score and end cell; starts are 0.
    ScoreEnd,
    /// Score, end and start cells.
    Coordinates,
}

/// The `recomputed` output column, one rule for every engine: the score exceeds the 16-bit
/// range (32,767), so no 16-bit pass can have produced it and it was computed at 32 bits.
/// Decided from the final score, never from an engine's internal path (an engine may widen
/// earlier, near the limit, and another not at all), so all engines agree bit for bit.
pub fn recomputed(score: i32) -> bool {
    score > i16::MAX as i32
}

/// The contract every engine (scalar reference, CPU SIMD, CUDA) fulfils. Engines are built
/// for one scoring scheme and one thread/device configuration.
pub trait Engine: Send + Sync {
    /// Short name for messages and metadata, e.g. "cpu-scalar" or "cuda (2 x H100)".
    fn name(&self) -> String;

    /// The best `top` hits of each query against the whole database, ranked by score, then
    /// by the target's position in the input (`Database::original`). Scores only. Cells
    /// (query residues x target residues) are added to `work` as they are computed, so a
    /// progress line moves during one long call.
    fn search(&self, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>>;

    /// Score and end of each (query, target) pair, in input order, and with
    /// [`Level::Coordinates`] its start too (else starts are 0). Several calls may run at
    /// once (the align pipeline keeps batches in flight): engines are `Sync`.
    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>>;

    /// [`Engine::align`] over borrowed pairs (copies them into one buffer first).
    fn align_slices(&self, pairs: &[(&[u8], &[u8])], level: Level) -> Result<Vec<Alignment>> {
        self.align(SeqPairs::from_slices(pairs).view(), level)
    }

    /// The start cells of alignments whose score and end an earlier [`Level::ScoreEnd`]
    /// call gave (`ends`, one per pair of `pairs`): the same alignments at
    /// [`Level::Coordinates`]. By default the pairs are aligned again at that level (the
    /// forward pass runs twice); engines with a start pass of their own run it alone.
    fn starts(&self, pairs: PairSeqs<'_>, ends: &[Alignment]) -> Result<Vec<Alignment>> {
        let full = self.align(pairs, Level::Coordinates)?;
        check_same_ends(ends, &full)?;
        Ok(full)
    }

    /// What the engine has done so far (work done, time per phase), as (name, value) lines
    /// for `--stats`; engines report, the caller decides whether to print.
    fn statistics(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The scoring scheme the engine was built for.
    fn scoring(&self) -> &Scoring;

    /// The alignment mode of [`Engine::align`] and [`Engine::traceback`] ([`mode`]).
    fn mode(&self) -> mode::AlignMode {
        mode::AlignMode::Local
    }

    /// The traceback of each alignment by the path rule ([`traceback`]), for `pairs` and this
    /// engine's `alignments` of them: the statistics, and with `path` the operations too.
    /// Identical on every engine; by default computed on the CPU (the current thread pool).
    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<traceback::Traceback>> {
        traceback::trace_all(pairs, alignments, self.scoring(), path)
    }

    /// Gets [`Engine::align`] ready (a GPU engine's aligner: its modules and first
    /// allocations), so that a caller can do it while its inputs load instead of on the
    /// first batch; nothing for engines that are ready once built.
    fn prepare_align(&self) -> Result<()> {
        Ok(())
    }

    /// Pairs per `align` call that keep this engine busy; the align pipeline batches by it.
    fn align_batch_pairs(&self) -> usize {
        65_536
    }

    /// `align` calls the pipeline keeps running at once: two let one batch's tail overlap
    /// the next batch (a CPU engine spreads each call over every core already).
    fn align_calls_in_flight(&self) -> usize {
        2
    }
}

/// The ends a start pass was given against the alignments it returned: the same score and
/// end cell for every pair, or an internal error (an engine disagreeing with itself).
pub fn check_same_ends(ends: &[Alignment], full: &[Alignment]) -> Result<()> {
    if ends.len() != full.len() {
        return Err(Error::Internal(format!("start pass returned {} alignments for {} ends", full.len(), ends.len())));
    }
    match ends.iter().zip(full).find(|(e, f)| (e.score, e.qend, e.tend) != (f.score, f.qend, f.tend)) {
        Some((e, f)) => Err(Error::Internal(format!(
            "start pass ended at score {} ({}, {}), the end pass at score {} ({}, {})",
            f.score, f.qend, f.tend, e.score, e.qend, e.tend
        ))),
        None => Ok(()),
    }
}

/// How engines are built: CPU threads (all cores when `None`) and the CUDA engine's tuning.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    pub threads: Option<usize>,
    pub cuda: cuda::CudaConfig,
}

impl EngineOptions {
    pub fn threads(threads: Option<usize>) -> EngineOptions {
        EngineOptions { threads, ..Default::default() }
    }
}

/// Where `--device` asks alignments to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Device {
    /// CUDA when a usable GPU is present, otherwise the CPU.
    Auto,
    Cpu,
    Cuda,
}

/// Builds the engine for `device`; `verbose` says on stderr which one, and why not the GPU
/// when `auto` falls back to the CPU (otherwise a silent, expected event on most machines).
/// `SWARROW_ENGINE=scalar` forces the scalar reference on the CPU (tests, debugging).
pub fn select(device: Device, scoring: &Scoring, options: &EngineOptions, verbose: bool) -> Result<Arc<dyn Engine>> {
    let threads = options.threads;
    let engine = match device {
        Device::Cpu => cpu_engine(scoring, threads)?,
        Device::Cuda => gpu_engine(scoring, &options.cuda)?,
        Device::Auto => match gpu_engine(scoring, &options.cuda) {
            Ok(e) => e,
            Err(Error::Device(why)) if !why.is_empty() => {
                if verbose {
                    eprintln!("swarrow: no usable GPU ({}); using the CPU", why);
                }
                cpu_engine(scoring, threads)?
            }
            Err(e) => return Err(e),
        },
    };
    if verbose {
        eprintln!("swarrow: aligning on {}", engine.name());
    }
    Ok(engine)
}

/// [`select`] for alignments in `mode`. Local mode is [`select`]; the overlap mode composes
/// a local and a semi-global engine of the device ([`overlap::OverlapEngine`]); the other
/// modes run on the CPU engine of the modes ([`simd::SimdModeEngine`]; the scalar reference
/// [`scalar_modes::ModeEngine`] under `SWARROW_ENGINE=scalar`), or on the GPU
/// ([`cuda::mode_engine`], with that CPU engine for what the GPU leaves).
pub fn select_mode(
    device: Device,
    mode: mode::AlignMode,
    scoring: &Scoring,
    options: &EngineOptions,
    verbose: bool,
) -> Result<Arc<dyn Engine>> {
    if mode.is_local() {
        return select(device, scoring, options, verbose);
    }
    if let mode::AlignMode::Overlap(penalty) = mode {
        // Two engines of the device, composed; one line says which.
        let semi = select_mode(device, mode::OVERLAP_SEMI_GLOBAL, scoring, options, false)?;
        let local = select(device, scoring, options, false)?;
        let engine = overlap::OverlapEngine::new(local, semi, penalty)?;
        if verbose {
            eprintln!("swarrow: aligning on {}", engine.name());
        }
        return Ok(Arc::new(engine));
    }
    let cpu = cpu_mode_engine(mode, scoring, options.threads)?;
    let gpu = || -> Result<Arc<dyn Engine>> {
        Ok(Arc::new(cuda::mode_engine::GpuModeEngine::new(scoring.clone(), mode, &options.cuda, cpu.clone())?))
    };
    let engine = match device {
        Device::Cpu => cpu.clone(),
        Device::Cuda => gpu()?,
        Device::Auto => match gpu() {
            Ok(e) => e,
            Err(Error::Device(why)) if !why.is_empty() => {
                if verbose {
                    eprintln!("swarrow: no usable GPU ({}); using the CPU", why);
                }
                cpu.clone()
            }
            Err(e) => return Err(e),
        },
    };
    if verbose {
        eprintln!("swarrow: aligning on {}", engine.name());
    }
    Ok(engine)
}

/// The CPU engine of the global and semi-global modes.
fn cpu_mode_engine(mode: mode::AlignMode, scoring: &Scoring, threads: Option<usize>) -> Result<Arc<dyn Engine>> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    if forced_scalar()? {
        return Ok(Arc::new(scalar_modes::ModeEngine::new(scoring.clone(), mode, threads)?));
    }
    Ok(Arc::new(simd::SimdModeEngine::new(scoring.clone(), mode, threads)?))
}

/// `SWARROW_ENGINE`: `scalar` forces the scalar reference on the CPU; unset, empty or `simd`
/// is the default; anything else is refused, as a mistyped `SWARROW_SIMD` is.
pub fn forced_scalar() -> Result<bool> {
    match std::env::var("SWARROW_ENGINE").as_deref() {
        Err(_) | Ok("") | Ok("simd") => Ok(false),
        Ok("scalar") => Ok(true),
        Ok(other) => Err(Error::usage(format!(
            "SWARROW_ENGINE={}: expected scalar or simd (or leave it unset)",
            crate::error::shown_id(other)
        ))),
    }
}

fn cpu_engine(scoring: &Scoring, threads: Option<usize>) -> Result<Arc<dyn Engine>> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    if forced_scalar()? {
        return Ok(Arc::new(scalar::ScalarEngine::new(scoring.clone(), threads)?));
    }
    Ok(Arc::new(simd::SimdEngine::new(scoring.clone(), threads)?))
}

fn gpu_engine(scoring: &Scoring, config: &cuda::CudaConfig) -> Result<Arc<dyn Engine>> {
    Ok(Arc::new(cuda::CudaEngine::with_config(scoring.clone(), config.clone())?))
}

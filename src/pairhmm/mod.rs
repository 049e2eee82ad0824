//! `swarrow pairhmm`: read likelihoods under the pair hidden Markov model of GATK's
//! HaplotypeCaller, as Intel's GKL computes them (see [`model`] for the model and its
//! constants).
//!
//! Layers, in the order data flows:
//! - [`input`]: tables of reads and haplotypes (TSV, Arrow IPC, Parquet; grouped by region or
//!   as explicit pairs) and GATK's PairHMM test-data text, into [`batch::PairBatch`]es;
//! - [`Engine`]s: [`scalar`] (cell by cell) and [`simd`] (AVX-512/AVX2/portable lanes), both
//!   float with double recomputation and bit-identical; [`cuda`] (GPU, same rule, within a
//!   bound); `scalar::log10_likelihood` is the double-precision reference;
//! - [`pipeline`]: reader -> engine -> writer over bounded channels, input order kept;
//!   rows leave through [`crate::output`]'s table writers.

pub mod batch;
pub mod cuda;
pub mod input;
pub mod model;
pub mod pipeline;
pub mod scalar;
pub mod simd;

use crate::engine::Device;
use crate::error::{Error, Result};
use batch::PairBatch;
use std::sync::Arc;

/// One pair's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Likelihood {
    /// log10 P(read | haplotype).
    pub log10: f64,
    /// The float pass underflowed GKL's threshold and the value was computed in double.
    pub recomputed: bool,
}

/// The contract of every pairhmm engine.
pub trait Engine: Send + Sync {
    /// Short name for messages and metadata.
    fn name(&self) -> String;
    /// The likelihood of every pair of `batch`, in the order of `batch.pairs`, into `out`.
    fn compute(&self, batch: &PairBatch, out: &mut Vec<Likelihood>) -> Result<()>;
    /// Cells (read length x haplotype length) per batch that keep this engine busy.
    fn batch_cells(&self) -> u64 {
        1 << 28
    }
}

/// `--gcp` beyond the quality range is a usage error.
pub fn check_gcp(gcp: u8) -> Result<()> {
    if gcp > model::MAX_QUAL {
        return Err(Error::usage(format!("--gcp must be at most {} (got {})", model::MAX_QUAL, gcp)));
    }
    Ok(())
}

/// How large input batches grow for `engine` (`batch_pairs`: a cap on pairs, for tests).
pub fn batch_limits(engine: &dyn Engine, batch_pairs: Option<usize>) -> input::BatchLimits {
    input::BatchLimits { cells: engine.batch_cells(), pairs: batch_pairs.unwrap_or(1 << 20).max(1) }
}

/// The facts every pairhmm output carries about its run.
pub fn run_metadata(engine: &dyn Engine) -> crate::output::RunMetadata {
    let mut meta = crate::output::RunMetadata::new();
    meta.push("swarrow_version", env!("CARGO_PKG_VERSION"));
    meta.push("mode", "pairhmm");
    meta.push("model", "GATK PairHMM as GKL computes it: float pass, double recomputation below 1e-28 (scaled)");
    meta.push_engine(&engine.name());
    meta
}

/// A rayon pool of `threads` workers.
pub(crate) fn thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    crate::threads::pool("sw-pairhmm", threads)
}

/// The engine for `device`; `verbose` says which one on stderr, and why not the GPU when
/// `auto` falls back to the CPU (silent otherwise, as for search and align).
/// `SWARROW_ENGINE=scalar` forces the scalar engine on the CPU.
pub fn select(device: Device, threads: Option<usize>, verbose: bool) -> Result<Arc<dyn Engine>> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let cpu = || -> Result<Arc<dyn Engine>> {
        if crate::engine::forced_scalar()? {
            return Ok(Arc::new(scalar::ScalarEngine::new(threads)?));
        }
        Ok(Arc::new(simd::SimdEngine::new(threads)?))
    };
    let engine: Arc<dyn Engine> = match device {
        Device::Cpu => cpu()?,
        Device::Cuda => Arc::new(cuda::CudaEngine::new(threads)?),
        Device::Auto => match cuda::CudaEngine::new(threads) {
            Ok(e) => Arc::new(e),
            Err(Error::Device(why)) => {
                if verbose {
                    eprintln!("swarrow: no usable GPU ({why}); using the CPU");
                }
                cpu()?
            }
            Err(e) => return Err(e),
        },
    };
    if verbose {
        eprintln!("swarrow: computing likelihoods on {}", engine.name());
    }
    Ok(engine)
}

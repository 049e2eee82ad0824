//! The CPU SIMD engine: the scalar reference's exact results, vectorised.
//!
//! - search: inter-sequence scoring (`intersequence`), one database target per lane, 8-bit
//!   lanes first; lanes that may have passed their range are rescored at 16 bits (pooled
//!   into whole batches), and those that pass again at 32 bits by the scalar reference
//!   (`Hit::recomputed`).
//! - align: striped scoring of each pair (`striped`) for the end cell, 8-bit lanes until
//!   the best score nears their limit and 16-bit lanes on from that column, then the same
//!   on the reversed prefixes for the start cell at the narrowest width holding the score;
//!   pairs that saturate 16 bits are aligned by the scalar reference
//!   (`Alignment::recomputed`). AVX-512 CPUs align with the AVX2 build (see `AlignKernels`).
//!
//! - global and semi-global align (`modes`): inter-sequence lanes, one pair per 16-bit lane,
//!   exact in the modes' tie rules; pairs past 16 bits go to the scalar reference.
//!
//! The kernels are generic over `vector::Vector`; each instruction set gets its compiled
//! copy through one `#[target_feature]` entry point per kernel (`kernels!` below). The
//! instruction set is detected at run time, or forced by `SWARROW_SIMD` or the constructor.

mod align;
pub mod intersequence;
mod modes;
mod search;
pub mod striped;
pub mod vector;

use super::{Alignment, Engine, Hit, Level};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use crate::seq::PairSeqs;
use vector::Vector;

/// An instruction set the engine can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Avx512,
    Avx2,
    Sse41,
    Portable,
}

impl Isa {
    pub const ALL: [Isa; 4] = [Isa::Avx512, Isa::Avx2, Isa::Sse41, Isa::Portable];

    /// The name `SWARROW_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Sse41 => "sse41",
            Isa::Portable => "portable",
        }
    }

    pub fn parse(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name().eq_ignore_ascii_case(name.trim()))
    }

    /// A usage error when this CPU does not run it.
    pub fn require(self) -> Result<()> {
        match self.supported() {
            true => Ok(()),
            false => Err(Error::usage(format!("this CPU does not support SIMD instruction set '{}'", self.name()))),
        }
    }

    /// Whether this CPU runs it.
    pub fn supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => is_x86_feature_detected!("avx512bw"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Sse41 => is_x86_feature_detected!("sse4.1"),
            Isa::Portable => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The fastest instruction set this CPU runs.
    pub fn best() -> Isa {
        Isa::ALL.into_iter().find(|i| i.supported()).unwrap_or(Isa::Portable)
    }

    /// `SWARROW_SIMD` if set, else the best this CPU runs.
    pub fn from_env() -> Result<Isa> {
        match std::env::var("SWARROW_SIMD") {
            Ok(v) if !v.trim().is_empty() => {
                let isa = Isa::parse(&v).ok_or_else(|| {
                    Error::usage(format!("SWARROW_SIMD={}: expected avx512, avx2, sse41 or portable", v))
                })?;
                Ok(isa)
            }
            _ => Ok(Isa::best()),
        }
    }
}

/// The kernels of one instruction set: the generic kernels, compiled with its features.
/// Unsafe: callers make sure the CPU runs the instruction set.
trait Kernels: Sync {
    type Narrow: Vector;
    type Wide: Vector;

    unsafe fn score_narrow(
        query: &[u8],
        used: &[u8],
        look: &intersequence::Lookup<Self::Narrow>,
        cols: &intersequence::Columns,
        scratch: &mut intersequence::Scratch<Self::Narrow>,
    ) -> Self::Narrow;

    unsafe fn score_wide(
        query: &[u8],
        used: &[u8],
        look: &intersequence::Lookup<Self::Wide>,
        cols: &intersequence::Columns,
        scratch: &mut intersequence::Scratch<Self::Wide>,
    ) -> Self::Wide;

    /// Columns per inner-loop pass of the inter-sequence kernels.
    const BLOCK_NARROW: usize;
    const BLOCK_WIDE: usize;
}

/// The striped align kernels of one instruction set, likewise.
trait AlignKernels: Sync {
    type Narrow: Vector;
    type Wide: Vector;

    /// One align pair through the striped passes.
    unsafe fn align_pair(
        tabs: &align::AlignTables<Self::Narrow, Self::Wide>,
        query: &[u8],
        target: &[u8],
        job: align::Job,
        scratch: &mut align::AlignScratch<Self::Narrow, Self::Wide>,
    ) -> align::PairResult;
}

macro_rules! kernels {
    ($name:ident [$($feat:literal)?], $narrow:ty, $wide:ty, block: $bn:literal, $bw:literal) => {
        struct $name;

        impl Kernels for $name {
            type Narrow = $narrow;
            type Wide = $wide;
            const BLOCK_NARROW: usize = $bn;
            const BLOCK_WIDE: usize = $bw;

            $(#[target_feature(enable = $feat)])?
            unsafe fn score_narrow(
                query: &[u8],
                used: &[u8],
                look: &intersequence::Lookup<$narrow>,
                cols: &intersequence::Columns,
                scratch: &mut intersequence::Scratch<$narrow>,
            ) -> $narrow {
                intersequence::score_batch::<$narrow, $bn>(query, used, look, cols, scratch)
            }

            $(#[target_feature(enable = $feat)])?
            unsafe fn score_wide(
                query: &[u8],
                used: &[u8],
                look: &intersequence::Lookup<$wide>,
                cols: &intersequence::Columns,
                scratch: &mut intersequence::Scratch<$wide>,
            ) -> $wide {
                intersequence::score_batch::<$wide, $bw>(query, used, look, cols, scratch)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
kernels!(Avx512 ["avx512bw"], vector::Avx512x8, vector::Avx512x16, block: 8, 8);
#[cfg(target_arch = "x86_64")]
kernels!(Avx2 ["avx2"], vector::Avx2x8, vector::Avx2x16, block: 4, 4);
#[cfg(target_arch = "x86_64")]
kernels!(Sse41 ["sse4.1"], vector::Sse41x8, vector::Sse41x16, block: 4, 4);
kernels!(Portable [], vector::Portable8, vector::Portable16, block: 2, 2);

macro_rules! align_kernels {
    ($name:ident [$($feat:literal)?], $narrow:ty, $wide:ty) => {
        impl AlignKernels for $name {
            type Narrow = $narrow;
            type Wide = $wide;

            $(#[target_feature(enable = $feat)])?
            unsafe fn align_pair(
                tabs: &align::AlignTables<$narrow, $wide>,
                query: &[u8],
                target: &[u8],
                job: align::Job,
                scratch: &mut align::AlignScratch<$narrow, $wide>,
            ) -> align::PairResult {
                align::align_pair::<$narrow, $wide>(tabs, query, target, job, scratch)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
align_kernels!(Avx2["avx2"], vector::Avx2x8, vector::Avx2x16);
#[cfg(target_arch = "x86_64")]
align_kernels!(Sse41["sse4.1"], vector::Sse41x8, vector::Sse41x16);
align_kernels!(Portable [], vector::Portable8, vector::Portable16);

/// AVX-512 CPUs align with the AVX2 build. The striped passes are latency-bound (each
/// column waits on the last), and there the 512-bit cross-lane shifts cost more than the
/// wider registers save: on the project's Zen 5 machine the AVX2 build was 5-10% faster,
/// and the same 256-bit code compiled with AVX-512 enabled slower still (BENCHMARKS.md).
#[cfg(target_arch = "x86_64")]
impl AlignKernels for Avx512 {
    type Narrow = vector::Avx2x8;
    type Wide = vector::Avx2x16;

    unsafe fn align_pair(
        tabs: &align::AlignTables<Self::Narrow, Self::Wide>,
        query: &[u8],
        target: &[u8],
        job: align::Job,
        scratch: &mut align::AlignScratch<Self::Narrow, Self::Wide>,
    ) -> align::PairResult {
        <Avx2 as AlignKernels>::align_pair(tabs, query, target, job, scratch)
    }
}

macro_rules! mode_kernels {
    ($name:ident [$($feat:literal)?], $lanes:ty, vbmi: $vbmi:literal) => {
        impl modes::ModeKernels for $name {
            type Lanes = $lanes;

            $(#[target_feature(enable = $feat)])?
            unsafe fn align_stream(
                t: &modes::Tables,
                pairs: &[(&[u8], &[u8])],
                jobs: &[modes::Job],
                next: &std::sync::atomic::AtomicUsize,
                s: &mut modes::Scratch<$lanes>,
                out: &mut Vec<(usize, modes::LaneEnd)>,
            ) {
                modes::align_stream::<$lanes, $vbmi>(t, pairs, jobs, next, s, out)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mode_kernels!(Avx512["avx512bw"], vector::Avx512x16, vbmi: false);
#[cfg(target_arch = "x86_64")]
mode_kernels!(Avx2["avx2"], vector::Avx2x16, vbmi: false);
#[cfg(target_arch = "x86_64")]
mode_kernels!(Sse41["sse4.1"], vector::Sse41x16, vbmi: false);
mode_kernels!(Portable [], vector::Portable16, vbmi: false);

/// The mode kernels of AVX-512 CPUs with VBMI (Ice Lake on): the same lanes, their score
/// blocks transposed by byte permutes. `SimdModeEngine` picks them at run time.
#[cfg(target_arch = "x86_64")]
struct Avx512Vbmi;
#[cfg(target_arch = "x86_64")]
mode_kernels!(Avx512Vbmi["avx512bw,avx512vbmi"], vector::Avx512x16, vbmi: true);

/// Runs `$body` with `$k` bound to the kernels type of `$isa`.
macro_rules! with_kernels {
    ($isa:expr, $k:ident => $body:expr) => {
        match $isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                type $k = Avx512;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                type $k = Avx2;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Sse41 => {
                type $k = Sse41;
                $body
            }
            #[allow(unreachable_patterns)]
            _ => {
                type $k = Portable;
                $body
            }
        }
    };
}

pub struct SimdEngine {
    scoring: Scoring,
    pool: rayon::ThreadPool,
    isa: Isa,
}

impl SimdEngine {
    /// On the instruction set `SWARROW_SIMD` names, else the best this CPU runs.
    pub fn new(scoring: Scoring, threads: usize) -> Result<SimdEngine> {
        SimdEngine::with_isa(scoring, threads, Isa::from_env()?)
    }

    /// On the given instruction set; an error if this CPU does not run it.
    pub fn with_isa(scoring: Scoring, threads: usize, isa: Isa) -> Result<SimdEngine> {
        isa.require()?;
        let pool = crate::threads::pool("sw-simd", threads)?;
        Ok(SimdEngine { scoring, pool, isa })
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }
}

impl Engine for SimdEngine {
    fn name(&self) -> String {
        format!("cpu-simd {} ({} threads)", self.isa.name(), self.pool.current_num_threads())
    }

    fn search(&self, queries: &[&[u8]], db: &Database, top: usize, work: &Work) -> Result<Vec<Vec<Hit>>> {
        let sc = &self.scoring;
        self.pool.install(|| with_kernels!(self.isa, K => search::search::<K>(sc, queries, db, top, work)))
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<crate::engine::traceback::Traceback>> {
        self.pool.install(|| crate::engine::traceback::trace_all(pairs, alignments, &self.scoring, path))
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let sc = &self.scoring;
        let pairs = pairs.to_slices();
        self.pool.install(|| with_kernels!(self.isa, K => align::align::<K>(sc, &pairs, level)))
    }

    fn starts(&self, pairs: PairSeqs<'_>, ends: &[Alignment]) -> Result<Vec<Alignment>> {
        let sc = &self.scoring;
        let pairs = pairs.to_slices();
        self.pool.install(|| with_kernels!(self.isa, K => align::starts::<K>(sc, &pairs, ends)))
    }
}

/// Global and semi-global alignment ([`super::mode`]) on the SIMD kernels of `modes`: the
/// scalar reference's results ([`super::scalar_modes`]). Aligns pairs only.
pub struct SimdModeEngine {
    scoring: Scoring,
    mode: super::mode::AlignMode,
    pool: rayon::ThreadPool,
    isa: Isa,
}

impl SimdModeEngine {
    /// On the instruction set `SWARROW_SIMD` names, else the best this CPU runs.
    pub fn new(scoring: Scoring, mode: super::mode::AlignMode, threads: usize) -> Result<SimdModeEngine> {
        SimdModeEngine::with_isa(scoring, mode, threads, Isa::from_env()?)
    }

    /// On the given instruction set; an error if this CPU does not run it.
    pub fn with_isa(
        scoring: Scoring,
        mode: super::mode::AlignMode,
        threads: usize,
        isa: Isa,
    ) -> Result<SimdModeEngine> {
        isa.require()?;
        if mode.is_local() {
            return Err(Error::Internal("the mode engine aligns global and semi-global modes".into()));
        }
        let pool = crate::threads::pool("sw-simd", threads)?;
        Ok(SimdModeEngine { scoring, mode, pool, isa })
    }
}

impl Engine for SimdModeEngine {
    fn name(&self) -> String {
        format!("cpu-simd {} {} ({} threads)", self.isa.name(), self.mode, self.pool.current_num_threads())
    }

    fn search(&self, _queries: &[&[u8]], _db: &Database, _top: usize, _work: &Work) -> Result<Vec<Vec<Hit>>> {
        Err(crate::engine::mode::search_refused(self.mode))
    }

    fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let (sc, mode) = (&self.scoring, self.mode);
        let pairs = pairs.to_slices();
        #[cfg(target_arch = "x86_64")]
        if self.isa == Isa::Avx512 && is_x86_feature_detected!("avx512vbmi") {
            return self.pool.install(|| modes::align::<Avx512Vbmi>(sc, mode, &pairs, level));
        }
        self.pool.install(|| with_kernels!(self.isa, K => modes::align::<K>(sc, mode, &pairs, level)))
    }

    fn scoring(&self) -> &Scoring {
        &self.scoring
    }

    fn mode(&self) -> super::mode::AlignMode {
        self.mode
    }

    fn traceback(
        &self,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        path: bool,
    ) -> Result<Vec<crate::engine::traceback::Traceback>> {
        self.pool
            .install(|| crate::engine::traceback::trace_all_mode(pairs, alignments, &self.scoring, self.mode, path))
    }
}

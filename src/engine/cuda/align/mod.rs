//! One-to-one alignment of (query, target) pairs on NVIDIA GPUs (`kernels/align.cu`).
//!
//! A call runs, per GPU stream and per piece of pairs:
//! 1. forward pass, pairs binned by kernel shape (rows per thread x threads per pair, chosen
//!    from the query length) and sorted by target length inside a bin, two pairs per thread
//!    in 16-bit lanes: score and end cell. One launch per kernel variant covers all its
//!    bins (a warp table gives each warp its threads per pair);
//! 2. right after it on the same launches, the reverse pass over the reversed prefixes
//!    q[..qend], t[..tend], reading the forward results on the GPU: start cell;
//! 3. pairs whose score may have overflowed 16 bits: both passes again with 32-bit lanes.
//!
//! Why a plain local pass on the reversed prefixes gives the anchored start of
//! `scalar::start_from_end`: inside that rectangle no local alignment scores above S (the
//! forward best), and one scoring S that does not end at the anchor would end at a cell
//! earlier in the tie order (smaller target end, or equal target end and smaller query
//! end), contradicting the forward choice. So the cells reaching S in the local pass are
//! exactly those the anchored pass reaches S in, and the first in (reversed column, then
//! reversed row) order is the same cell. `tests::reverse_local_pass_equals_anchored_start`
//! checks this against the scalar reference.
//!
//! Results are written by pair index, so the output is in input order whatever the bins.

use super::align_plan::*;
use super::config::CudaConfig;
use super::gpu_bins::{GpuBins, BUCKETS};
use super::kernels;
use super::path_plan::{plan_paths, PathLaunch, PathPlan, Variant, PATH_BUDGET_WORDS, WARP_MIN_ROWS};
use super::runtime::{dev_err, Gpu};
use crate::engine::mode::AlignMode;
use crate::engine::traceback::{self, Traceback};
use crate::engine::{Alignment, Level};
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use crate::seq::PairSeqs;
use cudarc::driver::{
    sys as dsys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The kernels and scoring table of one GPU, and its work streams: one host thread per
/// stream, so one thread packs and bins its piece while the GPU runs another's.
struct Device {
    gpu: Gpu,
    /// Shared memory of one SM, bytes (sizes the blocks).
    shared_per_sm: u32,
    streams: Vec<Arc<CudaStream>>,
    matrix: CudaSlice<i8>,
    /// By (packed, rows, pipelined); each of the aligner's mode (local, or the modes variant).
    kernels: Mutex<HashMap<(bool, u32, bool), CudaFunction>>,
    /// The GPU binning's entry points ([`kernels::PAIR_BINS_ENTRIES`]), loaded on first use.
    bins_kernels: Mutex<Option<Vec<CudaFunction>>>,
    /// Direction words one stream's traceback launch may hold ([`path_budget_words`]).
    path_budget: u64,
    /// The path kernels (statistics, traceback), by name, loaded on first use.
    path_kernels: Mutex<HashMap<String, CudaFunction>>,
    /// Per stream: pinned staging and device buffers for the sequences, reused between
    /// pieces and calls (no page faults, DMA straight from pinned memory).
    staging: Vec<Mutex<Staging>>,
    /// Piece slots for alignment, `align_depth` per stream (see [`Slot`]).
    slots: Vec<Mutex<Slot>>,
    /// Recorded once at the start: the zero of the pieces' timelines.
    epoch: cudarc::driver::CudaEvent,
    /// Per piece, milliseconds from `epoch` to its slot's four marks.
    spans: Mutex<Vec<[f32; 4]>>,
}

/// Everything one piece of pairs needs in flight, reused from piece to piece: the host
/// fills `host_in` (residues, pair table, bin tables) while the GPU works on another slot's
/// piece; one DMA takes it to `dev_in`, the passes write `dev_out`, one DMA brings that
/// back into `host_out`, and the last mark tells the host when it may read it (and refill).
struct Slot {
    stream: Arc<CudaStream>,
    host_in: Option<cudarc::driver::PinnedHostSlice<u8>>,
    host_out: Option<cudarc::driver::PinnedHostSlice<i32>>,
    dev_in: Option<CudaSlice<u8>>,
    dev_out: Option<CudaSlice<i32>>,
    dev_scratch: Option<CudaSlice<u32>>,
    /// Recorded before the upload, after it, after the passes and after the read-back
    /// (`marks[3]` is the one the host waits for): the GPU's timeline for `--stats`.
    marks: [cudarc::driver::CudaEvent; 4],
}

/// Where one piece's inputs lie in a slot (byte offsets into `host_in` / `dev_in`; the
/// residues come first). Binned on the host, everything is uploaded: residues, pair table,
/// group and warp tables. Binned on the GPU ([`GpuBins`]), the upload is the residues, the
/// bounds, the plan's two tables and the warp table, and the pair table, group table and
/// bucket counters are made on the device past `upload`.
#[derive(Debug, Clone, Copy, Default)]
struct InLayout {
    descs: usize,
    groups: usize,
    warps: usize,
    /// GPU binning only: bounds (u32), region of each query length, regions' first
    /// entries, bucket counters.
    bounds: usize,
    region_of: usize,
    region_first: usize,
    hist: usize,
    /// Bytes uploaded, and bytes of `dev_in` the piece uses.
    upload: usize,
    total: usize,
}

/// How a piece is binned: on the host (pairs in shapes, sorted, tables written), or on the
/// GPU from a plan of the query lengths ([`GpuBins`]).
enum Binning {
    Host(Tables),
    Gpu(GpuBins, Tables),
}

/// Kernel arguments of kernels/pair_bins.cu; must match `struct BinArgs` there.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct BinArgs {
    bounds: u64,
    n: i32,
    group_entries: i32,
    region_of: u64,
    max_qlen: i32,
    shift: i32,
    descs: u64,
    hist: u64,
    region_first: u64,
    groups: u64,
}

unsafe impl DeviceRepr for BinArgs {}

/// Device addresses of one piece's buffers, as the kernel takes them.
#[derive(Debug, Clone, Copy)]
struct PieceDev {
    seqs: u64,
    descs: u64,
    groups: u64,
    warps: u64,
    fwd: u64,
    rev: u64,
    scratch: u64,
}

/// The group and warp tables of a set of bins (see [`plan_launches`]): one table each for
/// all launches, with each launch's first warp and scratch offset.
struct Tables {
    groups: Vec<i32>,
    warps: Vec<i32>,
    launches: Vec<Launch>,
    warp_off: Vec<usize>,
    scratch_off: Vec<usize>,
    scratch_len: usize,
}

/// Results a call's workers collect: (piece index, the piece's results).
type Done<T> = Mutex<Vec<(usize, Vec<T>)>>;

/// A piece whose work is queued on its slot's stream, waiting to be read back.
struct Pending<'a> {
    slot: std::sync::MutexGuard<'a, Slot>,
    piece: usize,
    npairs: usize,
    layout: InLayout,
    level: Level,
}

#[derive(Default)]
struct Staging {
    host: Option<cudarc::driver::PinnedHostSlice<u8>>,
    dev: Option<CudaSlice<u8>>,
    /// The traceback kernel's buffers, grown as needed and kept (allocations synchronize).
    paths: PathBuffers,
}

#[derive(Default)]
struct PathBuffers {
    dirs: Option<CudaSlice<u64>>,
    scratch: Option<CudaSlice<i32>>,
    ops: Option<CudaSlice<u32>>,
    meta: Option<CudaSlice<i32>>,
}

/// Kernel arguments; must match `struct AlignArgs` in kernels/align.cu field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct AlignArgs {
    pairs: u64,
    groups: u64,
    warps: u64,
    nwarps: i32,
    seqs: u64,
    matrix: u64,
    nc1: i32,
    gap_oe: i32,
    gap_ext: i32,
    fwd: u64,
    overflow_limit: i32,
    out: u64,
    scratch: u64,
    scratch_stride: i32,
    scratch_slots: i32,
    mode_flags: i32,
    range_lo: i32,
    max_score: i32,
}

unsafe impl DeviceRepr for AlignArgs {}

/// Most pairs in one piece of the path kernels.
const PATH_PIECE_PAIRS: usize = 262_144;

/// What the aligner has done so far, summed over its calls and workers (nanoseconds are
/// summed over workers, so they can exceed the wall time).
#[derive(Debug, Default)]
struct Counters {
    pieces: AtomicU64,
    pairs: AtomicU64,
    cells: AtomicU64,
    wide_pairs: AtomicU64,
    /// Pair table, bins and launch tables on the host.
    prepare_ns: AtomicU64,
    /// Sequences into the GPU (staging copy and DMA, or the driver's copy).
    upload_ns: AtomicU64,
    /// From the first launch to the results back on the host (both passes, wide pairs).
    gpu_ns: AtomicU64,
    /// Traceback statistics: upload, kernel and read-back.
    stats_ns: AtomicU64,
    /// Traceback paths: GPU time and read-back, then the host's decoding (summed over streams).
    trace_upload_ns: AtomicU64,
    trace_ns: AtomicU64,
    decode_ns: AtomicU64,
    /// Paths that left the warp variant's stored windows (traced again with every column).
    window_misses: AtomicU64,
}

/// One-to-one alignment on every visible GPU.
pub struct GpuAligner {
    devices: Vec<Device>,
    nc1: i32,
    gap_oe: i32,
    gap_ext: i32,
    limit: i32,
    /// Local, or global / semi-global: the kernel's borders ([`modes`]).
    mode: AlignMode,
    /// The kernel variant: local or the modes'.
    kind: kernels::AlignKind,
    /// The gaps the modes' starts are picked with ([`modes::finish`]).
    scoring: Scoring,
    max_score: i32,
    /// Threads for packing and binning: the aligner's own, so that its host work does not
    /// queue behind the callers' jobs in rayon's global pool (input parsing, say).
    pool: rayon::ThreadPool,
    config: CudaConfig,
    counters: Counters,
    /// Align calls running on each GPU: a call that starts while others run takes the least
    /// busy GPU alone (see [`GpuAligner::claim_gpus`]).
    busy: Vec<AtomicUsize>,
}

/// Marks an align call on some GPUs, unmarked when the call ends (errors included).
struct Busy<'a> {
    counts: &'a [AtomicUsize],
    on: Vec<usize>,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        for &g in &self.on {
            self.counts[g].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

mod claim;
pub mod modes;
mod passes;
mod paths;
mod slots;
mod stats;

use paths::path_budget_words;

impl GpuAligner {
    pub fn new(sc: &Scoring, config: &CudaConfig) -> Result<GpuAligner> {
        Self::on(Gpu::open_all()?, sc, config, AlignMode::Local)
    }

    /// An aligner of `mode` ([`modes`]).
    pub fn with_mode(sc: &Scoring, config: &CudaConfig, mode: AlignMode) -> Result<GpuAligner> {
        modes::supported(sc, mode)?;
        Self::on(Gpu::open_all()?, sc, config, mode)
    }

    pub fn on(gpus: Vec<Gpu>, sc: &Scoring, config: &CudaConfig, mode: AlignMode) -> Result<GpuAligner> {
        let kind = if mode.is_local() { kernels::AlignKind::Local } else { kernels::AlignKind::Modes };
        let (m, nc1) = kernel_matrix(sc)?;
        let mut devices = Vec::new();
        for gpu in gpus {
            let matrix = gpu.stream.clone_htod(&m).map_err(dev_err("uploading the scoring matrix"))?;
            gpu.stream.synchronize().map_err(dev_err("uploading the scoring matrix"))?;
            let mut streams = vec![gpu.stream.clone()];
            for _ in 1..config.align_streams.max(1) {
                streams.push(gpu.ctx.new_stream().map_err(dev_err("creating a stream"))?);
            }
            let staging = (0..streams.len()).map(|_| Mutex::new(Staging::default())).collect();
            let epoch =
                gpu.ctx.new_event(Some(dsys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(dev_err("creating an event"))?;
            epoch.record(&gpu.stream).map_err(dev_err("recording an event"))?;
            let mut slots = Vec::new();
            for _ in 0..config.align_depth.max(1) * streams.len() {
                let stream = gpu.ctx.new_stream().map_err(dev_err("creating a stream"))?;
                // Blocking: a worker waiting for its piece sleeps instead of spinning on a core the
                // others pack with. With timing (no DISABLE_TIMING flag) for the statistics.
                let mark = || gpu.ctx.new_event(Some(dsys::CUevent_flags::CU_EVENT_BLOCKING_SYNC));
                let marks = [mark(), mark(), mark(), mark()];
                let [Ok(a), Ok(b), Ok(c), Ok(e)] = marks else {
                    return Err(Error::Device("creating CUDA events failed".into()));
                };
                slots.push(Mutex::new(Slot {
                    stream,
                    host_in: None,
                    host_out: None,
                    dev_in: None,
                    dev_out: None,
                    dev_scratch: None,
                    marks: [a, b, c, e],
                }));
            }
            let shared_per_sm = gpu
                .ctx
                .attribute(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
                .map_err(dev_err("device attribute"))? as u32;
            let path_budget = path_budget_words(gpu.total_mem, streams.len());
            devices.push(Device {
                gpu,
                shared_per_sm,
                streams,
                matrix,
                kernels: Mutex::new(HashMap::new()),
                bins_kernels: Mutex::new(None),
                path_budget,
                path_kernels: Mutex::new(HashMap::new()),
                staging,
                slots,
                epoch,
                spans: Mutex::new(Vec::new()),
            });
        }
        if devices.is_empty() {
            return Err(Error::Device("no GPU to align on".into()));
        }
        Ok(GpuAligner {
            nc1: nc1 as i32,
            gap_oe: sc.gap_open + sc.gap_extend,
            gap_ext: sc.gap_extend,
            limit: overflow_limit(sc),
            mode,
            kind,
            scoring: sc.clone(),
            max_score: sc.matrix.max_score().max(0),
            pool: crate::threads::pool(
                "sw-gather",
                std::thread::available_parallelism().map_or(4, |n| n.get()).min(8),
            )?,
            config: config.clone(),
            counters: Counters::default(),
            busy: (0..devices.len()).map(|_| AtomicUsize::new(0)).collect(),
            devices,
        })
    }

    pub fn gpu_names(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.gpu.name.clone()).collect()
    }

    /// Compiles every kernel variant now (otherwise each is compiled on first use).
    pub fn warm_up(&self) -> Result<()> {
        for d in &self.devices {
            for pipelined in [false, true] {
                for &r in PACKED_ROWS.iter() {
                    self.kernel(d, true, r, pipelined)?;
                }
                self.kernel(d, false, WIDE_ROWS, pipelined)?;
            }
            self.bins_kernels(d)?;
        }
        Ok(())
    }

    /// Registers and local (spill) bytes per thread of each compiled variant, for tuning.
    pub fn kernel_report(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in &self.devices {
            if let Ok(k) = d.kernels.lock() {
                let mut keys: Vec<_> = k.keys().copied().collect();
                keys.sort();
                for key in keys {
                    let f = &k[&key];
                    let regs = f.num_regs().unwrap_or(-1);
                    let local =
                        f.get_attribute(dsys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).unwrap_or(-1);
                    out.push(format!(
                        "packed={} rows={} pipelined={}: {} regs, {} local bytes",
                        key.0, key.1, key.2, regs, local
                    ));
                }
            }
        }
        out
    }

    fn kernel(&self, d: &Device, packed: bool, rows: u32, pipelined: bool) -> Result<CudaFunction> {
        let mut k = d.kernels.lock().map_err(|_| Error::Internal("kernel cache poisoned".into()))?;
        if let Some(f) = k.get(&(packed, rows, pipelined)) {
            return Ok(f.clone());
        }
        let build = kernels::align(rows, packed, pipelined, self.kind);
        let module = d.gpu.load(&build.kernel.source(), &build.options)?;
        let f = d.gpu.function(&module, build.kernel.entry())?;
        k.insert((packed, rows, pipelined), f.clone());
        Ok(f)
    }

    /// The entry points of kernels/pair_bins.cu on `d`, compiled on first use.
    fn bins_kernels(&self, d: &Device) -> Result<Vec<CudaFunction>> {
        let mut k = d.bins_kernels.lock().map_err(|_| Error::Internal("kernel cache poisoned".into()))?;
        if let Some(f) = k.as_ref() {
            return Ok(f.clone());
        }
        let build = kernels::pair_bins();
        let module = d.gpu.load(&build.kernel.source(), &build.options)?;
        let f = kernels::PAIR_BINS_ENTRIES.iter().map(|e| d.gpu.function(&module, e)).collect::<Result<Vec<_>>>()?;
        *k = Some(f.clone());
        Ok(f)
    }

    /// Score and end of each pair, in input order, with [`Level::Coordinates`] the start
    /// too (the reverse launches run only then, and in the modes only with a free start).
    /// In the modes, [`Level::ScoreEnd`] gives the end cell even where a side may hold no
    /// residue (the engine, [`crate::engine::cuda::mode_engine`], asks for those starts).
    pub fn align(&self, pairs: PairSeqs<'_>, level: Level) -> Result<Vec<Alignment>> {
        let (cells, longest) = pairs.iter().fold((0u64, 0u64), |(sum, most), (q, t)| {
            let c = q.len() as u64 * t.len() as u64;
            (sum + c, most.max(c))
        });
        let busy = self.claim_gpus();
        let workers: usize = busy.on.iter().map(|&g| self.devices[g].streams.len()).sum();
        let per_worker = self.config.align_pieces_per_worker;
        let piece = piece_pairs(pairs.len(), cells, longest, workers, per_worker, self.config.align_piece_pairs);
        self.on_gpus(&busy.on, pairs, piece, |d, w, pieces, next, done| {
            self.align_worker(d, w, pairs, level, pieces, next, done)
        })
    }

    /// Shape rules for `pairs` pairs on `d`: groups wide enough that the piece alone would
    /// fill every SM with 8 warps (the protein variants' residency), where it can.
    fn shape_rules(&self, d: &Device, pairs: usize, max_rows: u32) -> ShapeRules {
        let want = d.gpu.sms as usize * 8 * 32;
        let threads = pairs.div_ceil(2).max(1);
        let fill = GROUPS.iter().copied().find(|&g| threads * g as usize >= want).unwrap_or(32);
        let min_group = fill.max(self.config.align_min_group.unwrap_or(1));
        ShapeRules { max_rows, min_group, multipass: self.config.align_multipass }
    }

    /// Multi-pass bins of fewer groups than this run pipelined ([`plan_launches`]): 16
    /// warps a multiprocessor, the residency of the pair kernel's lighter variants.
    fn pipeline_below(&self, d: &Device) -> usize {
        if self.config.align_pipeline {
            16 * d.gpu.sms as usize
        } else {
            0
        }
    }

    /// Host threads (streams of every GPU) a call spreads over.
    fn workers(&self) -> usize {
        self.devices.iter().map(|d| d.streams.len()).sum()
    }
}

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
use super::path_plan::{plan_paths, PathLaunch, PathPlan, PATH_BUDGET_WORDS};
use super::runtime::{dev_err, Gpu};
use crate::engine::traceback::{self, Traceback};
use crate::engine::Alignment;
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

/// Direction words per stream for the traceback kernel: a quarter of the GPU's memory over
/// its streams, within [`PATH_BUDGET_WORDS`] and 64 times that. One thread per rectangle
/// holds the rectangle's directions, so the launch's memory is what fills the GPU with
/// threads: 512 MiB held 1,600 of the H100's ~67,000 resident threads on 400 x 1,664
/// rectangles (6% of the warps active).
fn path_budget_words(total_mem: usize, streams: usize) -> u64 {
    let quarter = total_mem as u64 / 4 / streams.max(1) as u64 / 8;
    quarter.clamp(PATH_BUDGET_WORDS, 64 * PATH_BUDGET_WORDS)
}

/// `slot`'s buffer, replaced by one a quarter larger than `len` when it is shorter.
fn grown<'a, T: DeviceRepr>(
    slot: &'a mut Option<CudaSlice<T>>,
    len: usize,
    stream: &Arc<CudaStream>,
    what: &'static str,
) -> Result<&'a mut CudaSlice<T>> {
    if slot.as_ref().map_or(true, |b| b.len() < len) {
        *slot = None;
        *slot = Some(unsafe { stream.alloc::<T>(len + len / 4) }.map_err(dev_err(what))?);
    }
    slot.as_mut().ok_or_else(|| Error::Internal(format!("{what}: no buffer")))
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
}

/// One-to-one alignment on every visible GPU.
pub struct GpuAligner {
    devices: Vec<Device>,
    nc1: i32,
    gap_oe: i32,
    gap_ext: i32,
    limit: i32,
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

impl GpuAligner {
    pub fn new(sc: &Scoring, config: &CudaConfig) -> Result<GpuAligner> {
        Self::on(Gpu::open_all()?, sc, config)
    }

    pub fn on(gpus: Vec<Gpu>, sc: &Scoring, config: &CudaConfig) -> Result<GpuAligner> {
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
                for &r in &PACKED_ROWS {
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
        let build = kernels::align(rows, packed, pipelined);
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

    /// Score, end and start of each pair, in input order.
    pub fn align(&self, pairs: PairSeqs<'_>) -> Result<Vec<Alignment>> {
        let (cells, longest) = pairs.iter().fold((0u64, 0u64), |(sum, most), (q, t)| {
            let c = q.len() as u64 * t.len() as u64;
            (sum + c, most.max(c))
        });
        let busy = self.claim_gpus();
        let workers: usize = busy.on.iter().map(|&g| self.devices[g].streams.len()).sum();
        let per_worker = self.config.align_pieces_per_worker;
        let piece = piece_pairs(pairs.len(), cells, longest, workers, per_worker, self.config.align_piece_pairs);
        self.on_gpus(&busy.on, pairs, piece, |d, w, pieces, next, done| {
            self.align_worker(d, w, pairs, pieces, next, done)
        })
    }

    /// The GPUs an align call runs on: all of them when no other call is running (one call
    /// at a time gets every GPU), else the least busy one alone. Calls that overlap (the
    /// pipeline keeps several in flight) then each end on one GPU instead of waiting on all:
    /// short pairs by id ran slower on two H200s than on one when every call was split.
    fn claim_gpus(&self) -> Busy<'_> {
        let counts = &self.busy[..];
        let idle = counts.iter().all(|c| c.load(Ordering::Relaxed) == 0);
        let on: Vec<usize> = if idle || counts.len() == 1 {
            (0..counts.len()).collect()
        } else {
            let least = (0..counts.len()).min_by_key(|&g| counts[g].load(Ordering::Relaxed)).unwrap_or(0);
            vec![least]
        };
        for &g in &on {
            counts[g].fetch_add(1, Ordering::Relaxed);
        }
        Busy { counts, on }
    }

    /// Cuts `pairs` into pieces ([`Self::piece_pairs`]) and runs `worker` on one host thread
    /// per (GPU, stream); workers take pieces from the shared counter and push each piece's
    /// results with its index. Returns the results in input order.
    fn on_workers<T: Clone + Default + Send>(
        &self,
        pairs: PairSeqs<'_>,
        piece_pairs: usize,
        worker: impl Fn(&Device, usize, &[std::ops::Range<usize>], &AtomicUsize, &Done<T>) -> Result<()> + Sync,
    ) -> Result<Vec<T>> {
        let all: Vec<usize> = (0..self.devices.len()).collect();
        self.on_gpus(&all, pairs, piece_pairs, worker)
    }

    /// [`Self::on_workers`] on the streams of the GPUs `gpus` only.
    fn on_gpus<T: Clone + Default + Send>(
        &self,
        gpus: &[usize],
        pairs: PairSeqs<'_>,
        piece_pairs: usize,
        worker: impl Fn(&Device, usize, &[std::ops::Range<usize>], &AtomicUsize, &Done<T>) -> Result<()> + Sync,
    ) -> Result<Vec<T>> {
        let workers: Vec<(&Device, usize)> =
            gpus.iter().map(|&g| &self.devices[g]).flat_map(|d| (0..d.streams.len()).map(move |s| (d, s))).collect();
        let pieces = piece_ranges(pairs, piece_pairs, CHUNK_BYTES);
        let next = AtomicUsize::new(0);
        let done: Done<T> = Mutex::new(Vec::new());
        let used = workers.len().min(pieces.len());
        let results: Vec<Result<()>> = std::thread::scope(|sc| {
            let handles: Vec<_> = workers[..used]
                .iter()
                .map(|&(d, w)| {
                    let (next, done, pieces, worker) = (&next, &done, &pieces, &worker);
                    crate::threads::spawn_scoped(sc, "sw-gpu-align", move || worker(d, w, pieces, next, done))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("GPU worker thread panicked".into()))))
                .collect()
        });
        for r in results {
            r?;
        }
        let mut out = vec![T::default(); pairs.len()];
        for (k, res) in done.into_inner().map_err(|_| Error::Internal("result lock poisoned".into()))? {
            let r = &pieces[k];
            if res.len() != r.len() {
                return Err(Error::Internal(format!("GPU piece gave {} results for {} pairs", res.len(), r.len())));
            }
            out[r.clone()].clone_from_slice(&res);
        }
        Ok(out)
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

    /// Pairs per piece of the path kernels: one thread per rectangle needs many rectangles
    /// per launch to fill the GPU (a 32,768-job launch kept 6% of the warps busy on the
    /// H100), so a call goes over the streams in one piece each.
    fn path_piece_pairs(&self, n: usize) -> usize {
        n.div_ceil(self.workers().max(1)).clamp(MIN_PIECE_PAIRS, PATH_PIECE_PAIRS)
    }

    /// One worker of a call: takes pieces from the shared queue and keeps up to
    /// `align_depth` of them in flight on its device, each in a [`Slot`]: while the GPU runs
    /// one, the worker reads back the one before and prepares the next.
    fn align_worker(
        &self,
        d: &Device,
        w: usize,
        pairs: PairSeqs<'_>,
        pieces: &[std::ops::Range<usize>],
        next: &AtomicUsize,
        done: &Done<Alignment>,
    ) -> Result<()> {
        d.gpu.ctx.bind_to_thread().map_err(dev_err("binding the GPU"))?;
        let depth = self.config.align_depth.max(1);
        let mut pending: std::collections::VecDeque<Pending<'_>> = std::collections::VecDeque::new();
        let finish_one = |p: Pending<'_>| -> Result<()> {
            let k = p.piece;
            let res = self.harvest(d, p, pairs.slice(pieces[k].clone()))?;
            done.lock().map_err(|_| Error::Internal("result lock poisoned".into()))?.push((k, res));
            Ok(())
        };
        let mut turn = 0usize;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(r) = pieces.get(k) else { break };
            // A free slot, preferring this worker's own; while none is free, finishing our
            // own oldest piece frees one (never wait for a slot while holding one: two
            // calls' workers could wait on each other).
            let slot = loop {
                let n = d.slots.len();
                let first = (depth * w + turn % depth) % n;
                if let Some(g) = (0..n).find_map(|i| d.slots[(first + i) % n].try_lock().ok()) {
                    break g;
                }
                match pending.pop_front() {
                    Some(p) => finish_one(p)?,
                    None => break d.slots[first].lock().map_err(|_| Error::Internal("slot lock poisoned".into()))?,
                }
            };
            turn += 1;
            pending.push_back(self.enqueue(d, slot, k, pairs.slice(r.clone()))?);
            if pending.len() >= depth {
                if let Some(p) = pending.pop_front() {
                    finish_one(p)?;
                }
            }
        }
        while let Some(p) = pending.pop_front() {
            finish_one(p)?;
        }
        Ok(())
    }

    /// Prepares piece `piece` on the host into the slot and queues its work on the slot's
    /// stream: one upload, both passes, one read-back, with the slot's marks between.
    fn enqueue<'a>(
        &self,
        d: &Device,
        mut guard: std::sync::MutexGuard<'a, Slot>,
        piece: usize,
        pairs: PairSeqs<'_>,
    ) -> Result<Pending<'a>> {
        let t0 = Instant::now();
        let n = pairs.len();
        let max_rows = packed_max_rows(self.nc1 as usize, self.config.align_max_rows);
        let gpu_plan = if self.config.align_host_bins {
            None
        } else {
            GpuBins::plan(pairs, |nonempty| self.shape_rules(d, nonempty, max_rows))
        };
        let binning = match gpu_plan {
            Some(plan) => {
                let tables = launch_tables(plan.launches(), Vec::new());
                Binning::Gpu(plan, tables)
            }
            None => {
                let items: Vec<Item> = pairs
                    .iter()
                    .enumerate()
                    .filter(|(_, (q, t))| !q.is_empty() && !t.is_empty())
                    .map(|(i, (q, t))| Item { index: i as u32, qlen: q.len() as u32, tlen: t.len() as u32 })
                    .collect();
                let rules = self.shape_rules(d, items.len(), max_rows);
                let bins = self.pool.install(|| make_bins(&items, true, rules));
                Binning::Host(tables(&bins, self.pipeline_below(d))?)
            }
        };
        let residues = pairs.residues().len().max(1);
        let layout = in_layout(residues, n, &binning);
        let tables = match &binning {
            Binning::Host(t) | Binning::Gpu(_, t) => t,
        };

        // The slot's buffers grow (a quarter to spare) and are kept. Its last piece was
        // read back (its last mark waited for) before the slot was released.
        let slot = &mut *guard;
        let err = |what: &'static str| dev_err(what);
        let spare = |x: usize| x + x / 4;
        if slot.host_in.as_ref().map_or(true, |h| h.len() < layout.total) {
            slot.host_in = None;
            let cap = spare(layout.total);
            slot.host_in = Some(
                unsafe { d.gpu.ctx.alloc_pinned_with_flags::<u8>(cap, 0) }.map_err(err("allocating pinned memory"))?,
            );
        }
        if slot.dev_in.as_ref().map_or(true, |b| b.len() < layout.total) {
            slot.dev_in = None;
            let cap = spare(layout.total);
            slot.dev_in = Some(unsafe { slot.stream.alloc::<u8>(cap) }.map_err(err("allocating sequence memory"))?);
        }
        if slot.host_out.as_ref().map_or(true, |h| h.len() < 8 * n) {
            slot.host_out = None;
            slot.host_out = Some(
                unsafe { d.gpu.ctx.alloc_pinned_with_flags::<i32>(spare(8 * n), 0) }
                    .map_err(err("allocating pinned memory"))?,
            );
        }
        if slot.dev_out.as_ref().map_or(true, |b| b.len() < 8 * n) {
            slot.dev_out = None;
            slot.dev_out = Some(unsafe { slot.stream.alloc::<i32>(spare(8 * n)) }.map_err(err("allocating results"))?);
        }
        let scratch_len = tables.scratch_len.max(1);
        if slot.dev_scratch.as_ref().map_or(true, |b| b.len() < scratch_len) {
            slot.dev_scratch = None;
            let cap = spare(scratch_len);
            slot.dev_scratch = Some(unsafe { slot.stream.alloc::<u32>(cap) }.map_err(err("allocating scratch"))?);
        }
        let (Some(host_in), Some(dev_in), Some(dev_out), Some(host_out), Some(dev_scratch)) = (
            slot.host_in.as_mut(),
            slot.dev_in.as_mut(),
            slot.dev_out.as_mut(),
            slot.host_out.as_mut(),
            slot.dev_scratch.as_mut(),
        ) else {
            return Err(Error::Internal("align slot buffers missing".into()));
        };
        {
            let buf = host_in.as_mut_slice().map_err(err("pinned buffer"))?;
            self.pool.install(|| pack_seqs(pairs, &mut buf[..residues]));
            match &binning {
                Binning::Host(t) => {
                    write_descs(pairs, &mut buf[layout.descs..layout.groups]);
                    put_i32(&mut buf[layout.groups..], &t.groups);
                }
                Binning::Gpu(plan, _) => {
                    for (d, b) in buf[layout.bounds..].chunks_exact_mut(4).zip(pairs.offsets()) {
                        d.copy_from_slice(&(b as u32).to_ne_bytes());
                    }
                    put_i32(&mut buf[layout.region_of..], &plan.region_of);
                    put_i32(&mut buf[layout.region_first..], &plan.region_first);
                }
            }
            put_i32(&mut buf[layout.warps..], &tables.warps);
        }
        let t1 = Instant::now();

        let stream = &slot.stream;
        let mark = |k: usize| slot.marks[k].record(stream).map_err(dev_err("recording an event"));
        mark(0)?;
        {
            let src = &host_in.as_slice().map_err(err("pinned buffer"))?[..layout.upload];
            stream.memcpy_htod(src, &mut dev_in.slice_mut(..layout.upload)).map_err(err("uploading sequences"))?;
        }
        // Pairs in no bin (an empty side) read score 0.
        stream.memset_zeros(&mut dev_out.slice_mut(..8 * n)).map_err(err("clearing results"))?;
        if layout.hist < layout.total {
            stream.memset_zeros(&mut dev_in.slice_mut(layout.hist..layout.total)).map_err(err("clearing bins"))?;
        }
        mark(1)?;
        let base = dev_in.device_ptr(stream).0;
        if let Binning::Gpu(plan, _) = &binning {
            self.launch_bins(d, stream, plan, n, base, &layout)?;
        }
        let out = dev_out.device_ptr(stream).0;
        let dev = PieceDev {
            seqs: base,
            descs: base + layout.descs as u64,
            groups: base + layout.groups as u64,
            warps: base + layout.warps as u64,
            fwd: out,
            rev: out + 16 * n as u64,
            scratch: dev_scratch.device_ptr(stream).0,
        };
        self.launch_passes(d, stream, &tables, &dev)?;
        mark(2)?;
        let dst = &mut host_out.as_mut_slice().map_err(err("pinned buffer"))?[..8 * n];
        stream.memcpy_dtoh(&dev_out.slice(..8 * n), dst).map_err(err("reading results"))?;
        mark(3)?;
        let c = &self.counters;
        c.prepare_ns.fetch_add((t1 - t0).as_nanos() as u64, Ordering::Relaxed);
        c.upload_ns.fetch_add(t1.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(Pending { slot: guard, piece, npairs: n, layout })
    }

    /// Runs `f` on pieces of `pairs`, one piece at a time per worker ([`Self::on_workers`]),
    /// and returns its results in input order. `f` gets the piece and its range in `pairs`.
    fn by_pieces<T: Clone + Default + Send>(
        &self,
        pairs: PairSeqs<'_>,
        piece_pairs: usize,
        f: impl Fn(&Device, usize, PairSeqs<'_>, std::ops::Range<usize>) -> Result<Vec<T>> + Sync,
    ) -> Result<Vec<T>> {
        self.on_workers(pairs, piece_pairs, |d, stream, pieces, next, done| {
            d.gpu.ctx.bind_to_thread().map_err(dev_err("binding the GPU"))?;
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(r) = pieces.get(k) else { return Ok(()) };
                let res = f(d, stream, pairs.slice(r.clone()), r.clone())?;
                done.lock().map_err(|_| Error::Internal("result lock poisoned".into()))?.push((k, res));
            }
        })
    }

    /// Counters of each alignment's traceback path by the path rule, in input order:
    /// `Some([pairs, nident, gap opens])`, or `None` for a rectangle the GPU leaves to the
    /// caller (as for [`Self::paths`]). Score 0 gives zeros. The traceback kernel counts
    /// the path as it walks it (`kernels/path_trace.cu`, PATH_COUNTS): directions cost a
    /// memory store per cell, and a forward pass carrying counters per state had twice the
    /// instructions per cell (measured 3.4x slower on the H100).
    pub fn path_counts(&self, pairs: PairSeqs<'_>, alignments: &[Alignment]) -> Result<Vec<Option<[u32; 3]>>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("path statistics: alignments and pairs differ in number".into()));
        }
        self.by_pieces(pairs, self.path_piece_pairs(pairs.len()), |d, s, piece, r| {
            self.traced_counts_chunk(d, s, piece, &alignments[r])
        })
    }

    /// [`Self::path_counts`] of one piece by the traceback kernel in its counting variant.
    fn traced_counts_chunk(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
    ) -> Result<Vec<Option<[u32; 3]>>> {
        let mut plan = plan_paths(pairs, alignments, d.path_budget);
        let mut out: Vec<Option<[u32; 3]>> = vec![Some([0; 3]); pairs.len()];
        for &i in &plan.elsewhere {
            out[i as usize] = None;
        }
        if plan.index.is_empty() {
            return Ok(out);
        }
        let t0 = Instant::now();
        let words = 2 * plan.index.len();
        let (counts, meta) = self.trace_rectangles(d, si, pairs, &mut plan, kernels::path_counts(), words)?;
        for (k, &i) in plan.index.iter().enumerate() {
            let i = i as usize;
            let (h, ended, n) = (meta[4 * k + 1], meta[4 * k + 2], meta[4 * k + 3]);
            if h != alignments[i].score || ended != 1 || n < 0 {
                return Err(Error::Internal(format!(
                    "GPU path statistics of pair {} ({:?}): the rectangle scores {h} end to end, walk ended: {ended}",
                    i + 1,
                    alignments[i]
                )));
            }
            out[i] = Some([n as u32, counts[2 * k], counts[2 * k + 1]]);
        }
        self.counters.stats_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(out)
    }

    /// Runs the traceback kernel `build` over `plan`'s rectangles on stream `si` (their
    /// residues uploaded first) and reads back `out_words` words of its output and its meta
    /// (4 per job).
    fn trace_rectangles(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        plan: &mut PathPlan,
        build: kernels::Build,
        out_words: usize,
    ) -> Result<(Vec<u32>, Vec<i32>)> {
        let stream = &d.streams[si];
        let mut staging = d.staging[si].lock().map_err(|_| Error::Internal("staging buffer poisoned".into()))?;
        let staging = &mut *staging;
        let t0 = Instant::now();
        // Taken out while the residues' buffer is borrowed; put back below.
        let mut bufs = std::mem::take(&mut staging.paths);
        let seqs = self.upload_rectangles(d, stream, staging, pairs, &mut plan.jobs)?;
        let err = |what: &'static str| dev_err(what);
        let jobs = stream.clone_htod(&plan.jobs).map_err(err("uploading path jobs"))?;
        let region = stream.clone_htod(&plan.region).map_err(err("uploading path jobs"))?;
        let out_at = stream.clone_htod(&plan.out_at).map_err(err("uploading path jobs"))?;
        self.counters.trace_upload_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let most = |f: fn(&PathLaunch) -> u64| plan.launches.iter().map(f).max().unwrap_or(0).max(1) as usize;
        let t0 = Instant::now();
        let jobs_n = plan.index.len();
        let out_words = out_words.max(1);
        let read = (|| -> Result<(Vec<u32>, Vec<i32>)> {
            grown(&mut bufs.dirs, most(|l| l.dirs_words), stream, "allocating path directions")?;
            grown(&mut bufs.scratch, 2 * most(|l| l.scratch_cells), stream, "allocating path scratch")?;
            grown(&mut bufs.ops, out_words, stream, "allocating paths")?;
            grown(&mut bufs.meta, 4 * jobs_n, stream, "allocating paths")?;
            let (Some(dirs), Some(scratch), Some(ops), Some(meta)) =
                (&bufs.dirs, &bufs.scratch, &mut bufs.ops, &mut bufs.meta)
            else {
                return Err(Error::Internal("path buffers missing".into()));
            };
            let f = self.path_kernel(d, build)?;
            for l in &plan.launches {
                let (first, count) = (l.first as i32, l.count as i32);
                let cfg = LaunchConfig {
                    grid_dim: ((l.count as u32).div_ceil(128), 1, 1),
                    block_dim: (128, 1, 1),
                    shared_mem_bytes: (self.nc1 * self.nc1) as u32,
                };
                let mut lb = stream.launch_builder(&f);
                lb.arg(&jobs).arg(&first).arg(&count).arg(&region).arg(seqs).arg(&d.matrix).arg(&self.nc1);
                lb.arg(&self.gap_oe).arg(&self.gap_ext).arg(dirs).arg(scratch).arg(&out_at).arg(&mut *ops);
                lb.arg(&mut *meta);
                unsafe { lb.launch(cfg) }.map_err(err("launching path_trace"))?;
            }
            let words = stream.clone_dtoh(&ops.slice(..out_words)).map_err(err("reading paths"))?;
            let meta = stream.clone_dtoh(&meta.slice(..4 * jobs_n)).map_err(err("reading paths"))?;
            Ok((words, meta))
        })();
        staging.paths = bufs;
        let read = read?;
        self.counters.trace_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(read)
    }

    /// A path kernel of `d` (`kernels::path_stats` or `kernels::path_trace`), compiled or
    /// loaded from the disk cache on first use.
    fn path_kernel(&self, d: &Device, build: kernels::Build) -> Result<CudaFunction> {
        let mut slot = d.path_kernels.lock().map_err(|_| Error::Internal("kernel cache poisoned".into()))?;
        if let Some(f) = slot.get(&build.name) {
            return Ok(f.clone());
        }
        let module = d.gpu.load(&build.kernel.source(), &build.options)?;
        let f = d.gpu.function(&module, build.kernel.entry())?;
        slot.insert(build.name.clone(), f.clone());
        Ok(f)
    }

    /// The traceback path of each alignment by the path rule (`kernels/path_trace.cu`,
    /// specified by `traceback::trace`), in input order; `None` for a rectangle the GPU
    /// leaves to the caller (its warp's directions would exceed the per-stream budget).
    /// Score 0 gives an empty path.
    pub fn paths(&self, pairs: PairSeqs<'_>, alignments: &[Alignment], sc: &Scoring) -> Result<Vec<Option<Traceback>>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("traceback: alignments and pairs differ in number".into()));
        }
        self.by_pieces(pairs, self.path_piece_pairs(pairs.len()), |d, s, piece, r| {
            self.paths_chunk(d, s, piece, &alignments[r], sc)
        })
    }

    fn paths_chunk(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        sc: &Scoring,
    ) -> Result<Vec<Option<Traceback>>> {
        use rayon::prelude::*;
        let mut plan = plan_paths(pairs, alignments, d.path_budget);
        let mut out: Vec<Option<Traceback>> = vec![Some(Traceback::default()); pairs.len()];
        for &i in &plan.elsewhere {
            out[i as usize] = None;
        }
        if plan.index.is_empty() {
            return Ok(out);
        }
        let out_words = plan.out_words;
        let (words, meta) = self.trace_rectangles(d, si, pairs, &mut plan, kernels::path_trace(), out_words)?;
        let t0 = Instant::now();
        let traced: Vec<(usize, Result<Traceback>)> = (0..plan.index.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|k| {
                let i = plan.index[k] as usize;
                let (n, h, ended) = (meta[4 * k], meta[4 * k + 1], meta[4 * k + 2]);
                let a = &alignments[i];
                if h != a.score || ended != 1 || n < 0 {
                    return (
                        i,
                        Err(Error::Internal(format!(
                            "GPU traceback of pair {} ({a:?}): the rectangle scores {h} end to end, walk ended: {ended}",
                            i + 1
                        ))),
                    );
                }
                let at = plan.out_at[k] as usize;
                let op = |x: usize| (words[at + x / 16] >> (2 * (x % 16)) & 3) as u8;
                let (q, t) = pairs.pair(i);
                (i, traceback::from_ops(q, t, sc, a, n as usize, op))
            })
            .collect();
        for (i, tb) in traced {
            out[i] = Some(tb?);
        }
        self.counters.decode_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(out)
    }

    /// Waits for a queued piece, recomputes at 32 bits the pairs whose 16-bit lanes may have
    /// wrapped (on the slot, whose inputs are still on the GPU), and returns the piece's
    /// alignments in order.
    fn harvest(&self, d: &Device, p: Pending<'_>, pairs: PairSeqs<'_>) -> Result<Vec<Alignment>> {
        let t0 = Instant::now();
        let Pending { mut slot, npairs: n, layout, .. } = p;
        if pairs.len() != n {
            return Err(Error::Internal("align piece changed size in flight".into()));
        }
        slot.marks[3].synchronize().map_err(dev_err("waiting for the GPU"))?;
        let slot = &mut *slot;
        let at = |k: usize| d.epoch.elapsed_ms(&slot.marks[k]).map_err(dev_err("reading an event"));
        let span = [at(0)?, at(1)?, at(2)?, at(3)?];
        d.spans.lock().map_err(|_| Error::Internal("span lock poisoned".into()))?.push(span);
        let raw = match slot.host_out.as_ref() {
            Some(h) => &h.as_slice().map_err(dev_err("pinned buffer"))?[..8 * n],
            None => return Err(Error::Internal("align results missing".into())),
        };
        let mut ends = cells(&raw[..4 * n]);
        let mut starts = cells(&raw[4 * n..]);
        // Pairs in no bin read zeros, never flagged.
        let wide: Vec<Item> = (0..n)
            .filter(|&i| ends[i].overflow)
            .map(|i| {
                let (q, t) = pairs.pair(i);
                Item { index: i as u32, qlen: q.len() as u32, tlen: t.len() as u32 }
            })
            .collect();
        if !wide.is_empty() {
            let Some(dev_in) = slot.dev_in.as_ref() else {
                return Err(Error::Internal("align slot buffers missing".into()));
            };
            let base = dev_in.device_ptr(&slot.stream).0;
            let bins = make_bins(&wide, false, self.shape_rules(d, wide.len(), WIDE_ROWS));
            let (e, st) = self.run_wide(d, &slot.stream, base, base + layout.descs as u64, &bins, n)?;
            for it in &wide {
                let i = it.index as usize;
                ends[i] = e[i];
                starts[i] = st[i];
            }
        }
        let c = &self.counters;
        c.pieces.fetch_add(1, Ordering::Relaxed);
        c.pairs.fetch_add(n as u64, Ordering::Relaxed);
        c.cells.fetch_add(pairs.cells(), Ordering::Relaxed);
        c.wide_pairs.fetch_add(wide.len() as u64, Ordering::Relaxed);
        c.gpu_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        // On all cores: ~30 ns a pair, as much as the rest of a short pair's host work.
        use rayon::prelude::*;
        self.pool.install(|| {
            (0..n)
                .into_par_iter()
                .with_min_len(4096)
                .map(|i| finish(ends[i], (ends[i].score > 0).then_some(starts[i])))
                .collect()
        })
    }

    /// `staging`'s device buffer and its pinned twin, of at least `total` bytes.
    fn grow_staging(&self, d: &Device, stream: &Arc<CudaStream>, staging: &mut Staging, total: usize) -> Result<()> {
        if staging.dev.as_ref().map_or(true, |b| b.len() < total) {
            staging.dev = None;
            staging.host = None;
            let cap = total + total / 4;
            staging.dev = Some(unsafe { stream.alloc::<u8>(cap) }.map_err(dev_err("allocating sequence memory"))?);
        }
        if staging.host.as_ref().map_or(true, |h| h.len() < total) {
            let cap = staging.dev.as_ref().map_or(total, |b| b.len());
            // Plain page-locked memory (not write-combined: the copy loop reads nothing back).
            staging.host = Some(
                unsafe { d.gpu.ctx.alloc_pinned_with_flags::<u8>(cap, 0) }
                    .map_err(dev_err("allocating pinned memory"))?,
            );
        }
        Ok(())
    }

    /// The residues of the path kernels' rectangles only (`jobs`: query offset, target
    /// offset, m, n into the piece's residues, rewritten to offsets into the upload): a
    /// rectangle is often a small part of its pair, and whole pairs went up once already.
    fn upload_rectangles<'s>(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        staging: &'s mut Staging,
        pairs: PairSeqs<'_>,
        jobs: &mut [u32],
    ) -> Result<&'s CudaSlice<u8>> {
        use rayon::prelude::*;
        let mut at = Vec::with_capacity(jobs.len() / 4);
        let mut total = 0usize;
        for job in jobs.chunks_exact(4) {
            at.push(total);
            total += job[2] as usize + job[3] as usize;
        }
        let total = total.max(1);
        self.grow_staging(d, stream, staging, total)?;
        let (Some(dev), Some(host)) = (staging.dev.as_mut(), staging.host.as_mut()) else {
            return Err(Error::Internal("staging buffers missing".into()));
        };
        let dst = host.as_mut_slice().map_err(dev_err("pinned buffer"))?;
        let src = pairs.residues();
        // Each job's bytes go to their own range: split the buffer at the jobs' starts.
        let mut parts: Vec<&mut [u8]> = Vec::with_capacity(at.len());
        let mut rest = &mut dst[..total];
        for job in jobs.chunks_exact(4) {
            let len = job[2] as usize + job[3] as usize;
            let (head, tail) = rest.split_at_mut(len);
            parts.push(head);
            rest = tail;
        }
        self.pool.install(|| {
            parts.par_iter_mut().zip(jobs.par_chunks_exact(4)).with_min_len(1024).for_each(|(part, job)| {
                let (q, t, m, n) = (job[0] as usize, job[1] as usize, job[2] as usize, job[3] as usize);
                part[..m].copy_from_slice(&src[q..q + m]);
                part[m..].copy_from_slice(&src[t..t + n]);
            })
        });
        for (job, &a) in jobs.chunks_exact_mut(4).zip(&at) {
            job[1] = (a + job[2] as usize) as u32;
            job[0] = a as u32;
        }
        let src = &host.as_slice().map_err(dev_err("pinned buffer"))?[..total];
        stream.memcpy_htod(src, &mut dev.slice_mut(..total)).map_err(dev_err("uploading sequences"))?;
        staging.dev.as_ref().ok_or_else(|| Error::Internal("sequence buffer missing".into()))
    }

    /// What the aligner has done so far, as (name, value) lines for `--stats`.
    pub fn statistics(&self) -> Vec<(String, String)> {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let secs = |a: &AtomicU64| format!("{:.3} s", get(a) as f64 / 1e9);
        let mut out: Vec<(String, String)> = vec![
            ("align pieces".into(), get(&c.pieces).to_string()),
            ("align pairs".into(), get(&c.pairs).to_string()),
            ("align cells".into(), format!("{:.4e}", get(&c.cells) as f64)),
            ("align pairs recomputed at 32 bits".into(), get(&c.wide_pairs).to_string()),
            ("align host preparation (summed over streams)".into(), secs(&c.prepare_ns)),
            ("align upload (summed over streams)".into(), secs(&c.upload_ns)),
            ("align GPU passes and read-back (summed over streams)".into(), secs(&c.gpu_ns)),
            ("path statistics on the GPU (summed over streams)".into(), secs(&c.stats_ns)),
            ("traceback: residues and jobs uploaded (summed over streams)".into(), secs(&c.trace_upload_ns)),
            ("traceback kernel on the GPU and read back (summed over streams)".into(), secs(&c.trace_ns)),
            ("traceback paths decoded on the host (summed over streams)".into(), secs(&c.decode_ns)),
        ];
        for (k, d) in self.devices.iter().enumerate() {
            let Ok(spans) = d.spans.lock() else { continue };
            if spans.is_empty() {
                continue;
            }
            let (busy, first, last) = united(spans.iter().map(|s| (s[0], s[3])));
            let sum = |a: usize, b: usize| spans.iter().map(|s| (s[b] - s[a]) as f64).sum::<f64>() / 1e3;
            out.push((
                format!("align GPU {} timeline", k),
                format!(
                    "{:.3} s from first upload to last read-back, pieces in flight {:.3} s of it; summed over pieces: upload {:.3} s, passes {:.3} s, read-back {:.3} s",
                    (last - first) / 1e3,
                    busy / 1e3,
                    sum(0, 1),
                    sum(1, 2),
                    sum(2, 3)
                ),
            ));
        }
        out
    }

    /// Both passes over `bins` at 32 bits, synchronously (the rare pairs whose 16-bit
    /// lanes may have wrapped): the piece's residues and pair table are already on the GPU
    /// at `seqs` and `descs`. Returns (ends, starts) by pair index.
    fn run_wide(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        seqs: u64,
        descs: u64,
        bins: &[Bin],
        npairs: usize,
    ) -> Result<(Vec<Cell>, Vec<Cell>)> {
        let t = tables(bins, self.pipeline_below(d))?;
        let err = |what: &'static str| dev_err(what);
        let groups = stream.clone_htod(&t.groups).map_err(err("uploading bins"))?;
        let warps = stream.clone_htod(&t.warps).map_err(err("uploading bins"))?;
        let out = stream.alloc_zeros::<i32>(npairs * 8).map_err(err("allocating results"))?;
        let scratch = stream.alloc_zeros::<u32>(t.scratch_len.max(1)).map_err(err("allocating scratch"))?;
        let o = out.device_ptr(stream).0;
        let dev = PieceDev {
            seqs,
            descs,
            groups: groups.device_ptr(stream).0,
            warps: warps.device_ptr(stream).0,
            fwd: o,
            rev: o + 16 * npairs as u64,
            scratch: scratch.device_ptr(stream).0,
        };
        self.launch_passes(d, stream, &t, &dev)?;
        let raw = stream.clone_dtoh(&out).map_err(err("reading results"))?;
        drop((groups, warps, scratch));
        Ok((cells(&raw[..4 * npairs]), cells(&raw[4 * npairs..])))
    }

    /// Queues the three kernels of kernels/pair_bins.cu that write a GPU-binned piece's pair
    /// and group tables (bucket counters already zeroed).
    fn launch_bins(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        plan: &GpuBins,
        n: usize,
        base: u64,
        layout: &InLayout,
    ) -> Result<()> {
        let f = self.bins_kernels(d)?;
        let args = BinArgs {
            bounds: base + layout.bounds as u64,
            n: n as i32,
            group_entries: plan.group_entries as i32,
            region_of: base + layout.region_of as u64,
            max_qlen: plan.max_qlen() as i32,
            shift: plan.shift as i32,
            descs: base + layout.descs as u64,
            hist: base + layout.hist as u64,
            region_first: base + layout.region_first as u64,
            groups: base + layout.groups as u64,
        };
        let over = |count: usize| LaunchConfig {
            grid_dim: (count.div_ceil(256).max(1) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let scan = LaunchConfig {
            grid_dim: (plan.regions.len().max(1) as u32, 1, 1),
            block_dim: (BUCKETS as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // The group table's -1s are written by bins_count's threads: cover them too.
        for (k, cfg) in [over(n.max(plan.group_entries + 1)), scan, over(n)].into_iter().enumerate() {
            let mut lb = stream.launch_builder(&f[k]);
            lb.arg(&args);
            unsafe { lb.launch(cfg) }.map_err(dev_err("launching pair_bins"))?;
        }
        Ok(())
    }

    /// Queues the forward pass over every launch, then the reverse pass over the same
    /// launches reading the forward results on the device.
    fn launch_passes(&self, d: &Device, stream: &Arc<CudaStream>, t: &Tables, dev: &PieceDev) -> Result<()> {
        for reverse in [false, true] {
            for (k, l) in t.launches.iter().enumerate() {
                let state = l.state_words(halves(l.packed));
                if state > 0 {
                    // The pipelined kernel's tickets, progress and counters start at zero.
                    let at = dev.scratch + 4 * (t.scratch_off[k] + l.slots * 2 * l.stride) as u64;
                    unsafe { cudarc::driver::result::memset_d8_async(at, 0, 4 * state, stream.cu_stream()) }
                        .map_err(dev_err("clearing the pipelined state"))?;
                }
                self.launch(d, stream, l, dev, t.warp_off[k], t.scratch_off[k], reverse)?;
            }
        }
        Ok(())
    }

    /// One launch of `align_pairs`: launch `l`, whose warps start at `warp_off` in the warp
    /// table and whose scratch at `scratch_off` words.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        l: &Launch,
        dev: &PieceDev,
        warp_off: usize,
        scratch_off: usize,
        reverse: bool,
    ) -> Result<()> {
        let f = self.kernel(d, l.packed, l.rows, l.pipelined)?;
        let halves = if l.packed { 2 } else { 1 };
        let fixed = matrix_shared_bytes(self.nc1 as usize);
        let per_thread = halves * self.nc1 as u32 * l.rows;
        let regs = f.num_regs().map_err(dev_err("reading kernel registers"))? as u32;
        let Some((block, shared)) = choose_block(fixed, per_thread, regs, d.shared_per_sm, d.gpu.max_shared_optin)
        else {
            return Err(Error::Device(format!(
                "align kernel needs {} bytes of shared memory",
                fixed + 32 * per_thread
            )));
        };
        if shared > 48 * 1024 {
            f.set_attribute(dsys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared as i32)
                .map_err(dev_err("raising the shared-memory limit"))?;
        }
        // Pipelined: persistent warps taking items by ticket, at most 64 a multiprocessor
        // (more would only wait their turn to be resident).
        let warps = if l.pipelined {
            l.pass_start().last().map_or(0, |&n| n as usize).min(64 * d.gpu.sms as usize)
        } else {
            l.warps.len()
        };
        let threads = warps.max(1) * 32;
        let cfg = LaunchConfig {
            grid_dim: (threads.div_ceil(block as usize) as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: shared,
        };
        let args = AlignArgs {
            pairs: dev.descs,
            groups: dev.groups,
            warps: dev.warps + 16 * warp_off as u64,
            nwarps: l.warps.len() as i32,
            seqs: dev.seqs,
            matrix: d.matrix.device_ptr(stream).0,
            nc1: self.nc1,
            gap_oe: self.gap_oe,
            gap_ext: self.gap_ext,
            // Forward mode never reads `fwd`.
            fwd: dev.fwd,
            overflow_limit: if l.packed { self.limit } else { i32::MAX },
            out: if reverse { dev.rev } else { dev.fwd },
            scratch: dev.scratch + 4 * scratch_off as u64,
            scratch_stride: l.stride as i32,
            scratch_slots: l.slots as i32,
        };
        let reverse = reverse as i32;
        let mut lb = stream.launch_builder(&f);
        lb.arg(&args).arg(&reverse);
        unsafe { lb.launch(cfg) }.map_err(dev_err("launching align_pairs"))?;
        Ok(())
    }
}

/// The group and warp tables of `bins` (all of one lane width) for one upload each.
fn tables(bins: &[Bin], pipeline_below: usize) -> Result<Tables> {
    if bins.windows(2).any(|w| w[0].packed != w[1].packed) {
        // Group indices count in units of one shape's halves: one lane width per table.
        return Err(Error::Internal("align bins of both lane widths in one table".into()));
    }
    let mut groups = Vec::with_capacity(bins.iter().map(|b| b.groups.len()).sum::<usize>() + 1);
    let mut offsets = Vec::with_capacity(bins.len());
    for b in bins {
        offsets.push(groups.len() / halves(b.packed));
        groups.extend_from_slice(&b.groups);
    }
    groups.push(-1);
    Ok(launch_tables(plan_launches(bins, &offsets, pipeline_below), groups))
}

/// The warp table of `launches` (one upload for all) with each launch's first warp and
/// scratch offset; `groups` is the group table (empty where the GPU writes it).
/// A pipelined launch's entries are followed by its `pass_start` table (in whole int4s),
/// and its scratch rows by the kernel's state ([`Launch::state_words`]); offsets stay
/// multiples of four words (the state holds int4s).
fn launch_tables(launches: Vec<Launch>, groups: Vec<i32>) -> Tables {
    let mut warps: Vec<i32> = Vec::new();
    let (mut warp_off, mut scratch_off) = (Vec::new(), Vec::new());
    let mut scratch_len = 0;
    for l in &launches {
        warp_off.push(warps.len() / 4);
        warps.extend(l.warps.iter().flatten());
        if l.pipelined {
            let starts = l.pass_start();
            let padded = starts.len().next_multiple_of(4);
            warps.extend(starts.iter().copied().chain(std::iter::repeat(0).take(padded - starts.len())));
        }
        scratch_off.push(scratch_len);
        scratch_len += (l.slots * 2 * l.stride + l.state_words(halves(l.packed))).next_multiple_of(4);
    }
    warps.extend([32, 0, 0, 0]);
    Tables { groups, warps, launches, warp_off, scratch_off, scratch_len }
}

/// Where a piece of `n` pairs and `residues` residue bytes lies in its slot ([`InLayout`]).
fn in_layout(residues: usize, n: usize, binning: &Binning) -> InLayout {
    let align16 = |x: usize| (x + 15) & !15;
    let descs_len = 16 * n;
    match binning {
        Binning::Host(t) => {
            let descs = align16(residues);
            let groups = descs + descs_len;
            let warps = align16(groups + 4 * t.groups.len());
            let total = warps + 4 * t.warps.len();
            InLayout { descs, groups, warps, upload: total, total, hist: total, ..InLayout::default() }
        }
        Binning::Gpu(plan, t) => {
            let bounds = align16(residues);
            let region_of = align16(bounds + 4 * (2 * n + 1));
            let region_first = align16(region_of + 4 * plan.region_of.len());
            let warps = align16(region_first + 4 * plan.region_first.len());
            let upload = warps + 4 * t.warps.len();
            let descs = align16(upload);
            let groups = descs + descs_len;
            let hist = align16(groups + 4 * (plan.group_entries + 1));
            let total = hist + 4 * BUCKETS * plan.regions.len();
            InLayout { descs, groups, warps, bounds, region_of, region_first, hist, upload, total }
        }
    }
}

/// The kernel's pair table, (query offset, target offset, qlen, tlen) per pair as
/// native-endian u32, into `dst` (16 bytes per pair).
fn write_descs(pairs: PairSeqs<'_>, dst: &mut [u8]) {
    let mut at = 0usize;
    for ((q, t), d) in pairs.iter().zip(dst.chunks_exact_mut(16)) {
        let v = [at as u32, (at + q.len()) as u32, q.len() as u32, t.len() as u32];
        at += q.len() + t.len();
        for (k, x) in v.iter().enumerate() {
            d[4 * k..4 * k + 4].copy_from_slice(&x.to_ne_bytes());
        }
    }
}

/// Total length of the union of `spans` (start, end), and the first start and last end.
fn united(spans: impl Iterator<Item = (f32, f32)>) -> (f64, f64, f64) {
    let mut v: Vec<(f64, f64)> = spans.map(|(a, b)| (a as f64, b as f64)).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut busy, mut cur) = (0.0, None::<(f64, f64)>);
    for (a, b) in v.iter().copied() {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                busy += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        busy += e - s;
    }
    let first = v.first().map_or(0.0, |x| x.0);
    let last = v.iter().map(|x| x.1).fold(0.0, f64::max);
    (busy, first, last)
}

fn put_i32(dst: &mut [u8], src: &[i32]) {
    for (d, x) in dst.chunks_exact_mut(4).zip(src) {
        d.copy_from_slice(&x.to_ne_bytes());
    }
}

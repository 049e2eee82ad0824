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
use super::config::{CudaConfig, Upload};
use super::kernels;
use super::runtime::{dev_err, Gpu};
use crate::engine::Alignment;
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use crate::seq::PairSeqs;
use cudarc::driver::{
    sys as dsys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg,
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
    kernels: Mutex<HashMap<(bool, u32), CudaFunction>>,
    stats_kernel: Mutex<Option<CudaFunction>>,
    /// Per stream: pinned staging and device buffers for the sequences, reused between
    /// pieces and calls (no page faults, DMA straight from pinned memory).
    staging: Vec<Mutex<Staging>>,
}

#[derive(Default)]
struct Staging {
    host: Option<cudarc::driver::PinnedHostSlice<u8>>,
    dev: Option<CudaSlice<u8>>,
    descs: Vec<u32>,
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
}

unsafe impl DeviceRepr for AlignArgs {}

/// Smallest piece a call is cut into (fewer, fuller launches for small calls).
const MIN_PIECE_PAIRS: usize = 4_096;

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
            let shared_per_sm = gpu
                .ctx
                .attribute(dsys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)
                .map_err(dev_err("device attribute"))? as u32;
            devices.push(Device {
                gpu,
                shared_per_sm,
                streams,
                matrix,
                kernels: Mutex::new(HashMap::new()),
                stats_kernel: Mutex::new(None),
                staging,
            });
        }
        if devices.is_empty() {
            return Err(Error::Device("no GPU to align on".into()));
        }
        Ok(GpuAligner {
            devices,
            nc1: nc1 as i32,
            gap_oe: sc.gap_open + sc.gap_extend,
            gap_ext: sc.gap_extend,
            limit: overflow_limit(sc),
            pool: rayon::ThreadPoolBuilder::new()
                .num_threads(std::thread::available_parallelism().map_or(4, |n| n.get()).min(8))
                .build()
                .map_err(|e| Error::Internal(format!("thread pool: {}", e)))?,
            config: config.clone(),
            counters: Counters::default(),
        })
    }

    pub fn gpu_names(&self) -> Vec<String> {
        self.devices.iter().map(|d| d.gpu.name.clone()).collect()
    }

    /// Compiles every kernel variant now (otherwise each is compiled on first use).
    pub fn warm_up(&self) -> Result<()> {
        for d in &self.devices {
            for &r in &PACKED_ROWS {
                self.kernel(d, true, r)?;
            }
            self.kernel(d, false, WIDE_ROWS)?;
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
                    out.push(format!("packed={} rows={}: {} regs, {} local bytes", key.0, key.1, regs, local));
                }
            }
        }
        out
    }

    fn kernel(&self, d: &Device, packed: bool, rows: u32) -> Result<CudaFunction> {
        let mut k = d.kernels.lock().map_err(|_| Error::Internal("kernel cache poisoned".into()))?;
        if let Some(f) = k.get(&(packed, rows)) {
            return Ok(f.clone());
        }
        let build = kernels::align(rows, packed);
        let module = d.gpu.load(&build.kernel.source(), &build.options)?;
        let f = d.gpu.function(&module, build.kernel.entry())?;
        k.insert((packed, rows), f.clone());
        Ok(f)
    }

    /// Score, end and start of each pair, in input order.
    pub fn align(&self, pairs: PairSeqs<'_>) -> Result<Vec<Alignment>> {
        self.by_pieces(pairs, |d, s, piece, _| self.align_chunk(d, s, piece))
    }

    /// Runs `f` on pieces of `pairs` and returns its results in input order: the pieces are
    /// cut by the configured size and taken from a shared queue by every (GPU, stream)
    /// worker, one host thread each. `f` gets the piece and its range in `pairs`.
    fn by_pieces<T: Clone + Default + Send>(
        &self,
        pairs: PairSeqs<'_>,
        f: impl Fn(&Device, usize, PairSeqs<'_>, std::ops::Range<usize>) -> Result<Vec<T>> + Sync,
    ) -> Result<Vec<T>> {
        let workers: Vec<(&Device, usize)> =
            self.devices.iter().flat_map(|d| (0..d.streams.len()).map(move |s| (d, s))).collect();
        // At least two pieces per worker where the call is big enough, so the workers drift
        // out of phase: one prepares its piece on the host while the others' kernels run.
        let per_piece = pairs
            .len()
            .div_ceil(2 * workers.len())
            .max(MIN_PIECE_PAIRS)
            .min(self.config.align_piece_pairs.max(1))
            .max(1);
        let pieces = piece_ranges(pairs, per_piece, CHUNK_BYTES);
        let mut out = vec![T::default(); pairs.len()];
        let place = |out: &mut [T], r: &std::ops::Range<usize>, res: Vec<T>| -> Result<()> {
            if res.len() != r.len() {
                return Err(Error::Internal(format!("GPU piece gave {} results for {} pairs", res.len(), r.len())));
            }
            out[r.clone()].clone_from_slice(&res);
            Ok(())
        };
        if pieces.len() <= 1 {
            for r in pieces {
                let (d, s) = workers[0];
                let res = f(d, s, pairs.slice(r.clone()), r.clone())?;
                place(&mut out, &r, res)?;
            }
            return Ok(out);
        }
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<(usize, Vec<T>)>> = Mutex::new(Vec::new());
        let used = workers.len().min(pieces.len());
        let results: Vec<Result<()>> = std::thread::scope(|sc| {
            let handles: Vec<_> = workers[..used]
                .iter()
                .map(|&(d, stream)| {
                    let (next, done, pieces, f) = (&next, &done, &pieces, &f);
                    sc.spawn(move || -> Result<()> {
                        d.gpu.ctx.bind_to_thread().map_err(dev_err("binding the GPU"))?;
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(r) = pieces.get(k) else { return Ok(()) };
                            let res = f(d, stream, pairs.slice(r.clone()), r.clone())?;
                            done.lock().map_err(|_| Error::Internal("result lock poisoned".into()))?.push((k, res));
                        }
                    })
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
        let done = done.into_inner().map_err(|_| Error::Internal("result lock poisoned".into()))?;
        for (k, res) in done {
            place(&mut out, &pieces[k], res)?;
        }
        Ok(out)
    }

    /// Counters of each alignment's traceback path by the path rule (see
    /// `kernels/path_stats.cu`), in input order: `Some([pairs, nident, gap opens])`, or
    /// `None` for a rectangle the GPU leaves to the caller (a side of 65,536 or more, or
    /// more than [`GPU_STATS_MAX_CELLS`] cells: one GPU thread walks a rectangle). Score 0
    /// gives zeros.
    pub fn path_counts(&self, pairs: PairSeqs<'_>, alignments: &[Alignment]) -> Result<Vec<Option<[u32; 3]>>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("path statistics: alignments and pairs differ in number".into()));
        }
        self.by_pieces(pairs, |d, s, piece, r| self.path_counts_chunk(d, s, piece, &alignments[r]))
    }

    fn path_counts_chunk(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
    ) -> Result<Vec<Option<[u32; 3]>>> {
        let stream = &d.streams[si];
        let mut staging = d.staging[si].lock().map_err(|_| Error::Internal("staging buffer poisoned".into()))?;
        let staging = &mut *staging;
        let mut out: Vec<Option<[u32; 3]>> = vec![Some([0; 3]); pairs.len()];
        let plan = plan_path_stats(pairs, alignments, kernels::PATH_STATS_ROWS);
        for &i in &plan.elsewhere {
            out[i as usize] = None;
        }
        if plan.index.is_empty() {
            return Ok(out);
        }
        let t0 = Instant::now();
        let total = pack_descs(pairs, &mut staging.descs);
        let seqs = self.upload(d, stream, staging, pairs, total)?;
        let err = |what: &'static str| dev_err(what);
        let jobs = stream.clone_htod(&plan.jobs).map_err(err("uploading path jobs"))?;
        let index = stream.clone_htod(&plan.index).map_err(err("uploading path jobs"))?;
        let at = stream.clone_htod(&plan.scratch_at).map_err(err("uploading path jobs"))?;
        let cols = plan.scratch_cols.max(1);
        let scratch_h = unsafe { stream.alloc::<u32>(4 * cols) }.map_err(err("allocating path scratch"))?;
        let scratch_b = unsafe { stream.alloc::<u32>(2 * cols) }.map_err(err("allocating path scratch"))?;
        let mut res = stream.alloc_zeros::<i32>(4 * pairs.len()).map_err(err("allocating path results"))?;
        let f = self.stats_kernel(d)?;
        let njobs = plan.index.len() as i32;
        let cfg = LaunchConfig {
            grid_dim: ((plan.index.len() as u32).div_ceil(128), 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: (self.nc1 * self.nc1) as u32,
        };
        let mut lb = stream.launch_builder(&f);
        lb.arg(&jobs).arg(&index).arg(&njobs).arg(seqs).arg(&d.matrix).arg(&self.nc1);
        lb.arg(&self.gap_oe).arg(&self.gap_ext).arg(&mut res).arg(&scratch_h).arg(&scratch_b).arg(&at);
        unsafe { lb.launch(cfg) }.map_err(err("launching path_stats"))?;
        let raw = stream.clone_dtoh(&res).map_err(err("reading path statistics"))?;
        for &i in &plan.index {
            let i = i as usize;
            let c = &raw[4 * i..4 * i + 4];
            if c[3] != alignments[i].score {
                return Err(Error::Internal(format!(
                    "GPU path statistics: the rectangle of pair {} scores {} end to end, not its score {}",
                    i + 1,
                    c[3],
                    alignments[i].score
                )));
            }
            out[i] = Some([c[0] as u32, c[1] as u32, c[2] as u32]);
        }
        self.counters.stats_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(out)
    }

    fn stats_kernel(&self, d: &Device) -> Result<CudaFunction> {
        let mut slot = d.stats_kernel.lock().map_err(|_| Error::Internal("kernel cache poisoned".into()))?;
        if let Some(f) = &*slot {
            return Ok(f.clone());
        }
        let build = kernels::path_stats();
        let module = d.gpu.load(&build.kernel.source(), &build.options)?;
        let f = d.gpu.function(&module, build.kernel.entry())?;
        *slot = Some(f.clone());
        Ok(f)
    }

    fn align_chunk(&self, d: &Device, si: usize, pairs: PairSeqs<'_>) -> Result<Vec<Alignment>> {
        let stream = &d.streams[si];
        let mut staging = d.staging[si].lock().map_err(|_| Error::Internal("staging buffer poisoned".into()))?;
        let staging = &mut *staging;
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let t0 = Instant::now();
        let total = pack_descs(pairs, &mut staging.descs);
        let items: Vec<Item> = pairs
            .iter()
            .enumerate()
            .filter(|(_, (q, t))| !q.is_empty() && !t.is_empty())
            .map(|(i, (q, t))| Item { index: i as u32, qlen: q.len() as u32, tlen: t.len() as u32 })
            .collect();
        let max_rows = packed_max_rows(self.nc1 as usize, self.config.align_max_rows);
        let bins = self.pool.install(|| make_bins(&items, true, max_rows));
        let t1 = Instant::now();
        let descs = stream.clone_htod(&staging.descs).map_err(dev_err("uploading pair table"))?;
        let seqs = self.upload(d, stream, staging, pairs, total)?;
        let t2 = Instant::now();

        // Forward (16-bit) then, on the same bins, reverse: queued back to back, one wait.
        let (mut ends, mut starts) = self.run_both(d, stream, seqs, &descs, &bins, pairs.len())?;
        // Where 16 bits may have wrapped: both passes again at 32 bits.
        let wide: Vec<Item> = items.iter().filter(|it| ends[it.index as usize].overflow).copied().collect();
        if !wide.is_empty() {
            let (e, st) = self.run_both(d, stream, seqs, &descs, &make_bins(&wide, false, WIDE_ROWS), pairs.len())?;
            for it in &wide {
                let i = it.index as usize;
                ends[i] = e[i];
                starts[i] = st[i];
            }
        }
        let c = &self.counters;
        let ns = |a: Instant, b: Instant| (b - a).as_nanos() as u64;
        c.pieces.fetch_add(1, Ordering::Relaxed);
        c.pairs.fetch_add(pairs.len() as u64, Ordering::Relaxed);
        c.cells.fetch_add(pairs.cells(), Ordering::Relaxed);
        c.wide_pairs.fetch_add(wide.len() as u64, Ordering::Relaxed);
        c.prepare_ns.fetch_add(ns(t0, t1), Ordering::Relaxed);
        c.upload_ns.fetch_add(ns(t1, t2), Ordering::Relaxed);
        c.gpu_ns.fetch_add(ns(t2, Instant::now()), Ordering::Relaxed);
        (0..pairs.len()).map(|i| finish(ends[i], (ends[i].score > 0).then_some(starts[i]))).collect()
    }

    /// The piece's residues (`total` bytes) into the stream's device buffer, by the
    /// configured [`Upload`]. The buffers grow, and are reused, per stream.
    fn upload<'s>(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        staging: &'s mut Staging,
        pairs: PairSeqs<'_>,
        total: usize,
    ) -> Result<&'s CudaSlice<u8>> {
        let staged = self.config.align_upload == Upload::Staged;
        if staging.dev.as_ref().map_or(true, |b| b.len() < total) {
            staging.dev = None;
            staging.host = None;
            let cap = total + total / 4;
            staging.dev = Some(unsafe { stream.alloc::<u8>(cap) }.map_err(dev_err("allocating sequence memory"))?);
        }
        if staged && staging.host.as_ref().map_or(true, |h| h.len() < total) {
            let cap = staging.dev.as_ref().map_or(total, |b| b.len());
            // Plain page-locked memory (not write-combined: the copy loop reads nothing back).
            staging.host = Some(
                unsafe { d.gpu.ctx.alloc_pinned_with_flags::<u8>(cap, 0) }
                    .map_err(dev_err("allocating pinned memory"))?,
            );
        }
        let Some(dev) = staging.dev.as_mut() else {
            return Err(Error::Internal("sequence buffer missing".into()));
        };
        let mut dst = dev.slice_mut(..total);
        if staged {
            let Some(host) = staging.host.as_mut() else {
                return Err(Error::Internal("staging buffer missing".into()));
            };
            let dst_host = host.as_mut_slice().map_err(dev_err("pinned buffer"))?;
            self.pool.install(|| pack_seqs(pairs, dst_host));
            // Only the bytes this piece uses (the buffers may be larger). The next write to
            // `host` is this worker's next piece, after this piece's results were read back.
            let src = &host.as_slice().map_err(dev_err("pinned buffer"))?[..total];
            stream.memcpy_htod(src, &mut dst).map_err(dev_err("uploading sequences"))?;
        } else {
            // One driver copy from the batch (at least one byte: an all-empty piece uploads a pad).
            let src = pairs.residues();
            let src: &[u8] = if src.is_empty() { &[0] } else { src };
            stream.memcpy_htod(src, &mut dst.slice_mut(..src.len())).map_err(dev_err("uploading sequences"))?;
        }
        drop(dst);
        staging.dev.as_ref().ok_or_else(|| Error::Internal("sequence buffer missing".into()))
    }

    /// What the aligner has done so far, as (name, value) lines for `--stats`.
    pub fn statistics(&self) -> Vec<(String, String)> {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let secs = |a: &AtomicU64| format!("{:.3} s", get(a) as f64 / 1e9);
        vec![
            ("align pieces".into(), get(&c.pieces).to_string()),
            ("align pairs".into(), get(&c.pairs).to_string()),
            ("align cells".into(), format!("{:.4e}", get(&c.cells) as f64)),
            ("align pairs recomputed at 32 bits".into(), get(&c.wide_pairs).to_string()),
            ("align host preparation (summed over streams)".into(), secs(&c.prepare_ns)),
            ("align upload (summed over streams)".into(), secs(&c.upload_ns)),
            ("align GPU passes and read-back (summed over streams)".into(), secs(&c.gpu_ns)),
            ("path statistics on the GPU (summed over streams)".into(), secs(&c.stats_ns)),
        ]
    }

    /// Forward pass over every bin, then the reverse pass over the same bins reading the
    /// forward results on the device; one launch per kernel variant and pass. Returns
    /// (ends, starts) by pair index (pairs in no bin read as score 0).
    fn run_both(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        seqs: &CudaSlice<u8>,
        descs: &CudaSlice<u32>,
        bins: &[Bin],
        npairs: usize,
    ) -> Result<(Vec<Cell>, Vec<Cell>)> {
        // All bins' group tables, and all launches' warp tables, in one upload each.
        let mut all_groups = Vec::with_capacity(bins.iter().map(|b| b.groups.len()).sum::<usize>() + 1);
        let mut offsets = Vec::with_capacity(bins.len());
        for b in bins {
            offsets.push(all_groups.len() / halves(b.packed));
            all_groups.extend_from_slice(&b.groups);
        }
        // Group indices count in units of one shape's halves: one lane width per table.
        if bins.windows(2).any(|w| w[0].packed != w[1].packed) {
            return Err(Error::Internal("align bins of both lane widths in one table".into()));
        }
        all_groups.push(-1);
        let launches = plan_launches(bins, &offsets);
        let mut all_warps: Vec<i32> = Vec::new();
        let mut warp_off = Vec::with_capacity(launches.len());
        for l in &launches {
            warp_off.push(all_warps.len() / 4);
            all_warps.extend(l.warps.iter().flatten());
        }
        all_warps.extend([32, 0, 0, 0]);
        let groups = stream.clone_htod(&all_groups).map_err(dev_err("uploading bins"))?;
        let warps = stream.clone_htod(&all_warps).map_err(dev_err("uploading bins"))?;
        let mut fwd = stream.alloc_zeros::<i32>(npairs * 4).map_err(dev_err("allocating results"))?;
        let mut rev = stream.alloc_zeros::<i32>(npairs * 4).map_err(dev_err("allocating results"))?;
        let mut scratch = Vec::with_capacity(launches.len());
        for l in &launches {
            let len = (l.slots * 2 * l.stride).max(1);
            scratch.push(stream.alloc_zeros::<u32>(len).map_err(dev_err("allocating scratch"))?);
        }
        for reverse in [false, true] {
            for (k, l) in launches.iter().enumerate() {
                let view = warps.slice(warp_off[k] * 4..(warp_off[k] + l.warps.len()) * 4);
                if reverse {
                    self.launch(d, stream, l, seqs, descs, &groups, &view, Some(&fwd), &mut rev, &scratch[k])?;
                } else {
                    self.launch(d, stream, l, seqs, descs, &groups, &view, None, &mut fwd, &scratch[k])?;
                }
            }
        }
        let ends = stream.clone_dtoh(&fwd).map_err(dev_err("reading results"))?;
        let starts = stream.clone_dtoh(&rev).map_err(dev_err("reading results"))?;
        drop((scratch, groups, warps));
        Ok((cells(&ends), cells(&starts)))
    }

    /// One launch of `align_pairs` (reverse mode when `fwd` is given).
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        l: &Launch,
        seqs: &CudaSlice<u8>,
        descs: &CudaSlice<u32>,
        groups: &CudaSlice<i32>,
        warps: &cudarc::driver::CudaView<'_, i32>,
        fwd: Option<&CudaSlice<i32>>,
        out: &mut CudaSlice<i32>,
        scratch: &CudaSlice<u32>,
    ) -> Result<()> {
        let f = self.kernel(d, l.packed, l.rows)?;
        let halves = if l.packed { 2 } else { 1 };
        let fixed = ((self.nc1 * self.nc1 + 15) & !15) as u32;
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
        let threads = l.warps.len() * 32;
        let cfg = LaunchConfig {
            grid_dim: (threads.div_ceil(block as usize) as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: shared,
        };
        let args = AlignArgs {
            pairs: descs.device_ptr(stream).0,
            groups: groups.device_ptr(stream).0,
            warps: warps.device_ptr(stream).0,
            nwarps: l.warps.len() as i32,
            seqs: seqs.device_ptr(stream).0,
            matrix: d.matrix.device_ptr(stream).0,
            nc1: self.nc1,
            gap_oe: self.gap_oe,
            gap_ext: self.gap_ext,
            // Forward mode never reads `fwd`: any device pointer does (the pair table here).
            fwd: fwd.map_or(descs.device_ptr(stream).0, |x| x.device_ptr(stream).0),
            overflow_limit: if l.packed { self.limit } else { i32::MAX },
            out: out.device_ptr_mut(stream).0,
            scratch: scratch.device_ptr(stream).0,
            scratch_stride: l.stride as i32,
        };
        let reverse: i32 = fwd.is_some() as i32;
        let mut lb = stream.launch_builder(&f);
        lb.arg(&args).arg(&reverse);
        unsafe { lb.launch(cfg) }.map_err(dev_err("launching align_pairs"))?;
        Ok(())
    }
}

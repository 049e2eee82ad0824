//! Database search on one GPU: the resident database shard, the launches of the length-binned
//! search kernels for a batch of query strands, and top-k selection on the GPU, so that only
//! the best hits of each query come back.

use super::config::CudaConfig;
use super::kernels;
use super::layout::{self, Bin, Shape};
use super::runtime::{dev_err, Gpu};
use crate::database::Database;
use crate::error::{Error, Result};
use crate::progress::Work;
use crate::scoring::Scoring;
use cudarc::driver::{
    sys::CUfunction_attribute_enum, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Bins of the score histogram used by top-k selection (kernels/sw_search.cu: BINS).
const TOPK_BINS: usize = 4096;
const BLOCK: u32 = 128;
/// Score lane value marking a possible 16-bit overflow: recompute at 32 bits.
pub const OVERFLOW: u32 = 0xffff;

/// Kernel arguments; must match `struct SearchArgs` in kernels/sw_search.cu field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct SearchArgs {
    residues: u64,
    starts: u64,
    lengths: u64,
    profiles: u64,
    blocks: u64,
    first_pass: u64,
    strand_passes: u64,
    scores: u64,
    scratch: u64,
    counter: u64,
    tbegin: u32,
    tend: u32,
    ntargets: u32,
    nstrands: u32,
    maxcols: u32,
    alpha: u32,
    oe: u32,
    neg_ext: u32,
    threshold: i32,
}

unsafe impl DeviceRepr for SearchArgs {}

/// `v` as a 16-bit value in both halves of a word (the kernels' s16x2 lanes).
pub(super) fn both_lanes(v: i32) -> u32 {
    let h = v as i16 as u16 as u32;
    h | (h << 16)
}

/// The database shard as it sits on the GPU, in chunks, kept across searches.
struct Resident {
    key: DbKey,
    chunks: Vec<Chunk>,
}

/// One chunk of a shard on the GPU: consecutive targets of the shard's length order.
struct Chunk {
    range: std::ops::Range<usize>,
    residues: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    lengths: CudaSlice<u32>,
}

impl Chunk {
    /// The kernels' view of this chunk; `shard_lengths` are the whole shard's target lengths.
    fn view<'a>(&self, st: &Arc<CudaStream>, shard_lengths: &'a [u32]) -> Targets<'a> {
        Targets {
            residues: self.residues.device_ptr(st).0,
            starts: self.starts.device_ptr(st).0,
            lengths: self.lengths.device_ptr(st).0,
            host_lengths: &shard_lengths[self.range.clone()],
        }
    }
}

/// Identifies a database across calls: a clone of its residue buffer (kept alive by the
/// cache, so no other database can take its place at the same address) and its sequence
/// boundaries' count.
#[derive(Clone)]
pub struct DbKey {
    residues: crate::database::Bytes,
    sequences: usize,
}

impl DbKey {
    pub fn of(db: &Database) -> DbKey {
        DbKey { residues: db.residues.clone(), sequences: db.len() }
    }

    fn same(&self, other: &DbKey) -> bool {
        self.residues.same(&other.residues) && self.sequences == other.sequences
    }
}

/// Targets of one scan as the kernels see them: device pointers, plus the lengths (for
/// binning) and database indices on the host.
struct Targets<'a> {
    residues: u64,
    starts: u64,
    lengths: u64,
    host_lengths: &'a [u32],
}

/// How a search holds the database on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Uploaded once in chunks of this many bytes (the first call's scans overlap the
    /// uploads), kept across calls.
    Resident { chunk_bytes: usize },
    /// Streamed through two slots of this many bytes, on two streams.
    Streamed { chunk_bytes: usize },
}

/// Memory kept free for score matrices, profiles and the driver beyond the database itself.
const HEADROOM: usize = 2 << 30;
/// Largest streamed chunk: big enough that a chunk's scan dwarfs launch overheads.
const MAX_CHUNK: usize = 512 << 20;
/// Chunks of a resident database: small enough that the first scan starts soon, large
/// enough that the per-chunk launches and top-k cost little.
const RESIDENT_CHUNK: usize = 64 << 20;
/// Streams that scans and uploads alternate over.
const STREAMS: usize = 2;

/// Resident when the shard fits (with headroom), otherwise
/// streamed through two buffers of at most `MAX_CHUNK` or an eighth of free memory.
/// `forced_chunk` (`CudaConfig::search_chunk_bytes`) forces streaming with that chunk size.
pub fn placement(shard_bytes: usize, free: usize, forced_chunk: Option<usize>) -> Placement {
    if let Some(c) = forced_chunk {
        return Placement::Streamed { chunk_bytes: c.max(1024) };
    }
    if shard_bytes.saturating_add(HEADROOM) <= free {
        Placement::Resident { chunk_bytes: RESIDENT_CHUNK }
    } else {
        Placement::Streamed { chunk_bytes: MAX_CHUNK.min(free / 8).max(1 << 20) }
    }
}

/// One batch's strand profiles on the GPU, for one variant.
struct DeviceProfiles {
    data: CudaSlice<i32>,
    blocks: CudaSlice<u32>,
    first_pass: CudaSlice<u32>,
    passes: CudaSlice<u32>,
    strands: usize,
}

/// Strand profiles of one batch of queries, for every variant the bins use.
type Profiles = HashMap<Shape, DeviceProfiles>;

/// A scan whose kernels and result copies are queued on `stream`; `collect` waits for it.
struct Pending {
    stream: Arc<CudaStream>,
    scores: CudaSlice<u16>,
    counts: PinnedHostSlice<u32>,
    cands: PinnedHostSlice<u32>,
    cap: usize,
    ntargets: usize,
}

/// One GPU with its compiled kernels and resident database shard.
pub struct Device {
    pub gpu: Gpu,
    _modules: Vec<Arc<CudaModule>>,
    search: HashMap<Shape, CudaFunction>,
    hist: CudaFunction,
    threshold: CudaFunction,
    select: CudaFunction,
    resident: Option<Resident>,
    streams: Vec<Arc<CudaStream>>,
    /// Pinned host buffers the chunks are packed into for upload, one per stream.
    staging: Vec<PinnedHostSlice<u8>>,
    /// `CudaConfig::search_chunk_bytes`.
    chunk_bytes: Option<usize>,
    /// `CudaConfig::search_strand_passes`.
    strand_passes: usize,
    /// `CudaConfig::nvrtc_options`, for the shapes loaded later.
    nvrtc: Vec<String>,
}

/// Compiles (or takes from the cache) and loads the search variant of `shape`.
fn load_search(gpu: &Gpu, shape: Shape, nvrtc: &[String]) -> Result<(Arc<CudaModule>, CudaFunction)> {
    let build = kernels::search(shape, nvrtc);
    let module = gpu.load(&build.kernel.source(), &build.options)?;
    let f = gpu.function(&module, build.kernel.entry())?;
    f.set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024)
        .map_err(dev_err("raising the shared-memory limit"))?;
    Ok((module, f))
}

/// Hits of one query on one GPU: (database index in length order, raw 16-bit lane score;
/// `OVERFLOW` where the score must be recomputed).
pub type RawHits = Vec<(u32, u32)>;

impl Device {
    pub fn open(ordinal: usize, config: &CudaConfig) -> Result<Device> {
        let gpu = Gpu::open(ordinal)?;
        // Our streams order all work on their buffers; cudarc's per-buffer events add nothing.
        unsafe { gpu.ctx.disable_event_tracking() };
        // The default shape's module now (its top-k kernels serve every shape); the other
        // shapes when bins first use them.
        let mut search = HashMap::new();
        let shape = layout::default_bins()[0].1;
        let (module, f) = load_search(&gpu, shape, &config.nvrtc_options)?;
        search.insert(shape, f);
        let modules = vec![module.clone()];
        Ok(Device {
            hist: gpu.function(&module, "topk_hist")?,
            threshold: gpu.function(&module, "topk_threshold")?,
            select: gpu.function(&module, "topk_select")?,
            search,
            _modules: modules,
            streams: (0..STREAMS)
                .map(|_| gpu.ctx.new_stream())
                .collect::<std::result::Result<_, _>>()
                .map_err(dev_err("creating streams"))?,
            staging: Vec::new(),
            chunk_bytes: config.search_chunk_bytes,
            strand_passes: config.search_strand_passes,
            nvrtc: config.nvrtc_options.clone(),
            gpu,
            resident: None,
        })
    }

    /// Scores `queries` against shard `g` of `ngpus` of `db` and returns, per query, at least
    /// the `top` best hits (more where scores tie), each with its database index.
    ///
    /// The shard runs in chunks alternating over two streams: while one stream scans a chunk,
    /// the next chunk is packed into pinned memory and uploaded on the other. A resident
    /// shard keeps its chunks for later calls; a streamed one reuses two chunk buffers.
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &mut self,
        key: DbKey,
        db: &Database,
        g: usize,
        ngpus: usize,
        queries: &[&[u8]],
        sc: &Scoring,
        bins: &[(u32, Shape)],
        top: usize,
        work: &Work,
    ) -> Result<Vec<RawHits>> {
        for &(_, shape) in bins {
            if !self.search.contains_key(&shape) {
                let (module, f) = load_search(&self.gpu, shape, &self.nvrtc)?;
                self.search.insert(shape, f);
                self._modules.push(module);
            }
        }
        let mut out: Vec<RawHits> = vec![Vec::new(); queries.len()];
        let targets = layout::shard_targets(db, g, ngpus);
        if targets.is_empty() || top == 0 {
            return Ok(out);
        }
        let lens: Vec<usize> = queries.iter().map(|q| q.len()).collect();
        // Query slots in batches, longest first (empty queries have no hits).
        let mut order: Vec<usize> = (0..queries.len()).filter(|&q| lens[q] > 0).collect();
        order.sort_by_key(|&q| std::cmp::Reverse(lens[q]));
        let host_lengths: Vec<u32> = targets.iter().map(|&i| db.seq_len(i as usize) as u32).collect();
        let forced = self.chunk_bytes;
        if !self.resident.as_ref().is_some_and(|r| r.key.same(&key)) || forced.is_some() {
            self.resident = None;
        }
        let (keep, chunk_bytes) = match &self.resident {
            Some(_) => (true, RESIDENT_CHUNK),
            None => {
                let (free, _) = self.gpu.ctx.mem_get_info().map_err(dev_err("reading free GPU memory"))?;
                match placement(layout::packed_bytes(db, &targets), free, forced) {
                    Placement::Resident { chunk_bytes } => (true, chunk_bytes),
                    Placement::Streamed { chunk_bytes } => (false, chunk_bytes),
                }
            }
        };
        let mut resident = self.resident.take().filter(|_| keep);
        let ranges: Vec<std::ops::Range<usize>> = match &resident {
            Some(r) => r.chunks.iter().map(|c| c.range.clone()).collect(),
            None => layout::chunk_targets(db, &targets, chunk_bytes),
        };
        // Most targets in one chunk: sizes the score matrices and streamed chunk buffers.
        let most = ranges.iter().map(|r| r.len()).max().unwrap_or(1);
        let uploading = resident.is_none();
        let mut bufs: Vec<Option<Chunk>> = Vec::new();
        if uploading {
            let largest = ranges.iter().map(|r| layout::packed_bytes(db, &targets[r.clone()])).max().unwrap_or(16);
            self.ensure_staging(largest)?;
            if !keep {
                // Streaming: one buffer per stream, reused chunk after chunk.
                for k in 0..STREAMS {
                    bufs.push(Some(self.chunk_buffer(k, 0..0, largest, most)?));
                }
            }
        }
        let mut kept: Vec<Chunk> = Vec::new();
        for (bi, batch) in order.chunks(queries_per_batch(most)).enumerate() {
            let batch_queries: Vec<&[u8]> = batch.iter().map(|&q| queries[q]).collect();
            let profiles = self.upload_profiles(&batch_queries, sc, bins, &host_lengths)?;
            let batch_residues: usize = batch.iter().map(|&q| lens[q]).sum();
            let scanned = |targets: &[u32]| {
                work.add((batch_residues * targets.iter().map(|&t| db.seq_len(t as usize)).sum::<usize>()) as u64)
            };
            let mut pending: Vec<Option<(Pending, std::ops::Range<usize>)>> = (0..STREAMS).map(|_| None).collect();
            for (ci, r) in ranges.iter().enumerate() {
                let k = ci % STREAMS;
                // The stream's previous scan must be done before its buffers are reused.
                if let Some((p, pr)) = pending[k].take() {
                    collect(p, batch, &targets[pr.clone()], &mut out)?;
                    scanned(&targets[pr]);
                }
                let st = self.streams[k].clone();
                let chunk_targets = &targets[r.clone()];
                // Upload: every chunk when streaming; each chunk once (first batch) when resident.
                let p = if uploading && (!keep || bi == 0) {
                    let bytes = layout::packed_bytes(db, chunk_targets);
                    let mut c = match bufs.get_mut(k).and_then(Option::take) {
                        Some(c) => c,
                        None => self.chunk_buffer(k, r.clone(), bytes, r.len())?,
                    };
                    c.range = r.clone();
                    let host = self.staging[k].as_mut_slice().map_err(dev_err("pinned buffer"))?;
                    let (starts, lengths) = layout::pack_targets(db, chunk_targets, sc, &mut host[..bytes])?;
                    let up = "uploading a database chunk";
                    st.memcpy_htod(&host[..bytes], &mut c.residues.slice_mut(0..bytes)).map_err(dev_err(up))?;
                    st.memcpy_htod(&starts, &mut c.starts.slice_mut(0..starts.len())).map_err(dev_err(up))?;
                    st.memcpy_htod(&lengths, &mut c.lengths.slice_mut(0..lengths.len())).map_err(dev_err(up))?;
                    let p = self.launch(&st, &c.view(&st, &host_lengths), &profiles, batch.len(), sc, bins, top)?;
                    if keep {
                        kept.push(c);
                    } else {
                        bufs[k] = Some(c);
                    }
                    p
                } else {
                    let c = match &resident {
                        Some(res) => &res.chunks[ci],
                        None => &kept[ci],
                    };
                    self.launch(&st, &c.view(&st, &host_lengths), &profiles, batch.len(), sc, bins, top)?
                };
                pending[k] = Some((p, r.clone()));
            }
            for (p, pr) in pending.into_iter().flatten() {
                collect(p, batch, &targets[pr.clone()], &mut out)?;
                scanned(&targets[pr]);
            }
        }
        if keep {
            if resident.is_none() {
                resident = Some(Resident { key, chunks: kept });
            }
            self.resident = resident;
        }
        Ok(out)
    }

    /// Makes sure each stream has a pinned staging buffer of at least `bytes`.
    fn ensure_staging(&mut self, bytes: usize) -> Result<()> {
        if self.staging.len() == STREAMS && self.staging.iter().all(|b| b.len() >= bytes) {
            return Ok(());
        }
        self.staging.clear();
        for _ in 0..STREAMS {
            // Write-combined: the host only writes it, the copy engine reads it.
            let b = unsafe { self.gpu.ctx.alloc_pinned::<u8>(bytes) }.map_err(dev_err("allocating pinned memory"))?;
            self.staging.push(b);
        }
        Ok(())
    }

    /// Device buffers for a chunk of `bytes` packed residues and `targets` targets.
    fn chunk_buffer(&self, k: usize, range: std::ops::Range<usize>, bytes: usize, targets: usize) -> Result<Chunk> {
        let st = &self.streams[k];
        let e = || dev_err("allocating a database chunk on the GPU");
        Ok(Chunk {
            range,
            residues: st.alloc_zeros::<u8>(bytes.max(16)).map_err(e())?,
            starts: st.alloc_zeros::<u32>(targets.max(1)).map_err(e())?,
            lengths: st.alloc_zeros::<u32>(targets.max(1)).map_err(e())?,
        })
    }

    /// Packs `queries` (one slot each) into strands and uploads their profiles for every
    /// variant that `lengths` use; waits for the upload, so that any stream may read them.
    fn upload_profiles(
        &self,
        queries: &[&[u8]],
        sc: &Scoring,
        bins: &[(u32, Shape)],
        lengths: &[u32],
    ) -> Result<Profiles> {
        let st = &self.gpu.stream;
        let up = "uploading query profiles";
        let mut profiles = Profiles::new();
        for b in layout::split_bins(lengths, bins) {
            if profiles.contains_key(&b.shape) {
                continue;
            }
            let lens: Vec<usize> = queries.iter().map(|q| q.len()).collect();
            let strands = layout::pack_strands(&lens, b.shape, self.strand_passes);
            let p = layout::build_profiles(queries, &strands, sc, b.shape);
            profiles.insert(
                b.shape,
                DeviceProfiles {
                    data: st.clone_htod(&p.data).map_err(dev_err(up))?,
                    blocks: st.clone_htod(&p.blocks).map_err(dev_err(up))?,
                    first_pass: st.clone_htod(&p.first_pass).map_err(dev_err(up))?,
                    passes: st.clone_htod(&p.passes).map_err(dev_err(up))?,
                    strands: strands.len(),
                },
            );
        }
        st.synchronize().map_err(dev_err(up))?;
        Ok(profiles)
    }

    /// Queues on `st` the scan of `targets` by the `nq` query slots of `profiles` and the
    /// top-k selection, with the copies of the selected hits into pinned host memory.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        st: &Arc<CudaStream>,
        targets: &Targets,
        profiles: &Profiles,
        nq: usize,
        sc: &Scoring,
        bins: &[(u32, Shape)],
        top: usize,
    ) -> Result<Pending> {
        let ntargets = targets.host_lengths.len();
        let bins: Vec<Bin> = layout::split_bins(targets.host_lengths, bins);
        let alpha = layout::alpha(sc);
        let smax = sc.matrix.max_score().max(1);
        let e = |what: &'static str| dev_err(what);

        let scores = st.alloc_zeros::<u16>(nq * ntargets).map_err(e("allocating scores"))?;
        let counter = st.alloc_zeros::<u32>(bins.len().max(1)).map_err(e("allocating counters"))?;
        // Launch geometry and boundary-row scratch of every bin; one scratch buffer serves all.
        let mut plans = Vec::new();
        let mut scratch_ints = 0usize;
        for b in &bins {
            let f = &self.search[&b.shape];
            let strands = profiles.get(&b.shape).map_or(1, |p| p.strands);
            let smem = (alpha * b.shape.span() as u32 * 4) as usize;
            let per_sm = f
                .occupancy_max_active_blocks_per_multiprocessor(BLOCK, smem, None)
                .map_err(e("occupancy query"))?
                .max(1);
            let w = layout::targets_per_block(b.shape);
            let groups = (b.end - b.begin).div_ceil(w) as usize;
            let grid = (per_sm as usize * self.gpu.sms as usize).min(groups * strands).max(1);
            let maxcols = ((b.max_len as usize + 3) & !3) + 4;
            scratch_ints = scratch_ints.max(grid * w as usize * 2 * maxcols * 2);
            plans.push((grid as u32, smem as u32, maxcols as u32));
        }
        let scratch = st.alloc_zeros::<i32>(scratch_ints.max(4)).map_err(e("allocating scratch"))?;

        for (bi, (b, &(grid, smem, maxcols))) in bins.iter().zip(&plans).enumerate() {
            let p = profiles
                .get(&b.shape)
                .ok_or_else(|| Error::Internal(format!("no profile for variant {:?}", b.shape)))?;
            let args = SearchArgs {
                residues: targets.residues,
                starts: targets.starts,
                lengths: targets.lengths,
                profiles: p.data.device_ptr(st).0,
                blocks: p.blocks.device_ptr(st).0,
                first_pass: p.first_pass.device_ptr(st).0,
                strand_passes: p.passes.device_ptr(st).0,
                scores: scores.device_ptr(st).0,
                scratch: scratch.device_ptr(st).0,
                counter: counter.device_ptr(st).0 + 4 * bi as u64,
                tbegin: b.begin,
                tend: b.end,
                ntargets: ntargets as u32,
                nstrands: p.strands as u32,
                maxcols,
                alpha,
                oe: both_lanes(sc.gap_open + sc.gap_extend),
                neg_ext: both_lanes(-sc.gap_extend),
                threshold: 32767 - smax - (sc.gap_open + sc.gap_extend),
            };
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: smem };
            unsafe { st.launch_builder(&self.search[&b.shape]).arg(&args).launch(cfg) }
                .map_err(e("launching the search kernel"))?;
        }

        // Top-k: histogram, threshold, compaction of the hits at or above it.
        let nt = ntargets as u32;
        let cap = (2 * top).max(4096).min(ntargets);
        let mut hist = st.alloc_zeros::<u32>(nq * TOPK_BINS).map_err(e("allocating top-k buffers"))?;
        let threshold = st.alloc_zeros::<u32>(nq).map_err(e("allocating top-k buffers"))?;
        let count = st.alloc_zeros::<u32>(nq).map_err(e("allocating top-k buffers"))?;
        let cand = st.alloc_zeros::<u32>(nq * cap * 2).map_err(e("allocating top-k buffers"))?;
        let blocks = (self.gpu.sms * 2).min(nt.div_ceil(256)).max(1);
        let k32 = top.min(u32::MAX as usize) as u32;
        let cap32 = cap as u32;
        unsafe {
            st.launch_builder(&self.hist)
                .arg(&scores)
                .arg(&nt)
                .arg(&mut hist)
                .launch(LaunchConfig { grid_dim: (blocks, nq as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 })
                .map_err(e("launching topk_hist"))?;
            st.launch_builder(&self.threshold)
                .arg(&hist)
                .arg(&k32)
                .arg(&threshold)
                .launch(LaunchConfig { grid_dim: (nq as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 })
                .map_err(e("launching topk_threshold"))?;
            st.launch_builder(&self.select)
                .arg(&scores)
                .arg(&nt)
                .arg(&threshold)
                .arg(&cap32)
                .arg(&count)
                .arg(&cand)
                .launch(LaunchConfig { grid_dim: (blocks, nq as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 })
                .map_err(e("launching topk_select"))?;
        }
        // Plain (not write-combined) pinned memory: the host reads these.
        let mut counts =
            unsafe { self.gpu.ctx.alloc_pinned_with_flags::<u32>(nq, 0) }.map_err(e("allocating pinned memory"))?;
        let mut cands = unsafe { self.gpu.ctx.alloc_pinned_with_flags::<u32>(nq * cap * 2, 0) }
            .map_err(e("allocating pinned memory"))?;
        st.memcpy_dtoh(&count, &mut counts).map_err(e("reading top-k counts"))?;
        st.memcpy_dtoh(&cand, &mut cands).map_err(e("reading top-k hits"))?;
        Ok(Pending { stream: st.clone(), scores, counts, cands, cap, ntargets })
    }
}

/// The score matrix of one scan (a batch of queries against one chunk, 16 bits a score)
/// stays under 512 MiB; two scans are in flight at a time.
fn queries_per_batch(ntargets: usize) -> usize {
    ((512usize << 20) / (2 * ntargets.max(1))).max(1)
}

/// Waits for a scan and appends its selected hits to `out` (per query; `batch` maps slots
/// to queries), with database indices from `global` (the scan's targets in order).
fn collect(p: Pending, batch: &[usize], global: &[u32], out: &mut [RawHits]) -> Result<()> {
    let e = |what: &'static str| dev_err(what);
    p.stream.synchronize().map_err(e("search"))?;
    let counts = p.counts.as_slice().map_err(e("reading top-k counts"))?;
    let cands = p.cands.as_slice().map_err(e("reading top-k hits"))?;
    let (cap, ntargets) = (p.cap, p.ntargets);
    for (slot, &q) in batch.iter().enumerate() {
        let n = counts[slot] as usize;
        let hits = &mut out[q];
        if n <= cap {
            let base = slot * cap * 2;
            for j in 0..n {
                let (t, s) = (cands[base + 2 * j], cands[base + 2 * j + 1]);
                hits.push((global[t as usize], s));
            }
        } else {
            // More ties at the threshold than the buffer holds: read the whole row.
            let row = p.scores.slice(slot * ntargets..(slot + 1) * ntargets);
            let all: Vec<u16> = p.stream.clone_dtoh(&row).map_err(e("reading scores"))?;
            p.stream.synchronize().map_err(e("reading scores"))?;
            for (t, &s) in all.iter().enumerate() {
                if s > 0 {
                    hits.push((global[t], s as u32));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_keeps_what_fits_and_streams_the_rest() {
        let gib = 1usize << 30;
        assert_eq!(placement(gib, 80 * gib, None), Placement::Resident { chunk_bytes: RESIDENT_CHUNK });
        // Resident shards may exceed 4 GiB: each chunk has its own 32-bit offsets.
        assert_eq!(placement(5 * gib, 140 * gib, None), Placement::Resident { chunk_bytes: RESIDENT_CHUNK });
        // Does not fit with headroom: streamed, chunks at most MAX_CHUNK.
        assert_eq!(placement(79 * gib, 80 * gib, None), Placement::Streamed { chunk_bytes: MAX_CHUNK });
        // Little free memory: chunks of an eighth of it.
        assert_eq!(placement(3 * gib, 2 * gib, None), Placement::Streamed { chunk_bytes: gib / 4 });
        // Forced (tests): any size, but not absurdly small.
        assert_eq!(placement(100, 80 * gib, Some(4096)), Placement::Streamed { chunk_bytes: 4096 });
        assert_eq!(placement(100, 80 * gib, Some(1)), Placement::Streamed { chunk_bytes: 1024 });
    }
}

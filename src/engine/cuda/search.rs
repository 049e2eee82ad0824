//! Database search on one GPU: the resident database shard, the launches of the length-binned
//! search kernels for a batch of query pairs, and top-k selection on the GPU, so that only
//! the best hits of each query come back.

use super::layout::{self, Bin, Shard, Variant};
use super::runtime::{dev_err, Gpu, Source};
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use cudarc::driver::{
    sys::CUfunction_attribute_enum, CudaFunction, CudaModule, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use std::collections::HashMap;
use std::sync::Arc;

pub const SEARCH_SOURCE: Source<'static> =
    Source { name: "sw_search.cu", text: include_str!("../../../kernels/sw_search.cu"), headers: &[] };

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
    pair_offset: u64,
    pair_passes: u64,
    scores: u64,
    scratch: u64,
    counter: u64,
    tbegin: u32,
    tend: u32,
    ntargets: u32,
    npairs: u32,
    maxcols: u32,
    alpha: u32,
    neg_oe: u32,
    neg_ext: u32,
    threshold: i32,
}

unsafe impl DeviceRepr for SearchArgs {}

fn both_lanes(v: i32) -> u32 {
    let h = v as i16 as u16 as u32;
    h | (h << 16)
}

/// The database shard as it sits on the GPU, kept across searches.
struct Resident {
    key: (usize, u64, usize),
    residues: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    lengths: CudaSlice<u32>,
    host_lengths: Vec<u32>,
    global: Vec<u32>,
}

/// One GPU with its compiled kernels and resident database shard.
pub struct Device {
    pub gpu: Gpu,
    _module: Arc<CudaModule>,
    search: HashMap<Variant, CudaFunction>,
    hist: CudaFunction,
    threshold: CudaFunction,
    select: CudaFunction,
    resident: Option<Resident>,
}

/// Hits of one query on one GPU: (database index in length order, raw 16-bit lane score;
/// `OVERFLOW` where the score must be recomputed).
pub type RawHits = Vec<(u32, u32)>;

impl Device {
    pub fn open(ordinal: usize) -> Result<Device> {
        let gpu = Gpu::open(ordinal)?;
        // One stream per device orders all our work; cudarc's per-buffer events add nothing.
        unsafe { gpu.ctx.disable_event_tracking() };
        let module = gpu.load(&SEARCH_SOURCE, &[])?;
        let mut search = HashMap::new();
        for v in layout::VARIANTS {
            let f = gpu.function(&module, &v.kernel_name())?;
            f.set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024)
                .map_err(dev_err("raising the shared-memory limit"))?;
            search.insert(v, f);
        }
        Ok(Device {
            hist: gpu.function(&module, "topk_hist")?,
            threshold: gpu.function(&module, "topk_threshold")?,
            select: gpu.function(&module, "topk_select")?,
            search,
            _module: module,
            gpu,
            resident: None,
        })
    }

    /// Uploads the shard unless the same database is already resident.
    fn ensure_resident(&mut self, key: (usize, u64, usize), shard: impl FnOnce() -> Result<Shard>) -> Result<()> {
        if self.resident.as_ref().map(|r| r.key) == Some(key) {
            return Ok(());
        }
        self.resident = None;
        let s = shard()?;
        let st = &self.gpu.stream;
        let up = "uploading the database";
        let resident = Resident {
            key,
            residues: st.clone_htod(&s.residues).map_err(dev_err(up))?,
            starts: st.clone_htod(&s.starts).map_err(dev_err(up))?,
            lengths: st.clone_htod(&s.lengths).map_err(dev_err(up))?,
            host_lengths: s.lengths,
            global: s.global,
        };
        st.synchronize().map_err(dev_err(up))?;
        self.resident = Some(resident);
        Ok(())
    }

    /// Scores `queries` against this GPU's shard of `db` and returns, per query, at least the
    /// `top` best hits (more where scores tie), each with its database index.
    #[allow(clippy::too_many_arguments)]
    pub fn search(
        &mut self,
        db_key: (usize, u64, usize),
        shard: impl FnOnce() -> Result<Shard>,
        queries: &[&[u8]],
        sc: &Scoring,
        bins: &[(u32, Variant)],
        top: usize,
    ) -> Result<Vec<RawHits>> {
        self.ensure_resident(db_key, shard)?;
        let mut out: Vec<RawHits> = vec![Vec::new(); queries.len()];
        let ntargets = self.resident.as_ref().map_or(0, |r| r.host_lengths.len());
        if ntargets == 0 || top == 0 {
            return Ok(out);
        }
        let lens: Vec<usize> = queries.iter().map(|q| q.len()).collect();
        let pairs = layout::pair_queries(&lens);
        // Keep the score matrix of one batch under 1 GiB.
        let per_batch = ((1usize << 30) / (4 * ntargets)).max(1);
        for batch in pairs.chunks(per_batch) {
            let hits = self.search_batch(queries, batch, sc, bins, top)?;
            for (q, h) in hits {
                out[q] = h;
            }
        }
        Ok(out)
    }

    fn search_batch(
        &mut self,
        queries: &[&[u8]],
        pairs: &[(usize, Option<usize>)],
        sc: &Scoring,
        bins: &[(u32, Variant)],
        top: usize,
    ) -> Result<Vec<(usize, RawHits)>> {
        let res = self.resident.as_ref().ok_or_else(|| Error::Internal("no resident database".into()))?;
        let st = self.gpu.stream.clone();
        let ntargets = res.host_lengths.len();
        let npairs = pairs.len();
        let bins: Vec<Bin> = layout::split_bins(&res.host_lengths, bins);
        let alpha = layout::alpha(sc);
        let smax = sc.matrix.max_score().max(1);
        let e = |what: &'static str| dev_err(what);

        let mut scores = st.alloc_zeros::<u32>(npairs * ntargets).map_err(e("allocating scores"))?;
        let counter = st.alloc_zeros::<u32>(bins.len().max(1)).map_err(e("allocating counters"))?;
        // Profiles for each variant in use.
        let mut profiles: HashMap<Variant, (CudaSlice<i32>, CudaSlice<u32>, CudaSlice<u32>)> = HashMap::new();
        for b in &bins {
            if profiles.contains_key(&b.variant) {
                continue;
            }
            let p = layout::build_profiles(queries, pairs, sc, b.variant);
            let up = "uploading query profiles";
            profiles.insert(
                b.variant,
                (
                    st.clone_htod(&p.data).map_err(e(up))?,
                    st.clone_htod(&p.offsets).map_err(e(up))?,
                    st.clone_htod(&p.passes).map_err(e(up))?,
                ),
            );
        }
        // Launch geometry and boundary-row scratch of every bin; one scratch buffer serves all.
        let mut plans = Vec::new();
        let mut scratch_ints = 0usize;
        for b in &bins {
            let f = &self.search[&b.variant];
            let smem = (alpha * b.variant.rows() * 4) as usize;
            let per_sm = f
                .occupancy_max_active_blocks_per_multiprocessor(BLOCK, smem, None)
                .map_err(e("occupancy query"))?
                .max(1);
            let w = b.variant.targets_per_block();
            let groups = (b.end - b.begin).div_ceil(w) as usize;
            let grid = (per_sm as usize * self.gpu.sms as usize).min(groups * npairs).max(1);
            let maxcols = ((b.max_len as usize + 3) & !3) + 4;
            scratch_ints = scratch_ints.max(grid * w as usize * 2 * maxcols * 2);
            plans.push((grid as u32, smem as u32, maxcols as u32));
        }
        let scratch = st.alloc_zeros::<i32>(scratch_ints.max(4)).map_err(e("allocating scratch"))?;

        let ptr = |p: u64| p;
        for (bi, (b, &(grid, smem, maxcols))) in bins.iter().zip(&plans).enumerate() {
            let (prof, offs, passes) = &profiles[&b.variant];
            let args = SearchArgs {
                residues: ptr(res.residues.device_ptr(&st).0),
                starts: ptr(res.starts.device_ptr(&st).0),
                lengths: ptr(res.lengths.device_ptr(&st).0),
                profiles: ptr(prof.device_ptr(&st).0),
                pair_offset: ptr(offs.device_ptr(&st).0),
                pair_passes: ptr(passes.device_ptr(&st).0),
                scores: ptr(scores.device_ptr(&st).0),
                scratch: ptr(scratch.device_ptr(&st).0),
                counter: ptr(counter.device_ptr(&st).0) + 4 * bi as u64,
                tbegin: b.begin,
                tend: b.end,
                ntargets: ntargets as u32,
                npairs: npairs as u32,
                maxcols,
                alpha,
                neg_oe: both_lanes(-(sc.gap_open + sc.gap_extend)),
                neg_ext: both_lanes(-sc.gap_extend),
                threshold: 32767 - smax,
            };
            let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: smem };
            unsafe { st.launch_builder(&self.search[&b.variant]).arg(&args).launch(cfg) }
                .map_err(e("launching the search kernel"))?;
        }

        // Top-k: histogram, threshold, compaction of the hits at or above it.
        let nq = 2 * npairs;
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
        let counts: Vec<u32> = st.clone_dtoh(&count).map_err(e("reading top-k counts"))?;
        let cands: Vec<u32> = st.clone_dtoh(&cand).map_err(e("reading top-k hits"))?;
        st.synchronize().map_err(e("search"))?;

        let mut out = Vec::new();
        for (pi, &(a, b)) in pairs.iter().enumerate() {
            for (lane, q) in [(0usize, Some(a)), (1, b)] {
                let Some(q) = q else { continue };
                let qi = 2 * pi + lane;
                let n = counts[qi] as usize;
                let mut hits = Vec::with_capacity(n.min(cap));
                if n <= cap {
                    let base = qi * cap * 2;
                    for j in 0..n {
                        let (t, s) = (cands[base + 2 * j], cands[base + 2 * j + 1]);
                        hits.push((res.global[t as usize], s));
                    }
                } else {
                    // More ties at the threshold than the buffer holds: read the whole row.
                    let row = scores.slice(pi * ntargets..(pi + 1) * ntargets);
                    let all: Vec<u32> = st.clone_dtoh(&row).map_err(e("reading scores"))?;
                    st.synchronize().map_err(e("reading scores"))?;
                    for (t, v) in all.iter().enumerate() {
                        let s = if lane == 0 { v & 0xffff } else { v >> 16 };
                        if s > 0 {
                            hits.push((res.global[t], s));
                        }
                    }
                }
                out.push((q, hits));
            }
        }
        // Keep `scores` mutable-borrow-free until here.
        let _ = &mut scores;
        Ok(out)
    }
}

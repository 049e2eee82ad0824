//! Pairs by id with the search's structure: candidates that share a query run as that query
//! against its candidate targets (`kernels/sw_search.cu`, `-DPAIRED=1`): one profile per
//! query pass in shared memory, two targets per subwarp in the 16-bit lanes, the sequence
//! sets resident on the GPU, so that only the plan (query and target numbers) and the
//! results cross PCIe. Score and end cell; starts and paths come from the pair engine for
//! the pairs that need them.
//!
//! The plan ([`plan`]) is made on the host: candidates sorted by query and, within a query,
//! by target length (longest first, so the two lanes and the subwarps of an item step
//! through similar lengths), cut into groups of a warp's targets, up to [`ITEM_GROUPS`] groups an item.

use super::kernels::{self, Shape};
use super::layout::padded_len;
use super::runtime::{dev_err, Gpu};
use super::search::both_lanes;
use crate::engine::{recomputed, Alignment};
use crate::error::{Error, Result};
use crate::scoring::Scoring;
use cudarc::driver::{
    sys::CUfunction_attribute_enum, CudaFunction, CudaModule, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use std::sync::Arc;

/// Threads per block of the paired kernel (`PAIRED_BLOCK`): one warp, its own item.
const BLOCK: u32 = 32;
/// Slots of a group of `shape`: a warp's targets, two per subwarp.
pub fn group_slots(shape: Shape) -> usize {
    2 * (32 / shape.threads) as usize
}
/// Groups of an item at most (a query with more candidates takes several items).
pub const ITEM_GROUPS: usize = 32;
/// Boundary-row columns of an item at most (beyond one group): every resident warp holds
/// two buffers of its item's columns (8 bytes each) for multi-pass queries.
pub const ITEM_COLS: usize = 40_000;
/// A padding slot (`SLOT_NONE`).
const SLOT_NONE: u32 = u32::MAX;
/// Longest target the kernel takes (boundary rows are sized by an item's longest targets);
/// longer ones go to the pair engine.
pub const MAX_TARGET: u32 = 8192;

/// Kernel arguments; must match `struct PairedArgs` in kernels/sw_search.cu field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct PairedArgs {
    tres: u64,
    tstarts: u64,
    tlens: u64,
    qres: u64,
    qstarts: u64,
    qlens: u64,
    matrix: u64,
    items: u64,
    slot_target: u64,
    slot_out: u64,
    group_cols: u64,
    keys: u64,
    results: u64,
    scratch: u64,
    counter: u64,
    nitems: u32,
    maxcols: u32,
    alpha: u32,
    oe: u32,
    neg_ext: u32,
    threshold: i32,
}

unsafe impl DeviceRepr for PairedArgs {}

/// The items, groups and slots of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Per item: query number, first group, groups, 0; the items of most work first.
    pub items: Vec<[u32; 4]>,
    /// Per slot: the target number (an item's slots longest first; 0 in a padding slot).
    pub slot_target: Vec<u32>,
    /// Per slot: the candidate's index in the call's input, [`SLOT_NONE`] for padding.
    pub slot_out: Vec<u32>,
    /// Per group ([`group_slots`]): the offset of its boundary-row columns in its item's.
    pub group_cols: Vec<u32>,
    /// Boundary-row columns of the largest item.
    pub item_cols: usize,
    /// Candidates the kernel does not take (an empty side, a target over [`MAX_TARGET`]).
    pub rest: Vec<u32>,
}

/// The plan of `pairs` ((query, target) numbers into sets of lengths `qlens`, `tlens`):
/// every candidate exactly once, in a slot of an item of its own query or in `rest`. A
/// query's candidates are sorted longest target first and cut into groups of `group`
/// slots (the last one padded), at most `item_groups` groups an item.
pub fn plan(
    pairs: &[[u32; 2]],
    qlens: &[u32],
    tlens: &[u32],
    shape: Shape,
    item_groups: usize,
    max_target: u32,
) -> Plan {
    use rayon::prelude::*;
    let group = group_slots(shape);
    let item_groups = item_groups.max(1);
    let take = |&[q, t]: &[u32; 2]| {
        let (ql, tl) = (qlens[q as usize], tlens[t as usize]);
        ql != 0 && tl != 0 && tl <= max_target
    };
    // Each candidate as its sort key within its query (target length, longest first, then
    // input index) with its target beside it, grouped by query; the groups' (query, size).
    let key = |i: usize, p: &[u32; 2]| ((((u32::MAX - tlens[p[1] as usize]) as u64) << 32) | i as u64, p[1]);
    let (mut order, runs) = if pairs.par_windows(2).all(|w| w[0][0] <= w[1][0]) {
        // Already in query order (as overlap stages write their candidates): runs.
        let order: Vec<(u64, u32)> = pairs
            .par_iter()
            .enumerate()
            .with_min_len(1 << 16)
            .filter(|(_, p)| take(p))
            .map(|(i, p)| key(i, p))
            .collect();
        let mut runs: Vec<(u32, usize)> = Vec::new();
        for &(k, _) in &order {
            let q = pairs[k as u32 as usize][0];
            match runs.last_mut() {
                Some((last, n)) if *last == q => *n += 1,
                _ => runs.push((q, 1)),
            }
        }
        (order, runs)
    } else {
        by_query(pairs, qlens.len(), &take, &key)
    };
    let rest: Vec<u32> = if order.len() == pairs.len() {
        Vec::new()
    } else {
        (0..pairs.len() as u32).filter(|&i| !take(&pairs[i as usize])).collect()
    };
    let mut segments: Vec<(u32, &mut [(u64, u32)])> = Vec::with_capacity(runs.len());
    let mut left: &mut [(u64, u32)] = &mut order;
    for (q, n) in runs {
        let (seg, more) = std::mem::take(&mut left).split_at_mut(n);
        segments.push((q, seg));
        left = more;
    }
    let span = shape.span() as u64;
    // Runs of queries planned side by side (one allocation a run, not a query), then laid
    // end to end.
    let per_query: Vec<QueryPlan> = segments
        .into_par_iter()
        .with_min_len(256)
        .fold(QueryPlan::default, |mut p, (q, seg)| {
            seg.sort_unstable_by_key(|k| k.0);
            let mut first_group = p.group_cols.len() as u32;
            let mut cols = 0usize;
            for (k, g) in seg.chunks(group).enumerate() {
                // Each subwarp of the group has the longest target's columns.
                let need = (padded_len((u32::MAX - (g[0].0 >> 32) as u32) as usize) + 4) * group / 2;
                let groups = p.group_cols.len() as u32 - first_group;
                if k > 0 && (groups as usize == item_groups || cols + need > ITEM_COLS) {
                    p.items
                        .push(([q, first_group, groups, 0], (qlens[q as usize] as u64).div_ceil(span) * cols as u64));
                    (first_group, cols) = (p.group_cols.len() as u32, 0);
                }
                p.group_cols.push(cols as u32);
                cols += need;
                for k in 0..group {
                    match g.get(k) {
                        Some(&(key, t)) => {
                            p.slot_target.push(t);
                            p.slot_out.push(key as u32);
                        }
                        None => {
                            p.slot_target.push(0);
                            p.slot_out.push(SLOT_NONE);
                        }
                    }
                }
                p.item_cols = p.item_cols.max(cols);
            }
            let groups = p.group_cols.len() as u32 - first_group;
            p.items.push(([q, first_group, groups, 0], (qlens[q as usize] as u64).div_ceil(span) * cols as u64));
            p
        })
        .collect();
    let mut p = Plan { rest, ..Plan::default() };
    let slots: usize = per_query.iter().map(|q| q.slot_out.len()).sum();
    p.slot_target.reserve(slots);
    p.slot_out.reserve(slots);
    let mut items = Vec::with_capacity(per_query.iter().map(|q| q.items.len()).sum());
    for q in per_query {
        let base = p.group_cols.len() as u32;
        items.extend(q.items.iter().map(|&([query, first, groups, z], work)| ([query, first + base, groups, z], work)));
        p.group_cols.extend_from_slice(&q.group_cols);
        p.slot_target.extend_from_slice(&q.slot_target);
        p.slot_out.extend_from_slice(&q.slot_out);
        p.item_cols = p.item_cols.max(q.item_cols);
    }
    // Most work first (query passes x the groups' columns), so the last items are short.
    items.par_sort_by_key(|&(it, work)| (std::cmp::Reverse(work), it[0], it[1]));
    p.items = items.into_iter().map(|(it, _)| it).collect();
    p
}

/// The candidates of `pairs` that `take` accepts, as `key` gives them, grouped by query by
/// a counting sort (a comparison sort of the whole list took most of a call's host time):
/// counts, each query's range, the candidates scattered into their ranges; with each
/// non-empty range's (query, size), in query order.
fn by_query(
    pairs: &[[u32; 2]],
    queries: usize,
    take: &(impl Fn(&[u32; 2]) -> bool + Sync),
    key: &(impl Fn(usize, &[u32; 2]) -> (u64, u32) + Sync),
) -> (Vec<(u64, u32)>, Vec<(u32, usize)>) {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
    let counts: Vec<AtomicU32> = (0..queries).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    pairs.par_iter().with_min_len(1 << 16).filter(|p| take(p)).for_each(|p| {
        counts[p[0] as usize].fetch_add(1, Relaxed);
    });
    let mut runs = Vec::new();
    let mut total = 0usize;
    for (q, c) in counts.iter().enumerate() {
        let n = c.load(Relaxed) as usize;
        if n > 0 {
            runs.push((q as u32, n));
        }
        c.store(total as u32, Relaxed);
        total += n;
    }
    let order: Vec<AtomicU64> = (0..total).into_par_iter().map(|_| AtomicU64::new(0)).collect();
    let targets: Vec<AtomicU32> = (0..total).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    pairs.par_iter().enumerate().with_min_len(1 << 16).filter(|(_, p)| take(p)).for_each(|(i, p)| {
        let (k, t) = key(i, p);
        let at = counts[p[0] as usize].fetch_add(1, Relaxed) as usize;
        order[at].store(k, Relaxed);
        targets[at].store(t, Relaxed);
    });
    let order = order.into_par_iter().zip(targets).map(|(k, t)| (k.into_inner(), t.into_inner())).collect();
    (order, runs)
}

/// A run of queries' share of a [`Plan`], its groups numbered from 0, each item with its work.
#[derive(Default)]
struct QueryPlan {
    items: Vec<([u32; 4], u64)>,
    slot_target: Vec<u32>,
    slot_out: Vec<u32>,
    group_cols: Vec<u32>,
    item_cols: usize,
}

/// A sequence set as the kernel reads it: each sequence 4-byte aligned and padded with the
/// PAD code, 16 PAD bytes closing the buffer.
struct DeviceSet {
    residues: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    lengths: CudaSlice<u32>,
}

/// Packs `n` sequences (`seq(i)`) for the GPU; `pad` is the PAD code.
fn pack_set<'a>(n: usize, seq: &impl Fn(u32) -> &'a [u8], pad: u8) -> Result<(Vec<u8>, Vec<u32>, Vec<u32>)> {
    let mut starts = Vec::with_capacity(n);
    let mut lengths = Vec::with_capacity(n);
    let mut at = 0usize;
    for i in 0..n {
        let l = seq(i as u32).len();
        starts.push(at as u32);
        lengths.push(l as u32);
        at += padded_len(l);
        if at > u32::MAX as usize - 16 {
            return Err(Error::Internal("a sequence set over 4 GiB for the GPU's pairs by id".into()));
        }
    }
    let mut residues = vec![pad; at + 16];
    for i in 0..n {
        let s = seq(i as u32);
        let a = starts[i] as usize;
        residues[a..a + s.len()].copy_from_slice(s);
    }
    Ok((residues, starts, lengths))
}

/// The paired kernel on one GPU with the two sets resident.
pub struct PairedAligner {
    gpu: Gpu,
    shape: Shape,
    _module: Arc<CudaModule>,
    func: CudaFunction,
    target: DeviceSet,
    /// The query set; `None` when it is the target set.
    query: Option<DeviceSet>,
    matrix: CudaSlice<i16>,
    qlens: Vec<u32>,
    tlens: Vec<u32>,
    alpha: u32,
    oe: u32,
    neg_ext: u32,
    threshold: i32,
    /// Where each call's time went, kept when asked for ([`PairedAligner::report`]).
    report: Option<std::sync::Mutex<Vec<String>>>,
}

impl PairedAligner {
    /// Opens GPU `ordinal`, loads the kernel of `shape` ([`kernels::PAIRED_SHAPE`] is the one
    /// shipped compiled; others compile at run time) and uploads the sets: `target` (`tn`
    /// sequences, `tseq(i)`) and, unless `None` (the same set), the query set.
    pub fn new<'a, F: Fn(u32) -> &'a [u8]>(
        ordinal: usize,
        sc: &Scoring,
        shape: Shape,
        target: (usize, F),
        query: Option<(usize, F)>,
    ) -> Result<PairedAligner> {
        let gpu = Gpu::open(ordinal)?;
        unsafe { gpu.ctx.disable_event_tracking() };
        let build = kernels::search_paired(shape, &[]);
        let module = gpu.load(&build.kernel.source(), &build.options)?;
        let func = gpu.function(&module, build.kernel.entry())?;
        func.set_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024)
            .map_err(dev_err("raising the shared-memory limit"))?;
        let n = sc.matrix.size();
        if n > 31 {
            return Err(Error::Internal(format!("pairs by id on the GPU take alphabets of up to 31 codes, not {n}")));
        }
        let pad = n as u8;
        let st = gpu.stream.clone();
        let up = |(res, starts, lens): (Vec<u8>, Vec<u32>, Vec<u32>)| -> Result<(DeviceSet, Vec<u32>)> {
            let e = || dev_err("uploading a sequence set");
            Ok((
                DeviceSet {
                    residues: st.clone_htod(&res).map_err(e())?,
                    starts: st.clone_htod(&starts).map_err(e())?,
                    lengths: st.clone_htod(&lens).map_err(e())?,
                },
                lens,
            ))
        };
        let (tset, tlens) = up(pack_set(target.0, &target.1, pad)?)?;
        let (qset, qlens) = match query {
            Some((qn, qseq)) => {
                let (s, l) = up(pack_set(qn, &qseq, pad)?)?;
                (Some(s), l)
            }
            None => (None, tlens.clone()),
        };
        let mut m = vec![0i16; n * n];
        for a in 0..n {
            for b in 0..n {
                m[a * n + b] = sc.matrix.score(a as u8, b as u8) as i16;
            }
        }
        let matrix = st.clone_htod(&m).map_err(dev_err("uploading the matrix"))?;
        st.synchronize().map_err(dev_err("uploading the sequence sets"))?;
        let smax = sc.matrix.max_score().max(1);
        let oe = sc.gap_open + sc.gap_extend;
        Ok(PairedAligner {
            gpu,
            shape,
            _module: module,
            func,
            target: tset,
            query: qset,
            matrix,
            qlens,
            tlens,
            alpha: n as u32 + 1,
            oe: both_lanes(oe),
            neg_ext: both_lanes(-sc.gap_extend),
            threshold: 32767 - smax - oe,
            report: None,
        })
    }

    /// The same aligner keeping, per call, where its time went and the share of the cells
    /// it stepped through that were real ([`PairedAligner::reports`]).
    pub fn with_reports(mut self) -> PairedAligner {
        self.report = Some(std::sync::Mutex::new(Vec::new()));
        self
    }

    /// The calls' reports since the last look.
    pub fn reports(&self) -> Vec<String> {
        self.report
            .as_ref()
            .map_or_else(Vec::new, |r| std::mem::take(&mut *r.lock().unwrap_or_else(|e| e.into_inner())))
    }

    /// The kernel's registers, local (spilled) bytes and blocks per SM, for reports.
    pub fn kernel_report(&self) -> String {
        let smem = (self.alpha as usize) * self.shape.span() * 2;
        let regs = self.func.num_regs().unwrap_or(-1);
        let local = self.func.local_size_bytes().unwrap_or(-1);
        let blocks = self.func.occupancy_max_active_blocks_per_multiprocessor(BLOCK, smem, None).unwrap_or(0);
        format!(
            "{} {}x{}: {regs} registers, {local} local bytes, {blocks} blocks of {BLOCK} per SM",
            self.gpu.name, self.shape.threads, self.shape.rows
        )
    }

    /// Score and end cell ([`crate::engine::Level::ScoreEnd`]) of each candidate, in input
    /// order; `None` where the kernel did not give it (the plan's `rest`, or a score that
    /// may have overflowed 16 bits): the caller aligns those another way.
    pub fn align_ends(&self, pairs: &[[u32; 2]]) -> Result<Vec<Option<Alignment>>> {
        let t0 = std::time::Instant::now();
        let p = plan(pairs, &self.qlens, &self.tlens, self.shape, ITEM_GROUPS, MAX_TARGET);
        let group = group_slots(self.shape);
        let t_plan = t0.elapsed();
        let mut out = vec![None; pairs.len()];
        if p.items.is_empty() {
            return Ok(out);
        }
        let e = |what: &'static str| dev_err(what);
        // A stream of the call's own, so that calls in flight together wait only for their
        // own work (the sets were uploaded and synchronized at start).
        let st = &self.gpu.ctx.new_stream().map_err(e("creating a stream"))?;
        let items: Vec<u32> = p.items.iter().flatten().copied().collect();
        let up = "uploading the plan";
        let d_items = st.clone_htod(&items).map_err(e(up))?;
        let d_targets = st.clone_htod(&p.slot_target).map_err(e(up))?;
        let d_out = st.clone_htod(&p.slot_out).map_err(e(up))?;
        let d_cols = st.clone_htod(&p.group_cols).map_err(e(up))?;
        // The kernel writes every slot's result; the plan's `rest` is left unwritten.
        let results = unsafe { st.alloc::<i32>(4 * pairs.len()) }.map_err(e("allocating results"))?;
        let counter = st.alloc_zeros::<u32>(1).map_err(e("allocating the counter"))?;
        let span = self.shape.span() as u32;
        let smem = (self.alpha * span * 2) as usize;
        let per_sm = self
            .func
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, smem, None)
            .map_err(e("occupancy query"))?
            .max(1);
        let grid = (per_sm * self.gpu.sms).min(p.items.len() as u32).max(1);
        let multipass = p.items.iter().any(|it| self.qlens[it[0] as usize] > span);
        let (scratch_ints, key_slots) =
            if multipass { (grid as usize * 2 * p.item_cols * 2, p.slot_out.len()) } else { (4, 1) };
        let scratch = st.alloc_zeros::<i32>(scratch_ints).map_err(e("allocating scratch"))?;
        let keys = st.alloc_zeros::<u64>(key_slots).map_err(e("allocating scratch"))?;
        let q = self.query.as_ref().unwrap_or(&self.target);
        let args = PairedArgs {
            tres: self.target.residues.device_ptr(st).0,
            tstarts: self.target.starts.device_ptr(st).0,
            tlens: self.target.lengths.device_ptr(st).0,
            qres: q.residues.device_ptr(st).0,
            qstarts: q.starts.device_ptr(st).0,
            qlens: q.lengths.device_ptr(st).0,
            matrix: self.matrix.device_ptr(st).0,
            items: d_items.device_ptr(st).0,
            slot_target: d_targets.device_ptr(st).0,
            slot_out: d_out.device_ptr(st).0,
            group_cols: d_cols.device_ptr(st).0,
            keys: keys.device_ptr(st).0,
            results: results.device_ptr(st).0,
            scratch: scratch.device_ptr(st).0,
            counter: counter.device_ptr(st).0,
            nitems: p.items.len() as u32,
            maxcols: p.item_cols as u32,
            alpha: self.alpha,
            oe: self.oe,
            neg_ext: self.neg_ext,
            threshold: self.threshold,
        };
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: smem as u32 };
        st.synchronize().map_err(e(up))?;
        let t_upload = t0.elapsed();
        unsafe { st.launch_builder(&self.func).arg(&args).launch(cfg) }.map_err(e("launching the paired kernel"))?;
        st.synchronize().map_err(e("the paired kernel"))?;
        let t_kernel = t0.elapsed();
        let host: Vec<i32> = st.clone_dtoh(&results).map_err(e("reading results"))?;
        st.synchronize().map_err(e("the paired kernel"))?;
        if let Some(report) = &self.report {
            let (mut real, mut stepped) = (0f64, 0f64);
            for it in &p.items {
                let ql = self.qlens[it[0] as usize] as f64;
                let rows = (ql / span as f64).ceil() * span as f64;
                for g in it[1]..it[1] + it[2] {
                    let lead = self.tlens[p.slot_target[g as usize * group] as usize] as f64;
                    stepped += rows * group as f64 * (lead + 2.0 * self.shape.threads as f64);
                    for s in g as usize * group..(g as usize + 1) * group {
                        if p.slot_out[s] != SLOT_NONE {
                            real += ql * self.tlens[p.slot_target[s] as usize] as f64;
                        }
                    }
                }
            }
            let line = format!(
                "paired: real cells {real:.4e} of {stepped:.4e} stepped ({:.1}%); plan {:.3}s, upload {:.3}s, kernel {:.3}s, results {:.3}s; {} items, {} groups, {} slots, grid {grid}",
                100.0 * real / stepped,
                t_plan.as_secs_f64(),
                (t_upload - t_plan).as_secs_f64(),
                (t_kernel - t_upload).as_secs_f64(),
                (t0.elapsed() - t_kernel).as_secs_f64(),
                p.items.len(),
                p.group_cols.len(),
                p.slot_out.len()
            );
            report.lock().unwrap_or_else(|e| e.into_inner()).push(line);
        }
        use rayon::prelude::*;
        out.par_iter_mut().zip(host.par_chunks_exact(4)).with_min_len(1 << 14).for_each(|(o, r)| {
            if r[0] >= 0 {
                *o = Some(Alignment {
                    score: r[0],
                    qend: r[1] as u32,
                    tend: r[2] as u32,
                    recomputed: recomputed(r[0]),
                    ..Default::default()
                });
            }
        });
        for &i in &p.rest {
            out[i as usize] = None;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan against a naive account: every candidate once, in a slot of an item of its
    /// own query (or in `rest` exactly when a side is empty or the target too long), items
    /// within the slot limit, an item's slots longest first, and the output index naming
    /// the candidate the slot holds.
    #[test]
    fn every_candidate_is_planned_exactly_once() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let qlens: Vec<u32> = (0..300).map(|_| next(900) as u32).collect();
        let tlens: Vec<u32> = (0..500).map(|_| next(12_000) as u32).collect();
        for (n, queries) in [(0usize, 300u64), (1, 300), (17, 300), (5000, 300), (5001, 300), (5000, 3)] {
            let mut pairs: Vec<[u32; 2]> = (0..n).map(|_| [next(queries) as u32, next(500) as u32]).collect();
            // Every other case in query order, as overlap stages write candidates (the plan
            // takes the runs as they are instead of sorting).
            if n % 2 == 1 || queries == 3 {
                pairs.sort_by_key(|p| p[0]);
            }
            let p = plan(&pairs, &qlens, &tlens, Shape { threads: 8, rows: 32 }, 4, MAX_TARGET);
            let mut seen = vec![0u32; n];
            for &i in &p.rest {
                seen[i as usize] += 1;
                let [q, t] = pairs[i as usize];
                assert!(qlens[q as usize] == 0 || tlens[t as usize] == 0 || tlens[t as usize] > MAX_TARGET);
            }
            assert_eq!(p.slot_target.len(), 8 * p.group_cols.len());
            assert_eq!(p.slot_out.len(), p.slot_target.len());
            let mut groups = 0;
            let mut covered = vec![0u32; p.group_cols.len()];
            for it in &p.items {
                let (q, first, k) = (it[0], it[1] as usize, it[2] as usize);
                assert!((1..=4).contains(&k));
                groups += k;
                covered[first..first + k].iter_mut().for_each(|c| *c += 1);
                let mut cols = 0;
                for g in first..first + k {
                    assert_eq!(p.group_cols[g] as usize, cols);
                    let lead = tlens[p.slot_target[8 * g] as usize] as usize;
                    cols += (padded_len(lead) + 4) * 4;
                    for s in 8 * g..8 * g + 8 {
                        let i = p.slot_out[s];
                        if i == SLOT_NONE {
                            // Padding only at the end of an item's last group.
                            assert!(g == first + k - 1 && p.slot_out[s..8 * g + 8].iter().all(|&j| j == SLOT_NONE));
                            continue;
                        }
                        seen[i as usize] += 1;
                        assert_eq!(pairs[i as usize], [q, p.slot_target[s]], "slot {s}");
                        assert!(tlens[p.slot_target[s] as usize] as usize <= lead);
                        if s > 8 * first && p.slot_out[s - 1] != SLOT_NONE {
                            assert!(tlens[p.slot_target[s] as usize] <= tlens[p.slot_target[s - 1] as usize]);
                        }
                    }
                }
                assert!(cols <= p.item_cols);
            }
            assert_eq!(groups, p.group_cols.len());
            assert!(covered.iter().all(|&c| c == 1));
            assert!(seen.iter().all(|&c| c == 1), "n = {n}");
        }
    }
}

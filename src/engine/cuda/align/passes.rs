//! The score passes' launches: GPU binning, the forward and reverse launches of
//! kernels/align.cu, and the 32-bit recomputation of pairs that overflow 16 bits.

use super::*;

impl GpuAligner {
    /// The passes of `level` over `bins` at 32 bits, synchronously (the rare pairs whose
    /// 16-bit lanes may have wrapped): the piece's residues and pair table are already on
    /// the GPU at `seqs` and `descs`. Returns (ends, starts) by pair index (starts empty
    /// at [`Level::ScoreEnd`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_wide(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        seqs: u64,
        descs: u64,
        bins: &[Bin],
        npairs: usize,
        level: Level,
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
        self.launch_passes(d, stream, &t, &dev, level)?;
        let raw = stream.clone_dtoh(&out).map_err(err("reading results"))?;
        drop((groups, warps, scratch));
        Ok((cells(&raw[..4 * npairs]), cells(&raw[4 * npairs..])))
    }

    /// Queues the three kernels of kernels/pair_bins.cu that write a GPU-binned piece's pair
    /// and group tables (bucket counters already zeroed).
    pub(super) fn launch_bins(
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

    /// Queues the forward pass over every launch, then (at [`Level::Coordinates`]) the
    /// reverse pass over the same launches reading the forward results on the device.
    pub(super) fn launch_passes(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        t: &Tables,
        dev: &PieceDev,
        level: Level,
    ) -> Result<()> {
        // The modes without a free start have no reverse pass (starts are residue 1).
        let reverse = self.mode.is_local() || self.mode.reverse_pass().is_some();
        let passes: &[bool] = if level == Level::Coordinates && reverse { &[false, true] } else { &[false] };
        for &reverse in passes {
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
    pub(super) fn launch(
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
        // The modes' kernel keeps one more (zero) row of the table.
        let fixed = matrix_shared_bytes(self.nc1 as usize + !self.mode.is_local() as usize);
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
            mode_flags: modes::kernel_flags(match self.mode.reverse_pass() {
                Some(rm) if reverse => rm,
                _ => self.mode,
            }),
            range_lo: if l.packed { modes::PACKED_RANGE } else { modes::WIDE_RANGE },
            max_score: self.max_score,
        };
        let reverse = reverse as i32;
        let mut lb = stream.launch_builder(&f);
        lb.arg(&args).arg(&reverse);
        unsafe { lb.launch(cfg) }.map_err(dev_err("launching align_pairs"))?;
        Ok(())
    }
}

/// The group and warp tables of `bins` (all of one lane width) for one upload each.
pub(super) fn tables(bins: &[Bin], pipeline_below: usize) -> Result<Tables> {
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
pub(super) fn launch_tables(launches: Vec<Launch>, groups: Vec<i32>) -> Tables {
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

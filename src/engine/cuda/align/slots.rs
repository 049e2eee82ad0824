//! The slot pipeline of the score passes: each worker keeps pieces in flight in slots,
//! packing one on the host while the GPU runs another, and reads each back in turn.

use super::passes::{launch_tables, tables};
use super::*;

impl GpuAligner {
    /// One worker of a call: takes pieces from the shared queue and keeps up to
    /// `align_depth` of them in flight on its device, each in a [`Slot`]: while the GPU runs
    /// one, the worker reads back the one before and prepares the next.
    pub(super) fn align_worker(
        &self,
        d: &Device,
        w: usize,
        pairs: PairSeqs<'_>,
        level: Level,
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
            pending.push_back(self.enqueue(d, slot, k, pairs.slice(r.clone()), level)?);
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
    /// stream: one upload, the passes of `level`, one read-back, with the slot's marks
    /// between.
    pub(super) fn enqueue<'a>(
        &self,
        d: &Device,
        mut guard: std::sync::MutexGuard<'a, Slot>,
        piece: usize,
        pairs: PairSeqs<'_>,
        level: Level,
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
        self.launch_passes(d, stream, &tables, &dev, level)?;
        mark(2)?;
        // Ends, then (with starts) the reverse pass's cells.
        let words = out_words(n, level);
        let dst = &mut host_out.as_mut_slice().map_err(err("pinned buffer"))?[..words];
        stream.memcpy_dtoh(&dev_out.slice(..words), dst).map_err(err("reading results"))?;
        mark(3)?;
        let c = &self.counters;
        c.prepare_ns.fetch_add((t1 - t0).as_nanos() as u64, Ordering::Relaxed);
        c.upload_ns.fetch_add(t1.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(Pending { slot: guard, piece, npairs: n, layout, level })
    }

    /// Waits for a queued piece, recomputes at 32 bits the pairs whose 16-bit lanes may have
    /// wrapped (on the slot, whose inputs are still on the GPU), and returns the piece's
    /// alignments in order.
    pub(super) fn harvest(&self, d: &Device, p: Pending<'_>, pairs: PairSeqs<'_>) -> Result<Vec<Alignment>> {
        let t0 = Instant::now();
        let Pending { mut slot, npairs: n, layout, level, .. } = p;
        if pairs.len() != n {
            return Err(Error::Internal("align piece changed size in flight".into()));
        }
        slot.marks[3].synchronize().map_err(dev_err("waiting for the GPU"))?;
        let slot = &mut *slot;
        let at = |k: usize| d.epoch.elapsed_ms(&slot.marks[k]).map_err(dev_err("reading an event"));
        let span = [at(0)?, at(1)?, at(2)?, at(3)?];
        d.spans.lock().map_err(|_| Error::Internal("span lock poisoned".into()))?.push(span);
        let raw = match slot.host_out.as_ref() {
            Some(h) => &h.as_slice().map_err(dev_err("pinned buffer"))?[..out_words(n, level)],
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
            let (e, st) = self.run_wide(d, &slot.stream, base, base + layout.descs as u64, &bins, n, level)?;
            for it in &wide {
                let i = it.index as usize;
                ends[i] = e[i];
                if level == Level::Coordinates {
                    starts[i] = st[i];
                }
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
                .map(|i| match level {
                    Level::ScoreEnd if !self.mode.is_local() => modes::finish_end(ends[i], self.mode),
                    Level::Coordinates if !self.mode.is_local() => {
                        modes::finish(ends[i], starts[i], &self.scoring, self.mode)
                    }
                    Level::ScoreEnd => Ok(finish_end(ends[i])),
                    Level::Coordinates => finish(ends[i], (ends[i].score > 0).then_some(starts[i])),
                })
                .collect()
        })
    }
}

/// Result words read back for `n` pairs: an int4 per pair for the ends, another for the
/// starts when the reverse pass ran.
pub(super) fn out_words(n: usize, level: Level) -> usize {
    match level {
        Level::ScoreEnd => 4 * n,
        Level::Coordinates => 8 * n,
    }
}

/// Where a piece of `n` pairs and `residues` residue bytes lies in its slot ([`InLayout`]).
pub(super) fn in_layout(residues: usize, n: usize, binning: &Binning) -> InLayout {
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
pub(super) fn write_descs(pairs: PairSeqs<'_>, dst: &mut [u8]) {
    let mut at = 0usize;
    for ((q, t), d) in pairs.iter().zip(dst.chunks_exact_mut(16)) {
        let v = [at as u32, (at + q.len()) as u32, q.len() as u32, t.len() as u32];
        at += q.len() + t.len();
        for (k, x) in v.iter().enumerate() {
            d[4 * k..4 * k + 4].copy_from_slice(&x.to_ne_bytes());
        }
    }
}

pub(super) fn put_i32(dst: &mut [u8], src: &[i32]) {
    for (d, x) in dst.chunks_exact_mut(4).zip(src) {
        d.copy_from_slice(&x.to_ne_bytes());
    }
}

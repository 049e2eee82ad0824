//! The path passes: traceback statistics and paths of aligned pairs on the GPU
//! (kernels/path_trace.cu: a thread per short rectangle, a warp per long one; in the global
//! and semi-global modes its modes variant), rectangles over the direction budget left to
//! the CPU.

use super::*;

impl GpuAligner {
    /// Pairs per piece of the path kernels: one thread per rectangle needs many rectangles
    /// per launch to fill the GPU (a 32,768-job launch kept 6% of the warps busy on the
    /// H100), so a call goes over the streams in one piece each.
    pub(super) fn path_piece_pairs(&self, n: usize) -> usize {
        n.div_ceil(self.workers().max(1)).clamp(MIN_PIECE_PAIRS, PATH_PIECE_PAIRS)
    }

    /// Counters of each alignment's traceback path by the path rule, in input order:
    /// `Some([pairs, nident, gap opens])`, or `None` for a rectangle the GPU leaves to the
    /// caller (as for [`Self::paths`]). Score 0 gives zeros in local mode; in the global and
    /// semi-global modes every alignment is traced (the kernel's modes variant), and one
    /// with a side without residues is left to the caller. The traceback kernel counts
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
    pub(super) fn traced_counts_chunk(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
    ) -> Result<Vec<Option<[u32; 3]>>> {
        let mut out: Vec<Option<[u32; 3]>> = vec![Some([0; 3]); pairs.len()];
        let elsewhere = self.each_plan(d, pairs, alignments, &self.scoring, |plan| {
            let t0 = Instant::now();
            let words = 2 * plan.index.len();
            let build = kernels::path_counts(self.kind, plan.threads);
            let (counts, meta) = self.trace_rectangles(d, si, pairs, plan, build, words)?;
            let mut missed = Vec::new();
            for (k, &i) in plan.index.iter().enumerate() {
                let i = i as usize;
                let (h, ended, n) = (meta[4 * k + 1], meta[4 * k + 2], meta[4 * k + 3]);
                if ended == WINDOW_MISS {
                    missed.push(i as u32);
                    continue;
                }
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
            Ok(missed)
        })?;
        for i in elsewhere {
            out[i as usize] = None;
        }
        Ok(out)
    }

    /// Runs `run` over the plans of a piece's paths: the thread variant's, the warp
    /// variant's (windows around the diagonal), then the warp variant's again with every
    /// column stored for the pairs whose walks left their windows (`run` returns those).
    /// Returns the pairs no plan takes (`PathPlan::elsewhere`).
    fn each_plan(
        &self,
        d: &Device,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        sc: &Scoring,
        mut run: impl FnMut(&mut PathPlan) -> Result<Vec<u32>>,
    ) -> Result<Vec<u32>> {
        let mut elsewhere = Vec::new();
        for threads in kernels::PATH_THREADS {
            let variant = Variant::of(threads, WARP_MIN_ROWS);
            let mut plan = plan_paths(pairs, alignments, d.path_budget, self.mode, sc, variant);
            elsewhere.extend_from_slice(&plan.elsewhere);
            if plan.index.is_empty() {
                continue;
            }
            let missed = run(&mut plan)?;
            if missed.is_empty() {
                continue;
            }
            self.counters.window_misses.fetch_add(missed.len() as u64, Ordering::Relaxed);
            let mut only = vec![false; alignments.len()];
            for &i in &missed {
                only[i as usize] = true;
            }
            let full = Variant { full_window: true, only: Some(&only), ..variant };
            let mut plan = plan_paths(pairs, alignments, d.path_budget, self.mode, sc, full);
            elsewhere.extend_from_slice(&plan.elsewhere);
            if !plan.index.is_empty() {
                // Every column stored: no walk leaves it (any that did would go elsewhere).
                elsewhere.extend(run(&mut plan)?);
            }
        }
        Ok(elsewhere)
    }

    /// Runs the traceback kernel `build` over `plan`'s rectangles on stream `si` (their
    /// residues uploaded first) and reads back `out_words` words of its output and its meta
    /// (4 per job).
    pub(super) fn trace_rectangles(
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
            let idents = self.scoring.identity_codes() as i32;
            for l in &plan.launches {
                let (first, count) = (l.first as i32, l.count as i32);
                let cfg = LaunchConfig {
                    grid_dim: ((l.count as u32 * plan.threads).div_ceil(128), 1, 1),
                    block_dim: (128, 1, 1),
                    shared_mem_bytes: (self.nc1 * self.nc1) as u32,
                };
                let mut lb = stream.launch_builder(&f);
                lb.arg(&jobs).arg(&first).arg(&count).arg(&region).arg(seqs).arg(&d.matrix).arg(&self.nc1);
                lb.arg(&self.gap_oe).arg(&self.gap_ext).arg(dirs).arg(scratch).arg(&out_at).arg(&mut *ops);
                lb.arg(&mut *meta).arg(&idents);
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
    pub(super) fn path_kernel(&self, d: &Device, build: kernels::Build) -> Result<CudaFunction> {
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
    /// specified by `traceback::trace`, and in the global and semi-global modes by
    /// `traceback::trace_mode` through its modes variant), in input order; `None` for a
    /// rectangle the GPU leaves to the caller (its warp's directions would exceed the
    /// per-stream budget; in those modes also a side without residues, or values past the
    /// rule's 32 bits: `path_plan::plan_paths`). Score 0 gives an empty path in local mode.
    pub fn paths(&self, pairs: PairSeqs<'_>, alignments: &[Alignment], sc: &Scoring) -> Result<Vec<Option<Traceback>>> {
        if alignments.len() != pairs.len() {
            return Err(Error::Internal("traceback: alignments and pairs differ in number".into()));
        }
        self.by_pieces(pairs, self.path_piece_pairs(pairs.len()), |d, s, piece, r| {
            self.paths_chunk(d, s, piece, &alignments[r], sc)
        })
    }

    pub(super) fn paths_chunk(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        sc: &Scoring,
    ) -> Result<Vec<Option<Traceback>>> {
        let mut out: Vec<Option<Traceback>> = vec![Some(Traceback::default()); pairs.len()];
        let elsewhere = self.each_plan(d, pairs, alignments, sc, |plan| {
            self.trace_plan(d, si, pairs, alignments, sc, plan, &mut out)
        })?;
        for i in elsewhere {
            out[i as usize] = None;
        }
        Ok(out)
    }

    /// The paths of `plan`'s rectangles (one variant of the traceback kernel) into `out`;
    /// returns the pairs whose walks left the warp variant's windows.
    #[allow(clippy::too_many_arguments)]
    fn trace_plan(
        &self,
        d: &Device,
        si: usize,
        pairs: PairSeqs<'_>,
        alignments: &[Alignment],
        sc: &Scoring,
        plan: &mut PathPlan,
        out: &mut [Option<Traceback>],
    ) -> Result<Vec<u32>> {
        use rayon::prelude::*;
        let out_words = plan.out_words;
        let build = kernels::path_trace(self.kind, plan.threads);
        let (words, meta) = self.trace_rectangles(d, si, pairs, plan, build, out_words)?;
        let t0 = Instant::now();
        let traced: Vec<(usize, Result<Option<Traceback>>)> = (0..plan.index.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|k| {
                let i = plan.index[k] as usize;
                let (n, h, ended) = (meta[4 * k], meta[4 * k + 1], meta[4 * k + 2]);
                let a = &alignments[i];
                if ended == WINDOW_MISS {
                    return (i, Ok(None));
                }
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
                (i, traceback::from_ops(q, t, sc, a, self.mode, n as usize, op).map(Some))
            })
            .collect();
        let mut missed = Vec::new();
        for (i, tb) in traced {
            match tb? {
                Some(tb) => out[i] = Some(tb),
                None => missed.push(i as u32),
            }
        }
        self.counters.decode_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(missed)
    }

    /// `staging`'s device buffer and its pinned twin, of at least `total` bytes.
    pub(super) fn grow_staging(
        &self,
        d: &Device,
        stream: &Arc<CudaStream>,
        staging: &mut Staging,
        total: usize,
    ) -> Result<()> {
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
    pub(super) fn upload_rectangles<'s>(
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
}

/// The walk's end (meta's third field) of a warp-variant job whose path left the stored
/// window (kernels/path_trace.cu): the pair is traced elsewhere.
const WINDOW_MISS: i32 = 2;

/// Direction words per stream for the traceback kernel: two fifths of the GPU's memory over
/// its streams, from [`PATH_BUDGET_WORDS`] on. The directions held at once are what fills
/// the GPU: one thread per rectangle, 512 MiB held 1,600 of the H100's ~67,000 resident
/// threads on 400 x 1,664 rectangles (6% of the warps active); a warp per long rectangle
/// holds 4 bits of each of its cells (50 MB for 10,000 x 10,000), so thousands of such
/// warps need tens of GB.
pub(super) fn path_budget_words(total_mem: usize, streams: usize) -> u64 {
    let share = total_mem as u64 / 5 * 2 / streams.max(1) as u64 / 8;
    share.max(PATH_BUDGET_WORDS)
}

/// `slot`'s buffer, replaced by one a quarter larger than `len` when it is shorter.
pub(super) fn grown<'a, T: DeviceRepr>(
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

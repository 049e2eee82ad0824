//! Which GPUs and streams an align call runs on: claiming GPUs per call, and the workers
//! (one host thread per stream) that take pieces of a call from a shared counter.

use super::*;

impl GpuAligner {
    /// The GPUs an align call runs on: all of them when no other call is running (one call
    /// at a time gets every GPU), else the least busy one alone. Calls that overlap (the
    /// pipeline keeps several in flight) then each end on one GPU instead of waiting on all:
    /// short pairs by id ran slower on two H200s than on one when every call was split.
    pub(super) fn claim_gpus(&self) -> Busy<'_> {
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
    pub(super) fn on_workers<T: Clone + Default + Send>(
        &self,
        pairs: PairSeqs<'_>,
        piece_pairs: usize,
        worker: impl Fn(&Device, usize, &[std::ops::Range<usize>], &AtomicUsize, &Done<T>) -> Result<()> + Sync,
    ) -> Result<Vec<T>> {
        let all: Vec<usize> = (0..self.devices.len()).collect();
        self.on_gpus(&all, pairs, piece_pairs, worker)
    }

    /// [`Self::on_workers`] on the streams of the GPUs `gpus` only.
    pub(super) fn on_gpus<T: Clone + Default + Send>(
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

    /// Runs `f` on pieces of `pairs`, one piece at a time per worker ([`Self::on_workers`]),
    /// and returns its results in input order. `f` gets the piece and its range in `pairs`.
    pub(super) fn by_pieces<T: Clone + Default + Send>(
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
}

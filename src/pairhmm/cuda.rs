//! The CUDA engine: kernels/pairhmm.cu (one warp per pair, anti-diagonal stripes of 32 read
//! rows), compiled by NVRTC in float and in double from the one source. A batch's read and
//! haplotype buffers are uploaded as they are (no repacking); the pairs are ordered by
//! haplotype then read length (length binning: the warps get similar work, the longest
//! first) and dealt alternately to two streams, whose launches run concurrently, each with
//! its own host thread reading back and checking its results. Pairs whose scaled float sum is
//! below GKL's threshold are recomputed by the double kernel.
//!
//! Runs on the first GPU.

use super::batch::PairBatch;
use super::model::{tables, Probabilities, Real, FLOAT_RESULT_THRESHOLD};
use super::{Engine, Likelihood};
use crate::engine::cuda::kernels;
use crate::engine::cuda::runtime::{dev_err, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Streams (each with a host thread) sharing a batch.
const STREAMS: usize = 2;
/// Pairs per launch: a few waves of the GPU's warps, several pieces per batch.
const PIECE_PAIRS: usize = 1 << 16;
const BLOCK_THREADS: u32 = 256;
/// Resident blocks per SM the grid is sized for.
const BLOCKS_PER_SM: u32 = 8;

/// The kernel and tables of one precision.
struct Precision<T> {
    func: CudaFunction,
    ph2pr: CudaSlice<T>,
    mm: CudaSlice<T>,
}

impl<T: Real + DeviceRepr> Precision<T> {
    fn new(gpu: &Gpu, probs: &Probabilities<T>, double: bool) -> Result<Self> {
        let build = kernels::pairhmm(double, &[]);
        let module = gpu.load(&build.kernel.source(), &build.options)?;
        let func = gpu.function(&module, build.kernel.entry())?;
        let mm: Vec<T> = (0..128u8)
            .flat_map(|hi| (0..=hi).map(move |lo| (hi, lo)))
            .map(|(hi, lo)| probs.match_to_match(hi, lo))
            .collect();
        let ph2pr = gpu.stream.clone_htod(&probs.ph2pr[..]).map_err(dev_err("uploading tables"))?;
        let mm = gpu.stream.clone_htod(&mm).map_err(dev_err("uploading tables"))?;
        gpu.stream.synchronize().map_err(dev_err("uploading tables"))?;
        Ok(Precision { func, ph2pr, mm })
    }
}

/// Device buffers of one stream, grown as needed and reused.
#[derive(Default)]
struct Buffers {
    descs: Option<CudaSlice<u32>>,
    single: Work<f32>,
    double: Work<f64>,
}

/// The batch's reads and haplotypes on the GPU, shared by the streams.
#[derive(Default)]
struct Shared {
    reads: Option<CudaSlice<u8>>,
    haps: Option<CudaSlice<u8>>,
}

/// A kernel's per-warp scratch rows and its output slots.
struct Work<T> {
    scratch: Option<CudaSlice<T>>,
    out: Option<CudaSlice<T>>,
}

impl<T> Default for Work<T> {
    fn default() -> Self {
        Work { scratch: None, out: None }
    }
}

pub struct CudaEngine {
    gpu: Gpu,
    single: Precision<f32>,
    double: Precision<f64>,
    streams: Vec<(Arc<CudaStream>, Mutex<Buffers>)>,
    shared: Mutex<Shared>,
}

impl CudaEngine {
    pub fn new(_threads: usize) -> Result<Self> {
        let gpu = Gpu::open(0)?;
        let (f, d) = tables();
        let single = Precision::new(&gpu, f, false)?;
        let double = Precision::new(&gpu, d, true)?;
        let streams = (0..STREAMS)
            .map(|_| Ok((gpu.ctx.new_stream().map_err(dev_err("creating a stream"))?, Mutex::new(Buffers::default()))))
            .collect::<Result<Vec<_>>>()?;
        Ok(CudaEngine { gpu, single, double, streams, shared: Mutex::new(Shared::default()) })
    }

    fn warps(&self) -> usize {
        (self.gpu.sms * BLOCKS_PER_SM * BLOCK_THREADS / 32) as usize
    }
}

impl Engine for CudaEngine {
    fn name(&self) -> String {
        format!("cuda ({}, float with double recomputation)", self.gpu.name)
    }

    fn batch_cells(&self) -> u64 {
        // Several pieces of PIECE_PAIRS realistic pairs: both streams busy, the GPU full.
        1 << 35
    }

    fn compute(&self, batch: &PairBatch, out: &mut Vec<Likelihood>) -> Result<()> {
        out.clear();
        out.resize(batch.pairs.len(), Likelihood { log10: f64::NAN, recomputed: false });
        if batch.pairs.is_empty() {
            return Ok(());
        }
        let timing = std::env::var_os("SWARROW_PAIRHMM_TIMING").is_some();
        let t0 = std::time::Instant::now();
        let order = length_order(batch);
        let read_total = batch.read_buffers()[0].len();
        if read_total * 5 > u32::MAX as usize || batch.hap_buffer().len() > u32::MAX as usize {
            return Err(Error::Internal("CUDA batch larger than 4 GiB".into()));
        }
        let mut shared = self.shared.lock().map_err(|_| Error::Internal("CUDA buffers poisoned".into()))?;
        let stream0 = &self.streams[0].0;
        ensure(stream0, &mut shared.reads, read_total * 5)?;
        ensure(stream0, &mut shared.haps, batch.hap_buffer().len().max(1))?;
        let shared = &mut *shared;
        let (Some(reads), Some(haps)) = (shared.reads.as_mut(), shared.haps.as_mut()) else {
            return Err(Error::Internal("CUDA buffers missing".into()));
        };
        for (k, part) in batch.read_buffers().iter().enumerate() {
            stream0
                .memcpy_htod(*part, &mut reads.slice_mut(k * read_total..(k + 1) * read_total))
                .map_err(dev_err("uploading reads"))?;
        }
        let hap_bytes = batch.hap_buffer();
        stream0
            .memcpy_htod(hap_bytes, &mut haps.slice_mut(..hap_bytes.len()))
            .map_err(dev_err("uploading haplotypes"))?;
        stream0.synchronize().map_err(dev_err("uploading reads"))?;
        let (reads, haps) = (&*reads, &*haps);
        let t_upload = t0.elapsed();
        let results: Mutex<Vec<(u32, Likelihood)>> = Mutex::new(Vec::with_capacity(batch.pairs.len()));
        // Pieces of the length order taken by the stream workers in turn: while one worker
        // prepares or reads back a piece, the other's kernel keeps the GPU busy.
        let pieces: Vec<&[u32]> = order.chunks(PIECE_PAIRS).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| -> Result<()> {
            let workers: Vec<_> = self
                .streams
                .iter()
                .map(|(stream, buffers)| {
                    let (pieces, next, results) = (&pieces, &next, &results);
                    crate::threads::spawn_scoped(s, "sw-gpu-pairhmm", move || -> Result<()> {
                        let mut buffers =
                            buffers.lock().map_err(|_| Error::Internal("CUDA buffers poisoned".into()))?;
                        let mut local = Vec::new();
                        while let Some(piece) = pieces.get(next.fetch_add(1, Ordering::Relaxed)) {
                            self.run_pairs(stream, &mut buffers, batch, reads, read_total, haps, piece, &mut local)?;
                        }
                        results.lock().map_err(|_| Error::Internal("results poisoned".into()))?.extend(local);
                        Ok(())
                    })
                })
                .collect();
            for w in workers {
                w.join().map_err(|_| Error::Internal("CUDA worker panicked".into()))??;
            }
            Ok(())
        })?;
        if timing {
            eprintln!(
                "pairhmm cuda batch: {} pairs, {:.1} Gcells: order+upload {:.1} ms, total {:.1} ms",
                batch.pairs.len(),
                batch.cells() as f64 / 1e9,
                t_upload.as_secs_f64() * 1e3,
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
        for (i, l) in results.into_inner().map_err(|_| Error::Internal("results poisoned".into()))? {
            out[i as usize] = l;
        }
        Ok(())
    }
}

/// Pair indexes by haplotype length, longest first, then input order (a counting sort: the
/// batch is large and the lengths few). Length binning: the warps of a launch get similar work.
fn length_order(batch: &PairBatch) -> Vec<u32> {
    let hap_len = |i: usize| batch.hap(batch.pairs[i].hap as usize).len();
    let max = (0..batch.pairs.len()).map(hap_len).max().unwrap_or(0);
    let mut starts = vec![0usize; max + 2];
    for i in 0..batch.pairs.len() {
        starts[max - hap_len(i) + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut order = vec![0u32; batch.pairs.len()];
    for i in 0..batch.pairs.len() {
        let slot = &mut starts[max - hap_len(i)];
        order[*slot] = i as u32;
        *slot += 1;
    }
    order
}

/// What a launch reads: descriptors, the batch's reads (5 arrays of `read_total` bytes) and
/// haplotypes.
struct Inputs<'a> {
    descs: &'a CudaSlice<u32>,
    reads: &'a CudaSlice<u8>,
    read_total: u32,
    haps: &'a CudaSlice<u8>,
}

/// Grows `slot` to hold at least `n` elements.
fn ensure<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    slot: &mut Option<CudaSlice<T>>,
    n: usize,
) -> Result<()> {
    if slot.as_ref().map_or(true, |s| s.len() < n) {
        *slot = None;
        *slot = Some(stream.alloc_zeros::<T>(n + n / 4).map_err(dev_err("allocating GPU memory"))?);
    }
    Ok(())
}

impl CudaEngine {
    /// Computes the pairs `mine` (indexes into `batch.pairs`) on `stream`.
    #[allow(clippy::too_many_arguments)]
    fn run_pairs(
        &self,
        stream: &Arc<CudaStream>,
        b: &mut Buffers,
        batch: &PairBatch,
        reads: &CudaSlice<u8>,
        read_total: usize,
        haps: &CudaSlice<u8>,
        mine: &[u32],
        results: &mut Vec<(u32, Likelihood)>,
    ) -> Result<()> {
        if mine.is_empty() {
            return Ok(());
        }
        let mut descs: Vec<u32> = Vec::with_capacity(mine.len() * 5);
        let mut max_hap = 0usize;
        for (slot, &i) in mine.iter().enumerate() {
            let p = batch.pairs[i as usize];
            let (r, h) = (p.read as usize, p.hap as usize);
            let (rlen, hlen) = (batch.read(r).len(), batch.hap(h).len());
            max_hap = max_hap.max(hlen);
            descs.extend_from_slice(&[
                batch.read_start(r) as u32,
                rlen as u32,
                batch.hap_start(h) as u32,
                hlen as u32,
                slot as u32,
            ]);
        }
        ensure(stream, &mut b.descs, descs.len())?;
        let Some(d_descs) = b.descs.as_mut() else { return Err(Error::Internal("CUDA buffers missing".into())) };
        stream.memcpy_htod(&descs, &mut d_descs.slice_mut(..descs.len())).map_err(dev_err("uploading pairs"))?;
        let inputs = Inputs { descs: &*d_descs, reads, read_total: read_total as u32, haps };
        let sums = self.launch(stream, &self.single, &inputs, &mut b.single, mine.len(), mine.len(), max_hap)?;
        // Pairs below the float threshold: their descriptors again, computed in double.
        let mut redo: Vec<u32> = Vec::new();
        for (slot, &sum) in sums.iter().enumerate() {
            if sum < FLOAT_RESULT_THRESHOLD {
                redo.extend_from_slice(&descs[slot * 5..slot * 5 + 5]);
            } else {
                let log10 = (sum as f64).log10() - tables().0.log10_initial;
                results.push((mine[slot], Likelihood { log10, recomputed: false }));
            }
        }
        if !redo.is_empty() {
            let n = redo.len() / 5;
            let max_redo = (0..n).map(|k| redo[k * 5 + 3] as usize).max().unwrap_or(0);
            let Some(d_descs) = b.descs.as_mut() else { return Err(Error::Internal("CUDA buffers missing".into())) };
            stream.memcpy_htod(&redo, &mut d_descs.slice_mut(..redo.len())).map_err(dev_err("uploading pairs"))?;
            let inputs = Inputs { descs: &*d_descs, reads, read_total: read_total as u32, haps };
            let sums = self.launch(stream, &self.double, &inputs, &mut b.double, n, mine.len(), max_redo)?;
            for k in 0..n {
                let slot = redo[k * 5 + 4] as usize;
                let log10 = sums[slot].log10() - tables().1.log10_initial;
                results.push((mine[slot], Likelihood { log10, recomputed: true }));
            }
        }
        Ok(())
    }

    /// Runs `precision`'s kernel on the first `npairs` uploaded descriptors, writing into
    /// `slots` output slots (indexed by the descriptors), and returns the slots.
    #[allow(clippy::too_many_arguments)]
    fn launch<T: Real + DeviceRepr + ValidAsZeroBits>(
        &self,
        stream: &Arc<CudaStream>,
        precision: &Precision<T>,
        inputs: &Inputs<'_>,
        work: &mut Work<T>,
        npairs: usize,
        slots: usize,
        max_hap: usize,
    ) -> Result<Vec<T>> {
        let warps = self.warps().min(npairs).max(1);
        let stride = max_hap + 1;
        ensure(stream, &mut work.scratch, warps * 3 * stride)?;
        ensure(stream, &mut work.out, slots)?;
        let (Some(scratch), Some(out)) = (work.scratch.as_mut(), work.out.as_mut()) else {
            return Err(Error::Internal("CUDA buffers missing".into()));
        };
        let blocks = (warps * 32).div_ceil(BLOCK_THREADS as usize) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK_THREADS, 1, 1), shared_mem_bytes: 0 };
        let npairs_i = npairs as i32;
        let stride_i = stride as i32;
        let mut lb = stream.launch_builder(&precision.func);
        lb.arg(inputs.descs).arg(&npairs_i).arg(inputs.reads).arg(&inputs.read_total).arg(inputs.haps);
        lb.arg(&precision.ph2pr).arg(&precision.mm);
        lb.arg(&mut *scratch).arg(&stride_i).arg(&mut *out);
        let t0 = std::time::Instant::now();
        unsafe { lb.launch(cfg) }.map_err(dev_err("launching pairhmm_forward"))?;
        let mut host = vec![T::from_f64(0.0); slots];
        stream.memcpy_dtoh(&out.slice(..slots), &mut host).map_err(dev_err("reading likelihoods"))?;
        stream.synchronize().map_err(dev_err("pairhmm kernel"))?;
        if std::env::var_os("SWARROW_PAIRHMM_TIMING").is_some_and(|v| v == "2") {
            eprintln!("pairhmm cuda launch: {npairs} pairs, {:.2} ms", t0.elapsed().as_secs_f64() * 1e3);
        }
        Ok(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairhmm::batch::{PairBatch, Quals, ReadView};
    use crate::pairhmm::scalar;

    /// kernels/pairhmm.cu's warp algorithm step by step on the CPU (32 lanes as arrays, a
    /// shuffle as a shift, the global row buffer as a vector), in double: it must give the
    /// scalar reference's sum. Catches indexing mistakes without a GPU.
    fn kernel_model(p: &Probabilities<f64>, read: &ReadView<'_>, hap: &[u8]) -> f64 {
        let (rlen, hlen) = (read.len(), hap.len());
        let d0 = p.initial / hlen as f64;
        let mut buf_m = vec![0.0; hlen + 1];
        let mut buf_i = vec![0.0; hlen + 1];
        let mut buf_d = vec![d0; hlen + 1];
        let mut sum = [0.0f64; 32];
        let mut r0 = 0;
        while r0 < rlen {
            let mut params = [None; 32];
            for (lane, slot) in params.iter_mut().enumerate() {
                let row = r0 + lane;
                if row < rlen {
                    *slot = Some((
                        p.row(read.base_q[row], read.ins_q[row], read.del_q[row], read.gcp_q[row]),
                        read.bases[row],
                    ));
                }
            }
            if r0 > 0 {
                buf_d[0] = 0.0;
            }
            let mut left = [(0.0f64, 0.0f64, 0.0f64); 32];
            let mut diag = [(0.0f64, 0.0f64, 0.0f64); 32];
            diag[0] = (buf_m[0], buf_i[0], buf_d[0]);
            let last_row_lane = rlen as i64 - 1 - r0 as i64;
            let steps = hlen + (rlen - r0).min(32) - 1;
            for t in 0..steps as i64 {
                // Shuffle up: lane k sees lane k-1's value from before this step.
                let mut up = [(0.0, 0.0, 0.0); 32];
                for lane in 1..32 {
                    up[lane] = left[lane - 1];
                }
                let c0 = t + 1;
                let cc = (c0.min(hlen as i64)) as usize;
                up[0] = (buf_m[cc], buf_i[cc], buf_d[cc]);
                for lane in 0..32usize {
                    let c = t - lane as i64 + 1;
                    if let Some((row, rb)) = params[lane] {
                        if c >= 1 && c <= hlen as i64 {
                            let hb = hap[c as usize - 1];
                            let emit = if rb == hb || rb == 4 || hb == 4 { row.emit_match } else { row.emit_mismatch };
                            let m = emit
                                * (diag[lane].0 * row.match_to_match
                                    + (diag[lane].1 + diag[lane].2) * row.gap_to_match);
                            let i = up[lane].0 * row.match_to_ins + up[lane].1 * row.gap_ext;
                            let d = left[lane].0 * row.match_to_del + left[lane].2 * row.gap_ext;
                            left[lane] = (m, i, d);
                            if lane as i64 == last_row_lane {
                                sum[lane] += m + i;
                            }
                            if lane == 31 {
                                buf_m[c as usize] = m;
                                buf_i[c as usize] = i;
                                buf_d[c as usize] = d;
                            }
                        }
                    }
                    diag[lane] = up[lane];
                }
            }
            r0 += 32;
        }
        sum[(rlen - 1) & 31]
    }

    #[test]
    fn kernel_model_matches_the_scalar_reference() {
        let p = &tables().1;
        let mut s = 11u64;
        let mut next = |n: u64| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) % n
        };
        for case in 0..60 {
            let rl = [1, 2, 31, 32, 33, 63, 64, 65, 100][case % 9] + next(3) as usize;
            let hl = 1 + next(90) as usize;
            let bases: Vec<u8> = (0..rl).map(|_| b"ACGTN"[next(5) as usize]).collect();
            let hap: Vec<u8> = (0..hl).map(|_| b"ACGTN"[next(5) as usize]).collect();
            let q = |lo: u8, next: &mut dyn FnMut(u64) -> u64| -> Vec<u8> {
                (0..rl).map(|_| 33 + lo + next(40) as u8).collect()
            };
            let (bq, iq, dq, gq) = (q(0, &mut next), q(10, &mut next), q(5, &mut next), q(3, &mut next));
            let mut b = PairBatch::new();
            let r = b.push_read("r", &bases, &bq, &iq, &dq, Quals::Text(&gq)).unwrap();
            let h = b.push_hap("h", &hap).unwrap();
            let read = b.read(r as usize);
            let want = scalar::forward(p, &read, b.hap(h as usize), &mut Vec::new());
            let got = kernel_model(p, &read, b.hap(h as usize));
            assert!(((got - want) / want).abs() < 1e-12, "case {case} ({rl} x {hl}): {got} vs {want}");
        }
    }
}

//! What the aligner has done, for `--stats`.

use super::*;

impl GpuAligner {
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
            (
                "traceback paths outside the warp kernel's windows (traced again, every column stored)".into(),
                get(&c.window_misses).to_string(),
            ),
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
}

/// Total length of the union of `spans` (start, end), and the first start and last end.
pub(super) fn united(spans: impl Iterator<Item = (f32, f32)>) -> (f64, f64, f64) {
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

//! Every CUDA kernel the engines load, in one registry. A kernel is one source file with
//! one entry point; its variants are generated one way, by `-D` options on that source
//! (NVRTC compiles and caches each variant), and are named by one rule:
//! `<entry>` + `_t<threads>` + `_r<rows>` + a lane suffix, from the variant's [`Shape`].
//! The engines load through [`Build`]s from here; `tests/kernels_compile.rs` compiles
//! every build of [`all`] for compute_80 and compute_90.

use super::runtime::Source;

/// A kernel variant's shape, the one vocabulary of the search and align kernels:
/// `threads` cooperate on one sequence (a database target, a pair), each holding `rows`
/// query rows in registers; together they cover `span` rows per pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    pub threads: u32,
    pub rows: u32,
}

impl Shape {
    /// Query rows one pass covers.
    pub fn span(self) -> usize {
        (self.threads * self.rows) as usize
    }

    /// Passes over a query of `qlen` rows (at least one).
    pub fn passes(self, qlen: usize) -> usize {
        qlen.div_ceil(self.span()).max(1)
    }
}

/// The kernels, by source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Database search, scores only (`kernels/sw_search.cu`; with the top-k kernels).
    Search,
    /// One-to-one alignment: score, end and start (`kernels/align.cu`).
    Align,
    /// Traceback paths by the path rule (`kernels/path_trace.cu`).
    PathTrace,
    /// GATK PairHMM likelihoods (`kernels/pairhmm.cu`).
    PairHmm,
    /// A piece of pairs binned for `Align` on the GPU (`kernels/pair_bins.cu`; entries
    /// [`PAIR_BINS_ENTRIES`]).
    PairBins,
}

impl Kernel {
    /// The source compiled into the binary, or for kernel development the file of the same
    /// name in `SWARROW_KERNEL_DIR` (read once per kernel), so that a variant can be timed
    /// on a GPU machine without rebuilding the binary. The disk cache keys on the text.
    pub fn source(self) -> Source<'static> {
        let (name, text) = self.builtin();
        Source { name, text: override_text(self, name).unwrap_or(text), headers: &[] }
    }

    fn builtin(self) -> (&'static str, &'static str) {
        match self {
            Kernel::Search => ("sw_search.cu", include_str!("../../../kernels/sw_search.cu")),
            Kernel::Align => ("align.cu", include_str!("../../../kernels/align.cu")),
            Kernel::PathTrace => ("path_trace.cu", include_str!("../../../kernels/path_trace.cu")),
            Kernel::PairHmm => ("pairhmm.cu", include_str!("../../../kernels/pairhmm.cu")),
            Kernel::PairBins => ("pair_bins.cu", include_str!("../../../kernels/pair_bins.cu")),
        }
    }

    /// The main entry point (the search source also holds `topk_*`, see [`TOPK_ENTRIES`]).
    pub fn entry(self) -> &'static str {
        match self {
            Kernel::Search => "sw_search",
            Kernel::Align => "align_pairs",
            Kernel::PathTrace => "path_trace",
            Kernel::PairHmm => "pairhmm_forward",
            Kernel::PairBins => "bins_count",
        }
    }
}

/// `SWARROW_KERNEL_DIR/<name>` when that variable is set and the file reads (a warning
/// otherwise), kept for the life of the process.
fn override_text(kernel: Kernel, name: &str) -> Option<&'static str> {
    use std::sync::OnceLock;
    static TEXTS: [OnceLock<Option<&'static str>>; 6] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    *TEXTS[kernel as usize].get_or_init(|| {
        let dir = std::env::var_os("SWARROW_KERNEL_DIR")?;
        let path = std::path::Path::new(&dir).join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Some(Box::leak(text.into_boxed_str())),
            Err(e) => {
                eprintln!("warning: SWARROW_KERNEL_DIR: {}: {e}; using the built-in kernel", path.display());
                None
            }
        }
    })
}

/// The top-k entry points compiled with every search variant.
pub const TOPK_ENTRIES: [&str; 3] = ["topk_hist", "topk_threshold", "topk_select"];

/// The entry points of `Kernel::PairBins`, in the order they run on a piece.
pub const PAIR_BINS_ENTRIES: [&str; 3] = ["bins_count", "bins_scan", "bins_place"];

/// One variant: a kernel and the options that select it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    pub kernel: Kernel,
    pub options: Vec<String>,
    /// The variant's name by the one rule (for messages, reports and tests).
    pub name: String,
}

fn build(kernel: Kernel, shape: Option<Shape>, suffix: &str, options: Vec<String>) -> Build {
    let mut name = kernel.entry().to_string();
    if let Some(s) = shape {
        name += &format!("_t{}_r{}", s.threads, s.rows);
    }
    name += suffix;
    Build { kernel, options, name }
}

/// Search shapes compiled: threads per target x query rows per thread.
pub const SEARCH_SHAPES: [Shape; 4] = [
    Shape { threads: 8, rows: 16 },
    Shape { threads: 16, rows: 16 },
    Shape { threads: 32, rows: 16 },
    Shape { threads: 8, rows: 32 },
];

/// A search variant; `extra` are tuning options (`CudaConfig::nvrtc_options`).
pub fn search(shape: Shape, extra: &[String]) -> Build {
    let mut options = vec![format!("-DTHREADS={}", shape.threads), format!("-DROWS={}", shape.rows)];
    options.extend(extra.iter().cloned());
    build(Kernel::Search, Some(shape), "", options)
}

/// The shape of the search kernel's paired variant (pairs by id grouped by query): 8
/// threads x 32 rows, the search's fastest shape.
pub const PAIRED_SHAPE: Shape = Shape { threads: 8, rows: 32 };

/// The search kernel's paired variant: one query against its candidate targets, two
/// targets per thread in s16x2 lanes, score and end cell (`-DPAIRED=1`).
pub fn search_paired(shape: Shape, extra: &[String]) -> Build {
    let mut options =
        vec![format!("-DTHREADS={}", shape.threads), format!("-DROWS={}", shape.rows), "-DPAIRED=1".to_string()];
    options.extend(extra.iter().cloned());
    build(Kernel::Search, Some(shape), "_paired", options)
}

/// Query rows per thread compiled for the 16-bit align kernel (the 32-bit one uses
/// `ALIGN_WIDE_ROWS`). The kernel loads a thread's profile in chunks of 16, 8 or 4 rows, so
/// rows are a multiple of 4. At most 16: the per-thread profile is 2 x (alphabet + 1) x rows
/// bytes of shared memory (800 bytes for proteins at 16 rows: 8 warps per SM; 600 at 12
/// rows: 11 warps), and 32 rows take 247 registers. 12 rows fill the gaps of the
/// power-of-two spans (192 and 384 rows per pass).
pub const ALIGN_PACKED_ROWS: [u32; 4] = [4, 8, 12, 16];
pub const ALIGN_WIDE_ROWS: u32 = 32;

/// What an align variant computes: local alignment, or the global and semi-global modes
/// (`Modes`); both with a forward pass (score and end) and a reverse pass (the start). The
/// traceback kernel's variants follow the same kinds: local rectangles (-inf borders) or
/// the modes' (gap borders, `traceback::trace_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AlignKind {
    Local,
    Modes,
}

impl AlignKind {
    /// The variant's `-D` options beyond the shape and lanes, and its name suffix.
    fn options(self) -> (&'static [&'static str], &'static str) {
        match self {
            AlignKind::Local => (&[], ""),
            AlignKind::Modes => (&["-DMODE=1"], "_modes"),
        }
    }
}

/// An align variant: `rows` per thread, two pairs per thread in s16x2 lanes (`packed`) or
/// one at 32 bits, `pipelined` (multi-pass groups whose passes run on several warps), and
/// its [`AlignKind`]. Threads per pair vary inside one launch (a table), so they are not
/// part of the variant: its shape is named with 0 threads.
pub fn align(rows: u32, packed: bool, pipelined: bool, kind: AlignKind) -> Build {
    let (extra, kind_suffix) = kind.options();
    let mut options = vec![
        format!("-DROWS={rows}"),
        format!("-DPACKED={}", packed as i32),
        format!("-DPIPELINE={}", pipelined as i32),
    ];
    options.extend(extra.iter().map(|o| o.to_string()));
    let suffix =
        format!("{}{}{kind_suffix}", if packed { "_s16x2" } else { "_s32" }, if pipelined { "_pipe" } else { "" });
    build(Kernel::Align, Some(Shape { threads: 0, rows }), &suffix, options)
}

/// The traceback kernel: `threads` (1, or 32: a warp) per rectangle, strips of 16 rows
/// (one 64-bit word of 4-bit directions per column), of local alignments or,
/// `AlignKind::Modes` (`-DMODE=1`), of global and semi-global ones.
pub fn path_trace(kind: AlignKind, threads: u32) -> Build {
    path_build(kind, threads, false)
}

/// The traceback kernel counting each path (pairs, identities, gap opens) instead of
/// writing it: the identity columns alone.
pub fn path_counts(kind: AlignKind, threads: u32) -> Build {
    path_build(kind, threads, true)
}

fn path_build(kind: AlignKind, threads: u32, counts: bool) -> Build {
    let (extra, suffix) = kind.options();
    let mut options = vec![format!("-DTHREADS={threads}")];
    if counts {
        options.push("-DPATH_COUNTS=1".to_string());
    }
    options.extend(extra.iter().map(|o| o.to_string()));
    let suffix = format!("{}{suffix}", if counts { "_counts" } else { "" });
    build(Kernel::PathTrace, Some(Shape { threads, rows: 16 }), &suffix, options)
}

/// Threads per rectangle of the traceback kernel's variants.
pub const PATH_THREADS: [u32; 2] = [1, 32];

/// The PairHMM kernel in single or double precision; `extra` are tuning options.
pub fn pairhmm(double: bool, extra: &[String]) -> Build {
    let mut options = vec![format!("-DPAIRHMM_DOUBLE={}", double as i32)];
    options.extend(extra.iter().cloned());
    build(Kernel::PairHmm, None, if double { "_f64" } else { "_f32" }, options)
}

/// The GPU binning of a piece for the align kernel (one variant).
pub fn pair_bins() -> Build {
    build(Kernel::PairBins, None, "", Vec::new())
}

/// Every build the engines may load.
pub fn all() -> Vec<Build> {
    let mut out: Vec<Build> = SEARCH_SHAPES.iter().map(|&s| search(s, &[])).collect();
    out.push(search_paired(PAIRED_SHAPE, &[]));
    for kind in [AlignKind::Local, AlignKind::Modes] {
        for pipelined in [false, true] {
            out.extend(ALIGN_PACKED_ROWS.iter().map(|&r| align(r, true, pipelined, kind)));
            out.push(align(ALIGN_WIDE_ROWS, false, pipelined, kind));
        }
    }
    for kind in [AlignKind::Local, AlignKind::Modes] {
        for threads in PATH_THREADS {
            out.push(path_trace(kind, threads));
            out.push(path_counts(kind, threads));
        }
    }
    out.extend([false, true].map(|d| pairhmm(d, &[])));
    out.push(pair_bins());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule_and_are_unique() {
        let names: Vec<String> = all().into_iter().map(|b| b.name).collect();
        assert!(names.contains(&"sw_search_t8_r32".to_string()));
        assert!(names.contains(&"sw_search_t8_r32_paired".to_string()));
        assert!(names.contains(&"align_pairs_t0_r16_s16x2".to_string()));
        assert!(names.contains(&"align_pairs_t0_r32_s32_pipe".to_string()));
        assert!(names.contains(&"align_pairs_t0_r12_s16x2_pipe_modes".to_string()));
        assert!(names.contains(&"align_pairs_t0_r32_s32_modes".to_string()));
        assert!(names.contains(&"pairhmm_forward_f64".to_string()));
        assert!(names.contains(&"path_trace_t1_r16".to_string()));
        assert!(names.contains(&"path_trace_t1_r16_counts".to_string()));
        assert!(names.contains(&"path_trace_t1_r16_modes".to_string()));
        assert!(names.contains(&"path_trace_t1_r16_counts_modes".to_string()));
        assert!(names.contains(&"path_trace_t32_r16_counts_modes".to_string()));
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
    }

    #[test]
    fn passes_cover_the_query() {
        let s = Shape { threads: 8, rows: 16 };
        assert_eq!(s.span(), 128);
        assert_eq!((s.passes(0), s.passes(1), s.passes(128), s.passes(129)), (1, 1, 1, 2));
    }
}

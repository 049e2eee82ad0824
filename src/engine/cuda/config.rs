//! Tuning of the CUDA engine in one place. The CLI's hidden `--gpu-*` options and the
//! benchmarks fill it; the engine itself reads no environment variables.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaConfig {
    /// Host threads, each with its CUDA stream, per GPU for one-to-one alignment: while one
    /// prepares its piece on the host, the others' kernels keep the GPU busy.
    pub align_streams: usize,
    /// Most pairs in a piece of work one stream takes (`align_plan::piece_pairs` picks
    /// fewer for most calls).
    pub align_piece_pairs: usize,
    /// Pieces an align call is cut into per stream (`align_plan::piece_pairs_spread`):
    /// more balance the streams, fewer cost less per piece.
    pub align_pieces_per_worker: usize,
    /// Pieces one stream keeps in flight (slots per stream): 2 overlaps the host's work on
    /// one with the GPU's on the other; 1 serialises them (timing the kernels alone).
    pub align_depth: usize,
    /// Most query rows per thread of the 16-bit align kernel (None: by the alphabet,
    /// `align_plan::packed_max_rows`).
    pub align_max_rows: Option<u32>,
    /// Let narrow thread groups tile long queries over several passes (default false: one
    /// pass, except the widest shape; see `align_plan::ShapeRules::multipass`).
    pub align_multipass: bool,
    /// Fewest threads per pair (None: enough for a piece to fill the GPU on its own).
    pub align_min_group: Option<u32>,
    /// Bin every piece on the host (`align_plan::make_bins`), even where the GPU could
    /// (`gpu_bins`): for comparisons in one binary.
    pub align_host_bins: bool,
    /// Run multi-pass whole-warp groups pipelined (their passes on several warps; default
    /// true), else each on one warp, pass after pass: for comparisons in one binary.
    pub align_pipeline: bool,
    /// Stream the database through the GPU in chunks of this many bytes even when it would
    /// fit (tests and benchmarks of the streamed path).
    pub search_chunk_bytes: Option<usize>,
    /// Longest query strand of the search kernels, in passes, unless one query needs more
    /// (`layout::pack_strands`).
    pub search_strand_passes: usize,
    /// Extra NVRTC options for the search kernels (tuning experiments, e.g.
    /// `-DSEARCH_MIN_BLOCKS=6`).
    pub nvrtc_options: Vec<String>,
}

impl Default for CudaConfig {
    fn default() -> Self {
        CudaConfig {
            align_streams: 4,
            align_piece_pairs: 65_536,
            align_pieces_per_worker: super::align_plan::PIECES_PER_WORKER,
            align_depth: 2,
            align_max_rows: None,
            align_multipass: false,
            align_min_group: None,
            align_host_bins: false,
            align_pipeline: true,
            search_chunk_bytes: None,
            search_strand_passes: super::layout::STRAND_PASSES,
            nvrtc_options: Vec::new(),
        }
    }
}

//! The CUDA engine: Smith-Waterman database search on NVIDIA GPUs. Kernels live in
//! `kernels/*.cu` and are compiled at run time by NVRTC (see `runtime`), so building swarrow
//! needs no CUDA toolkit and a machine without CUDA falls back cleanly.

pub mod runtime;

/// Whether the CUDA engine can run here (driver, NVRTC and at least one GPU).
pub fn available() -> bool {
    runtime::available()
}

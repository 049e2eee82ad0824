//! swarrow: exact Smith-Waterman local alignment with affine gaps, on NVIDIA GPUs and
//! CPUs, as a streaming filter with Arrow, Parquet and TSV output.
//!
//! Architecture, in the order data flows:
//! - [`io`]: input readers (FASTA, pair files, `makedb` databases);
//! - [`scoring`]: alphabet, substitution matrices, gap costs, Karlin-Altschul statistics;
//! - [`engine`]: the alignment engines behind one trait (scalar reference, CPU SIMD, CUDA);
//! - [`pipeline`]: `search` and `align`, stages joined by bounded channels;
//! - [`output`]: the writers (Arrow IPC, Parquet, TSV, BLAST tabular), one schema for all;
//! - [`pairhmm`]: the `pairhmm` mode (read likelihoods), its own layers from input to engines.
//! - [`session`]: a run's setup shared by the command line and the Python package;
//! - [`progress`]: work counted in cells from inside the engines, drawn on a terminal;
//! - [`atomic`]: output files that appear whole or not at all, cleaned up on signals.

pub mod atomic;
pub mod cli;
pub mod database;
pub mod engine;
pub mod error;
pub mod io;
pub mod output;
pub mod pairhmm;
pub mod pipeline;
pub mod progress;
pub mod scoring;
pub mod seq;
pub mod session;
pub mod stdio;
mod threads;

pub use error::{Error, Result};

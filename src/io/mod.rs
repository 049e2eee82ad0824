//! Input readers: FASTA (plain, gzip, stdin), pair files for `align` (two FASTA, TSV,
//! Arrow IPC, Parquet), `makedb` databases (`.swdb`) and swarrow's own outputs read back for
//! `merge` (`results`); `ipc` is the guarded Arrow IPC reader they share.

pub mod bgzf;
pub mod fasta;
pub mod fasta_blocks;
pub mod input;
pub mod ipc;
pub mod makedb;
pub mod pairs;
pub mod parquet;
pub mod results;

pub use fasta::{read_all, FastaReader};
pub use fasta_blocks::BlockFastaReader;
pub use input::open_input;
pub use makedb::{load_database, open_swdb, write_swdb};
pub use pairs::{
    open_pair_numbers_by_id, open_pair_table, open_pairs, open_pairs_by_id, open_pairs_by_id_table, table_records,
    BatchLimits, Batches, CandidateFormat, PairColumns, PairInput, PairOptions, PairReader, SeqSet, SetColumns, Table,
};

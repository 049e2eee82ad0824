//! Sequence records as every part of swarrow sees them: an id and encoded residues.

/// One input sequence. `id` is the header up to the first whitespace; `seq` holds residue
/// codes of the run's alphabet (see `scoring::alphabet`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub id: String,
    pub seq: Vec<u8>,
}

/// One pair for `align`: query and target records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pair {
    pub query: Record,
    pub target: Record,
}

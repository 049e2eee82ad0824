#!/usr/bin/env bash
# Builds swarrow and runs a database search and a pair alignment on the bundled data.
# Uses the GPU when one is present, the CPU otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
sw=./target/release/swarrow
out=${OUT_DIR:-target/example-output}
mkdir -p "$out"
echo "== search: examples/queries.fasta against examples/db.fasta.gz"
$sw search -q examples/queries.fasta -d examples/db.fasta.gz --top 3 -o "$out/hits.parquet"
$sw search -q examples/queries.fasta -d examples/db.fasta.gz --top 3 --format tsv --quiet | head -20
echo
echo "== align: examples/pairs.tsv (20 pairs)"
$sw align --pairs examples/pairs.tsv -o "$out/pairs.parquet"
$sw align --pairs examples/pairs.tsv --format tsv --quiet | head -12
echo
echo "Parquet results: $out/hits.parquet, $out/pairs.parquet"

#!/usr/bin/env bash
# Builds swarrow (target/release/swarrow) and runs a database search and a pair alignment on
# the bundled data, on the GPU when one is present, else on the CPU.
# SWARROW=path runs that binary instead of building one (the README check in CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${SWARROW:-}" ]; then
  echo "== building target/release/swarrow (first build: about 6 minutes on 2 idle cores and"
  echo "   400 MB in target/; later builds take seconds). Cargo's progress follows."
  cargo build --release --locked
  SWARROW=./target/release/swarrow
fi
sw=$SWARROW
out=${OUT_DIR:-target/example-output}
mkdir -p "$out"
echo "== search: examples/queries.fasta against examples/db.fasta.gz"
"$sw" search -q examples/queries.fasta -d examples/db.fasta.gz --top 3 -o "$out/hits.parquet"
"$sw" search -q examples/queries.fasta -d examples/db.fasta.gz --top 3 --format tsv --quiet | head -20
echo
echo "== align: examples/pairs.tsv (20 pairs)"
"$sw" align --pairs examples/pairs.tsv -o "$out/pairs.parquet"
"$sw" align --pairs examples/pairs.tsv --format tsv --quiet | head -12
echo
echo "Parquet results: $out/hits.parquet, $out/pairs.parquet"

#!/usr/bin/env bash
# Recipe 1: database search to Parquet, then a DuckDB query over it.
# Needs: swarrow on PATH (or SWARROW=path), Python with duckdb (`pip install duckdb`).
# Prints each query's best hit; the bundled database plants one homolog per query
# (homolog_of_<query id>), which must come first with a tiny E-value (expected output:
# 01-search-to-duckdb.expected, written from the planted ids, not from swarrow).
set -euo pipefail
cd "$(dirname "$0")/../.."
SWARROW=${SWARROW:-swarrow}
PYTHON=${PYTHON:-python3}
out=${OUT_DIR:-$(mktemp -d)}

"$SWARROW" search -q examples/queries.fasta -d examples/db.fasta.gz --top 5 --quiet -o "$out/hits.parquet"

# The same query with the DuckDB CLI:
#   duckdb -c "SELECT query, target, rank, evalue < 1e-10 FROM 'hits.parquet' WHERE rank = 1 ORDER BY query"
"$PYTHON" - "$out/hits.parquet" <<'PY'
import sys, duckdb
rows = duckdb.sql(f"""
    SELECT query, target, rank, evalue < 1e-10 AS significant
    FROM read_parquet('{sys.argv[1]}')
    WHERE rank = 1
    ORDER BY query
""").fetchall()
for row in rows:
    print(*row, sep="\t")
PY

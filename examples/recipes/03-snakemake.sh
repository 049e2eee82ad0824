#!/usr/bin/env bash
# Recipe 3: the Snakemake workflow on the bundled data: queries, database and pairs each
# sharded 3 ways, searched/aligned (GPU when present, else CPU), merged into Parquet; then
# DuckDB checks the gathered results.
# Needs: swarrow on PATH (or SWARROW=path), `pip install snakemake duckdb`.
# Expected output (03-snakemake.expected): the planted homolog first for every query, the
# database-sharded and query-sharded searches identical row for row (E-values included,
# thanks to --db-size/--db-seqs), and one row per input pair (20 in examples/pairs.tsv).
set -euo pipefail
cd "$(dirname "$0")/../.."
SWARROW=${SWARROW:-swarrow}
PYTHON=${PYTHON:-python3}
SNAKEMAKE=${SNAKEMAKE:-snakemake}
out=${OUT_DIR:-$(mktemp -d)}
ex=$(pwd)/examples

"$SNAKEMAKE" -s workflows/snakemake/Snakefile --cores 2 --quiet --directory "$out" \
    --config swarrow="$SWARROW" queries="$ex/queries.fasta" db="$ex/db.fasta.gz" \
             pairs="$ex/pairs.tsv" outdir=results >&2

"$PYTHON" - "$out/results" <<'PY'
import sys, duckdb
d = sys.argv[1]
for row in duckdb.sql(f"""
        SELECT query, target, rank FROM '{d}/search-dbsharded.parquet'
        WHERE rank = 1 ORDER BY query""").fetchall():
    print(*row, sep="\t")
differing = duckdb.sql(f"""
    SELECT count(*) FROM (
        (SELECT * EXCLUDE (qnum) FROM '{d}/search-dbsharded.parquet'
         EXCEPT ALL SELECT * EXCLUDE (qnum) FROM '{d}/search.parquet')
        UNION ALL
        (SELECT * EXCLUDE (qnum) FROM '{d}/search.parquet'
         EXCEPT ALL SELECT * EXCLUDE (qnum) FROM '{d}/search-dbsharded.parquet'))
""").fetchall()[0][0]
print("database-sharded == query-sharded:", differing == 0)
print("align rows:", duckdb.sql(f"SELECT count(*) FROM '{d}/align.parquet'").fetchall()[0][0])
PY

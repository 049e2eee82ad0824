#!/usr/bin/env bash
# Recipe 2: pairs streamed from another program through swarrow into Polars, no files.
# Needs: swarrow on PATH (or SWARROW=path), Python with polars (`pip install polars`).
# The producer pairs each bundled query with itself; swarrow writes an Arrow IPC stream to
# the pipe (its default when stdout is not a terminal); Polars reads it from stdin.
# Expected output (02-pairs-stream-to-polars.expected) comes from an independent rule: a
# protein aligned with itself under BLOSUM62 aligns end to end (every diagonal score is
# positive) and scores the sum of the matrix diagonal over its residues.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWARROW=${SWARROW:-swarrow}
PYTHON=${PYTHON:-python3}

"$PYTHON" -c '
import sys
records, rid = {}, None
for line in open("examples/queries.fasta"):
    line = line.strip()
    if line.startswith(">"):
        rid = line[1:].split()[0]
        records[rid] = ""
    elif rid:
        records[rid] += line
print("query_id\tquery_seq\ttarget_id\ttarget_seq")
for rid, seq in records.items():
    print(f"{rid}\t{seq}\tself\t{seq}")
' | "$SWARROW" align --pairs - --quiet | "$PYTHON" -c '
import sys, polars as pl
df = pl.read_ipc_stream(sys.stdin.buffer)
for row in df.select("query", "score", "qstart", "qend", "tstart", "tend", "qlen").iter_rows():
    print(*row, sep="\t")
'

#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout whose .gpu/ holds the release gpu_bench binary
# (cargo build --release --example gpu_bench), DB.fasta.gz, QUERY.fasta.gz, allqueries.fasta
# and make_db.py. Correctness first (GPU vs CPU reference, every score), then benchmarks:
# the 200M-residue UniProt-like DB and equal-length DBs of 1M sequences (L = 256, 1024, 2048),
# generated here rather than carried. Usage: scripts/gpu-check.sh [check|bench|all] [BENCH ARGS]
set -uo pipefail
mode="${1:-all}"; shift || true
G="${GPU_DIR:-.gpu}"
B="$G/gpu_bench"
# NVRTC: the CUDA toolkit's, else a pip wheel's (torch ships one).
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc.so.13'; then
    lib="$(find /usr/local/cuda*/ /usr/local/lib /opt -name 'libnvrtc.so.13' 2>/dev/null | head -1)"
    [ -n "$lib" ] && export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export SWARROW_CACHE_DIR="${SWARROW_CACHE_DIR:-/tmp/swarrow-cache}"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader || true
rc=0
if [ "$mode" = check ] || [ "$mode" = all ]; then
    "$B" check "$G/DB.fasta.gz" "$G/allqueries.fasta" "$G/QUERY.fasta.gz" || rc=1
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
    if [ ! -s /tmp/db200m.fasta ]; then
        time python3 "$G/make_db.py" "$G/DB.fasta.gz" --residues 200000000 --seed 1 > /tmp/db200m.fasta
    fi
    "$B" bench /tmp/db200m.fasta "$G/allqueries.fasta" "$@" || rc=1
    for L in 256 1024 2048; do
        "$B" bench-equal 1000000 "$L" "$G/allqueries.fasta" "$@" || rc=1
    done
fi
exit $rc

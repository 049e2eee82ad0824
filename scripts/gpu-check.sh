#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout whose .gpu/ holds the release gpu_bench binary
# (cargo build --release --example gpu_bench), DB.fasta.gz, QUERY.fasta.gz, allqueries.fasta
# and make_db.py. Correctness first (GPU vs CPU reference, every score), then benchmarks:
# the 200M-residue UniProt-like DB and equal-length DBs of 1M sequences (L = 256, 1024, 2048),
# generated here rather than carried. Usage: scripts/gpu-check.sh [check|bench|e2e|all] [BENCH ARGS]
# e2e: the release `swarrow` binary in .gpu/, GPU against CPU through the command line (search
# and align output must be byte-identical), with wall times.
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
if [ "$mode" = e2e ] || [ "$mode" = all ]; then
    S="$G/swarrow"; T=/tmp/e2e; mkdir -p $T
    same() { if cmp -s "$1" "$2"; then echo "IDENTICAL $3 ($(($(wc -l <"$1") - 1)) rows)"; else echo "DIFFERENT $3"; diff "$1" "$2" | head -5; rc=1; fi; }
    timed() { local t0=$(date +%s.%N); "$@"; local t1=$(date +%s.%N); python3 -c "print(f'{$t1-$t0:.2f}')"; }
    for q in allqueries.fasta QUERY.fasta.gz; do
        wg=$(timed "$S" search -q "$G/$q" -d "$G/DB.fasta.gz" --device cuda --quiet --format tsv -o $T/gpu.tsv)
        wc=$(timed "$S" search -q "$G/$q" -d "$G/DB.fasta.gz" --device cpu --quiet --format tsv -o $T/cpu.tsv)
        same $T/gpu.tsv $T/cpu.tsv "search $q vs DB.fasta.gz: gpu ${wg}s cpu(${CPUS:-$(nproc)} cores) ${wc}s"
    done
    python3 "$G/make_pairs.py" "$G/DB.fasta.gz" --pairs 200000 --qlen 20 400 --tlen 400 1664 --seed 7 --query $T/q.fa --target $T/t.fa
    wg=$(timed "$S" align --query $T/q.fa --target $T/t.fa --device cuda --quiet --format tsv -o $T/agpu.tsv)
    wc=$(timed "$S" align --query $T/q.fa --target $T/t.fa --device cpu --quiet --format tsv -o $T/acpu.tsv)
    same $T/agpu.tsv $T/acpu.tsv "align 200,000 make_pairs protein pairs: gpu ${wg}s cpu ${wc}s"
    cells=$(python3 -c "
import sys
def L(p):
    return [len(l.strip()) for l in open(p) if not l.startswith('>')]
print(sum(a*b for a,b in zip(L('$T/q.fa'),L('$T/t.fa'))))")
    wa=$(timed "$S" align --query $T/q.fa --target $T/t.fa --device cuda --quiet -o $T/a.arrows)
    python3 -c "print(f'align to Arrow, GPU end to end: $cells cells in ${wa}s = {$cells/$wa/1e12:.3f} TCUPS, {200000/$wa:.0f} pairs/s')"
fi
exit $rc

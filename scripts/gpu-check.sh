#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout whose .gpu/ holds the release gpu_bench binary
# (cargo build --release --example gpu_bench), DB.fasta.gz, QUERY.fasta.gz, allqueries.fasta
# and make_db.py. Correctness first (GPU vs CPU reference, every score), then benchmarks:
# the 200M-residue UniProt-like DB and equal-length DBs of 1M sequences (L = 256, 1024, 2048),
# generated here rather than carried. Usage: scripts/gpu-check.sh [check|bench|e2e|all|align] [BENCH ARGS]
# e2e: the release `swarrow` binary in .gpu/, GPU against CPU through the command line (search
# and align output must be byte-identical), with wall times.
# stream: the streamed database path (forced small chunks) against the CPU, then the 200M
# database resident vs streamed. scale: the 200M scan on 1 GPU and on all GPUs.
# profile: Nsight Compute on the search kernels (L=256 database), a summary to stdout and
# the report to $OUT when set.
set -uo pipefail
mode="${1:-all}"; shift || true
G="${GPU_DIR:-.gpu}"
B="$G/gpu_bench"
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader || true
rc=0
db200m() {
    [ -s /tmp/db200m.fasta ] || python3 "$G/make_db.py" "$G/DB.fasta.gz" --residues 200000000 --seed 1 > /tmp/db200m.fasta
}
if [ "$mode" = check ] || [ "$mode" = all ]; then
    "$B" check "$G/DB.fasta.gz" "$G/allqueries.fasta" "$G/QUERY.fasta.gz" || rc=1
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
    db200m
    "$B" bench /tmp/db200m.fasta "$G/allqueries.fasta" "$@" || rc=1
    for L in 256 1024 2048; do
        "$B" bench-equal 1000000 "$L" "$G/allqueries.fasta" "$@" || rc=1
    done
fi
if [ "$mode" = stream ] || [ "$mode" = all ]; then
    # 1 MiB chunks: the 20,000-sequence DB runs as ~10 chunks through both slots.
    SWARROW_CUDA_CHUNK_BYTES=1048576 "$B" check "$G/DB.fasta.gz" "$G/allqueries.fasta" "$G/QUERY.fasta.gz" || rc=1
    if [ -x "$G/swarrow" ]; then
        for dev in cuda cpu; do
            "$G/swarrow" search --gpu-chunk-bytes 1048576 -q "$G/allqueries.fasta" -d "$G/DB.fasta.gz" \
                --device $dev --quiet --format tsv -o /tmp/stream-$dev.tsv || rc=1
        done
        if cmp -s /tmp/stream-cuda.tsv /tmp/stream-cpu.tsv; then echo "IDENTICAL streamed CLI search ($(wc -l </tmp/stream-cpu.tsv) lines)"
        else echo "DIFFERENT streamed CLI search"; rc=1; fi
    fi
    db200m
    awk '/^>/{n++} n==1' "$G/allqueries.fasta" > /tmp/q1.fasta
    for q in "$G/allqueries.fasta" /tmp/q1.fasta; do
        "$B" bench /tmp/db200m.fasta "$q" --repeat 2 || rc=1
        for c in 268435456 33554432; do
            SWARROW_CUDA_CHUNK_BYTES=$c "$B" bench /tmp/db200m.fasta "$q" --repeat 1 || rc=1
        done
    done
fi
if [ "$mode" = scale ]; then
    db200m
    n=$(nvidia-smi -L | wc -l)
    CUDA_VISIBLE_DEVICES=0 "$B" bench /tmp/db200m.fasta "$G/allqueries.fasta" --repeat 3 || rc=1
    "$B" bench /tmp/db200m.fasta "$G/allqueries.fasta" --repeat 3 || rc=1
    echo "(all $n GPUs in the second run)"
    # The whole command: makedb once, then search on 1 GPU and on all, output compared.
    "$G/swarrow" makedb /tmp/db200m.fasta -o /tmp/db200m.swdb || rc=1
    for v in 0 "$(seq -s, 0 $((n - 1)))"; do
        for i in 1 2; do
            t0=$(date +%s.%N)
            CUDA_VISIBLE_DEVICES=$v "$G/swarrow" search -q "$G/allqueries.fasta" -d /tmp/db200m.swdb --device cuda \
                --quiet --format tsv -o /tmp/scale-$i.tsv || rc=1
            t1=$(date +%s.%N)
            python3 -c "print(f'swarrow search 200M swdb, GPUs {\"$v\"}, run $i: {$t1-$t0:.2f} s wall')"
        done
        cp /tmp/scale-2.tsv "/tmp/scale-gpus-${v//,/_}.tsv"
    done
    if cmp -s /tmp/scale-gpus-0.tsv "/tmp/scale-gpus-$(seq -s_ 0 $((n - 1))).tsv"; then echo "IDENTICAL output on 1 and $n GPUs"
    else echo "DIFFERENT output on 1 and $n GPUs"; rc=1; fi
fi
if [ "$mode" = profile ]; then
    rep="${OUT:-/tmp}/search-profile"
    ncu --clock-control none --set full -k regex:sw_search -c 2 -f -o "$rep" \
        "$B" bench-equal 200000 256 "$G/allqueries.fasta" --repeat 1 >/dev/null || rc=1
    ncu --import "$rep.ncu-rep" --page details --print-units base 2>&1 | grep -E \
        "sw_search|Duration|Elapsed Cycles|SM Busy|Executed Ipc|Issue Slots Busy|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|No Eligible|Active Warps Per|Eligible Warps|L1/TEX Hit|Shared Memory|Compute \(SM\)|Memory Throughput|Dynamic Shared|One or More|Local" | head -80
    ncu --import "$rep.ncu-rep" --page raw --print-units base 2>&1 | grep -E \
        "smsp__average_warp_latency_issue_stalled|smsp__pcsamp_warps_issue_stalled_[a-z_]+ " | sort -k3 -n -r | head -40
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
# align: one-to-one alignment (issue 4), GPU against the CPU engine on >= 1,000,000 pairs,
# then the 10M-pair protein and DNA-2 benchmarks; needs $G/gpu_align_bench (cargo build
# --release --example gpu_align_bench), $G/DB.fasta.gz and $G/make_pairs.py.
if [ "$mode" = align ]; then
    DATA="$G" MAKE_PAIRS="$G/make_pairs.py" bash "$(dirname "$0")/gpu-check-align.sh" "$G/gpu_align_bench" || rc=1
fi
exit $rc

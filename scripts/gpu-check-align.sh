#!/usr/bin/env bash
# GPU checks of one-to-one alignment (issue 4), run on a machine with an NVIDIA GPU:
#  1. GPU against the CPU engine on >= 1,000,000 pairs (random protein and DNA, lengths 1 to
#     20,000 with overflowing pairs; real protein pairs of the benchmark set and of lengths
#     1 to 20,000; DNA-2-shaped pairs): every score and coordinate identical;
#  2. the protein benchmark (make_pairs.py set of the ADEPT comparison, BLOSUM62 gap 6/1),
#     streamed REPEAT times from the files to reach 10,000,000 pairs;
#  3. the DNA-2-shaped benchmark (reads 201-250 vs contigs 99-979, planted matches);
#  4. traceback statistics on the GPU (path counters, issue 12) against a naive full-matrix
#     traceback on >= 1,000,000 pairs, and their cost in the protein benchmark (--path-stats).
# Each benchmark prints TCUPS (qlen x tlen cells per pair), pairs/s and peak RSS.
#
#   scripts/gpu-check-align.sh [BIN]    BIN: gpu_align_bench (default: release example)
# Environment: CHECK_PAIRS (1000000 random), DNA2_CHECK (200000), WIDE_PAIRS (4000 real pairs
# of lengths 1..20,000), SKIP_CHECK / CHECK_ONLY (1: skip the check / the benchmarks),
# PROT_PAIRS (200000), REPEAT (50), DNA_PAIRS (10000000), PROFILE (1: ncu afterwards),
# DATA (shared/data: DB.fasta.gz), MAKE_PAIRS (shared/bench/make_pairs.py),
# WORK (/tmp/swarrow-align).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$here/target/release/examples/gpu_align_bench}
DATA=${DATA:-$here/shared/data}
MAKE_PAIRS=${MAKE_PAIRS:-$here/shared/bench/make_pairs.py}
WORK=${WORK:-/tmp/swarrow-align}
CHECK_PAIRS=${CHECK_PAIRS:-1000000}
DNA2_CHECK=${DNA2_CHECK:-200000}
WIDE_PAIRS=${WIDE_PAIRS:-4000}
PROT_PAIRS=${PROT_PAIRS:-200000}
REPEAT=${REPEAT:-50}
DNA_PAIRS=${DNA_PAIRS:-10000000}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"

if [ ! -s "$WORK/prot.q.fa" ]; then
  python3 "$MAKE_PAIRS" "$DATA/DB.fasta.gz" --pairs "$PROT_PAIRS" \
    --qlen 20 400 --tlen 400 1664 --seed 7 --query "$WORK/prot.q.fa" --target "$WORK/prot.t.fa"
fi
# Real pairs over the whole length range 1..20,000 (long related ones overflow 16 bits).
if [ ! -s "$WORK/wide.q.fa" ]; then
  python3 "$MAKE_PAIRS" "$DATA/DB.fasta.gz" --pairs "$WIDE_PAIRS" \
    --qlen 1 20000 --tlen 1 20000 --mutate 0.1 --seed 3 --query "$WORK/wide.q.fa" --target "$WORK/wide.t.fa"
fi
if [ "${SKIP_CHECK:-0}" != 1 ]; then
echo "== check: GPU vs CPU engine"
"$BIN" check --pairs "$CHECK_PAIRS" --dna2 "$DNA2_CHECK" --real 200000 \
  --query "$WORK/prot.q.fa" --target "$WORK/prot.t.fa" --query "$WORK/wide.q.fa" --target "$WORK/wide.t.fa"
echo "== check: GPU path counters vs a naive traceback"
"$BIN" check-stats --pairs "$CHECK_PAIRS" --max-len 3000 --real 200000 \
  --query "$WORK/prot.q.fa" --target "$WORK/prot.t.fa"
fi
[ "${CHECK_ONLY:-0}" = 1 ] && exit 0

for gaps in "6 1" "11 1"; do
  set -- $gaps
  echo "== protein benchmark, gaps $1/$2 ($PROT_PAIRS pairs x $REPEAT passes over the files)"
  "$BIN" bench --query "$WORK/prot.q.fa" --target "$WORK/prot.t.fa" --gap-open "$1" --gap-extend "$2" \
    --repeat "$REPEAT" --out "$WORK/prot.arrow"
done
echo "== protein benchmark, 11/1, with traceback statistics (path counters) on the GPU"
"$BIN" bench --query "$WORK/prot.q.fa" --target "$WORK/prot.t.fa" --repeat "$REPEAT" --path-stats --out "$WORK/prot.arrow"

echo "== DNA benchmark ($DNA_PAIRS pairs, DNA-2 shape)"
if [ ! -s "$WORK/dna.q.fa" ]; then
  "$BIN" make-dna --pairs "$DNA_PAIRS" --query "$WORK/dna.q.fa" --target "$WORK/dna.t.fa"
fi
"$BIN" bench --dna --query "$WORK/dna.q.fa" --target "$WORK/dna.t.fa" --out "$WORK/dna.arrow"

# PROFILE=1: Nsight Compute on one 65,536-pair batch of the protein set, one stream: per-launch
# durations and utilisation, then the full sections of the first two (forward) launches.
# Reports go to $OUT (or $WORK) as ncu-launches.csv and ncu-full.txt.
if [ "${PROFILE:-0}" = 1 ]; then
  R=${OUT:-$WORK}
  head -131072 "$WORK/prot.q.fa" > "$WORK/pq.fa"; head -131072 "$WORK/prot.t.fa" > "$WORK/pt.fa"
  one=(bench --query "$WORK/pq.fa" --target "$WORK/pt.fa" --gap-open 6 --gap-extend 1 --batch 65536)
  ncu --clock-control none --csv -k align_pairs \
    --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
    "$BIN" "${one[@]}" --streams 1 > "$R/ncu-launches.csv" 2> "$R/ncu-bins.txt"
  ncu --clock-control none --set full -k align_pairs -c 2 "$BIN" "${one[@]}" --streams 1 > "$R/ncu-full.txt" 2>&1
  grep -E "align_pairs \(|Duration|Occupancy|Issue Slots Busy|Eligible Warps|highest-utilized|Warp Cycles Per Issued" "$R/ncu-full.txt" || true
fi

#!/usr/bin/env bash
# The GPU engine in the global and semi-global modes against local mode on the same pairs
# (issue 42's target), on a GPU machine, from release binaries carried in $G (swarrow,
# gpu_align_bench). For each class of `gpu_align_bench make-shapes`, `gpu_align_bench bench
# --preload` (the engine over pairs already read, TCUPS inside the align calls), alternated:
#   local score/end   local mode, forward pass only (--score-end)
#   local coords      local mode with starts (the default columns' passes)
#   <mode>            the modes' kernel at the coordinates level (forward pass, and the
#                     reverse pass for the start where the mode has a free start)
#   <mode>+--score-end  the modes' forward pass alone (score and end)
# and each mode's ratio to local mode's score/end and coordinates rates (the target compares
# like with like: coordinates with coordinates, score/end with score/end).
#
#   G=.gpu scripts/bench-modes-gpu.sh [CLASS ...]
# Environment: G, WORK (/tmp/swarrow-modes-bench), SCALE, MODES, ROUNDS (2: alternations).
set -uo pipefail
G=${G:-.gpu}
WORK=${WORK:-/tmp/swarrow-modes-bench}
SCALE=${SCALE:-1}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
B=$G/gpu_align_bench
# Sized for about a second of GPU work per run at ~1 TCUPS.
declare -A PAIRS=([protein-short]=1000000 [dna-reads]=1000000 [protein-mid]=200000 [protein-long]=50000
    [protein-vlong]=200 [dna-read-contig]=100000 [dna-vlong]=50)
declare -A REPEAT=([protein-short]=4 [dna-reads]=8 [protein-mid]=3 [protein-long]=3
    [protein-vlong]=3 [dna-read-contig]=3 [dna-vlong]=2)
classes=${*:-"protein-short dna-reads protein-mid protein-long protein-vlong dna-read-contig dna-vlong"}
MODES=${MODES:-"global semi-global semi-global+--score-end global+--score-end"}
calc() { awk "BEGIN {printf \"%.3f\", $1}"; }
rate() { # TCUPS of one bench run
    $B bench --query "$1.q.fa" --target "$1.t.fa" $2 --preload --repeat "$3" $4 2>/dev/null |
        grep "TCUPS in align" | sed -E 's/.*, ([0-9.]+) TCUPS in align.*/\1/'
}
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
printf '%-16s %-20s %8s %s\n' class row TCUPS "ratio (to local score/end, to local coords)"
for c in $classes; do
    n=$(( ${PAIRS[$c]} * SCALE ))
    dna=""; case $c in dna-*) dna="--dna" ;; esac
    d=$WORK/$c
    if [ ! -s "$d.tsv" ] || [ "$(cat "$d.n" 2>/dev/null)" != "$n" ]; then
        $B make-shapes --class "$c" --pairs "$n" --query "$d.q.fa" --target "$d.t.fa" --tsv "$d.tsv" && echo "$n" > "$d.n"
    fi
    r=${REPEAT[$c]}
    for round in $(seq "${ROUNDS:-2}"); do
        se=$(rate "$d" "$dna" "$r" --score-end)
        co=$(rate "$d" "$dna" "$r" "")
        printf '%-16s %-20s %8s\n' "$c" "local score/end" "$se"
        printf '%-16s %-20s %8s\n' "$c" "local coords" "$co"
        for m in $MODES; do
            t=$(rate "$d" "$dna" "$r" "--mode ${m//+/ }")
            printf '%-16s %-20s %8s %s\n' "$c" "$m" "$t" "$(calc "$t / $se") $(calc "$t / $co")"
        done
    done
done

#!/usr/bin/env bash
# GPU check of the paths of global and semi-global alignments (issue 52: the traceback
# kernel's modes variant, kernels/path_trace.cu -DMODE=1), on a machine with an NVIDIA GPU,
# from release binaries carried in $G (swarrow, gpu_align_bench). For each pair class of
# `gpu_align_bench make-shapes` (about 1,000,000 pairs in all, every class, the sets of
# scripts/gpu-check-modes.sh) and each mode, `swarrow align` on the same TSV (TSV output: no
# metadata, which names the engine), runs
#   coords   --device cuda, the coordinates columns (timed: the coordinates-only rate)
#   cigar    --device cuda, the same plus cigar (timed: the cigar rate)
#   stats    --device cuda, the same plus the statistics columns alone (the kernel's
#            counting variant)
#   paths    --device cuda, coordinates, cigar,qaln,taln and every statistics column
#   cpu      --device cpu, the paths run's columns
# and compares every GPU output byte for byte with the CPU's (cut to its columns). A line
# per class and mode: pairs, seconds of each run, the cigar run's rate as a percentage of
# the coordinates run's (pairs/s through the whole process), identical or not; exit 1 on
# any difference. Rectangles over the GPU's direction budget (and alignments with a side
# without residues) are traced on the CPU inside the GPU runs, as in local mode.
#
#   G=.gpu scripts/gpu-check-mode-paths.sh [CLASS ...]
# Environment: G (.gpu), WORK (/tmp/swarrow-mode-paths), DIV (1: divides the pair counts),
# MODES (the mode list below, as "name:options" words, options joined by '+').
set -uo pipefail
WORK=${WORK:-/tmp/swarrow-mode-paths}
. "$(dirname "$0")/gpu-mode-classes.sh" "$@"
MODES=${MODES:-"global:--mode=global semi-global:--mode=semi-global glocal:--mode=semi-global+--free-ends=target-start,target-end dovetail:--mode=semi-global+--free-ends=query-start,target-end"}
coords=query,target,score,qstart,qend,tstart,tend,qlen,tlen
stats=length,nident,mismatch,gapopen,gaps,pident
# Field numbers in the paths run's output (coords 1-9, cigar 10, qaln 11, taln 12, stats 13-18).
cut_cigar=1-10
cut_stats=1-9,13-18
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); $($SW --version 2>/dev/null)"
printf '%-16s %-12s %8s %8s %8s %8s %8s %8s %10s %s\n' \
    class mode pairs coords_s cigar_s stats_s paths_s cpu_s cigar/coords result
for c in $classes; do
    class_pairs "$c"
    for m in $MODES; do
        name=${m%%:*}
        opts=$(echo "${m#*:}" | tr '+' ' ')
        run() { # device columns output
            $SW align --pairs "$d.tsv" $dna $opts --columns "$2" --format tsv --quiet --device "$1" > "$3" ||
                echo "$1 run failed ($c $name --columns $2)" >&2
        }
        t0=$(date +%s.%N)
        run cuda "$coords" "$d.gpu-coords.tsv"
        t1=$(date +%s.%N)
        run cuda "$coords,cigar" "$d.gpu-cigar.tsv"
        t2=$(date +%s.%N)
        run cuda "$coords,$stats" "$d.gpu-stats.tsv"
        t3=$(date +%s.%N)
        run cuda "$coords,cigar,qaln,taln,$stats" "$d.gpu-paths.tsv"
        t4=$(date +%s.%N)
        run cpu "$coords,cigar,qaln,taln,$stats" "$d.cpu-paths.tsv"
        t5=$(date +%s.%N)
        cut -f1-9 "$d.cpu-paths.tsv" > "$d.cpu-coords.tsv"
        cut -f$cut_cigar "$d.cpu-paths.tsv" > "$d.cpu-cigar.tsv"
        cut -f$cut_stats "$d.cpu-paths.tsv" > "$d.cpu-stats.tsv"
        r=identical
        for f in coords cigar stats paths; do
            if ! cmp -s "$d.gpu-$f.tsv" "$d.cpu-$f.tsv" || [ "$(wc -l < "$d.cpu-$f.tsv")" -le "$n" ]; then
                r="DIFFERENT($f)"; failed=1
                diff <(head -c 2000000 "$d.gpu-$f.tsv") <(head -c 2000000 "$d.cpu-$f.tsv") | head -6 | cut -c1-300
            fi
        done
        pct=$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {printf "%.0f%%", 100 * (b - a) / (c - b)}')
        printf '%-16s %-12s %8s %8s %8s %8s %8s %8s %10s %s\n' "$c" "$name" "$n" "$(sec "$t0" "$t1")" \
            "$(sec "$t1" "$t2")" "$(sec "$t2" "$t3")" "$(sec "$t3" "$t4")" "$(sec "$t4" "$t5")" "$pct" "$r"
    done
done
echo "pairs checked: $total per mode"
exit $failed

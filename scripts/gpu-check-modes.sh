#!/usr/bin/env bash
# GPU check of the global and semi-global modes (issue 42), on a machine with an NVIDIA GPU,
# from release binaries carried in $G (swarrow, gpu_align_bench): for each pair class of
# `gpu_align_bench make-shapes` (about 1,000,000 pairs in all, every class) and each mode,
# `swarrow align --device cuda` against `--device cpu` on the same TSV, byte for byte (TSV
# output: no metadata, which names the engine), at both levels:
#   coordinates  query,target,score,qstart,qend,tstart,tend,qlen,tlen (without a free start
#                the forward pass and the starts the mode implies; with one, the reverse
#                pass too)
#   score/end    query,target,score,qend,tend,qlen,tlen (the forward pass; with a free
#                start, the reverse pass for ends whose start may leave a side empty),
#                against the CPU's coordinates run cut to those columns
# SWARROW_ENGINE=scalar checks against the scalar reference instead of the SIMD engine.
# A line per class and mode: pairs, seconds of each run, identical or not; exit 1 on any
# difference.
#
#   G=.gpu scripts/gpu-check-modes.sh [CLASS ...]
# Environment: G (.gpu), WORK (/tmp/swarrow-modes), DIV (1: divides the pair counts),
# MODES (the mode list below, as "name:options" words, options joined by '+').
set -uo pipefail
WORK=${WORK:-/tmp/swarrow-modes}
. "$(dirname "$0")/gpu-mode-classes.sh" "$@"
MODES=${MODES:-"global:--mode=global semi-global:--mode=semi-global glocal:--mode=semi-global+--free-ends=target-start,target-end ends-free:--mode=semi-global+--free-ends=query-end,target-end query-start:--mode=semi-global+--free-ends=query-start"}
cols=query,target,score,qstart,qend,tstart,tend,qlen,tlen
ends=query,target,score,qend,tend,qlen,tlen
printf '%-16s %-12s %9s %8s %8s %8s %s\n' class mode pairs gpu_s gpu_ends cpu_s result
for c in $classes; do
    class_pairs "$c"
    for m in $MODES; do
        name=${m%%:*}
        opts=$(echo "${m#*:}" | tr '+' ' ')
        t0=$(date +%s.%N)
        $SW align --pairs "$d.tsv" $dna $opts --columns $cols --format tsv --quiet --device cuda > "$d.gpu.tsv" || echo "GPU run failed" >&2
        t1=$(date +%s.%N)
        $SW align --pairs "$d.tsv" $dna $opts --columns $ends --format tsv --quiet --device cuda > "$d.gpu-ends.tsv" || echo "GPU run failed" >&2
        t2=$(date +%s.%N)
        $SW align --pairs "$d.tsv" $dna $opts --columns $cols --format tsv --quiet --device cpu > "$d.cpu.tsv" || echo "CPU run failed" >&2
        t3=$(date +%s.%N)
        cut -f1,2,3,5,7,8,9 "$d.cpu.tsv" > "$d.cpu-ends.tsv"
        r=identical
        for f in "" -ends; do
            if ! cmp -s "$d.gpu$f.tsv" "$d.cpu$f.tsv" || [ "$(wc -l < "$d.cpu$f.tsv")" -le "$n" ]; then
                r=DIFFERENT; failed=1
                diff <(head -c 2000000 "$d.gpu$f.tsv") <(head -c 2000000 "$d.cpu$f.tsv") | head -6
            fi
        done
        printf '%-16s %-12s %9s %8s %8s %8s %s\n' "$c" "$name" "$n" "$(sec "$t0" "$t1")" "$(sec "$t1" "$t2")" "$(sec "$t2" "$t3")" "$r"
    done
done
echo "pairs checked: $total per mode"
exit $failed

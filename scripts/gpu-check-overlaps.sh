#!/usr/bin/env bash
# GPU = CPU on the README's overlap recipe (issue 57: `--mode overlap`), byte for byte, on
# more than 100,000 minimap2 -x ava-pb candidates: reads of 2-4 kb at 1% error (and at 12%,
# CLR-like, indel-rich) from a genome with repeats (scripts/assembly-sim.py), PAF with cg:Z
# and the overlap column, from release binaries carried in $G (swarrow, minimap2).
#
#   G=.gpu scripts/gpu-check-overlaps.sh
# Environment: G (.gpu), WORK (/tmp/swarrow-overlaps), READS (5000), NOISY (2000: noisy reads).
set -uo pipefail
G=${G:-.gpu}
W=${WORK:-/tmp/swarrow-overlaps}
READS=${READS:-5000}
NOISY=${NOISY:-2000}
SW=$G/swarrow
MM=$(command -v "$G/minimap2" || command -v minimap2)
T=$(nproc)
mkdir -p "$W"
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
failed=0
check() { # name reads.fq
    local name=$1 fq=$2
    $MM -t "$T" -x ava-pb "$fq" "$fq" > "$W/$name.paf" 2>/dev/null
    local n=$(wc -l < "$W/$name.paf")
    local run="align --dna --mode overlap --pairs $W/$name.paf --seqs $fq"
    local t0=$(date +%s.%N)
    $SW $run --format paf --columns cigar > "$W/$name.gpu.paf"
    local t1=$(date +%s.%N)
    $SW $run --format paf --columns cigar --device cpu > "$W/$name.cpu.paf"
    local t2=$(date +%s.%N)
    local r=identical
    cmp -s "$W/$name.gpu.paf" "$W/$name.cpu.paf" || r="DIFFERENT(paf)"
    [ "$r" = identical ] || failed=1
    awk -v n="$n" -v name="$name" -v a="$t0" -v b="$t1" -v c="$t2" -v r="$r" -v lines="$(wc -l < "$W/$name.cpu.paf")" \
        'BEGIN {printf "%-8s candidates %d, PAF lines %d: GPU %.2f s, CPU %.2f s, GPU = CPU: %s\n", name, n, lines, b - a, c - b, r}'
    # The overlap column (the kind of each row) on both engines.
    local cols=query,target,strand,score,qstart,qend,tstart,tend,qlen,tlen,overlap
    $SW $run --format tsv --columns $cols > "$W/$name.gpu.tsv"
    $SW $run --format tsv --columns $cols --device cpu > "$W/$name.cpu.tsv"
    cmp -s "$W/$name.gpu.tsv" "$W/$name.cpu.tsv" || { echo "$name: DIFFERENT(overlap column)"; failed=1; }
    tail -n +2 "$W/$name.cpu.tsv" | cut -f11 | sort | uniq -c | tr '\n' ' '
    echo
}
[ -s "$W/clean/long.fq" ] || python3 "$(dirname "$0")/assembly-sim.py" "$W/clean" --seed 5 --contigs 2 \
    --contig-len 200000-250000 --long "$READS" --long-len 2000-4000 --repeats 6 >/dev/null
check clean "$W/clean/long.fq"
[ -s "$W/noisy/long.fq" ] || python3 "$(dirname "$0")/assembly-sim.py" "$W/noisy" --seed 6 --contigs 1 \
    --contig-len 150000-150000 --long "$NOISY" --long-len 2000-4000 --error 0.12 --error-mix 0.1,0.6,0.3 --repeats 4 >/dev/null
check noisy "$W/noisy/long.fq"
exit $failed

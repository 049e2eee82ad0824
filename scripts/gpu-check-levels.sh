#!/usr/bin/env bash
# GPU check of column levels and thresholds (issue 41), on a machine with an NVIDIA GPU, from
# release binaries carried in $G (swarrow, gpu_align_bench): for each pair class of
# `gpu_align_bench make-shapes` (about 1,000,000 pairs in all, every class), `swarrow align`
# on the GPU against `--device cpu` on the same TSV, byte for byte (TSV output: no metadata,
# which names the engine), with
#   score/end columns       query,target,score,bits,evalue,qend,tend,qlen,tlen (forward pass only)
#   a score threshold       default columns, --min-score at the class's 80th percentile of
#                           scores (the start pass for the kept pairs only)
#   every level filtered    query,target,score,qstart,pident,cigar,qaln with --max-evalue 1e-3
#                           --min-qcov 0.2 --min-pident 25
# A line per class and variant: pairs, rows kept, identical or not; exit 1 on any difference.
#
#   G=.gpu scripts/gpu-check-levels.sh [CLASS ...]
# Environment: G (.gpu), WORK (/tmp/swarrow-levels), SCALE (1: multiplies the pair counts).
set -uo pipefail
G=${G:-.gpu}
WORK=${WORK:-/tmp/swarrow-levels}
SCALE=${SCALE:-1}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
B=$G/gpu_align_bench
SW=$G/swarrow
declare -A PAIRS=([protein-short]=400000 [dna-reads]=400000 [protein-mid]=120000 [protein-long]=40000
    [protein-vlong]=150 [dna-read-contig]=60000 [dna-vlong]=30)
classes=${*:-"protein-short dna-reads protein-mid protein-long protein-vlong dna-read-contig dna-vlong"}
failed=0 total=0
printf '%-16s %-14s %9s %9s %s\n' class variant pairs kept result
for c in $classes; do
    n=$(( ${PAIRS[$c]} * SCALE ))
    dna=""; case $c in dna-*) dna="--dna" ;; esac
    d=$WORK/$c
    [ -s "$d.tsv" ] && [ "$(cat "$d.n" 2>/dev/null)" = "$n" ] ||
        { $B make-shapes --class "$c" --pairs "$n" --query "$d.q.fa" --target "$d.t.fa" --tsv "$d.tsv" && echo "$n" > "$d.n"; }
    total=$((total + n))
    # The 80th percentile of the class's scores (from the GPU's score/end run below).
    $SW align --pairs "$d.tsv" $dna --columns score --format tsv --quiet | tail -n +2 | sort -n > "$d.scores"
    p80=$(awk '{v[NR] = $1} END {print v[int(NR * 0.8) + 1]}' "$d.scores")
    for variant in score-end min-score all-levels; do
        case $variant in
            score-end) opts="--columns query,target,score,bits,evalue,qend,tend,qlen,tlen" ;;
            min-score) opts="--min-score $p80" ;;
            all-levels) opts="--columns query,target,score,qstart,pident,cigar,qaln --max-evalue 1e-3 --min-qcov 0.2 --min-pident 25" ;;
        esac
        $SW align --pairs "$d.tsv" $dna $opts --format tsv --quiet --device cuda > "$d.gpu.tsv" || echo "GPU run failed" >&2
        $SW align --pairs "$d.tsv" $dna $opts --format tsv --quiet --device cpu > "$d.cpu.tsv" || echo "CPU run failed" >&2
        kept=$(( $(wc -l < "$d.cpu.tsv") - 1 ))
        if cmp -s "$d.gpu.tsv" "$d.cpu.tsv" && [ "$kept" -ge 0 ]; then r=identical; else r=DIFFERENT; failed=1; fi
        printf '%-16s %-14s %9s %9s %s\n' "$c" "$variant" "$n" "$kept" "$r"
    done
done
echo "pairs checked: $total per variant"
exit $failed

#!/usr/bin/env bash
# Many short pairs through the whole command line (issue 34: >= 20M pairs/s for 10M protein
# 100-200 x 100-200 and 10M DNA 100-150 x 100-150 pairs, from a TSV file, from Parquet and by
# id; where the engine is slower, >= 90% of its rate), on a GPU machine, from release
# binaries carried in $G: swarrow, gpu_align_bench, pairs_convert.
#
# For each class (`gpu_align_bench make-shapes`, seeded, half the pairs related) one row each:
#   cat tsv       `cat` of the TSV file into /dev/null: what reading the input alone costs
#   engine        gpu_align_bench bench --preload on the same pairs: the engine's rate in its
#                 align calls (no parsing, no output)
#   tsv           swarrow align --pairs C.tsv (sequences inline) into an Arrow stream on a pipe
#   parquet       the same pairs as a Parquet file (pairs_convert)
#   by id         swarrow align --pairs C.ids.tsv --seqs C.q.fa --target-seqs C.t.fa (the
#                 candidate ids; both sets loaded once)
# with wall, pairs/s and the rate over the engine's, and under each swarrow row its --stats
# lines of the pipeline's stages (STATS=1), which say what bounded the run.
#
#   scripts/bench-short-pairs.sh [CLASS ...]       (default: protein-short dna-reads)
# Environment: G (.gpu), WORK (/tmp/swarrow-short; files kept and reused), N (10000000),
# REPEAT (2: swarrow rows alternated), STATS (1), DEVICE (auto).
set -uo pipefail
G=${G:-.gpu}
WORK=${WORK:-/tmp/swarrow-short}
N=${N:-10000000}
REPEAT=${REPEAT:-2}
STATS=${STATS:-1}
DEVICE=${DEVICE:-auto}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
SW=$G/swarrow
B=$G/gpu_align_bench
PC=$G/pairs_convert
for f in "$SW" "$B" "$PC"; do
    [ -x "$f" ] || { echo "missing $f (cargo build --release --bin swarrow --example gpu_align_bench --example pairs_convert)" >&2; exit 2; }
done
classes=${*:-"protein-short dna-reads"}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); $($SW --version 2>/dev/null); N=$N"

calc() { awk "BEGIN {printf \"%.6f\", $1}"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.3f", b - a}'; }

printf '%-14s %-10s %8s %12s %9s\n' class row seconds pairs/s "/engine"
for c in $classes; do
    dna=""; case $c in dna-*) dna="--dna" ;; esac
    d=$WORK/$c
    if [ "$(cat "$d.n" 2>/dev/null)" != "$N" ]; then
        $B make-shapes --class "$c" --pairs "$N" --query "$d.q.fa" --target "$d.t.fa" --tsv "$d.tsv" >/dev/null || exit 1
        $PC parquet "$d.q.fa" "$d.t.fa" > "$d.parquet" || exit 1
        # Candidates by id: record i of the query set with record i of the target set.
        paste <(grep '^>' "$d.q.fa" | cut -c2-) <(grep '^>' "$d.t.fa" | cut -c2-) > "$d.ids.tsv"
        sync
        echo "$N" > "$d.n"
    fi
    t0=$(now); cat "$d.tsv" > /dev/null; s=$(since "$t0")
    printf '%-14s %-10s %8s %12.0f %9s\n' "$c" "cat tsv" "$s" "$(calc "$N / $s")" ""
    line=$($B bench --query "$d.q.fa" --target "$d.t.fa" $dna --preload --repeat 1 2>/dev/null | grep "TCUPS in align")
    es=$(echo "$line" | sed -E 's/.*\(align calls ([0-9.]+)s\).*/\1/')
    erate=$(awk -v n="$N" -v s="$es" 'BEGIN {print (s > 0 ? n / s : 0)}')
    printf '%-14s %-10s %8s %12.0f %9s %s\n' "$c" engine "$es" "$erate" "" "$(echo "$line" | sed -E 's/.*, ([0-9.]+) TCUPS in align.*/\1 TCUPS in align/')"
    for r in $(seq "$REPEAT"); do
        for row in tsv parquet by-id; do
            case $row in
                tsv) cmd="$SW align --pairs $d.tsv $dna" ;;
                parquet) cmd="$SW align --pairs $d.parquet $dna" ;;
                by-id) cmd="$SW align --pairs $d.ids.tsv --seqs $d.q.fa --target-seqs $d.t.fa $dna" ;;
            esac
            t0=$(now)
            bash -o pipefail -c "$cmd --device $DEVICE --format arrow --stats 2> $WORK/stats.txt | cat > /dev/null" \
                || { echo "FAILED: $cmd" >&2; cat "$WORK/stats.txt" >&2; }
            s=$(since "$t0")
            printf '%-14s %-10s %8s %12.0f %9.3f\n' "$c" "$row" "$s" "$(calc "$N / $s")" "$(awk -v n="$N" -v s="$s" -v e="$erate" 'BEGIN {print (e > 0 ? n / s / e : 0)}')"
            [ "$STATS" = 1 ] && [ "$r" = 1 ] && sed 's/^/    /' "$WORK/stats.txt"
        done
    done
done

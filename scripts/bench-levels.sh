#!/usr/bin/env bash
# Column levels and thresholds on the GPU (issue 41), each pair of rows in the same run, from
# release binaries carried in $G (swarrow, gpu_align_bench, pairs_convert, make_pairs.py,
# make_db.py, DB.fasta.gz):
#   engine   gpu_align_bench bench --preload: default columns' work (forward and reverse
#            passes) against --score-end (forward pass only), alternated, per class of
#            `make-shapes` and on the benchmark set (make_pairs.py, qlen 20-400, tlen 400-1664)
#   byid     swarrow align --pairs CANDIDATES --seqs SET, whole process into an Arrow stream
#            through a pipe: default columns against --columns query,target,score
#   paths    swarrow align --pairs (the benchmark set repeated to N pairs) with
#            cigar,qaln,taln: no threshold against --min-score keeping about 10%
#
#   G=.gpu scripts/bench-levels.sh [engine] [byid] [paths]
# Environment: G (.gpu), WORK (/tmp/swarrow-levels-bench), CLASSES ("protein-short dna-reads"),
# ROUNDS (2), CANDIDATES (20000000), SET_RESIDUES (45000000), N (10000000), BASE (200000).
set -uo pipefail
G=${G:-.gpu}
WORK=${WORK:-/tmp/swarrow-levels-bench}
CLASSES=${CLASSES:-"protein-short dna-reads"}
ROUNDS=${ROUNDS:-2}
CANDIDATES=${CANDIDATES:-20000000}
SET_RESIDUES=${SET_RESIDUES:-45000000}
N=${N:-10000000}
BASE=${BASE:-200000}
parts=${*:-"engine byid paths"}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
B=$G/gpu_align_bench
SW=$G/swarrow
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); $($SW --version 2>/dev/null)"
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
calc() { awk "BEGIN {printf \"%.3f\", $1}"; }
wall() {
    local t0 t1
    t0=$(date +%s.%N)
    bash -o pipefail -c "$1" || echo "FAILED: $1" >&2
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}
# The benchmark set (ADEPT comparison's shape), gaps 11/1.
bq=$WORK/bench.q.fa bt=$WORK/bench.t.fa
[ -s "$bq" ] || python3 "$G/make_pairs.py" "$G/DB.fasta.gz" --pairs "$BASE" --qlen 20 400 --tlen 400 1664 \
    --seed 7 --query "$bq" --target "$bt"

if want engine; then
    echo
    echo "== engine: TCUPS inside the align calls, default columns' work against score/end only"
    printf '%-16s %10s %10s %8s\n' class default score-end ratio
    for c in $CLASSES bench; do
        if [ "$c" = bench ]; then
            q=$bq t=$bt dna="" r=10
        else
            q=$WORK/$c.q.fa t=$WORK/$c.t.fa dna=""; r=10
            case $c in dna-*) dna="--dna" ;; esac
            [ -s "$q" ] || $B make-shapes --class "$c" --pairs 2000000 --query "$q" --target "$t"
        fi
        for k in $(seq "$ROUNDS"); do
            rate() { $B bench --query "$q" --target "$t" $dna --preload --repeat "$r" "$@" 2>/dev/null |
                grep -o '[0-9.]* TCUPS in align' | cut -d' ' -f1; }
            a=$(rate); s=$(rate --score-end)
            printf '%-16s %10s %10s %8s\n' "$c" "$a" "$s" "$(calc "$s / $a")"
        done
    done
fi

if want byid; then
    set=$WORK/set.fa cand=$WORK/cand.tsv
    [ -s "$set" ] || python3 "$G/make_db.py" "$G/DB.fasta.gz" --residues "$SET_RESIDUES" --seed 1 > "$set" 2>/dev/null
    [ -s "$cand" ] || "$G/pairs_convert" random-candidates tsv "$set" "$CANDIDATES" 20 > "$cand" 2> "$cand.err"
    cells=$(grep -o '[0-9]*$' "$cand.err" | tail -1)
    echo
    echo "== by id: $CANDIDATES candidates among $(grep -c '>' "$set") proteins ($cells cells), whole process"
    printf '%-34s %8s %8s %8s\n' columns wall TCUPS ratio
    for k in $(seq "$ROUNDS"); do
        a=$(wall "$SW align --pairs $cand --seqs $set --format arrow | cat > /dev/null")
        s=$(wall "$SW align --pairs $cand --seqs $set --columns query,target,score --format arrow | cat > /dev/null")
        printf '%-34s %8s %8s %8s\n' default "$a" "$(calc "$cells / $a / 1e12")" 1
        printf '%-34s %8s %8s %8s\n' query,target,score "$s" "$(calc "$cells / $s / 1e12")" "$(calc "$a / $s")"
    done
    "$SW" align --pairs "$cand" --seqs "$set" --columns query,target,score --format arrow --stats 2>&1 >/dev/null |
        grep -E "pairs (read|kept)|bound by|pipeline wall" | sed 's/^/    /'
fi

if want paths; then
    tsv=$WORK/bench.$N.tsv
    if [ ! -s "$tsv" ]; then
        paste <(awk '/^>/ {if (s) print id "\t" s; id = substr($1, 2); s = ""; next} {s = s $0} END {print id "\t" s}' "$bq") \
              <(awk '/^>/ {if (s) print id "\t" s; id = substr($1, 2); s = ""; next} {s = s $0} END {print id "\t" s}' "$bt") \
            > "$WORK/bench.tsv"
        for _ in $(seq $((N / BASE))); do cat "$WORK/bench.tsv"; done > "$tsv"
        sync
    fi
    # The score keeping about 10% of the pairs: the 90th percentile of the base set's scores.
    "$SW" align --pairs "$WORK/bench.tsv" --columns score --format tsv --quiet | tail -n +2 | sort -n > "$WORK/bench.scores"
    p90=$(awk '{v[NR] = $1} END {print v[int(NR * 0.9) + 1]}' "$WORK/bench.scores")
    kept=$(awk -v s="$p90" '$1 >= s {k++} END {printf "%.1f", 100 * k / NR}' "$WORK/bench.scores")
    cols=query,target,score,bits,evalue,qstart,qend,tstart,tend,qlen,tlen,recomputed,cigar,qaln,taln
    echo
    echo "== $N benchmark pairs with cigar,qaln,taln, whole process into an Arrow stream; --min-score $p90 keeps $kept%"
    printf '%-24s %8s %8s\n' run wall ratio
    for k in $(seq "$ROUNDS"); do
        a=$(wall "$SW align --pairs $tsv --columns $cols --format arrow | cat > /dev/null")
        s=$(wall "$SW align --pairs $tsv --columns $cols --min-score $p90 --format arrow | cat > /dev/null")
        printf '%-24s %8s %8s\n' "no threshold" "$a" 1
        printf '%-24s %8s %8s\n' "--min-score $p90" "$s" "$(calc "$a / $s")"
    done
fi

#!/usr/bin/env bash
# Parquet output against the Arrow stream on the same alignments (issue 34: Parquet with
# cigar,qaln,taln >= 80% of the Arrow stream's rate).
#
# Part 1, the writers alone (examples/bench_writers.rs): the results of BASE generated protein
# pairs (make_pairs.py, qlen 20-400, tlen 400-1664, as bench-inputs.sh) aligned once with
# COLUMNS into an Arrow file, cycled to ROWS rows and written by swarrow's writers as an Arrow
# stream and as Parquet into /dev/null, alternated REPEAT times, once per rayon thread count
# in THREADS: rows/s of each and Parquet's rate over the stream's.
# Part 2 (WHOLE=1, the issue's figure), the whole process: `swarrow align --pairs FILE` of N
# pairs (the BASE pairs repeated into one TSV file) with COLUMNS, to an Arrow stream through a
# pipe into /dev/null and to a Parquet file in WORK, alternated REPEAT times: wall, pairs/s,
# Parquet's rate over the stream's.
#
# Issue 51 (FORMATS=arrow,paf,sam,bam): PAF, SAM and BAM against the Arrow stream, the writers
# alone (BAM compressed on all cores; SAM/BAM with the targets known up front, SPOOL=1 for
# records spooled until the header) and, with WHOLE=1, the whole process to each format.
# The generated pairs are protein: BAM stores their letters as N (the command line refuses
# BAM of protein; the writer's cost is the same per letter).
#
#   scripts/bench-writers.sh                                   (on the GPU host)
#   FORMATS=arrow,paf,sam,bam WHOLE=0 scripts/bench-writers.sh
#   BASE=20000 ROWS=1000000 THREADS="1 2" N=200000 DEVICE=cpu scripts/bench-writers.sh
#
# Environment: SWARROW, BENCH_WRITERS (binaries; default $G/NAME, else target/release/...),
# G (.gpu), GEN (make_pairs.py and DB.fasta.gz; default $G, else ../shared), WORK
# (/tmp/swarrow-writers; generated files are kept and reused), BASE (200000), ROWS (10000000),
# THREADS ("1 4 all"), REPEAT (3), COLUMNS (align's twelve,cigar,qaln,taln), WHOLE (1),
# N (10000000, a multiple of BASE), DEVICE (auto), FORMATS (arrow,parquet: the first is the
# reference), SPOOL (0).
set -euo pipefail
G=${G:-.gpu}
pick() { for f in "$@"; do [ -x "$f" ] && { echo "$f"; return; }; done; echo "$1"; }
SWARROW=${SWARROW:-$(pick "$G/swarrow" target/release/swarrow)}
BENCH_WRITERS=${BENCH_WRITERS:-$(pick "$G/bench_writers" target/release/examples/bench_writers)}
GEN=${GEN:-$([ -f "$G/make_pairs.py" ] && echo "$G" || echo ../shared/bench)}
DB=${DB:-$([ -f "$GEN/DB.fasta.gz" ] && echo "$GEN/DB.fasta.gz" || echo "$GEN/../data/DB.fasta.gz")}
WORK=${WORK:-/tmp/swarrow-writers}
BASE=${BASE:-200000}
ROWS=${ROWS:-10000000}
THREADS=${THREADS:-"1 4 all"}
REPEAT=${REPEAT:-3}
COLUMNS=${COLUMNS:-query,target,score,bits,evalue,qstart,qend,tstart,tend,qlen,tlen,recomputed,cigar,qaln,taln}
WHOLE=${WHOLE:-1}
N=${N:-10000000}
DEVICE=${DEVICE:-auto}
FORMATS=${FORMATS:-arrow,parquet}
SPOOL=${SPOOL:-0}
for f in "$SWARROW" "$BENCH_WRITERS"; do
    [ -x "$f" ] || { echo "missing $f (cargo build --release --bin swarrow --example bench_writers)" >&2; exit 2; }
done
[ $((N % BASE)) -eq 0 ] || { echo "N ($N) must be a multiple of BASE ($BASE)" >&2; exit 2; }
. "$(dirname "$0")/gpu-env.sh"
mkdir -p "$WORK"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $("$SWARROW" --version)"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true

q=$WORK/base.q.fa t=$WORK/base.t.fa tsv=$WORK/base.tsv results=$WORK/base.$(echo "$COLUMNS" | md5sum | cut -c1-8).arrow
[ -s "$q" ] || python3 "$GEN/make_pairs.py" "$DB" --pairs "$BASE" --qlen 20 400 --tlen 400 1664 \
    --seed 7 --query "$q" --target "$t"
[ -s "$results" ] || "$SWARROW" align --device "$DEVICE" --quiet -q "$q" -t "$t" --columns "$COLUMNS" -o "$results"

echo
echo "== the writers alone: $ROWS rows (the results of $BASE pairs cycled), columns $COLUMNS"
for threads in $THREADS; do
    arg="--formats $FORMATS"
    [ "$SPOOL" = 1 ] && arg="$arg --spool"
    [ "$threads" = all ] || arg="$arg --threads $threads"
    # shellcheck disable=SC2086
    "$BENCH_WRITERS" "$results" --rows "$ROWS" --repeat "$REPEAT" --columns "$COLUMNS" $arg
done

[ "$WHOLE" = 1 ] || exit 0
# One TSV file of N pairs: the base pairs' lines repeated.
if [ ! -s "$WORK/n$N.tsv" ]; then
    paste <(awk 'NR%2==1{sub(/^>/,"");id=$1} NR%2==0{print id"\t"$0}' "$q") \
        <(awk 'NR%2==1{sub(/^>/,"");id=$1} NR%2==0{print id"\t"$0}' "$t") > "$tsv"
    for _ in $(seq $((N / BASE))); do cat "$tsv"; done > "$WORK/n$N.tsv"
    sync
fi
echo
echo "== the whole process: swarrow align --pairs FILE of $N pairs ($BASE x $((N / BASE))), --device $DEVICE, columns $COLUMNS"
sw="$SWARROW align --device $DEVICE --quiet --pairs $WORK/n$N.tsv --columns $COLUMNS"
wall() { local t; t=$(date +%s.%N); bash -o pipefail -c "$1"; python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t" "$(date +%s.%N)"; }
if [ "$FORMATS" = arrow,parquet ]; then
for r in $(seq "$REPEAT"); do
    a=$(wall "$sw --format arrow | cat > /dev/null")
    p=$(wall "$sw -o $WORK/out.parquet")
    rm -f "$WORK/out.parquet"
    python3 -c "import sys; n,a,p=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); print(f'run {sys.argv[4]}: arrow stream {a:.2f} s {n/a:,.0f} pairs/s;  parquet file {p:.2f} s {n/p:,.0f} pairs/s = {a/p:.1%} of the stream')" "$N" "$a" "$p" "$r"
done
else
# Each format to a file (PAF, SAM, BAM take their own columns; BAM of protein is refused by
# the command line, so only on DNA inputs: the generated pairs are protein, BAM skipped).
sw="$SWARROW align --device $DEVICE --quiet --pairs $WORK/n$N.tsv"
for r in $(seq "$REPEAT"); do
    line="run $r:"
    ref=""
    for f in ${FORMATS//,/ }; do
        [ "$f" = bam ] && continue
        cols="--columns $COLUMNS"
        case $f in paf) cols="--columns cigar" ;; sam) cols="" ;; esac
        # shellcheck disable=SC2086
        s=$(wall "$sw $cols --format $f -o $WORK/out.$f")
        rm -f "$WORK/out.$f"
        [ -n "$ref" ] || ref=$s
        line="$line  $f $s s $(python3 -c "import sys; n,s,r=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); print(f'{n/s:,.0f} pairs/s = {r/s:.1%}')" "$N" "$s" "$ref");"
    done
    echo "$line"
done
fi

#!/usr/bin/env bash
# The command line measured as users run it (issue 10), on a GPU machine, from release
# binaries built elsewhere and carried in $G (default .gpu-lead): swarrow, gpu_align_bench,
# pairs_convert, plus make_pairs.py and DB.fasta.gz (make_db.py, QUERY.fasta.gz for SEARCH=1).
#
# For each set (protein: make_pairs.py --qlen 20 400 --tlen 400 1664 --seed 7; DNA: the
# DNA-2 shape of gpu_align_bench make-dna), BASE pairs are generated once and every input
# path is fed REPEAT copies of them (PAIRS = BASE x REPEAT): TSV on stdin, gzip TSV file
# (multi-member), two FASTA files (process substitution), Arrow IPC stream on stdin and a
# Parquet file; each to an Arrow stream on stdout (a pipe) and to a Parquet file. Each line:
# wall, TCUPS (qlen x tlen cells), pairs/s, peak RSS, and the ratio to the engine-only rate of
# the same run (gpu_align_bench bench: two FASTA files, memory-mapped reading, engine calls
# back to back). One line for the CPU engine on the host's cores (CPU_PAIRS pairs). SEARCH=1
# adds the 500-query search against a 200M-residue database, CLI against engine scan.
#
#   scripts/bench-align-cli.sh [protein|dna|all]
# Environment: G, WORK (/tmp/swarrow-cli), BASE (200000), REPEAT (50), CPU_PAIRS (200000),
# OUTPUTS ("arrow parquet"), PATHS ("tsv-stdin tsv-gz fasta arrow-stdin parquet"), SKIP
# (path:output pairs left out, e.g. "tsv-gz:parquet"), SEARCH.
set -uo pipefail
G=${G:-.gpu-lead}
WORK=${WORK:-/tmp/swarrow-cli}
BASE=${BASE:-200000}
REPEAT=${REPEAT:-50}
CPU_PAIRS=${CPU_PAIRS:-200000}
OUTPUTS=${OUTPUTS:-"arrow parquet"}
PATHS=${PATHS:-"tsv-stdin tsv-gz fasta arrow-stdin parquet"}
SKIP=${SKIP:-}
sets=${1:-all}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
SW=$G/swarrow
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); swarrow $($SW --version 2>/dev/null)"

# Runs "$@" through bash; prints wall seconds and the peak RSS (MiB) of its largest process.
measure() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.run(["bash", "-o", "pipefail", "-c", sys.argv[1]]).returncode
wall = time.time() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{wall:.3f} {rss:.0f} {rc}")
PY
}

repeat_cat() { local f=$1 n=$2; for _ in $(seq "$n"); do cat "$f"; done; }

# Cells of one pass over the base pairs (qlen x tlen summed).
cells_of() {
    python3 - "$1" "$2" <<'PY'
import sys
def lens(p):
    return [len(l.strip()) for l in open(p) if not l.startswith('>')]
print(sum(a * b for a, b in zip(lens(sys.argv[1]), lens(sys.argv[2]))))
PY
}

row() { # name pairs cells wall rss rc engine_tcups
    python3 - "$@" <<'PY'
import sys
name, pairs, cells, wall, rss, rc, eng = sys.argv[1:]
pairs, cells, wall, eng = int(pairs), float(cells), float(wall), float(eng)
t = cells / wall / 1e12
ratio = f"{t / eng:6.1%}" if eng > 0 else "     -"
print(f"| {name:<34} | {wall:7.2f} | {t:6.3f} | {pairs / wall / 1e6:6.2f}M | {rss:>6} | {ratio} |" + ("" if rc == "0" else f" FAILED rc={rc}"))
PY
}

run_set() {
    local set=$1 q=$WORK/$1.q.fa t=$WORK/$1.t.fa opts=()
    if [ "$set" = dna ]; then
        opts=(--dna)
        [ -s "$q" ] || "$G/gpu_align_bench" make-dna --pairs "$BASE" --query "$q" --target "$t" >/dev/null
    else
        opts=(--gap-open 11 --gap-extend 1)
        [ -s "$q" ] || python3 "$G/make_pairs.py" "$G/DB.fasta.gz" --pairs "$BASE" --qlen 20 400 --tlen 400 1664 \
            --seed 7 --query "$q" --target "$t"
    fi
    local pairs=$((BASE * REPEAT))
    local cells; cells=$(python3 -c "print($(cells_of "$q" "$t") * $REPEAT)")
    [ -s "$WORK/$set.tsv" ] || "$G/pairs_convert" tsv "$q" "$t" > "$WORK/$set.tsv"
    [ -s "$WORK/$set.tsv.gz" ] || gzip -1 -c "$WORK/$set.tsv" > "$WORK/$set.tsv.gz"
    [ -s "$WORK/$set.parquet" ] || "$G/pairs_convert" parquet "$q" "$t" --repeat "$REPEAT" > "$WORK/$set.parquet"
    echo
    echo "== $set: $pairs pairs ($BASE x $REPEAT), $(python3 -c "print(f'{$cells:.3e}')") cells"
    # Correctness first: the base pairs through the pipe on the GPU and on the CPU, byte for byte.
    for dev in cuda cpu; do
        "$SW" align --pairs - "${opts[@]}" --device $dev --quiet --format tsv < "$WORK/$set.tsv" > "$WORK/check-$dev.tsv"
    done
    if cmp -s "$WORK/check-cuda.tsv" "$WORK/check-cpu.tsv"; then
        echo "IDENTICAL GPU and CPU output for the $BASE base pairs ($(($(wc -l < "$WORK/check-cpu.tsv") - 1)) rows)"
    else
        echo "DIFFERENT GPU and CPU output for the base pairs"
    fi
    # Engine only, as gpu_align_bench runs it (its own reader, Arrow of 5 columns to a file).
    local e; e=$("$G/gpu_align_bench" bench "${opts[@]}" --query "$q" --target "$t" --repeat "$REPEAT" --out /tmp/engine.arrow | grep -o '[0-9.]* TCUPS end to end' | cut -d' ' -f1)
    echo "| path | wall s | TCUPS | pairs/s | RSS MiB | of engine |"
    echo "|---|---|---|---|---|---|"
    local ew; ew=$(python3 -c "print($cells / ($e * 1e12))")
    row "engine only (gpu_align_bench)" "$pairs" "$cells" "$ew" "-" 0 "$e"
    for out in $OUTPUTS; do
        local sink="--format arrow | cat > /dev/null"
        [ "$out" = parquet ] && sink="-o $WORK/out.parquet"
        for path in $PATHS; do
            [[ " $SKIP " == *" $path:$out "* ]] && continue
            local cmd
            case $path in
                tsv-stdin) cmd="repeat_cat $WORK/$set.tsv $REPEAT | $SW align --pairs - ${opts[*]} --device cuda --quiet $sink" ;;
                tsv-gz) cmd="$SW align --pairs <(repeat_cat $WORK/$set.tsv.gz $REPEAT) ${opts[*]} --device cuda --quiet $sink" ;;
                fasta) cmd="$SW align --query <(repeat_cat $q $REPEAT) --target <(repeat_cat $t $REPEAT) ${opts[*]} --device cuda --quiet $sink" ;;
                arrow-stdin) cmd="$G/pairs_convert arrow $q $t --repeat $REPEAT | $SW align --pairs - ${opts[*]} --device cuda --quiet $sink" ;;
                parquet) cmd="$SW align --pairs $WORK/$set.parquet ${opts[*]} --device cuda --quiet $sink" ;;
            esac
            export -f repeat_cat
            read -r wall rss rc < <(measure "$cmd")
            row "$path -> $out" "$pairs" "$cells" "$wall" "$rss" "$rc" "$e"
        done
    done
    # The CPU engine on the host's cores, through the same pipe.
    local cq=$((CPU_PAIRS < BASE ? CPU_PAIRS : BASE))
    head -n "$cq" "$WORK/$set.tsv" > "$WORK/$set.cpu.tsv"
    local ccells; ccells=$(python3 -c "print($cells / $REPEAT * $cq / $BASE)")
    read -r wall rss rc < <(measure "cat $WORK/$set.cpu.tsv | $SW align --pairs - ${opts[*]} --device cpu --quiet --format arrow | cat > /dev/null")
    row "CPU engine, tsv-stdin ($cq pairs)" "$cq" "$ccells" "$wall" "$rss" "$rc" 0
}

case $sets in
    protein|dna) run_set "$sets" ;;
    all) run_set protein; run_set dna ;;
esac

if [ "${SEARCH:-0}" = 1 ]; then
    echo
    echo "== search: QUERY.fasta.gz (500 queries) against a 200M-residue database"
    [ -s /tmp/db200m.fasta ] || python3 "$G/make_db.py" "$G/DB.fasta.gz" --residues 200000000 --seed 1 > /tmp/db200m.fasta
    "$G/gpu_bench" bench /tmp/db200m.fasta "$G/QUERY.fasta.gz" --repeat 2 2>&1 | grep -i tcups | tail -3
    read -r wall rss rc < <(measure "$SW search -q $G/QUERY.fasta.gz -d /tmp/db200m.fasta --device cuda --quiet --format arrow | cat > /dev/null")
    echo "CLI search: wall ${wall}s, peak RSS ${rss} MiB, rc $rc"
fi

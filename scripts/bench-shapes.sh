#!/usr/bin/env bash
# The pair engine by shape of pair (issue 33), on a GPU machine, from release binaries built
# elsewhere and carried in $G: swarrow and gpu_align_bench. For each class of
# `gpu_align_bench make-shapes` (seeded; half the pairs related), one line each:
#   engine    gpu_align_bench bench --preload --repeat R: TCUPS inside the align calls, the
#             engine as it is ("new") and as it was before GPU binning and pipelined passes
#             ("old": --host-bins --no-pipeline), alternated
#   cli       swarrow align --pairs FILE.tsv into an Arrow stream on a pipe: wall, TCUPS,
#             pairs/s (the pairs of one repeat)
#   cpu       swarrow align --device cpu on the host's cores, the first CPU_PAIRS pairs
# and the ratio of the command line's rate to the CPU's. Cells are qlen x tlen.
#
#   scripts/bench-shapes.sh [CLASS ...]     (default: all seven)
# Environment: G (.gpu), WORK (/tmp/swarrow-shapes), SCALE (1: multiplies every class's
# pair count), PROFILE (1: ncu of each class's first forward align launch and the bins
# kernels, summary lines into $OUT or $WORK), STATS (1: the engine's --stats lines of host
# preparation and GPU timeline under each engine row), SKIP_CLI, SKIP_CPU, SKIP_OLD (1: leave out).
set -uo pipefail
G=${G:-.gpu}
WORK=${WORK:-/tmp/swarrow-shapes}
SCALE=${SCALE:-1}
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
B=$G/gpu_align_bench
SW=$G/swarrow
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); $($SW --version 2>/dev/null)"

# class: pairs generated, repeats of the engine run, CPU pairs (sized for ~1 s of GPU work
# at ~1 TCUPS, and a few seconds of the CPU engine).
declare -A PAIRS=([protein-short]=2000000 [dna-reads]=2000000 [protein-mid]=500000 [protein-long]=200000
    [protein-vlong]=400 [dna-read-contig]=200000 [dna-vlong]=100)
declare -A REPEAT=([protein-short]=10 [dna-reads]=20 [protein-mid]=8 [protein-long]=8
    [protein-vlong]=10 [dna-read-contig]=8 [dna-vlong]=6)
declare -A CPU=([protein-short]=400000 [dna-reads]=600000 [protein-mid]=40000 [protein-long]=20000
    [protein-vlong]=40 [dna-read-contig]=20000 [dna-vlong]=10)
classes=${*:-"protein-short dna-reads protein-mid protein-long protein-vlong dna-read-contig dna-vlong"}

calc() { awk "BEGIN {printf \"%.6f\", $1}"; }   # arithmetic (no bc on the GPU hosts)

wall() { # seconds of "$@" run through bash
    local t0 t1
    t0=$(date +%s.%N)
    bash -o pipefail -c "$1" || echo "FAILED: $1" >&2
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

printf '%-16s %-22s %9s %9s %12s %s\n' class row seconds TCUPS pairs/s note
for c in $classes; do
    n=$(( ${PAIRS[$c]} * SCALE ))
    dna=""; case $c in dna-*) dna="--dna" ;; esac
    d=$WORK/$c
    if [ ! -s "$d.tsv" ] || [ "$(cat "$d.n" 2>/dev/null)" != "$n" ]; then
        $B make-shapes --class "$c" --pairs "$n" --query "$d.q.fa" --target "$d.t.fa" --tsv "$d.tsv" && echo "$n" > "$d.n"
    fi
    r=${REPEAT[$c]}
    cells=$(awk -F'\t' '{c += length($2) * length($4)} END {printf "%.0f", c}' "$d.tsv")
    modes="new"
    [ "${SKIP_OLD:-0}" = 1 ] || modes="new old new old"
    for m in $modes; do
        flag=""; [ "$m" = old ] && flag="--host-bins --no-pipeline"
        full=$($B bench --query "$d.q.fa" --target "$d.t.fa" $dna --preload --repeat "$r" $flag 2>/dev/null)
        line=$(echo "$full" | grep "TCUPS in align")
        t=$(echo "$line" | sed -E 's/.*, ([0-9.]+) TCUPS in align.*/\1/')
        s=$(echo "$line" | sed -E 's/.*\(align calls ([0-9.]+)s\).*/\1/')
        printf '%-16s %-22s %9s %9s %12s %s\n' "$c" "engine $m" "$s" "$t" "$(calc "$n * $r / $s")" "x$r of $n pairs"
        [ "${STATS:-0}" = 1 ] && echo "$full" | grep -E "preparation|GPU passes|timeline" | sed 's/^/    /'
    done
    if [ "${SKIP_CLI:-0}" != 1 ]; then
        s=$(wall "$SW align --pairs $d.tsv $dna --format arrow | cat > /dev/null")
        gpu_rate=$(calc "$cells / $s")
        printf '%-16s %-22s %9.3f %9.3f %12.0f %s\n' "$c" "cli tsv->arrow pipe" "$s" "$(calc "$gpu_rate / 1e12")" "$(calc "$n / $s")" ""
    fi
    if [ "${SKIP_CPU:-0}" != 1 ]; then
        m=${CPU[$c]}
        head -n "$m" "$d.tsv" > "$d.cpu.tsv"
        ccells=$(awk -F'\t' '{c += length($2) * length($4)} END {printf "%.0f", c}' "$d.cpu.tsv")
        s=$(wall "$SW align --device cpu --pairs $d.cpu.tsv $dna --format arrow | cat > /dev/null")
        cpu_rate=$(calc "$ccells / $s")
        ratio=""
        [ "${SKIP_CLI:-0}" != 1 ] && ratio=$(printf 'cli/cpu %.1fx' "$(calc "$gpu_rate / $cpu_rate")")
        printf '%-16s %-22s %9.3f %9.3f %12.0f %s\n' "$c" "cpu $(nproc) threads" "$s" "$(calc "$cpu_rate / 1e12")" "$(calc "$m / $s")" "$ratio"
    fi
    if [ "${PROFILE:-0}" = 1 ]; then
        R=${OUT:-$WORK}
        ncu --clock-control none --csv -k regex:'align_pairs|bins_' --launch-count 8 \
            --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread \
            $B bench --query "$d.q.fa" --target "$d.t.fa" $dna --streams 1 --depth 1 > "$R/ncu-$c.csv" 2>/dev/null || true
        echo "ncu $c: $(grep -c gpu__time_duration "$R/ncu-$c.csv" 2>/dev/null) launches -> ncu-$c.csv"
    fi
done

#!/usr/bin/env bash
# The host side on every core (issue 59): each target of the issue as a whole process, with
# its --stats (stages, what bounds the run, the time before the first pair), beside minimap2
# and the engine's own benchmark in the same call, from release binaries carried in $G
# (swarrow, gpu_align_bench, pairs_convert; minimap2 where present).
#
#   reads    500k 150 bp reads on 20 contigs (scripts/assembly-sim.py) and minimap2 -x sr's
#            candidates: minimap2 -x sr, minimap2 -ax sr, swarrow to Arrow, PAF, SAM and BAM
#            (each one's rate over Arrow's, and over Arrow's with the path computed as they
#            compute it), BAM --strand both; samtools quickcheck of
#            the BAM; again at READS2 (2M) reads for the SAM/BAM rates
#   short    10M short protein pairs (100-200 residues) from a TSV file, Parquet and by id,
#            beside gpu_align_bench (scripts/bench-short-pairs.sh protein-short)
#   inputs   the 10M benchmark pairs through every input path against the engine
#            (scripts/bench-inputs.sh; needs its generators in $GEN)
#   byid     20M DNA candidates among 1M reads by id (pairs_convert read-overlaps), pairs/s,
#            beside gpu_align_bench by-id (the engine alone; the reader alone)
#   one      one pair with --device cuda
#
#   G=.gpu scripts/bench-host.sh [STAGE ...]        (default: reads short byid one)
# Environment: G (.gpu), WORK (/tmp/swarrow-host; data kept and reused), READS (500000),
# READS2 (2000000; empty: skip), BYID_READS (1000000), BYID_PER_READ (20), DEVICE (cuda).
# On a CPU machine: DEVICE=cpu READS=20000 READS2= BYID_READS=20000 scripts/bench-host.sh reads byid
set -uo pipefail
G=${G:-.gpu}
W=${WORK:-/tmp/swarrow-host}
READS=${READS:-500000}
READS2=${READS2-2000000}
BYID_READS=${BYID_READS:-1000000}
BYID_PER_READ=${BYID_PER_READ:-20}
DEVICE=${DEVICE:-cuda}
SW=$G/swarrow
PC=$G/pairs_convert
MM=$(command -v "$G/minimap2" || command -v minimap2 || true)
T=$(nproc)
stages=${*:-"reads short byid one"}
mkdir -p "$W"
. "$(dirname "$0")/gpu-env.sh"
[ -x "$SW" ] || { echo "missing $SW (cargo build --release; strip it)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $T; $($SW --version); commit $(git rev-parse --short HEAD 2>/dev/null); $(date -u +%F)"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.3f", b - a}'; }
# Seconds of a command whose stdout goes to $1 (its stderr to $W/err).
secs() {
    local out=$1
    shift
    local t0=$(now)
    "$@" > "$out" 2> "$W/err" || echo "FAILED: $* ($(head -c 400 "$W/err"))" >&2
    since "$t0"
}
# --stats lines worth reading, indented.
stats() { grep -E 'wall|before the first|stage|bound by|cpu sw-' "$W/err" | sed 's/^swarrow stats: /    /'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (a > 0 && b > 0 ? a / b : 0)}'; }

reads_on_contigs() {
    local n=$1 d=$W/sr$1
    if [ ! -s "$d/short.fq" ]; then
        python3 "$(dirname "$0")/assembly-sim.py" "$d" --seed 1 --contigs 20 --short "$n" || return
    fi
    echo "== reads on contigs: $n reads of 150 bp, 20 contigs"
    if [ -n "$MM" ]; then
        echo "minimap2 -x sr (candidates): $(secs "$d/sr.paf" "$MM" -t "$T" -x sr "$d/genome.fa" "$d/short.fq") s"
        echo "minimap2 -ax sr (mapping and alignment, SAM): $(secs /dev/null "$MM" -t "$T" -ax sr "$d/genome.fa" "$d/short.fq") s"
    fi
    [ -s "$d/sr.paf" ] || { echo "no candidates (minimap2 missing?)"; return; }
    echo "candidates: $(wc -l < "$d/sr.paf")"
    local sr="align --dna --mode semi-global --free-ends target-start,target-end --pairs $d/sr.paf --seqs $d/short.fq --target-seqs $d/genome.fa --device $DEVICE --stats"
    # Arrow as the reference twice: its default columns, and the same work as SAM/BAM/PAF
    # (the path computed); each writer's rate over both.
    local arrow=0 same=0
    for f in arrow arrow-path paf sam bam; do
        local s
        case $f in
            arrow-path) s=$(secs /dev/null $SW $sr --format arrow --columns query,target,score,qstart,qend,tstart,tend,cigar); same=$s ;;
            *) s=$(secs "$d/out.$f" $SW $sr --format $f) ;;
        esac
        [ $f = arrow ] && arrow=$s
        echo "swarrow $f: $s s (rate over Arrow's: $(ratio "$arrow" "$s"), over Arrow's with the path: $(ratio "$same" "$s"))"
        stats
    done
    echo "swarrow bam --strand both: $(secs /dev/null $SW $sr --format bam --strand both) s"
    stats
    command -v samtools > /dev/null && echo "samtools quickcheck: $(samtools quickcheck "$d/out.bam" && echo ok || echo FAILED)," \
        "records $(samtools view -c "$d/out.bam") of $(grep -vc '^@' "$d/out.sam") SAM records"
}

for stage in $stages; do
    case $stage in
    reads)
        reads_on_contigs "$READS"
        [ -n "$READS2" ] && reads_on_contigs "$READS2"
        ;;
    short)
        G=$G WORK=$W/short STATS=1 DEVICE=$DEVICE bash "$(dirname "$0")/bench-short-pairs.sh" protein-short
        ;;
    inputs)
        G=$G WORK=$W/inputs DEVICE=$DEVICE bash "$(dirname "$0")/bench-inputs.sh"
        ;;
    byid)
        d=$W/byid
        mkdir -p "$d"
        if [ "$(cat "$d/n" 2>/dev/null)" != "$BYID_READS x $BYID_PER_READ" ]; then
            $PC read-overlaps "$d/reads.fa" "$d/cand.tsv" "$BYID_READS" "$BYID_PER_READ" 7 2> /dev/null || exit 1
            echo "$BYID_READS x $BYID_PER_READ" > "$d/n"
        fi
        n=$(wc -l < "$d/cand.tsv")
        echo "== pairs by id: $n candidates among $BYID_READS reads"
        if [ -x "$G/gpu_align_bench" ]; then
            # The engine alone (batches gathered untimed, align calls back to back), the reader alone.
            echo "engine alone (gpu_align_bench by-id): $($G/gpu_align_bench by-id --dna --seqs "$d/reads.fa" --pairs "$d/cand.tsv" 2>/dev/null | grep -E 'TCUPS in align' | tail -1)"
            echo "reader alone (gpu_align_bench by-id --read-only): $($G/gpu_align_bench by-id --dna --seqs "$d/reads.fa" --pairs "$d/cand.tsv" --read-only 2>/dev/null | grep -o 'wall [0-9.]*s')"
        fi
        for r in 1 2; do
            s=$(secs /dev/null $SW align --dna --pairs "$d/cand.tsv" --seqs "$d/reads.fa" --device $DEVICE --format arrow --stats)
            echo "round $r: $s s, $(awk -v n="$n" -v s="$s" 'BEGIN {printf "%.1f", n / s / 1e6}')M pairs/s"
        done
        stats
        ;;
    one)
        printf '>q\nMKVLAAGIVGLLLAQ\n' > "$W/one.q.fa"
        printf '>t\nMKVLAGGIVALLLAQ\n' > "$W/one.t.fa"
        for r in 1 2 3; do
            echo "one pair, --device $DEVICE, round $r: $(secs /dev/null $SW align --query "$W/one.q.fa" --target "$W/one.t.fa" --device $DEVICE --format tsv --stats) s"
        done
        stats
        ;;
    *) echo "unknown stage $stage (reads short inputs byid one)" >&2; exit 2 ;;
    esac
done

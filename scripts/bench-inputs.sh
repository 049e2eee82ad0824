#!/usr/bin/env bash
# Every pair input path of `swarrow align` on the same pairs (issue 20): N pairs made of BASE
# generated pairs repeated, through the TSV pipe, a gzip TSV file, a BGZF TSV file, two FASTA
# files, an Arrow IPC stream on stdin, an Arrow IPC file and a Parquet file; plus pairs by id: N candidate pairs
# among the proteins of one set (make_db.py), as a TSV file and as a Parquet file, against
# the set as FASTA. Each row: wall, pairs/s, TCUPS (qlen x tlen cells), ratio to the TSV
# pipe's rate, peak RSS, and the time of the writer alone where there is one (what produces
# the input bytes, into /dev/null: `cat` of the file, the repeated TSV or FASTA, the Arrow
# stream written beforehand), with swarrow's wall over the writer's. With gpu_align_bench, pairs by id also get
# the engine alone (calls back to back) and the reader alone on the same pairs.
#
#   scripts/bench-inputs.sh            (on the GPU machine: DEVICE=cuda, N=10000000)
#   N=20000 BASE=2000 SET_RESIDUES=2000000 DEVICE=cpu scripts/bench-inputs.sh   (a quick check)
#
# Environment:
#   SWARROW        the swarrow binary (default: $G/swarrow, else target/release/swarrow)
#   PAIRS_CONVERT  the pairs_convert example (default: $G/pairs_convert, else target/release/examples/)
#   BENCH          gpu_align_bench (optional; default as above; only with DEVICE cuda)
#   GEN            folder with make_pairs.py, make_db.py and DB.fasta.gz (default: $G, else ../shared)
#   G              folder of carried binaries and generators (default .gpu)
#   WORK           data folder (default /tmp/swarrow-inputs); generated files are kept and
#                  reused: remove it after a change of BASE or SET_RESIDUES
#   N              pairs per run (10000000); BASE pairs generated (200000), N/BASE repeats
#   SET_RESIDUES   residues of the protein set for pairs by id (45000000: ~100,000 proteins)
#   DEVICE         cuda, cpu or auto (auto); THREADS: --threads for swarrow (default: all)
#   PATHS          which rows ("tsv-pipe tsv-gz bgzf fasta arrow-stream arrow-file parquet byid-tsv
#                  byid-parquet")
#   KEEP_FILES=1   keep the N-pair files (tsv.gz, bgzf, arrow stream and file, parquet) after their row
# Output goes to an Arrow stream into /dev/null through a pipe, so the rows time the input.
# Each file is synced after it is written, so no row runs beside the writeback of the last
# file (on the H100 host, gigabytes of dirty pages slowed the rows after them by up to 70%).
# Peak RSS is swarrow's (with /usr/bin/time; else the largest process's of the row).
set -uo pipefail
G=${G:-.gpu}
pick() { # first existing file among the arguments
    for f in "$@"; do [ -x "$f" ] && { echo "$f"; return; }; done
    echo "$1"
}
SWARROW=${SWARROW:-$(pick "$G/swarrow" target/release/swarrow)}
PAIRS_CONVERT=${PAIRS_CONVERT:-$(pick "$G/pairs_convert" target/release/examples/pairs_convert)}
BENCH=${BENCH:-$(pick "$G/gpu_align_bench" target/release/examples/gpu_align_bench)}
GEN=${GEN:-$([ -f "$G/make_pairs.py" ] && echo "$G" || echo ../shared/bench)}
DB=${DB:-$([ -f "$GEN/DB.fasta.gz" ] && echo "$GEN/DB.fasta.gz" || echo "$GEN/../data/DB.fasta.gz")}
WORK=${WORK:-/tmp/swarrow-inputs}
N=${N:-10000000}
BASE=${BASE:-200000}
SET_RESIDUES=${SET_RESIDUES:-45000000}
DEVICE=${DEVICE:-auto}
PATHS=${PATHS:-"tsv-pipe tsv-gz bgzf fasta arrow-stream arrow-file parquet byid-tsv byid-parquet"}
THREADS=${THREADS:+--threads $THREADS}
for f in "$SWARROW" "$PAIRS_CONVERT"; do
    [ -x "$f" ] || { echo "missing $f (cargo build --release --bin swarrow --example pairs_convert)" >&2; exit 2; }
done
for f in "$GEN/make_pairs.py" "$GEN/make_db.py" "$DB"; do
    [ -f "$f" ] || { echo "missing $f (set GEN or DB)" >&2; exit 2; }
done
[ $((N % BASE)) -eq 0 ] || { echo "N ($N) must be a multiple of BASE ($BASE)" >&2; exit 2; }
REPEAT=$((N / BASE))
mkdir -p "$WORK"
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
echo "host cores: $(nproc); $("$SWARROW" --version 2>/dev/null); device $DEVICE; N=$N (BASE $BASE x $REPEAT)"

# Runs "$1" through bash; prints wall seconds, peak RSS (MiB: swarrow's where /usr/bin/time
# wrote it to $WORK/rss, else the largest process's of the command), rc.
measure() {
    rm -f "$WORK/rss"
    python3 - "$1" "$WORK/rss" <<'PY'
import os, resource, subprocess, sys, time
t = time.time()
rc = subprocess.run(["bash", "-o", "pipefail", "-c", sys.argv[1]]).returncode
wall = time.time() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
try:
    rss = int(open(sys.argv[2]).read().split()[-1]) / 1024
except (OSError, ValueError, IndexError):
    pass
print(f"{wall:.3f} {rss:.0f} {rc}")
PY
}

repeat_cat() { local f=$1 n=$2; for _ in $(seq "$n"); do cat "$f"; done; }
export -f repeat_cat

# Writes $2 as BGZF (bgzip's blocks of 65280 bytes, deflate level 1, the EOF block): python's
# zlib, since bgzip (tabix) may be missing.
bgzf() {
    python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
def block(data):
    c = zlib.compressobj(1, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    head = b"\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\0BC\x02\0" + struct.pack("<H", 18 + len(body) + 8 - 1)
    return head + body + struct.pack("<II", zlib.crc32(data), len(data))
with open(sys.argv[1], "rb") as src, open(sys.argv[2], "wb") as out:
    while data := src.read(65280):
        out.write(block(data))
    out.write(block(b""))
PY
}

# Cells (qlen x tlen summed) of the pairs in a TSV with sequences, times $2.
cells_of_pairs() {
    python3 - "$1" "$2" <<'PY'
import sys
n = 0
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 4 and f[0] != "query_id":
        n += len(f[1]) * len(f[3])
print(n * int(sys.argv[2]))
PY
}

# Table row: name pairs cells wall rss rc [writer_wall]; ratios are to REF (pairs/s): the TSV
# pipe's rate for pairs with sequences, the engine's alone for pairs by id.
REF=""
row() {
    python3 - "$REF" "$@" <<'PY'
import sys
ref, name, pairs, cells, wall, rss, rc = sys.argv[1:8]
writer = sys.argv[8] if len(sys.argv) > 8 else ""
pairs, cells, wall = int(pairs), float(cells), float(wall)
rate = pairs / wall
ratio = f"{rate / float(ref):6.1%}" if ref else "     -"
w = f"{float(writer):7.3f} | {wall / max(float(writer), 1e-3):5.2f}x" if writer else "      - |      -"
fail = "" if rc == "0" else f" FAILED rc={rc}"
print(f"| {name:<30} | {wall:7.2f} | {rate / 1e6:6.2f}M | {cells / wall / 1e12:6.3f} | {ratio} | {rss:>6} | {w} |{fail}")
PY
}
# Sets REF to the pairs/s of N pairs in $2 seconds (for the ratios of the rows after it).
set_ref() { REF=$(python3 -c "print($1 / $2)"); }

# The swarrow command line; with /usr/bin/time, swarrow's own peak RSS goes to $WORK/rss.
TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f %M -o $WORK/rss"
sw() { echo "$TIME $SWARROW align --device $DEVICE $THREADS --quiet --gap-open 11 --gap-extend 1 $*"; }
SINK="--format arrow | cat > /dev/null"

# --- One-to-one pairs with their sequences --------------------------------------------------
q=$WORK/base.q.fa t=$WORK/base.t.fa tsv=$WORK/base.tsv
[ -s "$q" ] || python3 "$GEN/make_pairs.py" "$DB" --pairs "$BASE" --qlen 20 400 --tlen 400 1664 \
    --seed 7 --query "$q" --target "$t"
[ -s "$tsv" ] || "$PAIRS_CONVERT" tsv "$q" "$t" > "$tsv"
cells=$(cells_of_pairs "$tsv" "$REPEAT")
# One small run first: a fresh machine compiles the kernels (NVRTC, cached on disk) on its
# first GPU run, which would otherwise land in the first row.
head -1000 "$tsv" | $SWARROW align --device "$DEVICE" --quiet --pairs - --format arrow > /dev/null || true
echo
echo "== $N pairs with sequences ($BASE x $REPEAT), $(python3 -c "print(f'{$cells:.3e}')") cells"
echo "| path | wall s | pairs/s | TCUPS | of TSV pipe | RSS MiB | writer s | / writer |"
echo "|---|---|---|---|---|---|---|---|"
want() { [[ " $PATHS " == *" $1 "* ]]; }
cleanup() { [ "${KEEP_FILES:-0}" = 1 ] || rm -f "$@"; }
if want tsv-pipe; then
    read -r w _ _ < <(measure "repeat_cat $tsv $REPEAT > /dev/null")
    read -r wall rss rc < <(measure "repeat_cat $tsv $REPEAT | $(sw --pairs -) $SINK")
    [ "$rc" = 0 ] && set_ref "$N" "$wall"
    row "TSV pipe" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
fi
if want tsv-gz; then
    # gzip -1 once, the members repeated: a multi-member gzip file of N pairs.
    [ -s "$WORK/base.tsv.gz" ] || gzip -1 -c "$tsv" > "$WORK/base.tsv.gz"
    repeat_cat "$WORK/base.tsv.gz" "$REPEAT" > "$WORK/n.tsv.gz"
    sync
    read -r w _ _ < <(measure "cat $WORK/n.tsv.gz > /dev/null")
    read -r wall rss rc < <(measure "$(sw --pairs "$WORK/n.tsv.gz") $SINK")
    row "TSV.gz file" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
    cleanup "$WORK/n.tsv.gz"
fi
if want bgzf; then
    # BGZF files concatenated stay BGZF (the EOF blocks between are empty blocks).
    [ -s "$WORK/base.tsv.bgz" ] || bgzf "$tsv" "$WORK/base.tsv.bgz"
    repeat_cat "$WORK/base.tsv.bgz" "$REPEAT" > "$WORK/n.tsv.bgz"
    sync
    read -r w _ _ < <(measure "cat $WORK/n.tsv.bgz > /dev/null")
    read -r wall rss rc < <(measure "$(sw --pairs "$WORK/n.tsv.bgz") $SINK")
    row "BGZF file" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
    python3 -c "import os,sys; b=os.path.getsize('$tsv')*$REPEAT; print(f'  BGZF: {b/1e9:.2f} GB of text inflated at {b/float(sys.argv[1])/1e9:.2f} GB/s')" "$wall"
    cleanup "$WORK/n.tsv.bgz"
fi
if want fasta; then
    read -r w _ _ < <(measure "repeat_cat $q $REPEAT > /dev/null; repeat_cat $t $REPEAT > /dev/null")
    read -r wall rss rc < <(measure "$(sw --query "<(repeat_cat $q $REPEAT)" --target "<(repeat_cat $t $REPEAT)") $SINK")
    row "two FASTA (pipes)" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
fi
if want arrow-stream; then
    # Written as the TSV pipe's text is: the base pairs' stream cut into its schema message,
    # its record batches and its end marker, the batches `cat` REPEAT times between the
    # other two (the same bytes as a stream of N pairs, from the same kind of writer as the
    # text: one `cat` of a 12.7 GB file fed the pipe more slowly than 50 of a hot 250 MB one).
    s=$WORK/base.arrows
    if [ ! -s "$s.batches" ]; then
        "$PAIRS_CONVERT" arrow "$q" "$t" --repeat 1 > "$s.1"
        "$PAIRS_CONVERT" arrow "$q" "$t" --repeat 2 > "$s.2"
        python3 - "$s" <<'PY'
import sys
base = sys.argv[1]
one, two = open(base + ".1", "rb").read(), open(base + ".2", "rb").read()
batches = len(two) - len(one)
schema = len(one) - batches - 8  # the end-of-stream marker: 8 bytes
assert one[:schema] == two[:schema] and one[schema:-8] == two[schema + batches:-8]
for name, part in (("schema", one[:schema]), ("batches", one[schema:-8]), ("end", one[-8:])):
    open(f"{base}.{name}", "wb").write(part)
PY
        rm -f "$s.1" "$s.2"
    fi
    stream="cat $s.schema; repeat_cat $s.batches $REPEAT; cat $s.end"
    read -r w _ _ < <(measure "{ $stream; } > /dev/null")
    read -r wall rss rc < <(measure "{ $stream; } | $(sw --pairs -) $SINK")
    row "Arrow stream (pipe)" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
fi
if want arrow-file; then
    "$PAIRS_CONVERT" arrow-file "$q" "$t" --repeat "$REPEAT" > "$WORK/n.arrow"
    sync
    read -r w _ _ < <(measure "cat $WORK/n.arrow > /dev/null")
    read -r wall rss rc < <(measure "$(sw --pairs "$WORK/n.arrow") $SINK")
    row "Arrow file" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
    cleanup "$WORK/n.arrow"
fi
if want parquet; then
    "$PAIRS_CONVERT" parquet "$q" "$t" --repeat "$REPEAT" > "$WORK/n.parquet"
    sync
    read -r w _ _ < <(measure "cat $WORK/n.parquet > /dev/null")
    read -r wall rss rc < <(measure "$(sw --pairs "$WORK/n.parquet") $SINK")
    row "Parquet file" "$N" "$cells" "$wall" "$rss" "$rc" "$w"
    cleanup "$WORK/n.parquet"
fi

# --- Candidate pairs by id among one protein set ---------------------------------------------
if want byid-tsv || want byid-parquet; then
    set=$WORK/set.fa cand=$WORK/cand.$N.tsv
    [ -s "$set" ] || python3 "$GEN/make_db.py" "$DB" --residues "$SET_RESIDUES" --seed 1 > "$set" 2>/dev/null
    # Seeded random pairs of the set's ids (the Parquet file below holds the same pairs); the
    # cells from the set's lengths.
    [ -s "$cand" ] || "$PAIRS_CONVERT" random-candidates tsv "$set" "$N" 20 > "$cand" 2> "$cand.err"
    [ -s "$cand.cells" ] || grep -o '[0-9]*$' "$cand.err" > "$cand.cells"
    bcells=$(cat "$cand.cells")
    echo
    echo "== $N candidate pairs by id among $(grep -c '>' "$set") proteins, $(python3 -c "print(f'{$bcells:.3e}')") cells"
    echo "| path | wall s | pairs/s | TCUPS | of engine | RSS MiB | writer s | / writer |"
    echo "|---|---|---|---|---|---|---|---|"
    REF=""
    if [ -x "$BENCH" ] && [ "$DEVICE" != cpu ]; then
        # The engine alone (batches gathered untimed, align calls back to back), then the reader alone.
        e=$("$BENCH" by-id --seqs "$set" --pairs "$cand" --gap-open 11 --gap-extend 1 2>/dev/null | grep -o '[0-9.]* TCUPS in align' | cut -d' ' -f1)
        if [ -n "$e" ]; then
            ew=$(python3 -c "print($bcells / ($e * 1e12))")
            row "engine alone (gpu_align_bench)" "$N" "$bcells" "$ew" - 0
            set_ref "$N" "$ew"
        fi
    fi
    if [ -x "$BENCH" ]; then
        r=$("$BENCH" by-id --seqs "$set" --pairs "$cand" --read-only 2>/dev/null | grep -o 'wall [0-9.]*s' | grep -o '[0-9.]*')
        [ -n "$r" ] && row "reader alone (gpu_align_bench)" "$N" "$bcells" "$r" - 0
    fi
    if want byid-tsv; then
        read -r w _ _ < <(measure "cat $cand > /dev/null")
        read -r wall rss rc < <(measure "$(sw --pairs "$cand" --seqs "$set") $SINK")
        row "by id: TSV candidates" "$N" "$bcells" "$wall" "$rss" "$rc" "$w"
    fi
    if want byid-parquet; then
        "$PAIRS_CONVERT" random-candidates parquet "$set" "$N" 20 > "$WORK/cand.parquet" 2> /dev/null
        sync
        read -r w _ _ < <(measure "cat $WORK/cand.parquet > /dev/null")
        read -r wall rss rc < <(measure "$(sw --pairs "$WORK/cand.parquet" --seqs "$set") $SINK")
        row "by id: Parquet candidates" "$N" "$bcells" "$wall" "$rss" "$rc" "$w"
        cleanup "$WORK/cand.parquet"
    fi
fi

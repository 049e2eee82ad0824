#!/usr/bin/env bash
# CPU benchmark: swarrow's SIMD engine and parasail on the same data and cores.
#
#   scripts/bench-cpu.sh search [QUERIES.fasta] [DB.fasta(.gz)] [THREADS...]
#   scripts/bench-cpu.sh align  [PAIRS]         [THREADS...]
#   scripts/bench-cpu.sh pipe   [PAIRS]         [THREADS]
#   scripts/bench-cpu.sh table  (env: ROUNDS=3 THREADS=2 LONG=200000 PAIRS=20000 SEED=3
#                                SECTIONS=search,queries,align,long SWARROW_BIN=...)
#
# table: issue 36's table in one run (scripts/bench_cpu_table.py): the 20 queries x DB,
#   each query alone, align of PAIRS make_pairs.py pairs (seed SEED) against parasail (the
#   engine harness, and the command line from FASTA to an Arrow file), and
#   one LONG-residue pair against itself on 1 and THREADS threads; each pair of runs
#   alternated ROUNDS times, wall and CPU time, ratios with their spread, the CPU model.
#
# search: every query against the whole database, BLOSUM62 gap open 11 extend 1 (parasail's
#   open 12 extend 1), wall time including reading. parasail: parasail_aligner with
#   sw_striped_profile_avx2_256_sat (its fastest on this CPU) and the suffix-array filter
#   off (-x), i.e. every query against every target.
# align: PAIRS one-to-one pairs from /work/shared/bench/make_pairs.py (default 20000);
#   parasail: python3-parasail sw_striped_16 per pair (score + end; it has
#   no start coordinates, so it does less work than we do), one process per thread.
# Prints one line per run and the ratio swarrow / parasail per thread count.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-search}
shift || true
work=${BENCH_DIR:-/tmp/swarrow-bench}
mkdir -p "$work"
# BENCH_BIN: an already built bench_cpu (cargo build --release --example bench_cpu).
bench=${BENCH_BIN:-target/release/examples/bench_cpu}
[[ -n ${BENCH_BIN:-} ]] || cargo build --release --quiet --example bench_cpu

# parasail_aligner refuses to run when stdin is not a terminal: give it a pty.
pty() { /usr/bin/python3 -c 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)' "$@"; }
now() { date +%s.%N; }

case "$mode" in
search)
    queries=${1:-/work/shared/data/allqueries.fasta}
    db=${2:-/work/shared/data/DB.fasta.gz}
    shift 2 || true
    threads=("${@:-1 2}")
    read -r -a threads <<<"${threads[*]}"
    if [[ $db == *.gz ]]; then
        plain="$work/$(basename "${db%.gz}")"
        [[ -s $plain ]] || zcat "$db" >"$plain"
        db=$plain
    fi
    for t in "${threads[@]}"; do
        line=$($bench search "$db" "$queries" "$t")
        echo "$line"
        ours=$(sed -n 's/.*gcups=\([0-9.]*\).*/\1/p' <<<"$line")
        s=$(now)
        pty parasail_aligner -a sw_striped_profile_avx2_256_sat -x -o 12 -e 1 -m blosum62 -t "$t" \
            -f "$db" -q "$queries" -g "$work/parasail.csv" >/dev/null
        e=$(now)
        /usr/bin/python3 - "$db" "$queries" "$s" "$e" "$t" "$ours" <<'PY'
import sys
def lens(p):
    out, n = [], None
    for line in open(p):
        if line.startswith(">"):
            if n is not None: out.append(n)
            n = 0
        else:
            n += len(line.strip())
    if n is not None: out.append(n)
    return out
db, q, s, e, t, ours = sys.argv[1:]
cells = sum(lens(q)) * sum(lens(db))
secs = float(e) - float(s)
g = cells / secs / 1e9
print(f"engine=parasail sw_striped_profile_avx2_256_sat ({t} threads) mode=search cells={cells:.3e} seconds={secs:.3f} gcups={g:.2f}")
print(f"threads={t} ratio swarrow/parasail = {float(ours) / g:.2f}")
PY
    done
    ;;
align)
    n=${1:-20000}
    shift || true
    read -r -a threads <<<"${*:-1 2}"
    q="$work/pairs$n.q.fa"
    t="$work/pairs$n.t.fa"
    [[ -s $q ]] || /usr/bin/python3 /work/shared/bench/make_pairs.py /work/shared/data/DB.fasta.gz \
        --pairs "$n" --query "$q" --target "$t"
    for th in "${threads[@]}"; do
        line=$($bench align "$q" "$t" "$th")
        echo "$line"
        ours=$(sed -n 's/.*pairs_per_s=\([0-9.]*\).*/\1/p' <<<"$line")
        /usr/bin/python3 scripts/parasail_pairs.py "$q" "$t" "$th" "$ours"
    done
    ;;
pipe)
    # The command line's TSV pipe on the CPU engine against the engine in-process (one
    # engine call over pairs already in memory), same pairs, same threads: the pipe's
    # share of the engine's rate.
    n=${1:-20000}
    th=${2:-$(nproc)}
    q="$work/pairs$n.q.fa"
    t="$work/pairs$n.t.fa"
    [[ -s $q ]] || /usr/bin/python3 /work/shared/bench/make_pairs.py /work/shared/data/DB.fasta.gz \
        --pairs "$n" --query "$q" --target "$t"
    sw=${SWARROW_BIN:-target/release/swarrow}
    [[ -n ${SWARROW_BIN:-} ]] || cargo build --release --quiet --bin swarrow
    paste <(grep '^>' "$q" | cut -c2- | cut -d' ' -f1) <(grep -v '^>' "$q") <(grep '^>' "$t" | cut -c2- | cut -d' ' -f1) <(grep -v '^>' "$t") \
        >"$work/pairs$n.tsv"
    line=$($bench align "$q" "$t" "$th")
    echo "$line"
    engine=$(sed -n 's/.*engine_gcups=\([0-9.]*\).*/\1/p' <<<"$line")
    cells=$(sed -n 's/.*cells=\([0-9.e+]*\).*/\1/p' <<<"$line")
    s=$(now)
    cat "$work/pairs$n.tsv" | "$sw" align --pairs - --device cpu --threads "$th" --quiet --format arrow | cat >/dev/null
    e=$(now)
    /usr/bin/python3 - "$cells" "$s" "$e" "$engine" "$th" <<'PY'
import sys
cells, s, e, engine, th = sys.argv[1:]
g = float(cells) / (float(e) - float(s)) / 1e9
print(f"cli: cat pairs.tsv | swarrow align --pairs - --device cpu --threads {th}: seconds={float(e) - float(s):.3f} gcups={g:.2f}")
print(f"threads={th} ratio cli/engine = {g / float(engine):.3f}")
PY
    ;;
table)
    db=/work/shared/data/DB.fasta.gz
    plain="$work/DB.fasta"
    [[ -s $plain ]] || zcat "$db" >"$plain"
    n=${PAIRS:-20000}
    seed=${SEED:-3}
    q="$work/pairs${n}s$seed.q.fa"
    t="$work/pairs${n}s$seed.t.fa"
    [[ -s $q ]] || /usr/bin/python3 /work/shared/bench/make_pairs.py "$db" --pairs "$n" --seed "$seed" \
        --query "$q" --target "$t"
    echo "swarrow $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo +changes), $(date -u '+%Y-%m-%d %H:%M UTC')"
    sw=${SWARROW_BIN:-target/release/swarrow}
    [[ -n ${SWARROW_BIN:-} ]] || cargo build --release --quiet --bin swarrow
    /usr/bin/python3 scripts/bench_cpu_table.py "$bench" "$plain" /work/shared/data/allqueries.fasta "$q" "$t" \
        "${THREADS:-2}" "${ROUNDS:-3}" "${LONG:-200000}" "${SECTIONS:-search,queries,align,long}" "$sw"
    ;;
*)
    echo "usage: $0 search|align|pipe|table ..." >&2
    exit 2
    ;;
esac

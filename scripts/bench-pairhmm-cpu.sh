#!/usr/bin/env bash
# CPU benchmark of `swarrow pairhmm` (issue 14): our CPU engine against Intel's GKL (Debian's
# libgkl-jni, AVX-512/AVX2 float with double fallback, through tests/gkl/GklPairHmm.java) on the
# same generated regions (reads 100-150 x haplotypes 300-500, 10-100 reads x 2-10 haplotypes),
# 1 thread and all cores, run back to back ROUNDS times (the machine may be shared).
#
#   scripts/bench-pairhmm-cpu.sh          env: REGIONS (150), ROUNDS (2), SECONDS_EACH (5)
set -euo pipefail
cd "$(dirname "$0")/.."
REGIONS=${REGIONS:-150}
ROUNDS=${ROUNDS:-2}
SECONDS_EACH=${SECONDS_EACH:-5}
CORES=$(nproc)
bench=target/release/examples/pairhmm_bench
[ -x "$bench" ] || cargo build --release --example pairhmm_bench
work=target/bench-pairhmm
mkdir -p "$work"
cp=/usr/share/java/gkl.jar:/usr/share/java/gatk-native-bindings.jar
javac -cp "$cp" -d "$work" tests/gkl/GklPairHmm.java
"$bench" gkl-input "$REGIONS" > "$work/regions.txt"
for round in $(seq "$ROUNDS"); do
  for t in 1 "$CORES"; do
    BENCH_SECONDS=$SECONDS_EACH "$bench" bench "$REGIONS" simd "$t"
    variant=$([ "$t" = 1 ] && echo "" || echo omp)
    java -cp "$cp:$work" GklPairHmm float "$t" $variant bench "$SECONDS_EACH" < "$work/regions.txt" 2>/dev/null
  done
done

#!/usr/bin/env bash
# GPU check and benchmark of `swarrow pairhmm` (issue 14), run on a machine with an NVIDIA
# GPU from binaries built elsewhere and carried in DIR (default .gpu-hmm):
#   DIR/pairhmm_bench (release example), DIR/swarrow (release binary), and optionally
#   DIR/gkl/ with a Java runtime (jre.tar.xz, from jlink: java.base + java.logging), GKL's
#   jars (gkl, gatk-native-bindings, commons-logging) and native libraries (with libgomp) and
#   GklPairHmm.class, for GKL's AVX-512 PairHMM on the same host.
#  1. check: CUDA vs the CPU double reference on CHECK_PAIRS pairs (>= 1,000,000);
#  2. bench: GCUPS of the CUDA engine, of our CPU engine on all host cores and of GKL
#     (float, AVX-512, OpenMP on all cores and 1 thread) on the same generated regions;
#  3. the CLI end to end on the GPU (TSV in, Parquet out) as a smoke test.
#
#   scripts/gpu-check-pairhmm.sh [DIR]
set -euo pipefail
DIR=${1:-.gpu-hmm}
CHECK_PAIRS=${CHECK_PAIRS:-1000000}
REGIONS=${REGIONS:-6000}
CPU_REGIONS=${CPU_REGIONS:-1500}
CORES=$(nproc)
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
echo "host cores: $CORES; $(grep -m1 'model name' /proc/cpuinfo)"
grep -o -m1 -w avx512f /proc/cpuinfo >/dev/null && echo "host has AVX-512F"

echo "== bench (regions of 10-100 reads x 2-10 haplotypes, reads 100-150, haplotypes 300-500)"
SWARROW_PAIRHMM_TIMING=1 "$DIR/pairhmm_bench" bench "$REGIONS" cuda
"$DIR/pairhmm_bench" bench "$CPU_REGIONS" simd "$CORES"
"$DIR/pairhmm_bench" bench "$((CPU_REGIONS / 4))" simd 1
if [ -f "$DIR/gkl/jre.tar.xz" ]; then
  mkdir -p /tmp/gkl && tar -xJf "$DIR/gkl/jre.tar.xz" -C /tmp/gkl
  "$DIR/pairhmm_bench" gkl-input "$CPU_REGIONS" > /tmp/gkl/regions.txt
  "$DIR/pairhmm_bench" gkl-input "$((CPU_REGIONS / 4))" > /tmp/gkl/regions1.txt
  export LD_LIBRARY_PATH="$DIR/gkl:${LD_LIBRARY_PATH:-}"
  java() { /tmp/gkl/jre/bin/java -Djava.library.path="$DIR/gkl" -cp "$DIR/gkl/gkl.jar:$DIR/gkl/gatk-native-bindings.jar:$DIR/gkl/commons-logging.jar:$DIR/gkl" GklPairHmm "$@" 2>/tmp/gkl/stderr || { tail -5 /tmp/gkl/stderr; return 1; }; }
  java float "$CORES" omp bench 10 < /tmp/gkl/regions.txt || echo "GKL OpenMP variant did not run"
  java float 1 bench 10 < /tmp/gkl/regions1.txt || echo "GKL did not run"
else
  echo "no Java runtime carried: GKL not run on this host"
fi

echo "== check: CUDA vs CPU double reference"
"$DIR/pairhmm_bench" check "$CHECK_PAIRS" "$CORES"

echo "== CLI end to end"
"$DIR/swarrow" pairhmm --pairs "$DIR/gatk.txt" --device cuda --format tsv -o /tmp/gpu.tsv
"$DIR/swarrow" pairhmm --pairs "$DIR/gatk.txt" --device cpu --format tsv -o /tmp/cpu.tsv --quiet
python3 - <<'EOF'
import csv
g = list(csv.DictReader(open('/tmp/gpu.tsv'), delimiter='\t'))
c = list(csv.DictReader(open('/tmp/cpu.tsv'), delimiter='\t'))
assert len(g) == len(c) and len(g) > 0
worst = max(abs(float(a['log10_likelihood']) - float(b['log10_likelihood'])) for a, b in zip(g, c))
print(f"CLI: {len(g)} rows, GPU vs CPU max diff {worst:.2e}")
assert worst < 1e-5
EOF

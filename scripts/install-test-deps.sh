#!/usr/bin/env bash
# Installs the independent oracles and tools the tests use, only where they are missing:
# parasail (Debian python3-parasail) for the golden test; NCBI BLAST+ and Biopython (Debian
# ncbi-blast+, python3-biopython) for the BLAST tabular test; groovy (Debian) for the Nextflow
# syntax check; Intel's GKL with a JDK (Debian) for the pairhmm oracle (tests/pairhmm_gkl.rs);
# samtools (Debian) for the SAM/BAM checks (tests/alignment_formats.rs), and minimap2, miniasm,
# racon and bwa (Debian) for issue 51's assembler-stage checks;
# the Python venv .venv with the pinned packages of the workflow and data-lake checks
# (tests/workflows.rs) and of the Python package's tests (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
/usr/bin/python3 -c 'import parasail' 2>/dev/null || need_apt+=(python3-parasail)
command -v blastp >/dev/null || need_apt+=(ncbi-blast+)
/usr/bin/python3 -c 'import Bio' 2>/dev/null || need_apt+=(python3-biopython)
command -v groovy >/dev/null || need_apt+=(groovy)
command -v javac >/dev/null || need_apt+=(default-jdk-headless)
[ -f /usr/share/java/gkl.jar ] || need_apt+=(libgkl-java)
[ -f /usr/lib/jni/libgkl_pairhmm.so ] || need_apt+=(libgkl-jni)
[ -f /usr/share/java/gatk-native-bindings.jar ] || need_apt+=(libgatk-native-bindings-java)
for tool in samtools minimap2 miniasm racon bwa; do
  command -v "$tool" >/dev/null || need_apt+=("$tool")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "install-test-deps: missing ${need_apt[*]} and cannot apt-get (not root); tests needing them skip outside CI" >&2
  fi
fi

bash scripts/python-env.sh || echo "install-test-deps: no .venv; the tests needing it skip outside CI" >&2

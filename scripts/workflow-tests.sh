#!/usr/bin/env bash
# Workflow and data-lake checks (run by tests/workflows.rs; `bash scripts/install-test-deps.sh`
# installs what they need): Snakemake runs of both scatter/gather rule sets against unsharded
# runs, DuckDB/Polars/pyarrow reading Parquet and Arrow streams, the example recipes against
# their expected outputs, and a Groovy syntax check of the Nextflow files.
#
#   SWARROW_BIN=/path/to/swarrow bash scripts/workflow-tests.sh snakemake|lake|recipes|assembly|nextflow
#   bash scripts/workflow-tests.sh nextflow-task MODULE/main.nf BINDING.json
#       prints the script of one task of a Nextflow module (scripts/nextflow-task.groovy), which
#       tests/workflows.rs runs with its inputs staged as symlinks, as Nextflow stages them
#
# Exit status 77: a tool is missing (the Rust test fails in CI, skips loudly elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
part=${1:?usage: workflow-tests.sh snakemake|lake|recipes|assembly|nextflow|nextflow-task}
# The repository's venv (scripts/python-env.sh).
venv=$root/.venv
py=$venv/bin/python
missing() { echo "workflow-tests: missing $1 (run: bash scripts/install-test-deps.sh)" >&2; exit 77; }

groovy_ready() {
  command -v groovy >/dev/null || missing "groovy (Debian package groovy)"
  if [ -z "${JAVA_HOME:-}" ] || [ ! -x "$JAVA_HOME/bin/java" ]; then
    java=$(command -v java) || missing "java"
    JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$java")")")
    export JAVA_HOME
  fi
}

case $part in
  nextflow-task)
    groovy_ready
    exec groovy scripts/nextflow-task.groovy "${2:?module}" "${3:?binding}"
    ;;
  nextflow)
    : "${SWARROW_BIN:?set SWARROW_BIN to the swarrow binary}"
    groovy_ready
    files=$(find workflows/nextflow \( -name '*.nf' -o -name '*.nf.test' -o -name '*.config' \) | sort)
    [ -n "$files" ] || { echo "no Nextflow files found" >&2; exit 1; }
    # Negative control: the check must reject a script that is not valid Groovy.
    bad=$(mktemp -d)/broken.nf
    printf 'process BROKEN {\n  script:\n  """\n  echo hi\n}\n' > "$bad"
    if groovy scripts/groovy-syntax-check.groovy "$bad" >/dev/null 2>&1; then
      echo "groovy syntax check accepted a broken script" >&2; exit 1
    fi
    # shellcheck disable=SC2086
    exec groovy scripts/groovy-syntax-check.groovy $files
    ;;
  snakemake|lake|recipes|assembly)
    : "${SWARROW_BIN:?set SWARROW_BIN to the swarrow binary}"
    if [ "$part" = assembly ]; then
      for tool in minimap2 samtools; do command -v $tool >/dev/null || missing "$tool"; done
    fi
    [ -x "$py" ] || missing "the Python venv .venv"
    "$py" -c 'import duckdb, polars, pyarrow' 2>/dev/null || missing "duckdb/polars/pyarrow in .venv"
    [ -x "$venv/bin/snakemake" ] || missing "snakemake in .venv"
    # The binary under test first: the venv's bin may hold the Python package's swarrow too.
    export PATH="$(dirname "$SWARROW_BIN"):$venv/bin:$PATH"
    exec "$py" scripts/workflow_checks.py "$part"
    ;;
  *)
    echo "unknown part $part" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The Python package's checks (run by scripts/test.sh after cargo test): in the repository's
# venv, .venv (scripts/python-env.sh: pinned pyarrow, Polars, DuckDB, pytest, PySpark...), the
# package installed from this checkout exactly as the README says (`pip install ./python`), built
# with the dev profile (the wheel's release build takes minutes more and is what users
# get); then pytest (tests/python) against the command line built by cargo, and the Spark
# example on a local two-process Spark against the command line.
#
#   SWARROW_BIN=target/debug/swarrow bash scripts/test-python.sh
#
# Exit status 77: a tool is missing outside CI (CI=true fails instead).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SWARROW_BIN:=target/debug/swarrow}"
export SWARROW_BIN=$(readlink -f "$SWARROW_BIN")
missing() {
  echo "test-python: missing $1" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
  exit 77
}
[ -x "$SWARROW_BIN" ] || missing "the swarrow binary $SWARROW_BIN (cargo build)"
bash scripts/python-env.sh || missing "the venv .venv (above: why)"
venv=.venv
# The README's install command; the dev profile shares the test build's compiled crates.
MATURIN_PEP517_ARGS="--profile dev" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --force-reinstall --no-deps ./python
"$venv/bin/python" -m pytest -q tests/python
if ! command -v java >/dev/null; then missing "java (Debian default-jdk-headless) for the Spark example"; fi
"$venv/bin/python" tests/python/spark_check.py

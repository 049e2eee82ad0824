#!/usr/bin/env bash
# The repository's one Python venv, .venv (git-ignored; the README's Python sections use the
# same one): created here, with the pins of scripts/requirements-test.txt, reinstalled only
# when that file changes. scripts/install-test-deps.sh (so scripts/test.sh) and
# scripts/test-python.sh run this; scripts/workflow-tests.sh (tests/workflows.rs) uses it.
#
#   bash scripts/python-env.sh
#
# Exit status 77: python3's venv or pip could not make it (the message says which).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
pins=scripts/requirements-test.txt
# The pins it was made with are kept in it: up to date, nothing to do.
cmp -s "$pins" "$venv/.pins" && exit 0
missing() { echo "python-env: $1" >&2; exit 77; }
py=$(command -v python3) || missing "python3"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv" || missing "python3 venv (Debian: apt install python3-venv)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$pins" || missing "pip install -r $pins"
cp "$pins" "$venv/.pins"

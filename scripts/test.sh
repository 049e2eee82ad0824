#!/usr/bin/env bash
# The full test suite: installs what the tests' oracles need (where missing), then runs
# every Rust test and the Python package's tests. In CI (CI=true) nothing may be skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# Formatting first: the repository's rustfmt.toml is the house style (rustfmt ships with
# rustup's default profile; without it the check is skipped with a warning).
if ! cargo fmt --version >/dev/null 2>&1; then
    echo "test.sh: cargo fmt is not installed; formatting not checked" >&2
elif ! cargo fmt --all --check >/dev/null; then
    echo "cargo fmt --check: these files differ from rustfmt.toml (run cargo fmt --all):" >&2
    cargo fmt --all --check -- -l >&2 || true
    exit 1
fi
bash scripts/install-test-deps.sh
# Kernels compile through NVRTC from NVIDIA's PyPI wheel (no GPU needed).
source scripts/ci-nvrtc.sh env
# The parser fuzz targets (tests/fuzz.rs) run for a bounded time each, inside `cargo test`.
export SWARROW_FUZZ_SECONDS="${SWARROW_FUZZ_SECONDS:-8}"
# The whole workspace in one build, so that the Python package's wheel (built next, by
# scripts/test-python.sh) reuses these compiled crates (python/Cargo.toml says how).
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?
SWARROW_BIN=target/debug/swarrow bash scripts/test-python.sh || {
    python_status=$?
    # 77: a tool missing outside CI (the script said which); in CI it fails instead.
    [ "$python_status" = 77 ] && echo "test.sh: the Python package's checks were skipped" >&2 || status=$python_status
}
exit $status

#!/usr/bin/env bash
# Installs NVRTC from the pinned PyPI wheel (no GPU or CUDA toolkit needed) and runs the
# kernel compile test with it. Newer NVRTC releases emit PTX that the CUDA 13.0 driver on
# our GPU machines rejects, hence the pin. Source it (`. scripts/ci-nvrtc.sh env`) to only
# export LD_LIBRARY_PATH.
set -euo pipefail
NVRTC_VERSION=13.0.88
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${NVRTC_DIR:-$root/target/nvrtc-$NVRTC_VERSION}"
lib="$dest/nvidia/cu13/lib"
if [ ! -e "$lib/libnvrtc.so.13" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" \
        "nvidia-cuda-nvrtc==$NVRTC_VERSION"
fi
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "${1:-}" = env ]; then
    return 0 2>/dev/null || exit 0
fi
cd "$root"
CI="${CI:-true}" cargo test --test kernels_compile -- --nocapture

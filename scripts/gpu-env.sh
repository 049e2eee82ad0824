# Sourced by the GPU scripts: NVRTC from the CUDA 13 toolkit (or a wheel under /opt) when it is
# not on the loader path already, and one on-disk cache of compiled kernels for every run.
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc.so.13'; then
    lib=$(find /usr/local /opt /usr/lib -name 'libnvrtc.so.13*' 2>/dev/null | head -1 || true)
    [ -n "$lib" ] && export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export SWARROW_CACHE_DIR=${SWARROW_CACHE_DIR:-/tmp/swarrow-cache}

# Sourced by the bench/gpu scripts that run ktune's GPU bundle: `bundle` (gpu-bundle/ from
# bench/gpu/bundle.sh, or $KTUNE_BUNDLE), the CUDA libraries ktune opens with dlopen on
# LD_LIBRARY_PATH (the toolkit's, else the Python wheels'; `libdirs`), KTUNE_WORKER, and the
# toolkit's nvcc on PATH (it builds the programs `ktune compile --device cuda` emits).
# Needs `root`, the repository's root.
bundle=${KTUNE_BUNDLE:-$root/gpu-bundle}
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
export KTUNE_WORKER=$bundle/bin/ktune-worker
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

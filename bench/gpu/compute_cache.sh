#!/usr/bin/env bash
# On the GPU machine: does NVRTC reuse compiles across processes through the CUDA compute cache?
# Times `ktune gemm --compile-only` (every template of a 4096^3 bf16 GEMM for sm_90a, a fresh
# ktune cache folder each time) twice with the default compute cache emptied first, twice with
# CUDA_CACHE_PATH set to one new folder, once with another new folder, and twice with
# CUDA_CACHE_DISABLE=1. A second run far faster than the first is a cache hit.
#
#   bash bench/gpu/compute_cache.sh [JOBS]     (JOBS: --jobs, default 1)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${1:-1}
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
ktune=$bundle/bin/ktune
compile() {
  local c start
  c=$(mktemp -d)
  start=$(date +%s%N)
  env "$@" "$ktune" --cache-dir "$c" gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --arch sm_90a \
    --compile-only -j "$jobs" >/dev/null 2>&1
  echo "${*:-default compute cache}: $((($(date +%s%N) - start) / 1000000)) ms"
  rm -rf "$c"
}
rm -rf "$HOME/.nv/ComputeCache"
compile
compile
p=$(mktemp -d)
compile CUDA_CACHE_PATH="$p"
compile CUDA_CACHE_PATH="$p"
compile CUDA_CACHE_PATH="$(mktemp -d)"
compile CUDA_CACHE_DISABLE=1
compile CUDA_CACHE_DISABLE=1

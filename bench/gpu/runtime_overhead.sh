#!/usr/bin/env bash
# On the GPU machine: the host cost of a call through CudaMultiKernel after its pick against a
# direct cuLaunchKernel of the same one-thread kernel, and of a CUDA Dispatcher call (the pick of
# bench/cuda_dispatch/scale.yaml, tuned here first) against a direct launch of the same y = 2 x
# kernel (bench/cuda_multi_kernel_overhead.cpp, Google Benchmark, 5 repetitions: median and
# spread). Reads gpu-bundle/ (bench/gpu/bundle.sh).
#
#   bash bench/gpu/runtime_overhead.sh [OUTDIR]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-.}
mkdir -p "$out"
bundle=$root/gpu-bundle
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
KTUNE_WORKER=$bundle/bin/ktune-worker "$bundle/bin/ktune" --cache-dir "$cache" tune \
  "$root/bench/cuda_dispatch/scale.yaml" -q >/dev/null || exit 1
export KTUNE_BENCH_DISPATCH_SPEC=$root/bench/cuda_dispatch/scale.yaml KTUNE_BENCH_DISPATCH_CACHE=$cache
"$bundle/bin/cuda_multi_kernel_overhead" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.5 2>&1 | tee "$out/runtime_overhead.txt"

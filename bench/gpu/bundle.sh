#!/usr/bin/env bash
# Builds, on this (CPU) machine, what bench/gpu/*.sh run on the GPU machine: ktune,
# ktune-worker, the CUDA and OpenCL test binaries, the benchmark programs (abandon_regret,
# cuda_multi_kernel_overhead) and examples/cuda_dispatch, release mode, stripped, with the shared libraries that
# machine lacks or names differently (../shared/gpu/README.md) beside them, into gpu-bundle/
# (ignored by git; pass it to the device tool's `carry`). The GPU machine has no SQLite or
# muparser headers, so the build happens here: Debian 12's glibc 2.36 binaries run on its 2.39.
#
#   bash bench/gpu/bundle.sh            # then, on the GPU machine: bash bench/gpu/run.sh OUTDIR
#                                       # (and bash bench/gpu/cpu_regret.sh OUTDIR)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_GPU_BUILD:-build-gpu}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target ktune-cli ktune-worker cuda_tests opencl_tests \
  abandon_regret cuda_multi_kernel_overhead
rm -rf gpu-bundle
mkdir -p gpu-bundle/bin gpu-bundle/lib
cp "$build/bin/ktune" "$build/bin/ktune-worker" "$build/bin/abandon_regret" \
  "$build/bin/cuda_multi_kernel_overhead" gpu-bundle/bin/
cp "$build/test/cuda_tests" "$build/test/opencl_tests" gpu-bundle/bin/
strip gpu-bundle/bin/*
# yaml-cpp is 0.8 there (0.7 here), muparser and hiredis absent, Google Benchmark under another soname (for
# cuda_multi_kernel_overhead); fmt 9 and SQLite are there, carried anyway
# so that the bundle does not depend on that machine's image staying the same.
# KTUNE_BUNDLE_OPENBLAS=1 carries OpenBLAS too (37 MB; bench/gpu/cpu_regret.sh's OpenBLAS
# candidate needs it where the machine has none).
libs="libyaml-cpp.so.0.7 libmuparser.so.2 libfmt.so.9 libsqlite3.so.0 libbenchmark.so.1debian libhiredis.so.0.14"
[ "${KTUNE_BUNDLE_OPENBLAS:-0}" = 1 ] && libs="$libs libopenblas.so.0 libgfortran.so.5 libquadmath.so.0"
for lib in $libs; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')" gpu-bundle/lib/
done
# examples/cuda_dispatch, a plain CUDA program, against this build installed into a scratch
# prefix (as a user would), with the CUDA runtime it links.
prefix=$(mktemp -d)
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S examples/cuda_dispatch -B "$build/cuda_dispatch" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/cuda_dispatch" -j"$(nproc)" >/dev/null
cp "$build/cuda_dispatch/cuda_dispatch" gpu-bundle/bin/ && strip gpu-bundle/bin/cuda_dispatch
rm -rf "$prefix"
cudart=$(find /usr/local/cuda/lib /usr/local/cuda/lib64 /usr/local/cuda/targets -name 'libcudart.so.1[23]' \
           2>/dev/null | head -1)
[ -n "$cudart" ] && cp -L "$cudart" gpu-bundle/lib/
du -sh gpu-bundle

#!/usr/bin/env bash
# The CPU fused-epilogue figures of docs/benchmarks.md, from one run on this machine: each problem
# of examples/matmul_cpu/matmul_bias_relu.yaml (GEMM + bias + ReLU) tuned with the epilogue fused
# into the template, then its pick re-measured side by side (bench/epilogue_vs_unfused.cpp)
# against OpenBLAS followed by the separate epilogue pass, and against the plain-GEMM pick (the
# same spec tuned without its epilogue) followed by the same pass; twice, since these machines
# drift between runs. Also the tuning wall time (cold) of the fused spec.
# Prints a markdown section to paste into docs/benchmarks.md. Usage: bench/cpu_epilogue.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
spec=examples/matmul_cpu/matmul_bias_relu.yaml
ktune=$build/bin/ktune
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

seconds() {  # wall seconds of a command, its output discarded
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

cold=$(seconds "$ktune" --cache-dir "$cache" tune "$spec" -q)
candidates=$("$ktune" space "$spec" | sed -n 's/^\([0-9]*\) valid configs.*/\1/p')

echo "### CPU: fused GEMM + bias + ReLU against OpenBLAS + a separate epilogue ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB;"
echo "$(c++ --version | head -1); OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?');"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/cpu_epilogue.sh\`."
echo
echo "Spec \`$spec\`: $candidates template configs with bias + ReLU fused into the register tile's"
echo "last store, and \`openblas+epilogue\` (cblas_sgemm, then the epilogue as a compiled pass over C,"
echo "rows split across the cores, one read and write of C). Cold tuning of its problems: ${cold} s."
echo
echo "Medians of 31 interleaved rounds (order rotated each round), caches flushed before each run;"
echo "ratios above 1 mean the fused pick is faster. \"plain pick\" is the pick of the same spec tuned"
echo "without its epilogue, followed by the same pass."
for run in 1 2; do
  echo
  echo "Run $run:"
  echo
  "$build/bin/epilogue_vs_unfused" "$spec" "$cache" 31
done

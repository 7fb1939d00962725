#!/usr/bin/env bash
# The run-time selection cost figures of docs/benchmarks.md: a call through MultiKernel after the
# pick against a direct call (bench/multi_kernel_overhead.cpp, Google Benchmark).
# Prints a markdown section. Usage: bench/runtime_overhead.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
args=(--benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
      --benchmark_report_aggregates_only=true)
echo "### Run-time selection: what a call through MultiKernel costs ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ktune $(git rev-parse --short HEAD)."
echo "Command: \`bench/runtime_overhead.sh\`, which runs"
echo "\`$build/bin/multi_kernel_overhead ${args[*]}\`:"
echo
out=$("$build/bin/multi_kernel_overhead" "${args[@]}" 2>/dev/null | grep -E '_median|^Benchmark|^---')
echo '```'
echo "$out"
echo '```'
echo
# Medians in ns, whatever unit Google Benchmark chose to print.
median_ns() {
  echo "$out" | awk -v name="BM_$1_median" '$1 == name {
    v = $2; u = $3; if (u == "us") v *= 1e3; else if (u == "ms") v *= 1e6; printf "%.1f", v }'
}
direct=$(median_ns DirectCall)
through=$(median_ns MultiKernelCall)
alternate=$(median_ns MultiKernelAlternateBuckets)
echo "A call through MultiKernel after the pick costs $(awk -v a="$through" -v b="$direct" \
  'BEGIN { printf "%.1f", a - b }') ns more than the direct call ($through against $direct ns,"
echo "medians; target: under 50 ns). A call whose bucket differs from the previous call's takes the"
echo "shared lock and the map: $alternate ns in all."

# The Dispatcher (bench/dispatcher_overhead.cpp): a call served by a tuned pick after the first.
dargs=(--benchmark_repetitions=10 --benchmark_report_aggregates_only=true)
echo
echo "A call through the Dispatcher, same machine: \`$build/bin/dispatcher_overhead ${dargs[*]}\`:"
echo
dout=$(KTUNE_WORKER="$PWD/$build/bin/ktune-worker" "$build/bin/dispatcher_overhead" "${dargs[@]}" \
  2>/dev/null | grep -E '_median|^Benchmark|^---')
echo '```'
echo "$dout"
echo '```'

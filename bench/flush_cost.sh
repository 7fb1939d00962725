#!/usr/bin/env bash
# The cache-flush cost figures of docs/benchmarks.md (bench/flush_cost.cpp, Google Benchmark).
# Prints a markdown section. Usage: bench/flush_cost.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
args=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
echo "### What one cache flush costs ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, last-level cache" \
  "$(lscpu | sed -n 's/^L3 cache: *//p'); clflushopt: $(grep -qw clflushopt /proc/cpuinfo && echo yes || echo no);"
echo "ktune $(git rev-parse --short HEAD). Command: \`bench/flush_cost.sh\`, which runs"
echo "\`$build/bin/flush_cost ${args[*]}\`:"
echo
echo '```'
"$build/bin/flush_cost" "${args[@]}" 2>/dev/null | grep -E '_median|^Benchmark|^---'
echo '```'

#!/usr/bin/env bash
# The isolation-cost figures of docs/benchmarks.md (bench/worker_overhead.cpp, Google Benchmark).
# Prints a markdown section. Usage: bench/worker_overhead.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
echo "### Isolation: what a worker process costs ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; ktune $(git rev-parse --short HEAD)."
echo "Command: \`bench/worker_overhead.sh\`, which runs"
echo "\`$build/bin/worker_overhead --benchmark_repetitions=5 --benchmark_report_aggregates_only=true\`:"
echo
echo '```'
KTUNE_WORKER="$PWD/$build/bin/ktune-worker" "$build/bin/worker_overhead" \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>/dev/null |
  grep -E '_median|^Benchmark|^---'
echo '```'

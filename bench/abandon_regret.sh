#!/usr/bin/env bash
# Early abandonment's regret and tuning time on the CPU examples with a real space
# (examples/matmul_cpu: matmul.yaml, 48 configs + OpenBLAS on 3 problems, and matmul_bias_relu.yaml):
# bench/abandon_regret.cpp tunes each problem with and without abandonment, REPEATS times
# (alternating which goes first), and re-measures the two picks side by side in alternating
# rounds when they differ. Prints a markdown section for docs/benchmarks.md.
# Usage: [SPECS="a.yaml b.yaml"] bench/abandon_regret.sh [BUILD] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

echo "### Early abandonment: regret and tuning time on the CPU examples ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, shared with other jobs"
echo "(the load varies during the run: the spread over repeats shows how much);"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/abandon_regret.sh $build $repeats\`."
echo "Regret: the abandoning run's pick over the full run's, re-measured side by side (1 when both"
echo "picked the same). Tuning time: the selection only (the code cache is warm after the first)."
for spec in ${SPECS:-examples/matmul_cpu/matmul.yaml examples/matmul_cpu/matmul_bias_relu.yaml}; do
  echo
  echo "\`$spec\`:"
  echo
  "$build/bin/abandon_regret" "$spec" "$cache" "$repeats"
done

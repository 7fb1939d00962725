#!/usr/bin/env bash
# Early abandonment's regret and tuning time on the CPU examples with a real space
# (examples/matmul_cpu: matmul.yaml, 48 configs + OpenBLAS on 3 problems, and matmul_bias_relu.yaml):
# bench/abandon_regret.cpp tunes each problem with and without abandonment, REPEATS times
# (alternating which goes first), and re-measures the two picks side by side in alternating
# rounds when they differ. Prints a markdown section for docs/benchmarks.md.
# Usage: [SPECS="a.yaml b.yaml"] [KTUNE_BIN=DIR] bench/abandon_regret.sh [BUILD] [REPEATS]
# KTUNE_BIN: take abandon_regret, ktune and ktune-worker from DIR instead of BUILD/bin (the GPU
# machine's gpu-bundle/bin: bench/gpu/cpu_regret.sh); KTUNE_MACHINE_NOTE replaces "shared with
# other jobs" in the machine line.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
bin=${KTUNE_BIN:-$build/bin}
for exe in abandon_regret ktune ktune-worker; do
  [ -x "$bin/$exe" ] || { echo "abandon_regret.sh: no $bin/$exe" >&2; exit 2; }
done
# The worker of the same build (the bench finds one beside itself too; this says which).
export KTUNE_WORKER=$bin/ktune-worker
command="bench/abandon_regret.sh $build $repeats"
[ -z "${KTUNE_BIN:-}" ] || command="KTUNE_BIN=$KTUNE_BIN $command"
[ -z "${SPECS:-}" ] || command="SPECS=\"$SPECS\" $command"
# The GPU machine's copy of the tree may have no .git: the binary says its version then.
version=$(git rev-parse --short HEAD 2>/dev/null || "$bin/ktune" --version | sed 's/^ktune //')
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

echo "### Early abandonment: regret and tuning time on the CPU examples ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, ${KTUNE_MACHINE_NOTE:-shared with other jobs}"
echo "(the load varies during the run: the spread over repeats shows how much);"
echo "ktune $version. Command: \`$command\`."
echo "Regret: the abandoning run's pick over the full run's, re-measured side by side (1 when both"
echo "picked the same). Tuning time: the selection only (the code cache is warm after the first)."
for spec in ${SPECS:-examples/matmul_cpu/matmul.yaml examples/matmul_cpu/matmul_bias_relu.yaml}; do
  echo
  echo "\`$spec\`:"
  echo
  "$bin/abandon_regret" "$spec" "$cache" "$repeats"
done

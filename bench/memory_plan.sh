#!/usr/bin/env bash
# The memory-planning figures of docs/benchmarks.md: peak bytes of the pool planner (Inductor's
# reuse pool) and the arena planner (lifetimes and best-fit offsets) against the lower bound (the
# most bytes live at any step), on the example graphs and on 200 seeded random graphs
# (bench/memory_plan.cpp). No timing: the numbers are exact and the same on every machine.
# Prints a markdown section to paste into docs/benchmarks.md. Usage: bench/memory_plan.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

echo "### Memory planning: peak bytes against the lower bound ($(date -u +%Y-%m-%d))"
echo
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/memory_plan.sh\`."
echo "Peaks count every buffer the plan allocates (intermediates and outputs; the caller's inputs"
echo "are not counted); the bound is the largest total of live bytes at any step."
echo
"$build/bin/memory_plan" --random 200 --seed 1 \
  examples/mlp_block/graph.yaml examples/transformer_block/graph.yaml

#!/usr/bin/env bash
# What the trust checks (issue 16) cost on the CPU demo: `ktune tune examples/matmul_cpu/matmul.yaml`
# timed with a fresh tuning cache each run and a warm code cache (compiles are out of the figure:
# the checks run where candidates are verified and measured), for two builds in turn, A B A B ...,
# so that the machine's drift hits both alike. Prints a markdown section for docs/benchmarks.md.
#
# Usage: bench/trust_cost.sh BIN_A BIN_B [RUNS]
#   BIN_A, BIN_B: folders holding ktune and ktune-worker (e.g. a build of the commit before the
#   checks, copied aside, and build/bin). RUNS: pairs timed (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
a=$(realpath "$1")
b=$(realpath "$2")
runs=${3:-5}
spec=examples/matmul_cpu/matmul.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One timed tuning with BIN ($1): a fresh tuning cache beside the shared code cache ($2).
tune_once() {
  local bin=$1 codes=$2 dir
  dir=$(mktemp -d "$work/run.XXXXXX")
  # The code cache is warm (copied in), the tuning cache empty: what is timed is verification and
  # measurement, not compiling.
  cp -a "$codes/." "$dir/"
  rm -f "$dir"/tuning.sqlite3*
  local t0 t1
  t0=$(date +%s.%N)
  KTUNE_WORKER="$bin/ktune-worker" "$bin/ktune" --cache-dir "$dir" tune "$spec" -q >"$dir.log" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
  rm -rf "$dir"
}

# Warm each build's code cache once (the two builds may key their code caches differently).
for side in a b; do
  bin=${!side}
  mkdir -p "$work/codes-$side"
  KTUNE_WORKER="$bin/ktune-worker" "$bin/ktune" --cache-dir "$work/codes-$side" tune "$spec" -q \
    >"$work/warm-$side.log" 2>&1
done

times_a=()
times_b=()
for ((i = 0; i < runs; ++i)); do
  times_a+=("$(tune_once "$a" "$work/codes-a")")
  times_b+=("$(tune_once "$b" "$work/codes-b")")
done

summary() {  # min median max of the arguments
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f", v[1], v[int((NR+1)/2)], v[NR]}'
}
ratios=()
for ((i = 0; i < runs; ++i)); do
  ratios+=("$(awk -v a="${times_a[i]}" -v b="${times_b[i]}" 'BEGIN {printf "%.3f\n", b / a}')")
done

echo "### What the trust checks cost on the CPU demo ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores. Command:"
echo "\`bench/trust_cost.sh $1 $2 $runs\` (ktune tune $spec, warm code cache, empty tuning cache,"
echo "A and B alternating; seconds of wall time, min / median / max over $runs runs each)."
echo
echo "| build | min | median | max |"
echo "| --- | --- | --- | --- |"
read -r mn md mx <<<"$(summary "${times_a[@]}")"
echo "| A: $1 | $mn | $md | $mx |"
read -r mn md mx <<<"$(summary "${times_b[@]}")"
echo "| B: $2 | $mn | $md | $mx |"
read -r mn md mx <<<"$(summary "${ratios[@]}")"
echo "| B / A, pair by pair | $mn | $md | $mx |"

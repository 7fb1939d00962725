#!/usr/bin/env bash
# Wall time of `mpirun -n R ktune tune SPEC --distributed` for R = 1, 2, 4 (docs/benchmarks.md,
# "Tuning over MPI ranks"), each run from an empty cache folder (compiling included), REPEATS
# times; prints min / median / max per R. Usage: bench/mpi_scaling.sh [SPEC] [REPEATS]
# (default: test/data/mpi/problems.yaml, 3). Needs build/bin/ktune built with MPI and mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-test/data/mpi/problems.yaml}
repeats=${2:-3}
ktune=${KTUNE:-build/bin/ktune}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "spec: $spec; $(nproc) core(s): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for ranks in 1 2 4; do
  times=()
  for _ in $(seq "$repeats"); do
    cache=$(mktemp -d)
    start=$(date +%s.%N)
    mpirun --oversubscribe -n "$ranks" "$ktune" --cache-dir "$cache" tune "$spec" --distributed \
      --no-abandon >"$cache.log" 2>&1 || { cat "$cache.log"; exit 1; }
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc -l)")
    rm -rf "$cache" "$cache.log"
  done
  printf '%s\n' "${times[@]}" | sort -g | awk -v r="$ranks" '{t[NR]=$1} END {
    printf "R=%d  min %.2f s  median %.2f s  max %.2f s  (%d runs)\n", r, t[1], t[int((NR+1)/2)], t[NR], NR }'
done

#!/usr/bin/env bash
# On the GPU machine: what a tuning-cache hit of a user's CUDA kernel spec costs (`ktune tune`,
# docs/architecture.md "Tuning-cache hits without the driver"): the spec tuned once into a fresh
# cache, then REPS hits (-v says whether the driver started) and REPS hits through the driver
# (`--devices 0`, which is not answered ahead of it), each after a 1 s pause (run.sh says why),
# the process's wall time of each.
#
#   bash bench/gpu/spec_hits.sh OUTDIR [SPEC] [REPS]   (default examples/cuda_reduction/spec.yaml, 3)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: spec_hits.sh OUTDIR [SPEC] [REPS]}
spec=${2:-$root/examples/cuda_reduction/spec.yaml}
reps=${3:-3}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "error: REPS: expected a positive integer, got '$reps'" >&2; exit 2; }
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
"$bundle/bin/ktune" --cache-dir "$cache" tune "$spec" -q >"$out/cold.log" 2>&1 ||
  { echo "error: the cold tuning failed (see $out/cold.log)" >&2; exit 1; }
tail -1 "$out/cold.log"
# hit TAG ARGS...: one timed `ktune tune` of the spec on the filled cache.
hit() {
  local tag=$1
  shift
  sleep 1
  local start
  start=$(date +%s%N)
  "$bundle/bin/ktune" --cache-dir "$cache" tune "$spec" "$@" >"$out/$tag.log" 2>&1
  local code=$?
  echo "$tag: exit $code, wall $((($(date +%s%N) - start) / 1000000)) ms;" \
    "$(grep -o 'answered.*' "$out/$tag.log" | head -1)"
}
for i in $(seq 1 "$reps"); do hit "hit-$i" -v; done
for i in $(seq 1 "$reps"); do hit "driver-$i" --devices 0; done

#!/usr/bin/env bash
# On the GPU machine: cold tuning (`ktune gemm` with empty code, tuning and CUDA compute caches,
# as bench/gpu/run.sh's cold run) of two whole builds, alternated on one machine, each run with
# its --trace timeline summed by phase. For changes to the worker or the selection, where
# ab_gemm.sh (which shares one worker) cannot tell the builds apart.
#
#   KTUNE_GPU_BUILD=<old build> bash bench/gpu/bundle.sh && mv gpu-bundle gpu-bundle-base
#   KTUNE_GPU_BUILD=<new build> bash bench/gpu/bundle.sh
#   bash bench/gpu/ab_cold.sh OUTDIR [REPS] [MxNxK ...]      (default: run.sh's shapes)
#   python3 bench/gpu/ab_cold_summary.py OUTDIR
# Two settings of one build instead: AB_BASE_ARGS and AB_NEW_ARGS, `ktune gemm` flags for each
# side (word-split), with gpu-bundle-base optional (missing: both sides run gpu-bundle), e.g.
#   AB_BASE_ARGS="--max-runs 100" AB_NEW_ARGS="--max-runs 50" bash bench/gpu/ab_cold.sh OUT 4
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: ab_cold.sh OUTDIR [REPS] [MxNxK ...]}
reps=${2:-2}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "error: REPS: expected a positive integer, got '$reps'" >&2; exit 2; }
shift $(($# >= 2 ? 2 : 1))
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096x4096x4096 8192x8192x8192 1024x1024x1024 32x8192x8192
  2048x2048x8192)
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
base=$root/gpu-bundle-base
read -r -a base_args <<<"${AB_BASE_ARGS:-}"
read -r -a new_args <<<"${AB_NEW_ARGS:-}"
if [ ! -x "$base/bin/ktune" ] && [ $((${#base_args[@]} + ${#new_args[@]})) -gt 0 ]; then
  base=$bundle  # the same build, two settings
fi
[ -x "$base/bin/ktune" ] || { echo "error: $base/bin/ktune is missing" >&2; exit 2; }
# As run.sh: the libraries read once, and one untimed tuning of another shape per build.
for d in ${libdirs//:/ }; do cat "$d"/libcublas*.so* "$d"/libnvrtc*.so* >/dev/null 2>&1; done
for b in "$base" "$bundle"; do
  warm=$(mktemp -d)
  KTUNE_WORKER=$b/bin/ktune-worker LD_LIBRARY_PATH=$b/lib:$LD_LIBRARY_PATH "$b/bin/ktune" \
    --cache-dir "$warm" gemm --m 512 --n 512 --k 512 --dtype bf16 -q >/dev/null 2>&1
  rm -rf "$warm"
done
for rep in $(seq 1 "$reps"); do
  for shape in "${shapes[@]}"; do
    IFS=x read -r m n k <<<"$shape"
    for build in base new; do
      b=$bundle
      args=("${new_args[@]}")
      [ "$build" = base ] && b=$base && args=("${base_args[@]}")
      tag=$build-$shape-$rep
      cache=$(mktemp -d)
      # The last run's released worker tears down its CUDA context after its process has
      # exited, and a process opening the GPU meanwhile waits for it (run.sh): a pause.
      sleep 1
      start=$(date +%s%N)
      CUDA_CACHE_PATH=$cache/nv KTUNE_WORKER=$b/bin/ktune-worker \
        LD_LIBRARY_PATH=$b/lib:$LD_LIBRARY_PATH timeout 120 "$b/bin/ktune" --cache-dir "$cache" \
        gemm --m "$m" --n "$n" --k "$k" --dtype bf16 "${args[@]}" --trace "$out/$tag.json" \
        >"$out/$tag.log" 2>&1 || echo "$tag: exit $?"
      # The process's wall time, what a user waits for ("Tuned ... in" ends before the exit).
      echo "wall $((($(date +%s%N) - start) / 1000000)) ms" >>"$out/$tag.log"
      python3 "$root/bench/trace_summary.py" "$out/$tag.json" --top 12 >>"$out/$tag.log"
      rm -rf "$cache"
    done
  done
done

#!/usr/bin/env bash
# On the GPU machine: two builds of ktune side by side on the same machine, alternated, so that
# machine-to-machine spread (up to 10% between fresh H200s) does not decide a kernel change.
# Every candidate is measured to its budget and graph-timed; ab_summary.py compares the builds'
# best template per problem and each config's time.
#
#   cp <old build>/bin/ktune gpu-bundle/bin/ktune-base   (after bench/gpu/bundle.sh of the new one)
#   bash bench/gpu/ab_gemm.sh OUTDIR [REPS] [M,N,K,EPILOGUE ...]
#   python3 bench/gpu/ab_summary.py OUTDIR
# Default problems: plain 4096^3, 8192^3, 2048x2048x8192, 8192x32x8192; GELU at 4096x14336x4096
# and 128x14336x4096; bias + residual at 4096x14336x4096; SiLU at 4096^3. The worker, libraries
# and tests are shared (gpu-bundle/); only the CLI, which renders and compiles the kernels, differs.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: ab_gemm.sh OUTDIR [REPS] [M,N,K,EPILOGUE ...]}
reps=${2:-2}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "error: REPS: expected a positive integer, got '$reps'" >&2; exit 2; }
shift $(( $# >= 2 ? 2 : 1 ))
problems=("$@")
# shellcheck disable=SC2054  # each element is M,N,K,EPILOGUE
[ ${#problems[@]} -gt 0 ] || problems=(4096,4096,4096,none 4096,14336,4096,gelu
  4096,14336,4096,bias+residual 4096,4096,4096,silu 8192,8192,8192,none 2048,2048,8192,none
  128,14336,4096,gelu 8192,32,8192,none)
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
[ -x "$bundle/bin/ktune-base" ] || { echo "error: $bundle/bin/ktune-base is missing" >&2; exit 2; }
for rep in $(seq 1 "$reps"); do
  for p in "${problems[@]}"; do
    IFS=, read -r m n k epi <<<"$p"
    for build in ktune-base ktune; do
      tag=$build-${m}x${n}x${k}-${epi}-$rep
      timeout 120 "$bundle/bin/$build" gemm --m "$m" --n "$n" --k "$k" --dtype bf16 \
        --epilogue "${epi//+/,}" --no-cache --no-abandon --graph-calls 10 \
        --json-log "$out/$tag.jsonl" >"$out/$tag.txt" 2>&1 || echo "$tag: exit $?"
    done
  done
done

#!/usr/bin/env bash
# On the GPU machine: Nsight Compute over one `ktune gemm` per problem, every GEMM kernel it
# launches (ktune's templates, cuBLAS's and cuBLASLt's), one timed run each, so that a template
# can be set against cuBLAS's kernel for the same problem metric by metric (L2 traffic, issued
# instructions, DRAM throughput, clocks). ncu_summary.py prints the comparison.
#
#   bash bench/gpu/ncu_gemm.sh OUTDIR [M,N,K,EPILOGUE ...]   (default: 4096^3, 4096x14336x4096 GELU,
#                                                             8192x32x8192)
#   python3 bench/gpu/ncu_summary.py OUTDIR/<problem>.csv
# ncu replays each kernel several times; with this many launches a problem takes about 100 s, and
# the report is whatever was profiled when its timeout ends it. Kernels run at ncu's locked clocks,
# so durations are longer than ktune's graph-timed medians; compare ratios.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: ncu_gemm.sh OUTDIR [M,N,K,EPILOGUE ...]}
shift
problems=("$@")
# shellcheck disable=SC2054  # each element is M,N,K,EPILOGUE
[ ${#problems[@]} -gt 0 ] || problems=(4096,4096,4096,none 4096,14336,4096,gelu 8192,32,8192,none)
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
command -v ncu >/dev/null || { echo "error: ncu (Nsight Compute) is not on PATH" >&2; exit 2; }
for p in "${problems[@]}"; do
  IFS=, read -r m n k epi <<<"$p"
  tag=${m}x${n}x${k}-$epi
  timeout "${KTUNE_NCU_TIMEOUT:-100}" ncu --target-processes all --launch-count 250 \
    --section SpeedOfLight --section LaunchStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -o "$out/$tag" -f \
    "$bundle/bin/ktune" gemm --m "$m" --n "$n" --k "$k" --dtype bf16 --epilogue "${epi//+/,}" \
    --no-cache --no-abandon --graph-calls 0 --budget-ms 0.001 --min-runs 1 --max-runs 1 \
    --warmup-runs 0 --close-call-band 0 --decide-rounds 0 --cublaslt-algos 2 \
    --run-timeout-ms 600000 >"$out/$tag.txt" 2>&1
  echo "$tag: exit $?"
  ncu --import "$out/$tag.ncu-rep" --csv --page details >"$out/$tag.csv" 2>/dev/null
  rm -f "$out/$tag.ncu-rep"
done

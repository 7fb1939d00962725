#!/usr/bin/env bash
# On the GPU machine, in one run (issue 8): for each bf16 shape, ktune's tuning of the plain GEMM
# and of GEMM+bias+ReLU (`ktune gemm --epilogue bias,relu`), kernel-only (each candidate timed
# as a CUDA graph of --graph-calls unrolled calls, as Inductor's anchor replays graphs), with the
# pick against cuBLAS + ktune's separate epilogue kernel, cuBLASLt's own fused epilogue and the
# best fused template; then PyTorch Inductor's max-autotune on the same shapes, plain and fused
# (bench/gpu/inductor_gemm_anchor.py). Reads gpu-bundle/ (bench/gpu/bundle.sh); writes
# epilogue-<shape>-<plain|bias_relu>.log, inductor-epilogue.jsonl and epilogue-summary.txt to
# OUTDIR.
#
#   bash bench/gpu/epilogue.sh OUTDIR [MxNxK ...]   (default: issue 4's shapes, 1000^3, 4096x4096x128)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: epilogue.sh OUTDIR [MxNxK ...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096x4096x4096 8192x8192x8192 1024x1024x1024 32x8192x8192
                                   2048x2048x8192 1000x1000x1000 4096x4096x128)
graph_calls=${KTUNE_GRAPH_CALLS:-10}
mkdir -p "$out"
bundle=$root/gpu-bundle
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
export KTUNE_WORKER=$bundle/bin/ktune-worker
ktune=$bundle/bin/ktune
summary=$out/epilogue-summary.txt
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "graph calls per timed run: $graph_calls"
} | tee "$summary"

for shape in "${shapes[@]}"; do
  IFS=x read -r m n k <<<"$shape"
  cache=$(mktemp -d)
  for epilogue in none bias,relu; do
    tag=${epilogue/,/_}
    [ "$epilogue" = none ] && tag=plain
    log=$out/epilogue-$shape-$tag.log
    start=$(date +%s%N)
    "$ktune" --cache-dir "$cache" gemm --m "$m" --n "$n" --k "$k" --dtype bf16 \
      --epilogue "$epilogue" --graph-calls "$graph_calls" -q >"$log" 2>&1
    rc=$?
    end=$(date +%s%N)
    printf '== %s %s: exit %d, wall %d ms\n' "$shape" "$tag" "$rc" $(((end - start) / 1000000)) \
      | tee -a "$summary"
    grep -E '^(Pick|cuBLAS)|^  best ' "$log" | tee -a "$summary"
  done
  rm -rf "$cache"
done

echo "== inductor" | tee -a "$summary"
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/inductor_gemm_anchor.py" "${shapes[@]}" \
  2>"$out/inductor-epilogue.err" | tee "$out/inductor-epilogue.jsonl" | tee -a "$summary"

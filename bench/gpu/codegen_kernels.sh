#!/usr/bin/env bash
# On the GPU machine: the CUDA codegen's own kernels at the transformer block's sizes (bf16),
# each alone in a one-op graph compiled by `ktune compile --device cuda` and timed by the
# program's benchmark (`<graph> RUNS`: the median of whole forwards, one CUDA-graph launch of
# the one kernel), with effective bandwidth = (bytes read + bytes written) / time against the
# H200's 4.8 TB/s; then `ktune gemm` with each of the block's GEMM epilogues, whose AUTOTUNE
# table puts the separate-epilogue pairs (cublas_gemm+epilogue, cublaslt_algo0+epilogue) beside
# the plain GEMM of the same shape (so that the epilogue kernel's own cost shows). Reads
# gpu-bundle/ (bench/gpu/bundle.sh); writes to OUTDIR: summary.txt, <op>/ (graph and program),
# <op>-compile.log, <op>-run.log, gemm-<shape>-<epilogue>.log.
#
#   bash bench/gpu/codegen_kernels.sh OUTDIR [RUNS]     (RUNS: timed forwards, default 200)
#   KTUNE_CODEGEN_SMOKE=1 bash bench/gpu/codegen_kernels.sh OUTDIR   # small sizes, no GEMMs
# (KTUNE_ARCH=sm_90a compiles without a GPU; KTUNE_BUNDLE replaces gpu-bundle/.)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: codegen_kernels.sh OUTDIR [RUNS]}
runs=${2:-200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$root/bench/gpu/env.sh"
ktune=$bundle/bin/ktune
summary=$out/summary.txt
peak_gbs=4800
t=4096 h=2048 f=8192  # tokens, hidden, MLP width
[ -n "${KTUNE_CODEGEN_SMOKE:-}" ] && t=64 h=128 f=256
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "T=$t H=$h F=$f bf16, $runs timed forwards per program; GB/s = (read + written bytes) / median"
} | tee "$summary"

# graph NAME BYTES YAML-BODY: writes OUTDIR/NAME/graph.yaml, compiles it, runs the benchmark and
# prints the kernel's median and bandwidth. BYTES: what the op must read and write.
graph() {
  local name=$1 bytes=$2 body=$3 dir=$out/$1
  mkdir -p "$dir"
  printf 'name: %s\n%s\n' "$name" "$body" >"$dir/graph.yaml"
  if ! "$ktune" --cache-dir "$out/cache" compile --device cuda ${KTUNE_ARCH:+--arch "$KTUNE_ARCH"} \
      -o "$dir/build" "$dir/graph.yaml" \
      >"$out/$name-compile.log" 2>&1; then
    printf '%-12s compile failed (%s)\n' "$name" "$out/$name-compile.log" | tee -a "$summary"
    return
  fi
  if ! "$dir/build/$name" "$runs" >"$out/$name-run.log" 2>&1; then
    printf '%-12s run failed (%s)\n' "$name" "$out/$name-run.log" | tee -a "$summary"
    return
  fi
  # "<graph>: median 0.0123 ms over N runs (...)"
  local ms
  ms=$(sed -n 's/.*: median \([0-9.]*\) ms.*/\1/p' "$out/$name-run.log" | head -1)
  grep -E '^ *KTUNE_CU\(ktune_launch\(' "$dir/build/$name.cpp" | sed 's/^ */    /' \
    >"$out/$name-launch.txt"
  awk -v n="$name" -v b="$bytes" -v ms="$ms" -v peak="$peak_gbs" 'BEGIN {
    gbs = b / (ms * 1e-3) / 1e9
    printf "%-12s %9.4f ms  %8.1f MB  %7.0f GB/s  %5.1f%% of %d GB/s\n", n, ms, b / 1e6, gbs,
           100 * gbs / peak, peak }' | tee -a "$summary"
  tee -a "$summary" <"$out/$name-launch.txt"
}

bf=2  # bytes per bf16 element
in2() { printf '  - {name: %s, dtype: bf16, shape: [%s, %s]}\n' "$1" "$2" "$3"; }
in1() { printf '  - {name: %s, dtype: bf16, shape: [%s]}\n' "$1" "$2"; }

graph layer_norm $(( (2 * t * h + 2 * h) * bf )) "inputs:
$(in2 x "$t" "$h")
$(in1 g "$h")
$(in1 b "$h")
nodes:
  - {name: y, op: layer_norm, inputs: [x, g, b]}
outputs: [y]"
graph row_softmax $(( 2 * t * t * bf )) "inputs:
$(in2 x "$t" "$t")
nodes:
  - {name: y, op: row_softmax, inputs: [x]}
outputs: [y]"
graph transpose $(( 2 * t * h * bf )) "inputs:
$(in2 x "$t" "$h")
nodes:
  - {name: y, op: transpose, inputs: [x]}
outputs: [y]"
graph gelu $(( 2 * t * f * bf )) "inputs:
$(in2 x "$t" "$f")
nodes:
  - {name: y, op: gelu, inputs: [x]}
outputs: [y]"
graph add $(( 3 * t * f * bf )) "inputs:
$(in2 x "$t" "$f")
$(in2 z "$t" "$f")
nodes:
  - {name: y, op: add, inputs: [x, z]}
outputs: [y]"
graph bias_add $(( (2 * t * f + f) * bf )) "inputs:
$(in2 x "$t" "$f")
$(in1 b "$f")
nodes:
  - {name: y, op: bias_add, inputs: [x, b]}
outputs: [y]"

[ -n "${KTUNE_CODEGEN_SMOKE:-}" ] && exit 0
# The block's GEMMs with their epilogues, each beside its plain GEMM: the pair's time minus the
# plain library GEMM's is the separate epilogue kernel's (bytes: C read and written plus the
# operands).
echo "== GEMM epilogues (AUTOTUNE rows of the library GEMMs and their +epilogue pairs)" \
  | tee -a "$summary"
for spec in "$t $t $h scale=0.125" "$t $f $h bias,gelu" "$t $h $f residual" "$t $h $h bias,residual"; do
  read -r m n k epilogue <<<"$spec"
  for e in none "$epilogue"; do
    log=$out/gemm-${m}x${n}x${k}-${e//[,=.]/_}.log
    "$ktune" --cache-dir "$out/cache" gemm --m "$m" --n "$n" --k "$k" --dtype bf16 \
      --epilogue "$e" --cublaslt-algos 1 --top 100 -q >"$log" 2>&1
    rc=$?
    printf -- '-- %sx%sx%s %s: exit %d\n' "$m" "$n" "$k" "$e" "$rc" | tee -a "$summary"
    grep -E 'cublas|^Pick' "$log" | tee -a "$summary"
  done
  awk -v m="$m" -v n="$n" -v e="$epilogue" 'BEGIN {
    ops = (e ~ /residual/ ? 1 : 0)
    printf "   epilogue bytes: %.1f MB (C read + written%s)\n", (2 + ops) * m * n * 2 / 1e6,
           ops ? " + residual" : "" }' | tee -a "$summary"
done

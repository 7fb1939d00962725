#!/usr/bin/env bash
# On the GPU machine, in one run: the CUDA tests (every template checked against cuBLAS, planted
# faults), then for each bf16 GEMM shape ktune's tuning (cold, warm code cache, tuning-cache hit),
# the pick's regret measured again side by side, and PyTorch Inductor's max-autotune on the same
# shapes (bench/gpu/inductor_gemm_anchor.py); then the OpenCL tests and the OpenCL GEMM on
# NVIDIA's OpenCL against the CUDA templates and cuBLAS, f32 ($KTUNE_OPENCL_SHAPES). Reads
# gpu-bundle/ (bench/gpu/bundle.sh); writes tests.log, tune-<shape>.log, inductor.jsonl,
# opencl-*.log and summary.txt to OUTDIR (the OpenCL part is bench/gpu/opencl.sh).
#
#   bash bench/gpu/run.sh OUTDIR [MxNxK ...]     (default: the five shapes of issue 4)
#   KTUNE_GPU_TESTS=0 leaves the CUDA tests out; KTUNE_OPENCL_SHAPES= the OpenCL part.
#   The cold run's wall time is the tuning a user waits for; the regret rounds run on the second
#   (warm code cache) run.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: run.sh OUTDIR [MxNxK ...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(4096x4096x4096 8192x8192x8192 1024x1024x1024 32x8192x8192
                                   2048x2048x8192)
opencl_shapes=${KTUNE_OPENCL_SHAPES-1024x1024x1024 4096x4096x4096}
mkdir -p "$out"
bundle=$root/gpu-bundle
# The CUDA libraries ktune opens with dlopen: the toolkit's, else the Python wheels'.
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
export KTUNE_WORKER=$bundle/bin/ktune-worker KTUNE_TEST_SOURCE_DIR=$root KTUNE_TEST_CLI=$bundle/bin/ktune
ktune=$bundle/bin/ktune
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "libraries from: $libdirs"
} | tee "$out/summary.txt"

if [ "${KTUNE_GPU_TESTS:-1}" != 0 ]; then
  echo "== tests" | tee -a "$out/summary.txt"
  "$bundle/bin/cuda_tests" 2>&1 | tee "$out/tests.log" | grep -E "^\[  (PASSED|FAILED|  SKIPPED)|tests ran" \
    | tee -a "$out/summary.txt"
fi

# Both sides open the same CUDA libraries (cuBLAS, cuBLASLt, NVRTC: ktune from $libdirs, torch
# from its wheels, which are among them): read once first, so that neither side's first run pays
# for the disk and the order of the runs does not decide the comparison.
for d in ${libdirs//:/ }; do cat "$d"/libcublas*.so* "$d"/libnvrtc*.so* >/dev/null 2>&1; done
# And one untimed tuning of another shape, so that the first shape's process does not also pay
# for the first start of the machine's processes and files. It leaves nothing that a cold run
# reads: each cold run below compiles into its own empty CUDA compute cache (next comment).
warm=$(mktemp -d)
"$ktune" --cache-dir "$warm" gemm --m 512 --n 512 --k 512 --dtype bf16 -q >/dev/null 2>&1
rm -rf "$warm"

for shape in "${shapes[@]}"; do
  IFS=x read -r m n k <<<"$shape"
  log=$out/tune-$shape.log
  cache=$(mktemp -d)
  echo "== $shape" | tee -a "$out/summary.txt"
  # Cold: empty code and tuning caches, timed as a user sees it (the whole process). Then the
  # code cache kept, the tuning cache removed: a full selection again, followed by the regret
  # rounds (the pick against the fastest candidates measured again side by side), which are not
  # part of tuning and so stay out of the cold run's time. Then a tuning-cache hit.
  for run in cold warm-code-cache hit; do
    [ "$run" = warm-code-cache ] && rm -f "$cache"/tuning.sqlite3*
    extra=()
    # The cold run's timeline (--trace), summed by phase into its log below.
    [ "$run" = cold ] && extra=(--trace "$out/trace-$shape.json")
    # NVRTC (CUDA 13) keeps what it compiled in the CUDA compute cache (~/.nv/ComputeCache),
    # across processes: without its own empty one (a new folder in the shape's new cache folder),
    # a cold run would reuse the compiles of the shapes before it (bench/gpu/compute_cache.sh).
    nv_cache=$cache/nv-compute-cache
    [ "$run" = warm-code-cache ] && extra=(--regret-rounds 10)
    # The run before (this one's, or the warm-up's) released its worker, which tears down its
    # CUDA context after the process has exited; a process that opens the GPU meanwhile waits
    # for that (NVML's device handle took 68-136 ms instead of 16-18 ms right after such a run
    # on the H200). Not this run's cost: a pause first.
    sleep 1
    start=$(date +%s%N)
    CUDA_CACHE_PATH=$nv_cache "$ktune" --cache-dir "$cache" gemm --m "$m" --n "$n" --k "$k" \
      --dtype bf16 "${extra[@]}" >"$log.$run" 2>&1
    rc=$?
    end=$(date +%s%N)
    printf '%s: exit %d, wall %d ms; %s\n' "$run" "$rc" $(((end - start) / 1000000)) \
      "$(grep -E '^Tuned gemm' "$log.$run")" | tee -a "$out/summary.txt"
    grep -E '^(Pick|cuBLAS|Regret):' "$log.$run" | tee -a "$out/summary.txt"
    if [ "$run" = cold ]; then
      python3 "$root/bench/trace_summary.py" "$out/trace-$shape.json" --top 10 >>"$log.$run"
      rm -f "$out/trace-$shape.json"
    fi
  done
  cat "$log.cold" "$log.warm-code-cache" "$log.hit" >"$log"
  rm -f "$log.cold" "$log.warm-code-cache" "$log.hit"
  rm -rf "$cache"
done

echo "== inductor" | tee -a "$out/summary.txt"
# Cold too: Triton's kernel cache and the CUDA compute cache empty (Inductor's own caches are off
# in the script).
anchor_caches=$(mktemp -d)
TRITON_CACHE_DIR=$anchor_caches/triton CUDA_CACHE_PATH=$anchor_caches/nv PYTHONUNBUFFERED=1 \
  python3 "$root/bench/gpu/inductor_gemm_anchor.py" "${shapes[@]}" \
  2>"$out/inductor.err" | tee "$out/inductor.jsonl" | tee -a "$out/summary.txt"
rm -rf "$anchor_caches"

# The OpenCL GEMM template on NVIDIA's OpenCL against the CUDA templates and cuBLAS, f32
# (KTUNE_OPENCL_SHAPES= leaves it out).
if [ -n "$opencl_shapes" ]; then
  # shellcheck disable=SC2086  # one argument per shape
  bash "$root/bench/gpu/opencl.sh" "$out" $opencl_shapes
fi

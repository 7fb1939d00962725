#!/usr/bin/env bash
# On the GPU machine: users' own CUDA kernels from specs (issue 18). The CUDA tests, each CUDA
# example tuned cold (verified against its reference kernel, planted faults in
# bench/gpu/conv2d_faults.yaml), then Kernel Tuner side by side on the same kernels
# (bench/gpu/kernel_tuner_side_by_side.py; its wheels in .whl/, carried). Reads gpu-bundle/
# (bench/gpu/bundle.sh); writes tests.log, tune-*.log, kt/ (results.md, results.json) to OUTDIR.
#
#   bash bench/gpu/spec_kernels.sh OUTDIR [tests] [tune] [kt] [kt-args...]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: spec_kernels.sh OUTDIR [tests] [tune] [kt [args...]]}
shift
mkdir -p "$out"
bundle=$root/gpu-bundle
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
export KTUNE_WORKER=$bundle/bin/ktune-worker KTUNE_TEST_SOURCE_DIR=$root KTUNE_TEST_CLI=$bundle/bin/ktune
ktune=$bundle/bin/ktune
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } \
  | tee -a "$out/summary.txt"
while [ $# -gt 0 ]; do
  case $1 in
    tests)
      echo "== cuda_tests" | tee -a "$out/summary.txt"
      "$bundle/bin/cuda_tests" 2>&1 | tee "$out/tests.log" | grep -E "^\[  (PASSED|FAILED)|FAILED  \]" \
        | tee -a "$out/summary.txt" ;;
    tune)
      for spec in examples/cuda_reduction/spec.yaml examples/cuda_conv2d/spec.yaml \
                  bench/gpu/conv2d_faults.yaml; do
        name=$(basename "$(dirname "$spec")")-$(basename "$spec" .yaml)
        cache=$(mktemp -d)
        echo "== ktune tune $spec (cold)" | tee -a "$out/summary.txt"
        /usr/bin/time -f "wall %e s" "$ktune" --cache-dir "$cache" tune "$root/$spec" \
          >"$out/tune-$name.log" 2>&1
        grep -E "candidates \(|Selected|Tuned|wall|over the device|error" "$out/tune-$name.log" \
          | tee -a "$out/summary.txt"
        rm -rf "$cache"
      done ;;
    kt)
      shift
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$root"/.whl/*.whl && export PYTHONPATH=/tmp/site
      PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/kernel_tuner_side_by_side.py" --ktune "$ktune" \
        --out "$out/kt" "$@" 2>&1 | tee "$out/kt.log" | tail -40
      break ;;
  esac
  shift
done

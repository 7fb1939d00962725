#!/usr/bin/env bash
# On the GPU machine (issue 7): the OpenCL tests, then the OpenCL GEMM template tuned on NVIDIA's
# OpenCL (`ktune opencl-gemm`, f32) against the CUDA templates and cuBLAS/cuBLASLt (`ktune gemm
# --dtype f32`) on the same shapes, in one run. Reads gpu-bundle/ (bench/gpu/bundle.sh); writes
# opencl-tests.log, opencl-<shape>.log, cuda-f32-<shape>.log and appends to summary.txt in OUTDIR.
# Called by run.sh; alone:
#
#   bash bench/gpu/opencl.sh OUTDIR [MxNxK ...]    (default: 1024^3 and 4096^3)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: opencl.sh OUTDIR [MxNxK ...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(1024x1024x1024 4096x4096x4096)
mkdir -p "$out"
bundle=$root/gpu-bundle
libdirs=$(find / -xdev \( -name 'libcublasLt.so.1[23]' -o -name 'libnvrtc.so.1[23]' \) \
            -printf '%h\n' 2>/dev/null | sort -u | paste -sd: -)
export LD_LIBRARY_PATH=$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}
export KTUNE_WORKER=$bundle/bin/ktune-worker KTUNE_TEST_SOURCE_DIR=$root KTUNE_TEST_CLI=$bundle/bin/ktune
ktune=$bundle/bin/ktune
summary=$out/summary.txt
echo "== opencl" | tee -a "$summary"

# The ICD loader finds NVIDIA's OpenCL through /etc/OpenCL/vendors. Where the image has the
# library but no .icd file for it, name it to the loader for this run: OCL_ICD_FILENAMES (the
# Khronos loader and ocl-icd) adds it to what the vendors folder lists.
{
  echo "vendors: $(ls /etc/OpenCL/vendors 2>/dev/null | paste -sd' ' -)"
  echo "loader: $(ldd "$ktune" | awk '/libOpenCL/ {print $3}')"
} | tee -a "$summary"
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  nv=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
  if [ -n "$nv" ]; then
    export OCL_ICD_FILENAMES=$nv
    echo "registered $nv through OCL_ICD_FILENAMES" | tee -a "$summary"
  fi
fi
# The devices the loader offers (an unknown name makes ktune list them).
"$ktune" opencl-gemm --m 8 --n 8 --k 8 --device no-such-device 2>&1 \
  | grep -o "devices: .*" | tee -a "$summary"

"$bundle/bin/opencl_tests" 2>&1 | tee "$out/opencl-tests.log" \
  | grep -E "^\[  (PASSED|FAILED|  SKIPPED)|tests ran" | tee -a "$summary"
for shape in "${shapes[@]}"; do
  IFS=x read -r m n k <<<"$shape"
  cache=$(mktemp -d)
  # NVIDIA's platform, not PoCL's CPU device where the image has both.
  "$ktune" --cache-dir "$cache" opencl-gemm --m "$m" --n "$n" --k "$k" -q --top 5 \
    --device "${KTUNE_OPENCL_DEVICE:-NVIDIA:0}" >"$out/opencl-$shape.log" 2>&1
  "$ktune" --cache-dir "$cache" gemm --m "$m" --n "$n" --k "$k" --dtype f32 \
    >"$out/cuda-f32-$shape.log" 2>&1
  echo "-- $shape f32" | tee -a "$summary"
  grep -hE '^(Pick|cuBLAS|Tuned|error)|^  best ' "$out/opencl-$shape.log" \
    "$out/cuda-f32-$shape.log" | tee -a "$summary"
  rm -rf "$cache"
done

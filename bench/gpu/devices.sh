#!/usr/bin/env bash
# On the GPU machine: `--devices` (issue 23) on however many GPUs it has. The CUDA tests first
# (the selection's device-spreading code runs under every GPU test); then the checks of the
# device list against the machine (an ordinal past the last GPU, ktune's own CUDA_VISIBLE_DEVICES
# followed); then bench/devices.sh over the shapes of bench/gpu/run.sh (examples/cuda_gemm/
# gemm_bf16.yaml) with LISTS (default: "0 all", and "0 0,1 all" where there are 2 GPUs or
# more): wall time, speed-up and whether the picks agree. Writes tests.log, checks.log and
# devices.md to OUTDIR.
#
#   bash bench/gpu/devices.sh OUTDIR [REPEATS]     KTUNE_GPU_TESTS=0 leaves the CUDA tests out
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: devices.sh OUTDIR [REPEATS]}
repeats=${2:-2}
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
source "$root/bench/gpu/env.sh"
export KTUNE_TEST_SOURCE_DIR=$root KTUNE_TEST_CLI=$bundle/bin/ktune
ktune=$bundle/bin/ktune
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "GPUs: $gpus" | tee "$out/summary.txt"

if [ "${KTUNE_GPU_TESTS:-1}" != 0 ]; then
  "$bundle/bin/cuda_tests" >"$out/tests.log" 2>&1
  grep -E "^\[  (PASSED|FAILED)|tests ran" "$out/tests.log" | tee -a "$out/summary.txt"
fi

{
  cache=$(mktemp -d)
  echo "== --devices $gpus (one past the last GPU): exit 2 expected"
  "$ktune" --cache-dir "$cache" gemm --m 256 --n 256 --k 256 --devices "$gpus" -q
  echo "exit $?"
  echo "== --devices 0 --device 0 and --devices 0,0: exit 2 expected"
  "$ktune" --cache-dir "$cache" gemm --m 256 --n 256 --k 256 --devices 0,0 -q
  echo "exit $?"
  echo "== --devices all, 1024^3: the workers' CUDA_VISIBLE_DEVICES, under ktune's own"
  CUDA_VISIBLE_DEVICES=$((gpus - 1)) "$ktune" --cache-dir "$cache" gemm --m 1024 --n 1024 \
    --k 1024 --devices all --no-cache -v 2>&1 | grep -E "verifying and measuring|Selected|error"
  echo "exit ${PIPESTATUS[0]}"
  echo "== a cuda kernel spec (test/data/cuda_spec/faults.yaml) on --devices all: faults cost one each"
  "$ktune" --cache-dir "$cache" tune "$root/test/data/cuda_spec/faults.yaml" --devices all \
    --no-cache --run-timeout-ms 4000 -v 2>&1 | grep -E "verifying and measuring|lost running|candidates \(|Selected|error"
  echo "exit ${PIPESTATUS[0]}"
  rm -rf "$cache"
} >"$out/checks.log" 2>&1
cat "$out/checks.log" >>"$out/summary.txt"

lists=${LISTS:-}
if [ -z "$lists" ]; then
  lists="0 all"
  [ "$gpus" -ge 2 ] && lists="0 0,1 all"
fi
LISTS=$lists KTUNE_BIN=$bundle/bin KTUNE_MACHINE_NOTE="the GPU machine, nothing else running" \
  bash "$root/bench/devices.sh" "$root/examples/cuda_gemm/gemm_bf16.yaml" build "$repeats" \
  >"$out/devices.md" 2>&1
cat "$out/devices.md" >>"$out/summary.txt"

#!/usr/bin/env bash
# On the GPU machine: the MLP and transformer blocks of examples/ compiled by ktune (`ktune compile
# --device cuda`) and by torch.compile(mode="max-autotune"), side by side (bench/gpu/e2e_blocks.py):
# forward time, compile + tune wall, device memory, outputs against an fp32 reference. Reads
# gpu-bundle/ (bench/gpu/bundle.sh); writes to OUTDIR: summary.txt, e2e.log, table.md,
# results.json, <block>.json, <block>.graph.json, <block>-ktune/ (the program),
# <block>-ktune-compile.log.
#
#   bash bench/gpu/e2e_blocks.sh OUTDIR [e2e_blocks.py flags]
#   bash bench/gpu/e2e_blocks.sh OUTDIR --tokens 512 --hidden 256   # a smoke run first
# (first, untimed, both sides on the MLP block at T=512, H=256: the machine's warm-up)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: e2e_blocks.sh OUTDIR [e2e_blocks.py flags]}
shift
mkdir -p "$out"
# gpu-bundle/, the CUDA libraries, KTUNE_WORKER and nvcc (it builds the emitted programs).
. "$root/bench/gpu/env.sh"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  echo "libraries from: $libdirs"
} 2>&1 | tee "$out/summary.txt"
# A fresh GPU machine is slow at its first compiles, whichever side runs them (a first NVRTC
# compile took 4x as long; docs/benchmarks.md): both sides compile and run the MLP block at a
# small size first, untimed (KTUNE_E2E_WARMUP=0 leaves it out), so that neither side's timed
# compile pays for the machine's first use.
if [ "${KTUNE_E2E_WARMUP:-1}" != 0 ]; then
  PYTHONUNBUFFERED=1 KTUNE_TRACE= python3 "$root/bench/gpu/e2e_blocks.py" "$out/warmup" \
    --ktune "$bundle/bin/ktune" --blocks mlp_block --tokens 512 --hidden 256 --repeats 3 \
    >"$out/warmup.log" 2>&1 || echo "warm-up: exit $? (log: $out/warmup.log)" | tee -a "$out/summary.txt"
  rm -rf "$out/warmup"/*-ktune
fi
PYTHONUNBUFFERED=1 python3 "$root/bench/gpu/e2e_blocks.py" "$out" --ktune "$bundle/bin/ktune" "$@" \
  >"$out/e2e.log" 2>&1
rc=$?
cat "$out/table.md" 2>/dev/null | tee -a "$out/summary.txt"
echo "e2e_blocks.py: exit $rc (0: both sides within tolerance on every block; log: $out/e2e.log)" \
  | tee -a "$out/summary.txt"
exit $rc

#!/usr/bin/env bash
# On the GPU machine, whose 16 cores are otherwise quiet: early abandonment's regret and tuning
# time on both CPU matmul examples (bench/abandon_regret.sh), REPEATS times (default 3), from the
# binaries of gpu-bundle/ (bench/gpu/bundle.sh builds abandon_regret into it). Writes the markdown
# section to OUTDIR/abandon_regret.md and the bench's messages to OUTDIR/abandon_regret.log.
# OpenBLAS, one of the candidates, is dlopen'ed: where the machine has no libopenblas.so.0 and
# the bundle was built without KTUNE_BUNDLE_OPENBLAS=1, it is unsupported, and the markdown says so.
# SPECS (as for abandon_regret.sh) picks the specs: one spec, 3 repeats takes about 7 minutes on
# 2 loaded cores (2.3 for one repeat), so under a 10-minute limit per command run one spec a call.
#
#   [SPECS=examples/matmul_cpu/matmul.yaml] bash bench/gpu/cpu_regret.sh OUTDIR [REPEATS]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: cpu_regret.sh OUTDIR [REPEATS]}
repeats=${2:-3}
bundle=${KTUNE_BUNDLE:-$root/gpu-bundle}
mkdir -p "$out"
export LD_LIBRARY_PATH=$bundle/lib:${LD_LIBRARY_PATH:-}
openblas="not found: the OpenBLAS candidate is unsupported"
if [ -e "$bundle/lib/libopenblas.so.0" ] || ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0 '; then
  openblas="found"
fi
export KTUNE_MACHINE_NOTE="nothing else running; libopenblas.so.0 $openblas"
t0=$(date +%s)
SPECS=${SPECS:-examples/matmul_cpu/matmul.yaml examples/matmul_cpu/matmul_bias_relu.yaml} \
  KTUNE_BIN=$bundle/bin bash "$root/bench/abandon_regret.sh" build "$repeats" \
  >"$out/abandon_regret.md" 2>"$out/abandon_regret.log"
rc=$?
echo "cpu_regret: exit $rc after $(($(date +%s) - t0)) s; $out/abandon_regret.md:"
cat "$out/abandon_regret.md"
[ $rc -eq 0 ] || tail -20 "$out/abandon_regret.log"
exit $rc

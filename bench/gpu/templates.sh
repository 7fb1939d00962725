#!/usr/bin/env bash
# On the GPU machine, in one run (issue 21's targets): `ktune gemm` in bf16 on the plain shapes
# (bench/gpu/run.sh's and the decode shapes), on unaligned shapes (N or K odd or not a multiple
# of 8) and with the epilogues cuBLASLt does not fuse (GELU, SiLU, bias + residual) on LLM
# projection shapes; then PyTorch Inductor's max-autotune on the fused problems
# (bench/gpu/inductor_gemm_anchor.py); then summary.md, one table per target group with
# PASS/FAIL per target (bench/gpu/templates_summary.py, from each run's --json-log). Every
# candidate is timed kernel-only as a CUDA graph of $KTUNE_GRAPH_CALLS calls (10), as Inductor's
# anchor replays graphs. A problem that fails or times out is logged and the run goes on.
# Reads gpu-bundle/ (bench/gpu/bundle.sh); writes to OUTDIR: problems.tsv, tune-<problem>.log
# (the AUTOTUNE table) and .jsonl, inductor-templates.jsonl (.err), summary.md.
#
#   bash bench/gpu/templates.sh OUTDIR
#   KTUNE_TEMPLATES_GROUPS="plain unaligned fused inductor"  the groups to run (the default: all;
#       Inductor takes ~5-30 s per problem). A run replaces the results of the groups it runs and
#       keeps the others', so that the groups can run as separate commands into one OUTDIR.
#   KTUNE_INDUCTOR_SHAPES="128x14336x4096"           Inductor on these fused shapes only
#   KTUNE_INDUCTOR_TIMEOUT=300, KTUNE_PROBLEM_TIMEOUT=120  seconds, the whole Inductor run and
#                                                    one `ktune gemm`
#   KTUNE_REGRET_ROUNDS=N                            also re-measure the fastest side by side
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: templates.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
ktune=$bundle/bin/ktune
graph_calls=${KTUNE_GRAPH_CALLS:-10}
groups=${KTUNE_TEMPLATES_GROUPS:-plain unaligned fused inductor}
problem_timeout=${KTUNE_PROBLEM_TIMEOUT:-120}

plain_shapes=(4096x4096x4096 8192x8192x8192 1024x1024x1024 32x8192x8192 2048x2048x8192
              16x4096x4096 128x14336x4096 8192x32x8192)
# 777x1333x2049: N and K odd; 4095x4097x4093: all three odd; 1000x1001x1024: only N odd;
# 4096x4098x4090, 778x1334x2050: even, not multiples of 8 (the wgmma template's 4-byte copies).
unaligned_shapes=(777x1333x2049 4095x4097x4093 1000x1001x1024 4096x4098x4090 778x1334x2050)
fused_shapes=(4096x14336x4096 128x14336x4096 4096x4096x4096)
fused_epilogues=(gelu silu "bias,residual")

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "graph calls per timed run: $graph_calls; groups: $groups"
} | tee -a "$out/run.txt"

[ -x "$ktune" ] || { echo "error: $ktune missing: run bench/gpu/bundle.sh here first" >&2; exit 1; }
cache=$(mktemp -d)  # one code cache for the run: each shape tunes cold, compiles are shared
trap 'rm -rf "$cache"' EXIT
# The rows of the groups not run now, kept.
tsv=$out/problems.tsv
if [ -f "$tsv" ]; then
  awk -F'\t' -v run=" $groups " 'index(run, " " $1 " ") == 0' "$tsv" >"$tsv.kept"
  mv "$tsv.kept" "$tsv"
else
  printf '# group\tshape\tepilogue\texit\twall_ms\tjson_log\n' >"$tsv"
fi

# tune GROUP SHAPE EPILOGUE: one `ktune gemm`, its row appended to problems.tsv.
tune() {
  local group=$1 shape=$2 epilogue=$3 m n k tag start end rc extra=()
  IFS=x read -r m n k <<<"$shape"
  tag=$group-$shape-${epilogue//,/_}
  rm -f "$out/tune-$tag.jsonl"
  [ "${KTUNE_REGRET_ROUNDS:-0}" != 0 ] && extra=(--regret-rounds "$KTUNE_REGRET_ROUNDS")
  start=$(date +%s%N)
  timeout "$problem_timeout" "$ktune" --cache-dir "$cache" gemm --m "$m" --n "$n" --k "$k" \
    --dtype bf16 --epilogue "$epilogue" --graph-calls "$graph_calls" \
    --json-log "$out/tune-$tag.jsonl" "${extra[@]}" >"$out/tune-$tag.log" 2>&1
  rc=$?
  end=$(date +%s%N)
  printf '%s\t%s\t%s\t%d\t%d\t%s\n' "$group" "$shape" "$epilogue" "$rc" \
    $(((end - start) / 1000000)) "tune-$tag.jsonl" >>"$tsv"
  printf '== %s %s %s: exit %d, wall %d ms\n' "$group" "$shape" "$epilogue" "$rc" \
    $(((end - start) / 1000000)) | tee -a "$out/run.txt"
  grep -E '^(Pick|cuBLAS)|^  best ' "$out/tune-$tag.log" | tee -a "$out/run.txt"
}

for group in $groups; do
  case $group in
    plain) for s in "${plain_shapes[@]}"; do tune plain "$s" none; done ;;
    unaligned) for s in "${unaligned_shapes[@]}"; do tune unaligned "$s" none; done ;;
    fused)
      for s in "${fused_shapes[@]}"; do
        for e in "${fused_epilogues[@]}"; do tune fused "$s" "$e"; done
      done
      ;;
    inductor) ;;  # below, after the ktune groups
    *) echo "error: KTUNE_TEMPLATES_GROUPS: unknown group '$group'" | tee -a "$out/run.txt" ;;
  esac
done

if [[ " $groups " == *" inductor "* ]]; then
  read -ra inductor_shapes <<<"${KTUNE_INDUCTOR_SHAPES:-${fused_shapes[*]}}"
  echo "== inductor: ${inductor_shapes[*]}" | tee -a "$out/run.txt"
  # One process for every problem (torch's import and Triton's start-up once); its rows are
  # flushed one by one, so a timeout keeps what finished.
  PYTHONUNBUFFERED=1 timeout "${KTUNE_INDUCTOR_TIMEOUT:-300}" python3 \
    "$root/bench/gpu/inductor_gemm_anchor.py" --epilogues gelu,silu,bias_residual \
    "${inductor_shapes[@]}" 2>"$out/inductor-templates.err" \
    | tee "$out/inductor-templates.jsonl" | tee -a "$out/run.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || echo "inductor: exit $rc (see inductor-templates.err)" | tee -a "$out/run.txt"
fi

python3 "$root/bench/gpu/templates_summary.py" "$out" >"$out/summary.md"
cat "$out/summary.md"

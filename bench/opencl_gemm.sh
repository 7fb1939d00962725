#!/usr/bin/env bash
# The OpenCL-on-PoCL figures of docs/benchmarks.md, side by side in one run: per shape,
# `ktune opencl-gemm` tunes the f32 OpenCL GEMM template (kernels/opencl/gemm.cl) on PoCL's CPU
# device, cold (compile + tune) and again from the tuning cache; then `ktune tune` tunes the CPU
# template (examples/matmul_cpu/matmul.cpp, AVX2 space: VEC 8) and OpenBLAS on the same shapes.
# Prints a markdown section to paste into docs/benchmarks.md.
# Usage: bench/opencl_gemm.sh [BUILD]   (shapes: $KTUNE_OPENCL_SHAPES, default "512x512x512
# 1024x1024x1024")
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ktune=$build/bin/ktune
shapes=${KTUNE_OPENCL_SHAPES:-512x512x512 1024x1024x1024}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Cold means cold: PoCL keeps compiled kernels in its own cache (~/.cache/pocl) too.
export POCL_CACHE_DIR=$work/pocl

now() { date +%s.%N; }

# The CPU side: the template over matmul_bias_relu.yaml's space (without its epilogue) and OpenBLAS.
{
  cat <<EOF
name: matmul
kernel: {source: $PWD/examples/matmul_cpu/matmul.cpp, entry: matmul, flags: [-fopenmp]}
args:
  - {name: C, role: out, dtype: f32, shape: [M, N]}
  - {name: A, role: in, dtype: f32, shape: [M, K]}
  - {name: B, role: in, dtype: f32, shape: [K, N]}
  - {name: M, dtype: i32, value: M}
  - {name: N, dtype: i32, value: N}
  - {name: K, dtype: i32, value: K}
problems:
EOF
  for shape in $shapes; do
    IFS=x read -r m n k <<<"$shape"
    echo "  - {name: s$shape, M: $m, N: $n, K: $k}"
  done
  cat <<EOF
params: {VEC: [8], MR: [4, 8], NV: [2, 4], KC: [256, 512], UNROLL: [4], LOOP_ORDER: [0, 1],
         PACK_B: [0, 1]}
restrictions:
  - MR * NV <= 24
  - VEC * NV >= 16
  - PACK_B == 0 || LOOP_ORDER == 0
externs:
  - {name: openblas, kind: openblas.gemm, bind: {c: C, a: A, b: B, m: M, n: N, k: K}}
reference: {extern: openblas}
tolerance: {rtol: 1e-3, atol: 1e-4, max_rel_l2: 1e-5}
EOF
} >"$work/cpu.yaml"

for shape in $shapes; do
  IFS=x read -r m n k <<<"$shape"
  cache=$work/cache-$shape
  t0=$(now)
  "$ktune" --cache-dir "$cache" opencl-gemm --m "$m" --n "$n" --k "$k" -q --top 3 \
    --device "${KTUNE_OPENCL_DEVICE:-Portable:0}" >"$work/ocl-$shape.txt" 2>&1
  t1=$(now)
  "$ktune" --cache-dir "$cache" opencl-gemm --m "$m" --n "$n" --k "$k" -q \
    --device "${KTUNE_OPENCL_DEVICE:-Portable:0}" >"$work/ocl-hit-$shape.txt" 2>&1
  t2=$(now)
  echo "$shape $t0 $t1 $t2" >>"$work/times.txt"
done
"$ktune" --cache-dir "$work/cpu-cache" tune "$work/cpu.yaml" -q --json-log "$work/cpu.jsonl" \
  >"$work/cpu.txt" 2>&1

echo "## OpenCL: f32 GEMM on PoCL against the CPU template and OpenBLAS ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;"
echo "PoCL $(dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo '?');" \
  "OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?');" \
  "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/opencl_gemm.sh\`."
echo
python3 - "$work" $shapes <<'EOF'
import json, re, sys, pathlib
work = pathlib.Path(sys.argv[1])
times = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(work / "times.txt")}
cpu = {}
for line in open(work / "cpu.jsonl"):
    r = json.loads(line)
    if r.get("event") != "candidate" or r["outcome"] != "ok":
        continue
    shape = r["problem"].split("(s")[1].rstrip(")")
    best = cpu.setdefault(shape, {"openblas": None, "template": None, "name": ""})
    ms = r["median_ns"] / 1e6
    if r["name"] == "openblas":
        best["openblas"] = ms
    elif best["template"] is None or ms < best["template"]:
        best["template"], best["name"] = ms, r["name"]
print("| shape | OpenCL pick on PoCL | ms | GFLOP/s | cold tune s | hit s | best CPU template ms "
      "| OpenBLAS ms | OpenCL / CPU template | OpenCL / OpenBLAS |")
print("|---|---|---|---|---|---|---|---|---|---|")
for shape in sys.argv[2:]:
    m, n, k = (int(x) for x in shape.split("x"))
    text = (work / f"ocl-{shape}.txt").read_text()
    pick = re.search(r"^Pick: (\S+) at .*\(([\d.]+) ms\)", text, re.M)
    if not pick:
        print(f"| {shape} | failed: {text.strip().splitlines()[-1]} |")
        continue
    name, ms = pick.group(1), float(pick.group(2))
    t0, t1, t2 = times[shape]
    c = cpu.get(shape, {})
    tmpl, blas = c.get("template"), c.get("openblas")
    params = name.removeprefix("opencl_gemm_")
    print(f"| {shape} | {params} | {ms:.3f} | {2 * m * n * k / ms / 1e6:.1f} | {t1 - t0:.1f} | "
          f"{t2 - t1:.3f} | {tmpl:.3f} | {blas:.3f} | {ms / tmpl:.2f} | {ms / blas:.2f} |")
EOF
echo
echo "OpenCL tables (fastest 3 of each):"
echo
echo '```'
for shape in $shapes; do grep -A4 '^AUTOTUNE' "$work/ocl-$shape.txt"; grep -E '^[0-9]+ candidates' "$work/ocl-$shape.txt"; done
echo '```'

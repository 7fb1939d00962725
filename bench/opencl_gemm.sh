#!/usr/bin/env bash
# The OpenCL figures of docs/benchmarks.md: `ktune opencl-gemm` tuning the f32 OpenCL GEMM
# template on PoCL (the CPU) at 512^3, cold (compile + tune) and from the tuning cache, next to
# the CPU template and OpenBLAS on the same problem (examples/matmul_cpu's square512, through
# `ktune tune`). Prints a markdown section to paste into docs/benchmarks.md.
# Usage: bench/opencl_gemm.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ktune=$build/bin/ktune
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

t0=$(date +%s.%N)
"$ktune" --cache-dir "$cache" opencl-gemm --m 512 --n 512 --k 512 -q --top 5 >"$cache/ocl.txt" 2>&1
t1=$(date +%s.%N)
"$ktune" --cache-dir "$cache" opencl-gemm --m 512 --n 512 --k 512 -q >"$cache/ocl2.txt" 2>&1
t2=$(date +%s.%N)
"$ktune" --cache-dir "$cache" tune examples/matmul_cpu/matmul.yaml -q >"$cache/cpu.txt" 2>&1 || true

echo "### OpenCL: GEMM 512x512x512 f32 on PoCL against the CPU template and OpenBLAS ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;"
echo "PoCL $(dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo '?'); OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?');"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/opencl_gemm.sh\`."
echo
echo "Tuning wall time: cold $(python3 -c "print(f'{$t1 - $t0:.1f}')") s, tuning-cache hit $(python3 -c "print(f'{$t2 - $t1:.3f}')") s."
echo
echo '```'
cat "$cache/ocl.txt"
echo '```'
echo
echo "CPU side (\`ktune tune examples/matmul_cpu/matmul.yaml\`, square512 is the 512^3 problem):"
echo
echo '```'
grep -A8 -i "square512" "$cache/cpu.txt" | head -20 || true
echo '```'

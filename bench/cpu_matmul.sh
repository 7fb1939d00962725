#!/usr/bin/env bash
# The CPU figures of docs/benchmarks.md, from one run on this machine:
#   1. tuning wall time of examples/matmul_cpu: cold (empty caches), warm code cache (--retune:
#      nothing to compile, everything measured again; isolated in workers, and --in-process) and
#      tuning-cache hit;
#   2. each problem's pick against OpenBLAS, re-measured side by side (bench/pick_vs_extern.cpp),
#      three times, since these machines drift between runs, then once with the thread-pool
#      measures undone (idle OpenMP and OpenBLAS threads left spinning).
# Prints a markdown section to paste into docs/benchmarks.md. Usage: bench/cpu_matmul.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
spec=examples/matmul_cpu/matmul.yaml
ktune=$build/bin/ktune
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

seconds() {  # wall seconds of a command, its output discarded
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

cold=$(seconds "$ktune" --cache-dir "$cache" tune "$spec" -q)
warm=$(seconds "$ktune" --cache-dir "$cache" tune "$spec" -q --retune)
warm_in_process=$(seconds "$ktune" --cache-dir "$cache" tune "$spec" -q --retune --in-process)
hit=$(seconds "$ktune" --cache-dir "$cache" tune "$spec" -q)
candidates=$("$ktune" space "$spec" | sed -n 's/^\([0-9]*\) valid configs.*/\1/p')

echo "### CPU: examples/matmul_cpu against OpenBLAS ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB;"
echo "$(c++ --version | head -1); OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null || echo '?');"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/cpu_matmul.sh\`."
echo
echo "Tuning wall time of all 3 problems ($candidates template configs + OpenBLAS each), whole process:"
echo
echo "| cold (compile + tune) | warm code cache (\`--retune\`) | same, \`--in-process\` | tuning-cache hit |"
echo "|---|---|---|---|"
echo "| ${cold} s | ${warm} s | ${warm_in_process} s | ${hit} s |"
echo
echo "Pick against OpenBLAS, medians of 31 interleaved ABBA rounds, caches flushed before each run;"
echo "the last column above 1 means the pick is faster. Three runs of the same comparison:"
for run in 1 2 3; do
  echo
  echo "Run $run:"
  echo
  "$build/bin/pick_vs_extern" "$spec" "$cache" 31
done

echo
echo "The same comparison with both thread-pool measures undone through the environment"
echo "(\`OMP_WAIT_POLICY=active OPENBLAS_THREAD_TIMEOUT=28\`: idle OpenMP and OpenBLAS threads spin):"
echo
OMP_WAIT_POLICY=active OPENBLAS_THREAD_TIMEOUT=28 "$build/bin/pick_vs_extern" "$spec" "$cache" 31

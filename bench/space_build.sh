#!/usr/bin/env bash
# Time to build the valid set of three large search spaces (bench/space_build/spaces.json): ktune
# (bench/space_build.cpp: SearchSpace::stats to count, SearchSpace::enumerate_indices to list every
# valid config as value indices, SearchSpace::enumerate to make a Config of each) against Kernel Tuner's search-space construction (kernel_tuner.searchspace.
# Searchspace, its default python-constraint2 solver), side by side in one run, best of REPEATS
# each; the valid counts must agree. Needs kernel_tuner for a python3 that has it ($PYTHON;
# `pip install --user --no-index --find-links /work/main/.whl kernel_tuner` on a cp312 Python).
# Prints a markdown section for docs/benchmarks.md. Usage: bench/space_build.sh [BUILD] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeats=${2:-3}
python=${PYTHON:-python3}
spaces=bench/space_build/spaces.json
ours=$(mktemp)
theirs=$(mktemp)
trap 'rm -f "$ours" "$theirs"' EXIT

"$build/bin/space_build" "$spaces" "$repeats" >"$ours"
"$python" bench/space_build/kt_space_build.py "$spaces" --repeats "$repeats" >"$theirs"

echo "### Search-space construction: ktune against Kernel Tuner ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores (shared with other jobs);"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'), Kernel Tuner $("$python" -c 'import kernel_tuner; print(kernel_tuner.__version__)' 2>/dev/null || echo '?')"
echo "($("$python" --version)). Command: \`bench/space_build.sh $build $repeats\` (best of $repeats)."
echo
python3 - "$ours" "$theirs" "$spaces" <<'PY'
import json, sys
ours = {j["name"]: j for j in map(json.loads, open(sys.argv[1]))}
theirs = {j["name"]: j for j in map(json.loads, open(sys.argv[2]))}
spaces = json.load(open(sys.argv[3]))
print("| space | product | valid (ktune / KT) | ktune count (`stats`) | ktune build "
      "(`enumerate_indices`) | ktune `enumerate` (Configs) | Kernel Tuner build | KT / ktune build |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
bad = False
ms = lambda wall, cpu: f"{wall*1e3:.1f} ms ({cpu*1e3:.1f} ms CPU)"
spread = []
for s in spaces:
    o, t = ours[s["name"]], theirs[s["name"]]
    same = o["valid"] == o["enumerated"] == o["configs"] == t["valid"]
    bad |= not same
    print(f"| {s['name']} | {o['product']:.3g} | {o['valid']} / {t['valid']}{'' if same else ' DIFFER'} "
          f"| {ms(o['count_seconds'], o['count_cpu_seconds'])} "
          f"| {ms(o['enumerate_seconds'], o['enumerate_cpu_seconds'])} "
          f"| {ms(o['configs_seconds'], o['configs_cpu_seconds'])} "
          f"| {ms(t['seconds'], t['cpu_seconds'])} "
          f"| {t['seconds']/o['enumerate_seconds']:.0f}x ({t['cpu_seconds']/o['enumerate_cpu_seconds']:.0f}x CPU) |")
    spread.append(f"{s['name']}: ktune build {o['enumerate_cpu_seconds']*1e3:.1f}-"
                  f"{o['enumerate_worst_cpu_seconds']*1e3:.1f} ms CPU "
                  f"({o['enumerate_seconds']*1e3:.1f}-{o['enumerate_worst_seconds']*1e3:.1f} ms wall), "
                  f"Kernel Tuner {min(t['all_cpu_seconds'])*1e3:.0f}-{max(t['all_cpu_seconds'])*1e3:.0f} ms CPU "
                  f"({min(t['all_seconds'])*1e3:.0f}-{max(t['all_seconds'])*1e3:.0f} ms wall)")
print()
print("Spread over the repeats (best-worst): " + "; ".join(spread) + ".")
sys.exit(1 if bad else 0)
PY

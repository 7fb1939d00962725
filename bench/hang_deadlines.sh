#!/usr/bin/env bash
# Issue 19's case of hanging configs: a CPU spec of 100 configs (test/data/faults/hang_grid.cpp,
# V = 0..99) of which 8 spin forever (V % 12 == 11), tuned cold with the default deadlines
# (from the best candidate so far once one is measured) and with --run-timeout-ms 3000. Before
# issue 19 the default deadline came from the reference alone (10 s floor a request): 836 s, 830
# of them waiting on the hangs. Prints a markdown section for docs/benchmarks.md.
# Usage: bench/hang_deadlines.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ktune=$build/bin/ktune
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp test/data/faults/hang_grid.cpp test/data/faults/faults_ref.cpp "$dir"/
cat >"$dir/spec.yaml" <<YAML
name: add
kernel: {source: hang_grid.cpp, entry: add}
args:
  - {name: C, role: out, dtype: f32, shape: [n]}
  - {name: A, role: in, dtype: f32, shape: [n]}
  - {name: B, role: in, dtype: f32, shape: [n]}
  - {name: n, dtype: i32, value: n}
problems:
  - {n: 4096}
params:
  V: [$(seq -s ', ' 0 99)]
  HANG_EVERY: [12]
reference:
  kernel: {source: faults_ref.cpp, entry: add_ref}
YAML

# One cold run (fresh code and tuning caches); its wall time and the table's summary line.
tune() {
  local cache t0 t1 out
  cache=$(mktemp -d -p "$dir")
  t0=$(date +%s.%N)
  out=$("$ktune" --cache-dir "$cache" tune "$dir/spec.yaml" -q "$@" 2>&1)
  t1=$(date +%s.%N)
  printf '%s | %s\n' "$(python3 -c "print(f'{$t1 - $t0:.1f}')")" \
    "$(grep -o '[0-9]* candidates (.*benchmarking' <<<"$out")"
}

default=$(tune)
override=$(tune --run-timeout-ms 3000)

echo "### Hanging configs: 100 CPU configs, 8 of which hang ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores (shared);"
echo "ktune $(git rev-parse --short HEAD 2>/dev/null || echo '?'). Command: \`bench/hang_deadlines.sh\`."
echo
echo "| deadline | wall s (cold, whole process) | summary |"
echo "|---|---:|---|"
echo "| before issue 19: from the reference, 10 s floor | 836 | (issue 19) |"
echo "| before issue 19: \`--run-timeout-ms 3000\` | 68 | (issue 19) |"
echo "| default: from the best candidate so far | ${default% | *} | ${default#* | } |"
echo "| \`--run-timeout-ms 3000\` | ${override% | *} | ${override#* | } |"

#!/usr/bin/env bash
# Tuning on several devices at once (`--devices`, issue 23): the same spec tuned with each device
# list of LISTS, REPEATS times (the lists alternating), the code cache warm (one untimed run
# first), the tuning cache off. Per list: the whole tuning's wall time (`seconds` of --json) and
# its spread, the verify+measure time (`bench_s` of the records) and the picks; the speed-up is
# the first list's median over each list's. Prints a markdown section for docs/benchmarks.md.
#
# Usage: [LISTS="0 0,1"] [ARGS="..."] [KTUNE_BIN=DIR] bench/devices.sh SPEC [BUILD] [REPEATS]
#   CPU: LISTS="0 0,1" compares one 1-core device with two (both tune for one core: the picks
#   are comparable, and keyed alike). GPUs: LISTS="0 0,1 all".
# KTUNE_MACHINE_NOTE replaces "shared with other jobs" in the machine line.
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:?usage: bench/devices.sh SPEC [BUILD] [REPEATS]}
build=${2:-build}
repeats=${3:-3}
bin=${KTUNE_BIN:-$build/bin}
lists=${LISTS:-0 0,1}
args=${ARGS:-}
export KTUNE_WORKER=$bin/ktune-worker
command="LISTS=\"$lists\" bench/devices.sh $spec $build $repeats"
[ -z "$args" ] || command="ARGS=\"$args\" $command"
version=$(git rev-parse --short HEAD 2>/dev/null || "$bin/ktune" --version | sed 's/^ktune //')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# shellcheck disable=SC2086  # ARGS is a list of flags
"$bin/ktune" --cache-dir "$out/cache" tune "$spec" --no-cache --devices "${lists%% *}" -q $args \
  >/dev/null 2>&1 || true  # warm the code cache
for r in $(seq 1 "$repeats"); do
  order=$lists
  # Alternate which list goes first, so that a drift of the machine hits them alike.
  [ $((r % 2)) -eq 0 ] && order=$(echo "$lists" | tr ' ' '\n' | tac | tr '\n' ' ')
  for l in $order; do
    # shellcheck disable=SC2086
    "$bin/ktune" --cache-dir "$out/cache" tune "$spec" --no-cache --devices "$l" --json -q $args \
      >"$out/$l.$r.json" 2>"$out/$l.$r.err" || {
      echo "devices.sh: --devices $l failed:" >&2
      cat "$out/$l.$r.err" >&2
      exit 1
    }
  done
done

echo "### Several devices at once: \`$(basename "$spec")\` ($(date -u +%Y-%m-%d))"
echo
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, ${KTUNE_MACHINE_NOTE:-shared with other jobs}."
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd, -)."
fi
echo "ktune $version. Command: \`$command\`."
echo
python3 - "$out" "$repeats" $lists <<'EOF'
import json, statistics, sys
out, repeats, lists = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows, picks = [], {}
for l in lists:
    wall, bench = [], []
    for r in range(1, repeats + 1):
        doc = json.load(open(f"{out}/{l}.{r}.json"))
        wall.append(doc["seconds"])
        bench.append(sum(p["record"]["bench_s"] for p in doc["problems"] if p["status"] == "ok"))
        picks.setdefault(l, []).append(tuple(p.get("pick") for p in doc["problems"]))
    rows.append((l, wall, bench))
base = statistics.median(rows[0][1])
print("| --devices | tuning wall s (median, min-max) | verify+measure s (median) | speed-up | picks the same in every run |")
print("| --- | --- | --- | --- | --- |")
for l, wall, bench in rows:
    m = statistics.median(wall)
    same = "yes" if len(set(picks[l])) == 1 else f"no: {len(set(picks[l]))} different sets"
    print(f"| {l} | {m:.2f} ({min(wall):.2f}-{max(wall):.2f}) | {statistics.median(bench):.2f} | "
          f"{base / m:.2f}x | {same} |")
first = picks[lists[0]][0]
agree = sum(p == first for l in lists for p in picks[l])
total = sum(len(picks[l]) for l in lists)
print()
print(f"Picks equal to the first run's (`--devices {lists[0]}`): {agree} of {total} runs "
      f"({len(first)} problem(s) each).")
EOF

#!/usr/bin/env bash
# The CPU demo's spec (examples/matmul_cpu/matmul.yaml) at large K, with its tolerance and with
# the one before rms_atol (docs/spec.md, tolerance): each candidate's outcome per problem. With
# atol alone every correct template was `wrong_result` at K = 16384; with rms_atol none is.
#
#   bash bench/demo_large_k.sh [KTUNE]   (default build/bin/ktune)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ktune=${1:-$root/build/bin/ktune}
[ -x "$ktune" ] || { echo "error: $ktune: not an executable (make demo builds it)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for variant in shown old; do
  python3 - "$root/examples/matmul_cpu" "$work/$variant.yaml" "$variant" <<'PY'
import re, sys
folder, out, variant = sys.argv[1:]
s = open(f"{folder}/matmul.yaml").read()
s = re.sub(r"problems:\n(  - .*\n)+",
           "problems:\n  - {name: k16384, M: 64, N: 64, K: 16384}\n"
           "  - {name: k30001, M: 37, N: 61, K: 30001}\n"
           "  - {name: k65536, M: 32, N: 64, K: 65536}\n", s)
s = s.replace("source: matmul.cpp", f"source: {folder}/matmul.cpp")
if variant == "old":
    s = re.sub(r"tolerance: \{.*\}", "tolerance: {rtol: 1e-3, atol: 1e-4, max_rel_l2: 1e-5}", s)
open(out, "w").write(s)
PY
  "$ktune" --cache-dir "$work/cache" tune "$work/$variant.yaml" --no-cache --budget-ms 5 -q \
    --json-log "$work/$variant.jsonl" >"$work/$variant.log" 2>&1
  echo "== $variant tolerance: $(grep '^tolerance' "$work/$variant.yaml")"
  python3 - "$work/$variant.jsonl" <<'PY'
import collections, json, sys
counts = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("event") == "candidate":
        counts[r["problem"]][r["outcome"]] += 1
for problem, c in counts.items():
    print(f"  {problem}: " + ", ".join(f"{o} {n}" for o, n in sorted(c.items())))
PY
done

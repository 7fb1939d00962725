#!/usr/bin/env bash
# On the GPU machine: every candidate of `ktune gemm` on COUNT seeded random shapes (edge sizes
# such as 1, 7, 63, 65, 1023, 4097 mixed with others), dtypes and epilogue chains, verified
# against cuBLAS + the host's epilogue as every tuning verifies them. Prints each problem's
# outcomes and lists every candidate whose outcome is neither ok, abandoned nor unsupported (a
# template that runs and is wrong, crashes or hangs on a shape it was offered for). Exits 1 if
# there is one, or if a tuning failed.
#
#   bash bench/gpu/shape_sweep.sh OUTDIR [COUNT] [SEED]   (default 24 shapes, seed 1)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: shape_sweep.sh OUTDIR [COUNT] [SEED]}
count=${2:-24}
seed=${3:-1}
[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "error: COUNT: expected a positive integer, got '$count'" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "error: SEED: expected a non-negative integer, got '$seed'" >&2; exit 2; }
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
status=0
# One problem per line: M N K DTYPE EPILOGUE.
python3 - "$count" "$seed" >"$out/problems.txt" <<'PY'
import random, sys
count, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
edge = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 255, 257, 1000, 1023, 1025,
        2047, 2049, 4097]
epilogues = ["none", "bias", "rowbias", "relu", "gelu", "silu", "residual", "scale=0.5",
             "bias,gelu", "bias,residual", "scale=2,silu", "rowbias,relu,residual"]
dtypes = ["bf16", "f16", "f32"]
for i in range(count):
    def size():
        return rng.choice(edge) if rng.random() < 0.6 else rng.randint(1, 3000)
    m, n, k = size(), size(), size()
    print(m, n, k, dtypes[i % 3], epilogues[rng.randrange(len(epilogues))])
PY
while read -r m n k dtype epi; do
  tag="${m}x${n}x${k}-$dtype-${epi//[,=]/_}"
  if ! timeout 300 "$bundle/bin/ktune" --cache-dir "$cache" gemm --m "$m" --n "$n" --k "$k" \
      --dtype "$dtype" --epilogue "$epi" --no-cache --no-abandon --budget-ms 2 \
      --json-log "$out/$tag.jsonl" >"$out/$tag.log" 2>&1; then
    echo "error: $tag: the tuning failed (see $out/$tag.log)"
    status=1
  fi
done <"$out/problems.txt"
python3 - "$out" <<'PY' || status=1
import collections, glob, json, os, sys
bad = []
for path in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    tag = os.path.basename(path)[:-6]
    counts = collections.Counter()
    for line in open(path):
        r = json.loads(line)
        if r.get("event") != "candidate":
            continue
        counts[r.get("outcome")] += 1
        if r.get("outcome") not in ("ok", "abandoned", "unsupported"):
            bad.append((tag, r.get("name"), r.get("outcome"), (r.get("message") or "")[:160]))
    print(f"{tag}: " + ", ".join(f"{o} {c}" for o, c in sorted(counts.items())))
print(f"\n{len(bad)} candidate(s) neither ok, abandoned nor unsupported")
for b in bad:
    print("  " + " | ".join(map(str, b)))
sys.exit(1 if bad else 0)
PY
exit $status

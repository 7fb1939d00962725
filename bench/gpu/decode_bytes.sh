#!/usr/bin/env bash
# On the GPU machine: does a decode GEMM's time follow the bytes of B or the blocks per SM?
# (docs/benchmarks.md, "The decode shape's bound"). `ktune gemm` at M=128, K=4096 over N from
# 96 to 132 tiles of 128 columns (every candidate measured to its budget, graph-timed), REPS
# times each, then bench/gpu/read_bandwidth.py: what torch's read reduction, a copy, and
# cuBLAS through torch reach over the same 117 MB. Prints, per N, the best template and the
# best library GEMM in us and in TB/s of B.
#
#   bash bench/gpu/decode_bytes.sh OUTDIR [REPS]   (default 2)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: decode_bytes.sh OUTDIR [REPS]}
reps=${2:-2}
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "error: REPS: expected a positive integer, got '$reps'" >&2; exit 2; }
mkdir -p "$out"
# shellcheck source=bench/gpu/env.sh
. "$root/bench/gpu/env.sh"
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
for rep in $(seq "$reps"); do
  for n in 12288 13312 14336 15360 16384 16896; do
    "$bundle/bin/ktune" --cache-dir "$cache" gemm --m 128 --n "$n" --k 4096 --dtype bf16 \
      --no-cache --no-abandon --graph-calls 10 --json-log "$out/n$n-$rep.jsonl" \
      >"$out/n$n-$rep.log" 2>&1 || echo "error: N=$n failed (see $out/n$n-$rep.log)" >&2
  done
done
python3 - "$out" <<'PY'
import glob, json, os, re, sys
print("| N | tiles of 128 | rep | best template us | TB/s of B | best library us | TB/s of B |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for path in sorted(glob.glob(sys.argv[1] + "/n*.jsonl"), key=lambda p: tuple(map(int, re.findall(r"\d+", os.path.basename(p))))):
    n, rep = map(int, re.findall(r"\d+", os.path.basename(path)))
    med = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("event") == "candidate" and "median_ns" in r:
            med[r["name"]] = r["median_ns"] / 1e3
    tm = min(v for k, v in med.items() if k.startswith(("cuda_", "restride+")))
    lib = min(v for k, v in med.items() if not k.startswith(("cuda_", "restride+")))
    b = 4096 * n * 2
    print(f"| {n} | {n // 128} | {rep} | {tm:.1f} | {b / tm / 1e6:.2f} | {lib:.1f} | {b / lib / 1e6:.2f} |")
PY
python3 "$root/bench/gpu/read_bandwidth.py" | tee "$out/read_bandwidth.txt"

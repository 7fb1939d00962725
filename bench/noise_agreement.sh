#!/usr/bin/env bash
# Pick agreement over repeated exhaustive tunings with a competing load on the cores ktune uses
# (issue 16, class 11): for each ktune given, RUNS tunings of one problem of a CPU spec, each
# with LOAD bursty loaders (bench/noise_load.py) pinned to the same CORES; then
# bench/noise_agreement.py reports the agreement of the picks, the Spearman rank correlation
# of the candidates' times between runs, each pick's slowdown against the best candidate of a
# neutral ranking, and the tuning time.
#
#   bench/noise_agreement.sh before=/path/to/old/ktune after=build/bin/ktune
#
# Each ktune needs its ktune-worker beside it ("before": a build of the commit before the
# change). The code cache is filled by one untimed run first, so the runs time tuning, not
# compiling. Environment: RUNS (5), LOAD (2), CORES (0,1), SPEC
# (examples/matmul_cpu/matmul.yaml), PROBLEM (square512), OUT (bench-out/noise_agreement),
# EXTRA (more ktune flags).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LOAD=${LOAD:-2}
CORES=${CORES:-0,1}
SPEC=${SPEC:-examples/matmul_cpu/matmul.yaml}
PROBLEM=${PROBLEM:-square512}
OUT=${OUT:-bench-out/noise_agreement}
EXTRA=${EXTRA:-}
ncores=$(awk -F, '{print NF}' <<<"$CORES")
mkdir -p "$OUT"
: >"$OUT/times.txt"
loaders=()
stop_load() {
  for p in "${loaders[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${loaders[@]}"; do wait "$p" 2>/dev/null || true; done
  loaders=()
}
trap stop_load EXIT
for arg in "$@"; do
  label=${arg%%=*}
  ktune=${arg#*=}
  cache=$(mktemp -d)
  # Untimed, on every core: compiles every candidate into the code cache of $cache.
  "$ktune" tune "$SPEC" --problem "$PROBLEM" --cache-dir "$cache" -q $EXTRA \
    >"$OUT/$label-compile.txt" 2>&1
  for i in $(seq 1 "$RUNS"); do
    for j in $(seq 1 "$LOAD"); do
      taskset -c "$CORES" python3 bench/noise_load.py --seed "$i$j" &
      loaders+=($!)
    done
    t0=$(date +%s.%N)
    taskset -c "$CORES" "$ktune" tune "$SPEC" --problem "$PROBLEM" --cache-dir "$cache" --retune \
      -j "$ncores" -q --json-log "$OUT/$label-$i.jsonl" $EXTRA >"$OUT/$label-$i.txt" 2>&1
    t1=$(date +%s.%N)
    stop_load
    echo "$label $i $(awk "BEGIN{print $t1 - $t0}")" >>"$OUT/times.txt"
    echo "$label run $i: $(grep -o 'Selected [^ ]*' "$OUT/$label-$i.txt")" >&2
  done
  rm -rf "$cache"
done
python3 bench/noise_agreement.py "$OUT"

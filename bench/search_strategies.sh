#!/usr/bin/env bash
# Issue 19's benchmark that decides the default search strategy: record full spaces (every valid
# config measured, no abandonment), export them as T4 files, and compare every ktune strategy
# (`ktune simulate`, 50 seeds) with Kernel Tuner's strategies in its simulation mode on the same
# data (search_strategies/kt_simulate.py).
#
#   bench/search_strategies.sh record-cpu OUTDIR         the CPU matmul and conv2d (here)
#   bench/search_strategies.sh record-gpu OUTDIR [KTUNE] the CUDA GEMM and conv2d (GPU machine)
#   bench/search_strategies.sh compare DIR...            every *.t4.json in the DIRs
#
# The ktune binary: $KTUNE, else (record-gpu) the argument, else build/bin/ktune. Kernel Tuner's
# Python: $PY (default /root/.pyenv/versions/3.12.1/bin/python3, else python3). $SEEDS (50).
# The recorded CPU spaces are committed in bench/search_strategies/recorded/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
mode="${1:-}"
shift || true
seeds="${SEEDS:-50}"

die() { echo "search_strategies.sh: $*" >&2; exit 2; }

# record SPEC SPACE OUTDIR [extra ktune tune flags]: an exhaustive tuning of the spec's one
# problem into a fresh cache, exported as OUTDIR/SPACE.t4.json.
record() {
  local spec="$1" space="$2" out="$3"
  shift 3
  local cache
  cache="$(mktemp -d "${TMPDIR:-/tmp}/ktune_strat.XXXXXX")"
  echo "== $space: $spec (cache $cache)" >&2
  local t0=$SECONDS
  "$ktune" --cache-dir "$cache" tune "$spec" --strategy exhaustive --no-abandon "$@" >&2
  echo "== $space: tuned in $((SECONDS - t0)) s" >&2
  "$ktune" --cache-dir "$cache" cache export --format t4 "$out/$space.t4.json"
  rm -rf "$cache"
}

case "$mode" in
  record-cpu)
    out="${1:?record-cpu OUTDIR}"
    mkdir -p "$out"
    ktune="${KTUNE:-$root/build/bin/ktune}"
    # One OpenMP thread: the matmul's threads would share the 2 cores with the compile workers
    # and other jobs, and a recorded space should hold each config's own speed, not the load's.
    export OMP_NUM_THREADS=1
    record "$here/search_strategies/matmul_wide.yaml" cpu_matmul "$out" --budget-ms 20 --close-call-band 0
    record "$here/search_strategies/conv2d_cpu.yaml" cpu_conv2d "$out" --budget-ms 20 --close-call-band 0
    ;;
  record-gpu)
    out="${1:?record-gpu OUTDIR [KTUNE]}"
    mkdir -p "$out"
    ktune="${KTUNE:-${2:-$root/build/bin/ktune}}"
    record "$here/search_strategies/gemm_cuda.yaml" cuda_gemm "$out" --close-call-band 0
    record "$here/search_strategies/conv2d_cuda.yaml" cuda_conv2d "$out" --close-call-band 0
    ;;
  compare)
    [ $# -gt 0 ] || die "compare DIR..."
    ktune="${KTUNE:-$root/build/bin/ktune}"
    py="${PY:-/root/.pyenv/versions/3.12.1/bin/python3}"
    [ -x "$py" ] || py=python3
    files=()
    for d in "$@"; do
      for f in "$d"/*.t4.json; do [ -e "$f" ] && files+=("$f"); done
    done
    [ ${#files[@]} -gt 0 ] || die "no *.t4.json in $*"
    echo "### Search strategies on recorded spaces (issue 19; $(date +%F))"
    echo
    echo "Machine: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores;" \
      "ktune $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), Kernel Tuner" \
      "$("$py" -c 'import kernel_tuner; print(kernel_tuner.__version__)' 2>/dev/null || echo absent)."
    echo "Command: \`bench/search_strategies.sh compare $*\` ($seeds seeds, batch 1)."
    for f in "${files[@]}"; do
      "$py" "$here/search_strategies/compare.py" "$f" --ktune "$ktune" --seeds "$seeds"
    done
    ;;
  *)
    sed -n '2,14p' "$0" >&2
    exit 2
    ;;
esac

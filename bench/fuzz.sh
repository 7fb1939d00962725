#!/usr/bin/env bash
# AFL++ over the fuzz targets (fuzz/: the spec reader with its search space, the graph reader,
# the worker protocol's decoder): bench/fuzz.sh [seconds-per-target] [target...]
# (default 600 s each, targets spec graph protocol). Builds them in build-fuzz with an AFL++
# compiler, runs afl-fuzz on each from its seed corpus (fuzz/corpus/<target>) and prints per target
# the executions, paths (queue entries), crashes and hangs. Each crash is replayed once and its
# first lines shown; a hang is replayed with a 10 s limit and counts only when it still hangs
# (a loaded machine makes afl-fuzz's 2 s limit flaky). Exits 1 on a crash or a confirmed hang,
# so that CI (.ci/run) fails on one. Findings stay in build-fuzz/afl/<target>/default/.
#
# The compiler: afl-g++-fast (GCC plugin, persistent mode through libAFLDriver) when its plugin
# loads into this g++; Debian 12's afl++ 4.04c plugin was built against another gcc-12 package
# and refuses to load ("GCC and plugin have incompatible versions"), so there it is afl-g++:
# classic instrumentation by the assembler, one input per process under the forkserver.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec graph protocol)
build=${KTUNE_FUZZ_BUILD:-build-fuzz}

if ! command -v afl-fuzz >/dev/null; then
  echo "bench/fuzz.sh: afl-fuzz not found; install AFL++ (make fuzz-deps)" >&2
  exit 2
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  probe=$(mktemp -d)
  echo 'int main() { return 0; }' >"$probe/p.cpp"
  cxx=afl-g++
  if afl-g++-fast -o "$probe/p" "$probe/p.cpp" >/dev/null 2>&1; then cxx=afl-g++-fast; fi
  rm -rf "$probe"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  # ASan and UBSan (as the asan preset): a read past a buffer or a signed overflow is a crash
  # too, not only a segfault. Through CMake's flags, not AFL_USE_ASAN: ccache sees the flags.
  san="-fsanitize=${KTUNE_FUZZ_SANITIZE:-address,undefined}"
  [ "${KTUNE_FUZZ_SANITIZE-x}" != "" ] || san=""
  CXX=$cxx cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKTUNE_FUZZ=ON \
    -DKTUNE_BUILD_TESTS=OFF "${launcher[@]}" "-DCMAKE_CXX_FLAGS=$san -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=$san" >/dev/null
fi
AFL_QUIET=1 cmake --build "$build" -j "$(nproc)" --target fuzz_all >/dev/null
echo "bench/fuzz.sh: compiler $(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"

# Root in a container: no core_pattern or CPU governor to set up; the machine is shared, so no
# core binding either.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1
export AFL_SKIP_CRASHES=1 AFL_QUIET=1
# Sanitizer findings abort (afl-fuzz counts a crash); no leak check at exit (a fuzz input's
# allocations are not what is under test).
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:symbolize=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1

stat_of() { sed -n "s/^$2 *: *//p" "$1" | head -n 1; }

failed=0
printf '%-9s %8s %12s %9s %7s %8s %6s\n' target seconds execs execs/s paths crashes hangs
for t in "${targets[@]}"; do
  exe=$build/fuzz/fuzz_$t
  args=(-- "$exe" @@)
  if [ -x "${exe}_afl" ]; then args=(-- "${exe}_afl"); fi  # libAFLDriver: persistent, stdin
  out=$build/afl/$t
  rm -rf "$out"
  mkdir -p "$out"
  afl-fuzz -i "fuzz/corpus/$t" -o "$out" -x fuzz/ktune.dict -t 2000 -V "$seconds" \
    "${args[@]}" >"$out/afl-fuzz.log" 2>&1 || {
    echo "bench/fuzz.sh: afl-fuzz failed on $t:" >&2
    tail -n 20 "$out/afl-fuzz.log" >&2
    failed=1
    continue
  }
  stats=$out/default/fuzzer_stats
  crashes=$(find "$out/default/crashes" -name 'id:*' 2>/dev/null | wc -l)
  hangs=0
  for h in "$out"/default/hangs/id:*; do
    [ -e "$h" ] || continue
    if ! "$exe" --timeout 10 "$h" >/dev/null 2>&1; then hangs=$((hangs + 1)); fi
  done
  printf '%-9s %8s %12s %9s %7s %8s %6s\n' "$t" "$(stat_of "$stats" run_time)" \
    "$(stat_of "$stats" execs_done)" "$(stat_of "$stats" execs_per_sec)" \
    "$(stat_of "$stats" corpus_count)" "$crashes" "$hangs/$(stat_of "$stats" saved_hangs)"
  for c in "$out"/default/crashes/id:*; do
    [ -e "$c" ] || continue
    echo "  crash $c:"
    "$exe" "$c" 2>&1 | head -n 3 | sed 's/^/    /' || true
  done
  if [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then failed=1; fi
done
exit $failed

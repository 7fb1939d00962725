#!/bin/sh
# Runs clang-tidy with the repository's .clang-tidy over src/ and tools/ (and the headers they
# include from include/ktune/), using the compile database of a configured build:
#   tools/lint.sh [BUILD_DIR] [FILE_REGEX]      (defaults: build, every file of src/ and tools/)
# Exits non-zero on any finding (.clang-tidy: WarningsAsErrors). JOBS sets the parallelism.
#
# clang-tidy 14 needs three helps with this C++23 code: -std=c++2b (it does not know c++23),
# -Wno-c99-extensions (OpenBLAS's config header uses _Complex), and
# tools/lint/clang14_expected.h force-included in place of libstdc++'s <expected>, which it
# cannot compile (see that header).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
files=${2:-$root/(src|tools)/}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "error: lint: no $build/compile_commands.json; configure first" \
       "(cmake -S $root -B $build)" >&2
  exit 2
fi
tidy=$(command -v run-clang-tidy || command -v run-clang-tidy-14 || true)
if [ -z "$tidy" ]; then
  echo "error: lint: run-clang-tidy not found; install clang-tidy (Debian: clang-tidy)" >&2
  exit 2
fi
exec "$tidy" -quiet -p "$build" -j "${JOBS:-$(nproc)}" \
  -extra-arg=-std=c++2b -extra-arg=-Wno-unknown-warning-option -extra-arg=-Wno-c99-extensions \
  -extra-arg=-include -extra-arg="$root/tools/lint/clang14_expected.h" \
  "$files"

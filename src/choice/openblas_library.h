// OpenBLAS, opened with dlopen the first time an OpenBLAS choice needs it, so that ktune builds
// and runs without it, and so that its threads can be told not to spin for long before it starts.
#pragma once

#include <cblas.h>

#include "ktune/core/status.h"

namespace ktune {

struct OpenBlasLibrary {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  char* (*get_config)() = nullptr;
  int (*get_num_threads)() = nullptr;
};

// The process's OpenBLAS, loaded once (libopenblas.so.0). Before loading it sets
// OPENBLAS_THREAD_TIMEOUT=4 unless the user set it: OpenBLAS's idle threads otherwise spin for
// 2^28 cycles after each call and take a core from whatever candidate is measured next
// (the comparison with this undone is in docs/benchmarks.md, from bench/cpu_matmul.sh).
// kUnavailable when no OpenBLAS can be opened.
[[nodiscard]] Result<const OpenBlasLibrary*> openblas_library();

}  // namespace ktune

// The CUDA GEMM defaults that --help shows: built with or without CUDA support
// (cuda_gemm_tuning.cpp, which makes the candidates, only with it).
#include "ktune/tuning/cuda_gemm_tuning.h"

namespace ktune {

SelectorOptions cuda_gemm_selector_defaults() {
  SelectorOptions o;
  o.bench.budget_ms = 20;
  o.bench.min_runs = 5;
  o.bench.max_runs = 100;
  o.bench.warmup_runs = 2;
  o.close_call_band = 0.10;
  return o;
}

int cuda_gemm_graph_calls(std::int64_t m, std::int64_t n, std::int64_t k, int requested) {
  if (requested >= 0) return requested;
  const double flop = 2.0 * double(m) * double(n) * double(k);
  return flop < 4e9 ? 10 : 0;
}

}  // namespace ktune

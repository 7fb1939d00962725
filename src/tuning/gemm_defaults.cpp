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
  // Five runs a round, not twelve: the decision rests on the rounds' paired ratios, not on the
  // runs within a round. At 4096^3 bf16 (0.18 ms a run) the decide stage of 8 candidates x 5
  // rounds took 155-161 ms of a cold tuning's 1.24 s with twelve, 96-99 ms with five (H200,
  // docs/benchmarks.md, run S); the picks' regret stayed <= 1.0032 (run T).
  o.decide_round_runs = 5;
  return o;
}

int cuda_gemm_graph_calls(std::int64_t m, std::int64_t n, std::int64_t k, int requested) {
  if (requested >= 0) return requested;
  const double flop = 2.0 * double(m) * double(n) * double(k);
  return flop < 4e9 ? 10 : 0;
}

}  // namespace ktune

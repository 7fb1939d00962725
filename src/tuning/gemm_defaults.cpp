// The CUDA GEMM defaults that --help shows: built with or without CUDA support
// (cuda_gemm_tuning.cpp, which makes the candidates, only with it).
#include "ktune/tuning/cuda_gemm_tuning.h"

namespace ktune {

SelectorOptions cuda_gemm_selector_defaults() {
  SelectorOptions o;
  o.bench.budget_ms = 20;
  o.bench.min_runs = 5;
  // Fifty runs at most in the first pass: it ranks the candidates and finds the close calls,
  // which the decide stage's paired rounds settle. At 4096^3 bf16 (0.18 ms a run) a hundred
  // runs cost 28-30 ms a candidate, fifty about 15; cold tuning 0.80-0.91 s against 0.87-0.98 s
  // (H200, four runs each, alternated), the picks' regret <= 1.003 except under the GPU's power
  // cap at 8192^3, where both settings gave 1.02-1.06 (docs/benchmarks.md, "The first pass's
  // runs"). Kernels slower than 0.4 ms a run are bounded by budget_ms as before.
  o.bench.max_runs = 50;
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

// The flags and defaults of `ktune gemm` that `ktune tune` shows too (for op: cuda.gemm specs):
// built with or without CUDA support, so that both commands parse the same flags either way;
// gemm_run.cpp, which tunes, is built only with it (tools/CMakeLists.txt).
#include <fmt/format.h>

#include "gemm_run.h"

namespace ktune::cli {

void add_gemm_target_flags(CLI::App& cmd, GemmOptions& o, std::string_view applies_to) {
  cmd.add_option("--device", o.device, fmt::format("{}CUDA device index", applies_to))
      ->check(CLI::Range(0, 1023))
      ->capture_default_str();
  cmd.add_option("--arch", o.arch,
                 fmt::format("{}Compile for this architecture (sm_80, sm_90a, ...); default: the "
                             "GPU's",
                             applies_to));
  cmd.add_flag("--compile-only", o.compile_only,
               fmt::format("{}Render and compile every template candidate, then stop (no GPU "
                           "needed with --arch)",
                           applies_to));
}

void add_gemm_candidate_flags(CLI::App& cmd, GemmOptions& o, std::string_view applies_to) {
  cmd.add_flag("--simt", o.simt,
               fmt::format("{}Also tune the SIMT template where the tensor-core one serves (f16, "
                           "bf16)",
                           applies_to));
  cmd.add_option(
         "--cublaslt-algos", o.cublaslt_algos,
         fmt::format("{}cuBLASLt heuristic results to try, each as a candidate", applies_to))
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd.add_option("--graph-calls", o.graph_calls,
                 fmt::format("{}Time a CUDA graph of this many calls per sample (hides launch "
                             "cost); 0: events around each call, L2 flushed before each; -1: 10 "
                             "under 4 GFLOP (2*M*N*K), else 0",
                             applies_to))
      ->check(CLI::Range(-1, 1000))
      ->capture_default_str();
}

}  // namespace ktune::cli

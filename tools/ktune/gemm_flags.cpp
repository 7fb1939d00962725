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

}  // namespace ktune::cli

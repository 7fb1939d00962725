// The tuning of one CUDA GEMM shape, shared by `ktune gemm` (one shape from flags) and `ktune tune`
// on an `op: cuda.gemm` spec (one per problem): the same candidates, options, tuning-cache key
// and output, so that either command's result is a cache hit for the other.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/core/dtype.h"
#include "ktune/core/epilogue.h"
#include "ktune/tuning/cuda_gemm_tuning.h"
#include "options.h"

namespace ktune::cli {
class ResultDocument;  // json_out.h
}

namespace ktune::cli {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;  // each >= 1
  DType dtype = DType::kBF16;        // bf16, f16 or f32
  Epilogue epilogue;
};

// `ktune gemm`'s options; `ktune tune` on an op spec passes its own flags in `selector`.
struct GemmOptions {
  int device = 0;
  std::string arch;  // empty: the GPU's
  bool compile_only = false;
  int cublaslt_algos = 8;
  // Calls per timed CUDA graph; -1: auto (cuda_gemm_graph_calls), 0: events around each call.
  int graph_calls = -1;
  int regret_rounds = 0;
  bool simt = false;
  SelectorFlags selector;  // over cuda_gemm_selector_defaults()
  std::string spec_name;   // `ktune tune` on an op spec: the spec's name, stored as the label
  ResultDocument* json = nullptr;  // --json: the outcome is added to it
};

// The CUDA backend for options.arch and options.device; on failure (no GPU and no --arch) prints
// the error and returns nullopt.
[[nodiscard]] std::optional<CudaBackend> open_gemm_backend(const GemmOptions& options,
                                                           const CliContext& ctx);

// --device, --arch and --compile-only, bound to `options`: `ktune gemm`'s and, each help text led
// by `applies_to`, `ktune tune`'s.
void add_gemm_target_flags(CLI::App& cmd, GemmOptions& options, std::string_view applies_to = "");
// --simt, --cublaslt-algos and --graph-calls: which candidates and how they are timed (`ktune
// gemm`'s, and `ktune tune`'s for op: cuda.gemm specs), so that both reach the same keys.
void add_gemm_candidate_flags(CLI::App& cmd, GemmOptions& options,
                              std::string_view applies_to = "");

// Compiling a tuning's template candidates while the driver starts: cuInit takes 0.1-0.2 s on
// an H200 host, and a cold tuning's critical path is its slowest compile, which needs only the
// GPU's model. On a thread of its own, the device is predicted from NVML (core/cuda_predict.h,
// about 20 ms); unless the tuning cache already answers the problem for that device, or
// options.arch/compile_only/no prediction leaves nothing to do, the candidates that the
// predicted device supports compile on a pool of options.selector.jobs threads into the code
// cache. The tuning that follows (on the backend opened on the device) compiles the same keys:
// each joins the NVRTC run under way (CudaBackend's compiles are shared process-wide) or finds
// its cubin. Nothing here is measured or recorded, so a wrong prediction costs compiles only.
// The destructor drops the compiles not started and waits for those running.
class GemmCompileAhead {
 public:
  GemmCompileAhead(const GemmShape& shape, const GemmOptions& options, const CliContext& ctx);
  ~GemmCompileAhead();
  GemmCompileAhead(const GemmCompileAhead&) = delete;
  GemmCompileAhead& operator=(const GemmCompileAhead&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct GemmRun {
  int exit_code = 0;
  bool from_cache = false;
};

// Tunes `shape` over the full candidate set and prints the pick, cuBLAS, the best of each kind,
// the regret if asked and a "Tuned gemm ..." line; with options.compile_only, compiles every
// template candidate instead. Errors are printed to stderr. The total time printed counts from
// `start` (`ktune gemm`: before the backend was opened, as bench/gpu/run.sh reports it).
[[nodiscard]] GemmRun tune_gemm(
    const CudaBackend& backend, const GemmShape& shape, const GemmOptions& options,
    const CliContext& ctx,
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now());

}  // namespace ktune::cli

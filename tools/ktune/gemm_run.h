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

namespace ktune {
class CudaCompileAhead;  // tuning/cuda_compile_ahead.h
struct Spec;             // ktune/spec/spec.h
}  // namespace ktune
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
  // Answer from the tuning cache or not at all (GemmRun::answered): for a backend made without
  // the driver (backend_for_cache_hits), which must not tune.
  bool cache_only = false;
};

// The CUDA backend for options.arch and options.device; on failure (no GPU and no --arch) prints
// the error and returns nullopt. With --verbose, says so when `ahead` compiled for another device
// than the one opened.
[[nodiscard]] std::optional<CudaBackend> open_gemm_backend(const GemmOptions& options,
                                                           const CliContext& ctx,
                                                           const CudaCompileAhead* ahead = nullptr);

// --device, --arch and --compile-only, bound to `options`: `ktune gemm`'s and, each help text led
// by `applies_to`, `ktune tune`'s.
void add_gemm_target_flags(CLI::App& cmd, GemmOptions& options, std::string_view applies_to = "");
// --simt, --cublaslt-algos and --graph-calls: which candidates and how they are timed (`ktune
// gemm`'s, and `ktune tune`'s for op: cuda.gemm specs), so that both reach the same keys.
void add_gemm_candidate_flags(CLI::App& cmd, GemmOptions& options,
                              std::string_view applies_to = "");

// The templates of `shape` compiled while the driver starts (tuning/cuda_compile_ahead.h), for
// the device `predicted` (predict_gemm_device's answer; nullopt: nothing is compiled ahead),
// unless the tuning cache already answers the problem for that device (asked only with
// `check_cache`: callers that asked it first, backend_for_cache_hits, pass false). Call it before
// open_gemm_backend (NVML waits for a cuInit under way); keep it alive while the tuning runs.
[[nodiscard]] std::unique_ptr<CudaCompileAhead> compile_gemm_ahead(
    const GemmShape& shape, const GemmOptions& options, const CliContext& ctx,
    std::optional<CudaDeviceInfo> predicted, bool check_cache);

// The device NVML predicts for the options' (first) device (core/cuda_predict.h), before the
// driver starts; nullopt where nothing is done ahead of the driver (--arch, --compile-only, a
// shared tuning cache) or NVML cannot tell.
[[nodiscard]] std::optional<CudaDeviceInfo> predict_gemm_device(const GemmOptions& options,
                                                                const CliContext& ctx);

// A backend for the `predicted` device made without the driver (CudaBackend::for_device), to ask
// the tuning cache (GemmOptions::cache_only) before the driver starts: a hit needs no GPU.
// nullopt where the cache cannot answer (not read, no file yet, --devices) or the backend cannot
// be made. Build the candidates under a ScopedCudaDeviceHint of `predicted`.
[[nodiscard]] std::optional<CudaBackend> backend_for_cache_hits(const GemmOptions& options,
                                                                const CliContext& ctx,
                                                                const CudaDeviceInfo& predicted);
// The same for problem `problem` of a CUDA kernel spec (`host`: the CPU backend of a host
// reference, as tune_spec gets it): its templates, for the backend that open_gemm_backend(options)
// opens, on the device `predicted`. Only where the tuning cache will not answer the problem:
// `asked` (a cache-only tune_spec run stopped at it), or the cache has no file yet or is not
// read (--retune, --no-cache); elsewhere the spec's keys are tune_spec's to make.
[[nodiscard]] std::unique_ptr<CudaCompileAhead> compile_spec_ahead(
    const Spec& spec, std::size_t problem, const GemmOptions& options, const CliContext& ctx,
    std::shared_ptr<const Backend> host, std::optional<CudaDeviceInfo> predicted, bool asked);

struct GemmRun {
  int exit_code = 0;
  bool from_cache = false;
  bool answered = true;  // false: options.cache_only and the cache had no answer (nothing printed)
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

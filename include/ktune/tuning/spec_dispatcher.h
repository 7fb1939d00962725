// The tuning side of run-time dispatch: a Dispatcher opened from a spec (picks read from the
// tuning cache, library calls served, unseen shapes tuned in the background), and the
// DispatchTable that a program linking only ktune::runtime serves (ktune/runtime/dispatcher.h).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"
#include "ktune/runtime/dispatcher.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"

struct CUstream_st;  // cudaStream_t and CUstream point to it

namespace ktune {

struct DispatcherOptions {
  // Code cache and tuning cache (tuning.sqlite3); empty: default_cache_dir(), as the CLI.
  std::filesystem::path cache_dir;
  // A shared tuning cache (redis://HOST:PORT/DB) to read the picks from and store background
  // tunings in, as `ktune --cache` (open_cache_at: the SQLite file of cache_dir stands in, with
  // one warning, when the server cannot be reached); empty: the SQLite file of cache_dir.
  std::string cache_url;
  // The candidate served when no shape is tuned; empty: the spec's first template config (the
  // first candidate); op: cuda.gemm specs: cuBLAS ("cublas_gemm", "cublas_gemm+epilogue").
  std::optional<std::string> default_choice;
  // Tune a shape with no tuned record in the background (one std::thread running a Selector,
  // candidates isolated in a ktune-worker) while serving the nearest or default pick. A shape
  // tuned in an earlier run is found by that Selector in the tuning cache without measuring.
  bool tune_unseen = false;
  // kernel.language cuda and op: cuda.gemm specs: the stream every call is enqueued on (a
  // cudaStream_t or CUstream; null: the legacy default stream). Calls take device addresses for
  // buffers. The CUDA context current when open_dispatcher runs is the one kernels are loaded in.
  CUstream_st* cuda_stream = nullptr;
  // For background tuning. Its seed and tolerance are replaced by the spec's, as the CLI does by
  // default, so that the tuning-cache keys match `ktune tune`'s.
  SelectorOptions selector = [] {
    SelectorOptions o;
    o.out = nullptr;
    o.progress = nullptr;
    return o;
  }();
  // op: cuda.gemm specs, whose problems are tuned as `ktune tune spec.yaml` (and `ktune gemm`)
  // tunes them (cuda_gemm_tuning.h); `selector` above is for kernel specs.
  struct CudaGemm {
    // The candidate set, part of the tuning-cache key: `ktune tune`'s --cublaslt-algos and
    // --simt, whose defaults these are.
    int cublaslt_algos = 8;
    bool simt = false;
    // Background tunings; empty: cuda_gemm_selector_defaults() without output. Its seed is
    // replaced by the spec's; cuda_gemm_tuning sets the tolerance and the worker's GPU.
    std::optional<SelectorOptions> selector;
  } cuda_gemm;
};

// Loads the spec and, for each of its problems, the pick that `ktune tune` stored with the
// default options (same compiler flags, the spec's seed and tolerance); a problem without a
// record is untuned. Every pick and the default are compiled (code-cache hits when tuned) and
// loaded here. Fails on a bad spec, an unknown default_choice or a pick that does not load.
// op: cuda.gemm specs: the picks of `ktune tune spec.yaml` / `ktune gemm` (the key of
// cuda_gemm_tuning(), the spec's seed), served on cuda_stream; a call's sizes are M, N, K and its
// arguments C, A, B (device addresses), then pointers to M, N, K as int32, then the epilogue's
// operands (cuda_gemm_problem's order). Every candidate of every shape is served, built once.
[[nodiscard]] Result<std::unique_ptr<Dispatcher>> open_dispatcher(const std::filesystem::path& spec,
                                                                  DispatcherOptions options = {});
// The same over a spec already read (load_spec, or parse_spec of a spec made in memory: the
// Python package's dict specs); its file names it in messages and anchors its relative paths.
[[nodiscard]] Result<std::unique_ptr<Dispatcher>> open_dispatcher(Spec spec,
                                                                  DispatcherOptions options = {});

// The tuning-cache key that a Selector with this seed and tolerance uses for `problem` over the
// spec's candidates and reference on `backend`.
[[nodiscard]] TuningKey spec_tuning_key(const Problem& problem, const SpecChoices& choices,
                                        const Backend& backend, std::uint64_t seed,
                                        const std::optional<Tolerance>& tolerance);

struct DispatchTableBuild {
  DispatchTable table;
  // Problems left out of table.tuned, and why (a library pick when generated_only).
  std::vector<std::string> notes;
};

// The spec's dispatch table from the picks in `cache` (keys as spec_tuning_key with `selector`'s
// seed and tolerance): the default and every pick compiled on `backend` (code-cache hits when
// tuned), so that each template candidate's artifact exists. With generated_only, library calls
// are left out (a shape they won is served by its nearest tuned shape) and a default that is one
// is kInvalidArgument: what a program linking only ktune::runtime can serve.
[[nodiscard]] Result<DispatchTableBuild> make_dispatch_table(
    const Spec& spec, SpecChoices& choices, const Backend& backend, TuningCache& cache,
    const SelectorOptions& selector, const std::optional<std::string>& default_choice,
    bool generated_only);

}  // namespace ktune

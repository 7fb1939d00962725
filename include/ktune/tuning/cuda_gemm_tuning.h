// The tuning of one CUDA GEMM problem, in one place for every command that tunes one: `ktune
// gemm`, `ktune tune` on an `op: cuda.gemm` spec, and `ktune compile --device cuda` (each gemm of
// a graph, with its fused chain): the same candidates, Selector options and tuning-cache key, so
// that any of them answers the others from the cache.
#pragma once

#include <cstdint>

#include "ktune/core/dtype.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/problem.h"
#include "ktune/select/selector.h"

namespace ktune {

class CudaBackend;

// The Selector defaults of CUDA GEMMs (built without CUDA support too: `--help` shows them).
// GPU kernels take micro- to milliseconds: a smaller budget than the CPU's still gives dozens of
// samples, and the close calls are measured again anyway; the close-call band is wider than the
// Selector's 5%: a GPU's clocks under its power cap move more than a CPU's.
[[nodiscard]] SelectorOptions cuda_gemm_selector_defaults();

// Calls per timed CUDA graph for `requested` -1 (auto): 10 for problems under 4 GFLOP (2*M*N*K),
// whose kernels run for a few microseconds so that a single timed launch is largely launch cost
// and flush noise (on an H100 at 1024^3 bf16, single launches put cuBLAS first where a
// re-measurement found a cuBLASLt algorithm 7.8% faster); 0 (one call, L2 flushed before each)
// for larger ones. Another `requested` is returned as it is.
[[nodiscard]] int cuda_gemm_graph_calls(std::int64_t m, std::int64_t n, std::int64_t k,
                                        int requested);

struct CudaGemmRequest {
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kBF16;
  Epilogue epilogue;
  int device = 0;          // the CUDA device the worker measures on
  int cublaslt_algos = 8;  // cuBLASLt heuristic answers among the candidates
  bool simt = false;       // keep the SIMT template where a tensor-core one serves
  int graph_calls = -1;    // cuda_gemm_graph_calls()'s `requested`
};

// What a Selector needs to tune one CUDA GEMM problem.
struct CudaGemmTuning {
  Problem problem;                    // cuda_gemm_problem()
  std::vector<ChoicePtr> candidates;  // cuda_gemm_candidates(): templates, cuBLAS, cuBLASLt
  ChoicePtr reference;                // cuBLAS (+ the separate epilogue)
  SelectorOptions options;  // `base` with the timing, tolerance and worker of this problem
};

// The problem, its candidates for `backend` (the wgmma template when it compiles for sm_90a) and
// `base` (cuda_gemm_selector_defaults() with the caller's flags) completed: CUDA-graph calls per
// timing, the tolerance of a K-term reduction in the dtype, and a worker that sees only the
// request's GPU. Built with CUDA support only (src/tuning/cuda_gemm_tuning.cpp).
[[nodiscard]] CudaGemmTuning cuda_gemm_tuning(const CudaBackend& backend,
                                              const CudaGemmRequest& request, SelectorOptions base);

}  // namespace ktune

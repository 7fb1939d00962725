// The picks of a graph's gemms on a CUDA GPU (`ktune compile --device cuda`): each gemm, with the
// pointwise chain after it (find_fusions) as its epilogue, is tuned as one CUDA GEMM problem over
// ktune's built-in candidates (cuda_gemm_tuning(): the tensor-core and wgmma templates with the
// chain fused into their store, cuBLAS and the cuBLASLt algorithms each followed by the separate
// epilogue kernel, cuBLASLt's own fused epilogue where it has the chain) through the Selector and
// the tuning cache, so that `ktune gemm --epilogue ...` of the same problem is a cache hit. Every
// candidate of such a problem computes the whole chain, so every CUDA pick of a gemm with a chain
// is a fused pick (GemmPick::fused), whatever won; the pick carries the winner's LaunchSpec.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "ktune/backend/cuda_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/codegen/graph.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/core/status.h"
#include "ktune/select/selector.h"

namespace ktune::codegen {

struct CudaPickOptions {
  int device = 0;          // the GPU that measures (its worker sees only it)
  int cublaslt_algos = 8;  // as `ktune gemm --cublaslt-algos`
  bool fuse = true;        // false: plain gemms, the pointwise nodes kept (--no-fuse)
  // This candidate for every gemm, without tuning or a GPU (a template config is compiled for
  // the backend's arch): "cublas_gemm", "cublaslt_algo0", or a template config's name without
  // its epilogue tag; with a chain, its twin with the epilogue ("cublas_gemm+epilogue").
  std::optional<std::string> force;
  std::FILE* progress = nullptr;  // one line per gemm ("ktune: h+h_bias+a: cublaslt_algo2+...")
};

// The pick for every gemm node, by node name; each distinct problem (shape, dtype, epilogue) is
// tuned once. `base`: the Selector options (cuda_gemm_selector_defaults() with the caller's
// flags); cuda_gemm_tuning() completes them per problem. Errors name the graph file and node.
[[nodiscard]] Result<std::map<std::string, GemmPick>> pick_cuda_gemms(
    const Graph& graph, const CudaBackend& backend, TuningCache& cache, const SelectorOptions& base,
    const CudaPickOptions& options = {});

}  // namespace ktune::codegen

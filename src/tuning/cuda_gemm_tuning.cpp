// cuda_gemm_tuning: the candidates and Selector options of one CUDA GEMM problem.
#include "ktune/tuning/cuda_gemm_tuning.h"

#include <string>

#include "ktune/backend/cuda_backend.h"
#include "ktune/ops/cuda_gemm.h"
#include "ktune/tensor/compare.h"
#include "ktune/tuning/devices.h"

namespace ktune {

CudaGemmTuning cuda_gemm_tuning(const CudaBackend& backend, const CudaGemmRequest& r,
                                SelectorOptions base) {
  CudaGemmTuning t;
  t.problem = cuda_gemm_problem(r.m, r.n, r.k, r.dtype, r.device, r.epilogue);
  // The wgmma template compiles for Hopper only.
  CudaGemmCandidates set = cuda_gemm_candidates(r.dtype, r.cublaslt_algos, &t.problem, r.simt,
                                                r.epilogue, backend.arch() == "sm_90a");
  t.candidates = std::move(set.candidates);
  t.reference = std::move(set.reference);
  t.options = std::move(base);
  t.options.bench.graph_calls = cuda_gemm_graph_calls(r.m, r.n, r.k, r.graph_calls);
  // Each element of C sums K products, in another order in each algorithm than in cuBLAS.
  t.options.tolerance = reduction_tolerance(r.dtype, r.k);
  // One worker per GPU: it sees only this one, as its device 0.
  t.options.worker.env.emplace_back("CUDA_VISIBLE_DEVICES", cuda_visible_device(r.device));
  return t;
}

}  // namespace ktune

// CublasGemmRunner: runs a LaunchKind::kCudaLibrary GEMM (cuBLAS or the algo-th cuBLASLt
// heuristic result) on device buffers. Used by the worker's CUDA handler (internal header).
// The device's primary context must be current: cuBLAS works through the runtime API, which
// uses the primary context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/launch_spec.h"
#include "ktune/problem.h"
#include "ktune/status.h"

namespace ktune {

class CublasGemmRunner {
 public:
  // Opens the library, creates its handle and workspace, and (cuBLASLt) the matmul descriptor,
  // layouts and the chosen algorithm. kUnavailable when the library is missing; kInvalidArgument
  // when the problem is not a GEMM it can run, or the heuristic returned fewer algorithms.
  [[nodiscard]] static Result<std::unique_ptr<CublasGemmRunner>> create(const LaunchSpec& spec,
                                                                        const Problem& problem,
                                                                        CUstream stream);
  virtual ~CublasGemmRunner() = default;
  // Enqueues the GEMM on the stream. `args`: one per problem argument, the buffer's device
  // address (storage start + offset) or 0 for scalars (read from the problem).
  [[nodiscard]] virtual Status run(const std::vector<CUdeviceptr>& args) = 0;
  // For the AUTOTUNE table: "cublasGemmEx bf16" or "cublasLt algo 3 (tile 256x128, stages 4)".
  [[nodiscard]] virtual std::string info() const = 0;
};

}  // namespace ktune

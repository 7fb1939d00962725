// CublasGemmRunner: runs a LaunchKind::kCudaLibrary GEMM (cuBLAS or the algo-th cuBLASLt
// heuristic result) on device buffers. Used by the worker's CUDA handler (internal header; the
// choices themselves are ktune/choice/cublas_choice.h, cublas_choice.cpp). The device's primary
// context must be current: cuBLAS works through the runtime API, which uses the primary context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"

namespace ktune {

// A GEMM problem resolved for cuBLAS: argument indices, sizes and row strides, all checked.
struct CublasGemmPlan {
  std::size_t c = 0, a = 0, b = 0;  // argument indices (bind[0..2])
  std::size_t arg_count = 0;        // problem.args.size()
  DType dtype = DType::kF32;        // of A, B and C
  std::int64_t m = 0, n = 0, k = 0;
  // Row strides in elements of the row-major C[m,n], A[m,k], B[k,n] (>= their column counts).
  std::int64_t ldc = 0, lda = 0, ldb = 0;
  // Alignment in bytes (a power of two, at most 16) that each view's first element has when its
  // storage starts 16-byte aligned (cuMemAlloc's is 256): what cuBLASLt's heuristic is told.
  std::uint32_t align_c = 16, align_a = 16, align_b = 16;
  // bind[6] when present: a contiguous vector of n elements of c's dtype added to every row of C
  // (cuBLASLt's bias epilogue); kNoBias otherwise.
  static constexpr std::size_t kNoBias = static_cast<std::size_t>(-1);
  std::size_t bias = kNoBias;
  float alpha = 1;  // LaunchSpec::alpha: C = alpha A B
};

// Checks `problem` against `bind` = {c, a, b, m, n, k[, bias]} (argument indices): C out or inout,
// A and B in or inout, one dtype among f32, f16 and bf16, CUDA tensors, 2-D with a unit inner
// stride and sizes [m,n], [m,k], [k,n]; m, n, k i32 or i64 scalars in [1, INT_MAX].
// kInvalidArgument naming `who` and the argument otherwise.
[[nodiscard]] Result<CublasGemmPlan> make_cublas_gemm_plan(const Problem& problem,
                                                           const std::vector<int>& bind,
                                                           std::string_view who);

class CublasGemmRunner {
 public:
  // Opens the library, creates its handle and workspace, and (cuBLASLt) the matmul descriptor,
  // layouts and the chosen algorithm. kUnavailable when the library or the driver is missing;
  // kInvalidArgument when the problem is not a GEMM it can run, or the heuristic returned fewer
  // algorithms. `stream` must outlive the runner; the runner must be destroyed while the
  // context it was created in is current (it frees its handle and device workspace).
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

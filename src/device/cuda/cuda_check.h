// CudaChecker: the checks of a candidate's run done on the GPU, so that a large problem is not
// copied to the host for every candidate: an output against the reference's output, element by
// element with compare()'s rules (poison, NaN/Inf, atol + rtol * |expected|, relative L2), and
// an input against its pristine copy, byte for byte.
//
// A screen: "passes" is final, "does not pass" sends the caller to the host comparison
// (compare.h), which finds the first bad element and writes the message a user reads.
//
// Internal header (src/): <cuda.h> must not reach include/ktune. The kernels are compiled by
// NVRTC for the device when the checker is created (once per worker, about 0.1 s).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backend/cuda_module.h"
#include "core/cuda_driver.h"
#include "ktune/core/dtype.h"
#include "ktune/core/status.h"
#include "ktune/tensor/compare.h"

namespace ktune {

class CudaChecker {
 public:
  // Compiles the kernels for `arch` ("sm_90a") and loads them into the current context;
  // `sm_count` sizes the grids. kUnavailable without NVRTC; kCompile, kIo as NVRTC and the
  // driver answer.
  [[nodiscard]] static Result<std::unique_ptr<CudaChecker>> create(const CudaDriver& cu,
                                                                   const std::string& arch,
                                                                   int sm_count);
  // The kernels' cubin for `arch`, as create() compiles it (no GPU needed).
  [[nodiscard]] static Result<std::string> compile(const std::string& arch);
  ~CudaChecker();
  CudaChecker(const CudaChecker&) = delete;
  CudaChecker& operator=(const CudaChecker&) = delete;

  // f16, bf16, f32 and f64: the dtypes outputs_pass() screens.
  [[nodiscard]] static bool screens(DType dtype);

  // True when each of the `n` elements at `actual` passes against `expected` as compare()
  // judges it and the relative L2 error is within tolerance.max_rel_l2. Runs on `stream` and
  // synchronises it.
  [[nodiscard]] Result<bool> outputs_pass(DType dtype, CUdeviceptr actual, CUdeviceptr expected,
                                          std::int64_t n, const Tolerance& tolerance,
                                          CUstream stream);
  // True when the `bytes` at `a` and at `b` are the same. Synchronises `stream`.
  [[nodiscard]] Result<bool> equal(CUdeviceptr a, CUdeviceptr b, std::size_t bytes,
                                   CUstream stream);

 private:
  CudaChecker(const CudaDriver& cu, int sm_count);
  // Zeroes the counters, launches `kernel` over `n` items with `params`, reads the counters.
  [[nodiscard]] Status run(const CudaKernel& kernel, std::int64_t n, void** params,
                           CUstream stream);

  const CudaDriver& cu_;
  int blocks_;                             // a few blocks per SM; the kernels loop over the grid
  std::unique_ptr<CudaKernel> screen_[4];  // by screened dtype: f16, bf16, f32, f64
  std::unique_ptr<CudaKernel> differ_;
  CUdeviceptr counters_ = 0;  // double diff_sq, double expected_sq, u64 bad
  double sums_[2] = {0, 0};
  std::uint64_t bad_ = 0;
};

}  // namespace ktune

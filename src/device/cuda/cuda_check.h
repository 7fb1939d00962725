// CudaChecker: the checks of a candidate's run done on the GPU, so that a large problem is not
// copied to the host for every candidate: an output against the reference's output, element by
// element with compare()'s rules (poison, NaN/Inf, atol + rtol * |expected|, relative L2), and
// an input against its pristine copy, byte for byte.
//
// A screen: "passes" is final, "does not pass" sends the caller to the host comparison
// (compare.h), which finds the first bad element and writes the message a user reads. A
// reference's outputs are screened alone (sound()) and stay on the GPU unless a comparison on
// the host needs them.
//
// It also makes a large problem's data on the GPU (fill(), poison()): fill_random's values,
// byte for byte, without generating them on the host and copying them over.
//
// Internal header (src/): <cuda.h> must not reach include/ktune. The kernels (ktune_check.cu)
// come with the build as nvcc's fatbin where the build had nvcc (load(): no compile in the
// worker); otherwise, or where the driver refuses that image, NVRTC compiles them for the device
// (once per worker, 0.1-0.4 s; the CUDA device starts that compile in the background when it
// opens).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/core/dtype.h"
#include "ktune/core/status.h"
#include "ktune/tensor/compare.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {

class CudaChecker {
 public:
  // Loads the kernels nvcc compiled at build time (cuda_check_fatbin(), cuda_check_embedded.h)
  // into the current context. kUnavailable when the build embedded none (no nvcc); kIo as the
  // driver answers when it refuses the image: a driver older than the image's toolkit, or no
  // SASS or PTX in it for this GPU.
  [[nodiscard]] static Result<std::unique_ptr<CudaChecker>> load(const CudaDriver& cu,
                                                                 int sm_count);
  // Compiles the kernels for `arch` ("sm_90a") and loads them into the current context;
  // `sm_count` sizes the grids. kUnavailable without NVRTC; kCompile, kIo as NVRTC and the
  // driver answer.
  [[nodiscard]] static Result<std::unique_ptr<CudaChecker>> create(const CudaDriver& cu,
                                                                   const std::string& arch,
                                                                   int sm_count);
  // The same from compile()'s answer (made elsewhere, in the background).
  [[nodiscard]] static Result<std::unique_ptr<CudaChecker>> create(const CudaDriver& cu,
                                                                   Result<std::string> cubin,
                                                                   int sm_count);
  // The kernels' cubin for `arch` from the embedded source, as create() compiles it (no GPU
  // needed).
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
  // True when each of the `n` elements at `values` is written (not the poison) and finite, as
  // check_output_alone() judges a reference's output; *sum_of_squares then holds their sum of
  // squares (view_rms's, up to the order of the additions). Runs on `stream` and synchronises it.
  [[nodiscard]] Result<bool> sound(DType dtype, CUdeviceptr values, std::int64_t n, CUstream stream,
                                   double* sum_of_squares);
  // True when the `bytes` at `a` and at `b` are the same. Synchronises `stream`.
  [[nodiscard]] Result<bool> equal(CUdeviceptr a, CUdeviceptr b, std::size_t bytes,
                                   CUstream stream);
  // equal() of each span against `b` (`bytes` each: the redzones against an intact one), all
  // queued on `stream` with one synchronisation and one read-back: by span, whether it is the
  // same as `b`.
  [[nodiscard]] Result<std::vector<bool>> equal_each(const std::vector<CUdeviceptr>& spans,
                                                     CUdeviceptr b, std::size_t bytes,
                                                     CUstream stream);

  // The `n` elements of `dtype` at `out` (a dense row-major view's first element) set to what
  // fill_random(buffer, view, seed, set) writes there: the same bytes. Queued on `stream`.
  [[nodiscard]] Status fill(CUdeviceptr out, DType dtype, std::int64_t n, std::uint64_t seed,
                            DataSet set, CUstream stream);
  // The `bytes` at `p` set to `dtype`'s poison pattern, as HostBuffer::poison. Queued on
  // `stream`.
  [[nodiscard]] Status poison(CUdeviceptr p, std::size_t bytes, DType dtype, CUstream stream);

 private:
  CudaChecker(const CudaDriver& cu, int sm_count);
  // Loads `image` (a cubin or a fatbin, named `name` in messages) as one module, finds the
  // kernels, allocates the counters.
  [[nodiscard]] static Result<std::unique_ptr<CudaChecker>> from_image(const CudaDriver& cu,
                                                                       const void* image,
                                                                       const char* name,
                                                                       int sm_count);
  // Launches `kernel` over `n` items (a grid-stride loop) with `params` on `stream`.
  [[nodiscard]] Status launch(CUfunction kernel, std::int64_t n, void** params, CUstream stream);
  // The screening kernel of `dtype` over `n` elements (counters read into sums_ and bad_);
  // finite_only fails infinities too.
  [[nodiscard]] Status screen(DType dtype, CUdeviceptr actual, CUdeviceptr expected, std::int64_t n,
                              double atol, double rtol, bool finite_only, CUstream stream);
  // Zeroes the counters, launches `kernel` over `n` items with `params`, reads the counters.
  [[nodiscard]] Status run(CUfunction kernel, std::int64_t n, void** params, CUstream stream);

  const CudaDriver& cu_;
  int blocks_;  // a few blocks per SM; the kernels loop over the grid
  // One module for all the kernels: a fatbin whose only fit is PTX is JIT-compiled once.
  CUmodule module_ = nullptr;
  CUfunction screen_[4] = {};  // by screened dtype: f16, bf16, f32, f64
  CUfunction differ_ = nullptr;
  CUfunction fill_ = nullptr;
  CUfunction pattern_ = nullptr;
  CUdeviceptr counters_ = 0;  // double diff_sq, double expected_sq, u64 bad
  // equal_each()'s: three counters per span (the kernel's layout), grown as needed.
  CUdeviceptr span_counters_ = 0;
  std::size_t span_counters_bytes_ = 0;
  double sums_[2] = {0, 0};
  std::uint64_t bad_ = 0;
};

}  // namespace ktune

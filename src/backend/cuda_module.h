// CudaKernel: one __global__ function of a cubin, loaded into the current context and launched
// on a stream with a LaunchSpec's geometry. Used by the worker's CUDA handler (internal header:
// <cuda.h> stays out of the public ones). The context must be current on the calling thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/cuda_driver.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/status.h"

namespace ktune {

class CudaKernel {
 public:
  // Loads the cubin (cuModuleLoadData), finds `entry`, and when the function's static shared
  // memory plus `shared_bytes` of dynamic shared memory exceed the default 48 KiB opts the
  // function in to `shared_bytes` (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  // Load-error-worthy failures come back as Error, naming the cubin and the entry: an unreadable
  // or non-ELF file (kIo, kInvalidArgument), a cubin for another architecture, a missing entry,
  // too much shared memory for the device (the driver's text, kIo).
  [[nodiscard]] static Result<std::unique_ptr<CudaKernel>> load(const CudaDriver& cu,
                                                                const std::filesystem::path& cubin,
                                                                const std::string& entry,
                                                                std::uint32_t shared_bytes);
  // The same from a cubin image in memory; `cubin` names it in messages.
  [[nodiscard]] static Result<std::unique_ptr<CudaKernel>> from_image(
      const CudaDriver& cu, const void* image, const std::filesystem::path& cubin,
      const std::string& entry, std::uint32_t shared_bytes);
  ~CudaKernel();  // unloads the module
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  // cuLaunchKernel with `params` as kernelParams (one pointer per kernel parameter: to a
  // CUdeviceptr for buffers, to the value for scalars). Asynchronous: a fault in the kernel
  // shows at the next synchronisation. Returns the raw CUresult so that the caller can tell
  // sticky errors (cuda_error_is_sticky) from bad launch configurations.
  [[nodiscard]] CUresult launch(const LaunchGeometry& geometry, CUstream stream,
                                void** params) const;

  // Registers and the like, for messages: "regs=128 shared=0+49152 local=0 max_threads=256"
  // (shared: static + dynamic as loaded; local: bytes of stack per thread, spills included;
  // -1 where the driver does not answer).
  [[nodiscard]] std::string describe() const;

 private:
  CudaKernel(const CudaDriver& cu, CUmodule module, CUfunction function,
             std::uint32_t shared_bytes);
  const CudaDriver& cu_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::uint32_t shared_bytes_ = 0;  // dynamic shared memory opted in to at load
};

}  // namespace ktune

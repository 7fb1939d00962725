// CudaKernel: one __global__ function of a cubin, loaded into the current context and launched
// on a stream with a LaunchSpec's geometry. Used by the worker's CUDA handler (internal header:
// <cuda.h> stays out of the public ones). The context must be current on the calling thread.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "core/cuda_driver.h"
#include "ktune/launch_spec.h"
#include "ktune/status.h"

namespace ktune {

class CudaKernel {
 public:
  // Loads the cubin (cuModuleLoadData), finds `entry`, and when `shared_bytes` exceeds the
  // default 48 KiB opts the function in to that much dynamic shared memory (kLoadError-worthy
  // failures come back as Status: a missing entry, too much shared memory for the device).
  [[nodiscard]] static Result<std::unique_ptr<CudaKernel>> load(const CudaDriver& cu,
                                                                const std::filesystem::path& cubin,
                                                                const std::string& entry,
                                                                std::uint32_t shared_bytes);
  ~CudaKernel();  // unloads the module
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  // cuLaunchKernel with `params` as kernelParams (one pointer per kernel parameter: to a
  // CUdeviceptr for buffers, to the value for scalars). Asynchronous: a fault in the kernel
  // shows at the next synchronisation. Returns the raw CUresult so that the caller can tell
  // sticky errors (cuda_error_is_sticky) from bad launch configurations.
  [[nodiscard]] CUresult launch(const LaunchGeometry& geometry, CUstream stream,
                                void** params) const;

  // Registers and the like, for messages: "regs=128 shared=49152".
  [[nodiscard]] std::string describe() const;

 private:
  CudaKernel(const CudaDriver& cu, CUmodule module, CUfunction function);
  const CudaDriver& cu_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace ktune

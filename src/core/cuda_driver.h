// CudaDriver: the CUDA driver API (libcuda.so.1), opened with dlopen on first use, so that one
// ktune build runs on machines with and without a GPU. Only the types and constants of <cuda.h>
// are used at build time; every function is reached through this table.
//
// Internal header (src/): <cuda.h> must not leak into ktune's public headers.
#pragma once

#include <cuda.h>

#include <string>

#include "ktune/core/status.h"

namespace ktune {

struct CudaDriver {
  // One member per function, named as in <cuda.h> without the "cu" prefix; the symbol looked up
  // is the versioned one <cuda.h> maps the name to (cuMemAlloc -> cuMemAlloc_v2).
  // One function per line: clang-format reflows X-macro lists differently on each run.
// clang-format off
#define KTUNE_CUDA_DRIVER_FUNCTIONS(X) \
  X(Init) \
  X(DriverGetVersion) \
  X(GetErrorName) \
  X(GetErrorString) \
  X(DeviceGetCount) \
  X(DeviceGet) \
  X(DeviceGetName) \
  X(DeviceGetAttribute) \
  X(DeviceTotalMem) \
  X(DevicePrimaryCtxRetain) \
  X(DevicePrimaryCtxRelease) \
  X(CtxSetCurrent) \
  X(CtxSynchronize) \
  X(CtxGetDevice) \
  X(CtxGetCurrent) \
  X(CtxGetLimit) \
  X(ModuleLoadData) \
  X(ModuleUnload) \
  X(ModuleGetFunction) \
  X(FuncSetAttribute) \
  X(FuncGetAttribute) \
  X(LaunchKernel) \
  X(MemAlloc) \
  X(MemFree) \
  X(MemcpyHtoD) \
  X(MemcpyDtoH) \
  X(MemcpyDtoD) \
  X(MemcpyDtoDAsync) \
  X(MemsetD16) \
  X(MemsetD32) \
  X(MemsetD8) \
  X(MemsetD8Async) \
  X(MemsetD32Async) \
  X(StreamCreate) \
  X(StreamDestroy) \
  X(StreamSynchronize) \
  X(EventCreate) \
  X(EventDestroy) \
  X(EventRecord) \
  X(EventSynchronize) \
  X(EventElapsedTime) \
  X(StreamBeginCapture) \
  X(StreamEndCapture) \
  X(GraphInstantiate) \
  X(GraphLaunch) \
  X(GraphExecDestroy) \
  X(GraphDestroy) \
  X(TensorMapEncodeTiled)
// clang-format on
#define KTUNE_CUDA_MEMBER(name) decltype(&::cu##name) name = nullptr;
  KTUNE_CUDA_DRIVER_FUNCTIONS(KTUNE_CUDA_MEMBER)
#undef KTUNE_CUDA_MEMBER
};

// The driver, opened and cuInit(0)-ed once per process (thread-safe). kUnavailable with a
// message that says why ("no NVIDIA driver: libcuda.so.1 not found", "no CUDA device: ...").
[[nodiscard]] Result<const CudaDriver*> cuda_driver();

// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; kOk (empty Status) for CUDA_SUCCESS.
[[nodiscard]] Status cuda_status(const CudaDriver& cu, CUresult r, const char* what);

// True for the errors after which the context is unusable (illegal address, misaligned access,
// illegal instruction, launch failure, assert, hardware stack error...): the worker must exit.
[[nodiscard]] bool cuda_error_is_sticky(CUresult r);

// What ktune needs to know of one device, read through the driver.
struct CudaDeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int max_shared_per_block_optin = 0;  // dynamic shared memory a kernel may opt in to
  std::size_t total_mem = 0;
  int driver_version = 0;  // 13000 for 13.0
  // "sm_90a" for 9.0 (the arch-specific target, so that wgmma/setmaxnreg are allowed), "sm_80".
  [[nodiscard]] std::string arch() const;
  // Tuning-cache identity: name, compute capability, SM count, driver version.
  [[nodiscard]] std::string fingerprint() const;
};

[[nodiscard]] Result<CudaDeviceInfo> cuda_device_info(int index);

}  // namespace ktune

// Evaluates a driver call; on failure returns its Status from the enclosing function, which
// must return Status or Result<T>. `cu` is the CudaDriver in scope.
#define KTUNE_CU(call_expr)                                                              \
  do {                                                                                   \
    if (::ktune::Status ktune_cu_s = ::ktune::cuda_status(cu, cu.call_expr, #call_expr); \
        !ktune_cu_s)                                                                     \
      return std::unexpected(ktune_cu_s.error());                                        \
  } while (0)

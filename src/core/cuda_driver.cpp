// CudaDriver: dlopen of libcuda.so.1, the function table, error text, device queries.
#include "core/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

namespace ktune {
namespace {

#define KTUNE_STR(x) #x
#define KTUNE_XSTR(x) KTUNE_STR(x)  // expands <cuda.h>'s versioning macro first

Result<CudaDriver> open_driver() {
  // RTLD_NODELETE: the table's pointers stay valid for the life of the process.
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cuda: no NVIDIA driver on this machine (dlopen libcuda.so.1: "
                                  "{})",
                                  ::dlerror()));
  }
  CudaDriver cu;
#define KTUNE_CUDA_LOAD(name)                                                                \
  cu.name = reinterpret_cast<decltype(cu.name)>(::dlsym(lib, KTUNE_XSTR(cu##name)));         \
  if (!cu.name) {                                                                            \
    return make_error(ErrorCode::kUnavailable,                                               \
                      fmt::format("cuda: the driver lacks {}; is it older than the CUDA {} " \
                                  "toolkit ktune was built with?",                           \
                                  KTUNE_XSTR(cu##name), CUDA_VERSION / 1000));               \
  }
  KTUNE_CUDA_DRIVER_FUNCTIONS(KTUNE_CUDA_LOAD)
#undef KTUNE_CUDA_LOAD
  if (CUresult r = cu.Init(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cu.GetErrorName(r, &name);
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("cuda: cuInit failed: {} (no usable GPU?)", name ? name : "?"));
  }
  int count = 0;
  if (cu.DeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    return make_error(ErrorCode::kUnavailable, "cuda: no CUDA device visible to this process");
  }
  return cu;
}

}  // namespace

Result<const CudaDriver*> cuda_driver() {
  static std::once_flag once;
  static Result<CudaDriver> driver = make_error(ErrorCode::kInternal, "unset");
  std::call_once(once, [] { driver = open_driver(); });
  if (!driver) return std::unexpected(driver.error());
  return &*driver;
}

Status cuda_status(const CudaDriver& cu, CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return {};
  const char* name = nullptr;
  const char* text = nullptr;
  if (cu.GetErrorName) cu.GetErrorName(r, &name);
  if (cu.GetErrorString) cu.GetErrorString(r, &text);
  // The call's text up to its argument list: "MemAlloc(&ptr, bytes)" -> "cuMemAlloc".
  std::string call(what);
  if (auto p = call.find('('); p != std::string::npos) call.resize(p);
  // Out of memory is data, so that callers tell a problem too big for the GPU from a failure.
  const ErrorCode code =
      r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCode::kResourceExhausted : ErrorCode::kIo;
  return make_error(
      code, fmt::format("cu{}: {} ({})", call, name ? name : "?", text ? text : "unknown error"));
}

bool cuda_error_is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

std::string CudaDeviceInfo::arch() const {
  // Hopper's wgmma and setmaxnreg need the arch-specific target; Blackwell has its own "a"
  // targets too, but our templates do not use their instructions.
  const std::string suffix = cc_major == 9 && cc_minor == 0 ? "a" : "";
  return fmt::format("sm_{}{}{}", cc_major, cc_minor, suffix);
}

std::string CudaDeviceInfo::fingerprint() const {
  return fmt::format("{} cc{}.{} sms={} driver={}", name, cc_major, cc_minor, sm_count,
                     driver_version);
}

Result<CudaDeviceInfo> cuda_device_info(int index) {
  auto drv = cuda_driver();
  if (!drv) return std::unexpected(drv.error());
  const CudaDriver& cu = **drv;
  CudaDeviceInfo info;
  info.index = index;
  CUdevice dev = 0;
  KTUNE_CU(DeviceGet(&dev, index));
  char name[256] = {};
  KTUNE_CU(DeviceGetName(name, sizeof name, dev));
  info.name = name;
  KTUNE_CU(DeviceGetAttribute(&info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  KTUNE_CU(DeviceGetAttribute(&info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  KTUNE_CU(DeviceGetAttribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  KTUNE_CU(DeviceGetAttribute(&info.l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev));
  KTUNE_CU(DeviceGetAttribute(&info.max_shared_per_block_optin,
                              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  KTUNE_CU(DeviceTotalMem(&info.total_mem, dev));
  KTUNE_CU(DriverGetVersion(&info.driver_version));
  return info;
}

}  // namespace ktune

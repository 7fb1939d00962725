// CudaBackend: CUDA C++ compiled by NVRTC (libnvrtc, opened with dlopen) to a cubin for one
// architecture, stored in the content-addressed code cache. Kernels run only where the GPU's
// buffers are: a ktune-worker's CUDA handler loads the cubin (src/backend/cuda_module.h), so
// load() here answers kUnavailable.
//
// The translation unit is the defines, then the user's source under `#line 1 "<name>"` (so that
// NVRTC's messages name the source and its own line numbers); the entry must be an
// extern "C" __global__ function taking one parameter per signature argument (a pointer to the
// element type for buffers, the scalar's type for scalars). No include path is given: kernels
// are self-contained (NVRTC's built-in headers only).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/backend/code_cache.h"

namespace ktune {

template <class T>
class SingleFlight;     // src/core/single_flight.h
struct CudaDeviceInfo;  // src/core/cuda_driver.h

struct CudaCompileOptions {
  // Target, e.g. "sm_90a" or "sm_80"; empty: the architecture of GPU `device` (cuda_device_info),
  // which fails with kUnavailable on a machine without one.
  std::string arch;
  int device = 0;
  std::vector<std::string> flags = {"-std=c++17", "-default-device"};
  // Called with the kernel's name and its compile command (`ktune --verbose`), before compiling
  // it; not for code-cache hits. Must be thread-safe (compiles run in parallel); no cache key
  // depends on it.
  std::function<void(const std::string& kernel, const std::string& command)> on_command{};
};

class CudaBackend final : public Backend {
 public:
  // kUnavailable when libnvrtc cannot be opened, or when no arch is given and no GPU is visible;
  // kInvalidArgument for an arch that is not a real one NVRTC supports ("compute_90", "sm_70").
  [[nodiscard]] static Result<CudaBackend> create(CudaCompileOptions options,
                                                  std::filesystem::path cache_dir);
  // A backend for a device described rather than opened (no driver call): its arch, its SM
  // count in the limits (the rest: the arch's), its fingerprint. For compiling what a device
  // will need while the driver starts (core/cuda_predict.h); options.arch is replaced.
  [[nodiscard]] static Result<CudaBackend> for_device(CudaCompileOptions options,
                                                      std::filesystem::path cache_dir,
                                                      const CudaDeviceInfo& device);

  [[nodiscard]] DeviceKind kind() const override { return DeviceKind::kCuda; }
  // The GPU's CudaDeviceInfo::fingerprint(), or "no device; arch sm_90a" when compiling only.
  [[nodiscard]] std::string device_fingerprint() const override;
  // "nvrtc 13.0 sm_90a <flags>".
  [[nodiscard]] std::string toolchain_fingerprint() const override;
  // kCompile with NVRTC's log (its head and tail) on failure, naming the source and options.
  [[nodiscard]] Result<Artifact> compile(const KernelSource& source) const override;
  // kUnavailable (ErrorCode has no kUnsupported): CUDA kernels are launched by the worker's
  // CUDA handler.
  [[nodiscard]] Result<std::unique_ptr<Module>> load(const Artifact& artifact) const override;

  // The GPU's limits; compiling only (--arch, no GPU): those of the arch's largest GPU (sm_90:
  // an H100's 132 SMs and 227 KiB of shared memory per block).
  [[nodiscard]] DeviceLimits device_limits() const override { return limits_; }
  [[nodiscard]] const std::string& arch() const { return arch_; }
  [[nodiscard]] static std::string translation_unit(const KernelSource& source);

 private:
  CudaBackend(CudaCompileOptions options, std::filesystem::path cache_dir, std::string arch,
              std::string device_fingerprint, std::string nvrtc_version, DeviceLimits limits);
  CudaCompileOptions options_;
  CodeCache code_cache_;
  std::string arch_;
  std::string device_fingerprint_;
  std::string nvrtc_version_;
  DeviceLimits limits_;
  // Compiles under way, by code-cache folder and key (shared by every backend of the process).
  std::shared_ptr<SingleFlight<Result<Artifact>>> in_flight_;
};

}  // namespace ktune

// Compiling a CUDA tuning's templates while the driver starts. A cold tuning's critical path
// began with the parent's cuInit (0.1-0.2 s on an H200 host) and then its slowest compile, yet a
// compile needs only the GPU's model, which NVML tells in about 20 ms (core/cuda_predict.h).
//
// A CudaCompileAhead takes such a prediction and, on a thread of its own, asks `plan` for the
// candidates to compile (built on a backend for the predicted device, CudaBackend::for_device,
// with the device's hint set for the SM-counting supports() rules: ScopedCudaDeviceHint), then
// compiles them on a pool into the code cache. The tuning that follows, on the backend opened on
// the device, compiles the same keys: CudaBackend's compiles under way are shared by every backend
// of the process, so each joins the NVRTC run or finds its cubin. Nothing here is measured or
// recorded; a wrong prediction costs compiles only.
//
// Internal header (src/): used by the CLI's CUDA tunings (`ktune gemm`, `ktune tune` on CUDA
// specs).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/choice/choice.h"

namespace ktune {

class ThreadPool;

class CudaCompileAhead {
 public:
  // The candidates to compile, made on `predicted` (their supports() already checked); empty:
  // nothing (say, the tuning cache answers). Called on the planning thread.
  using Plan = std::function<std::vector<ChoicePtr>(const CudaBackend& predicted)>;

  // Nothing when `device` is nullopt. `options` must be the ones the tuning's backend is opened
  // with (its flags are part of each compile's key); `jobs` 0: every core.
  CudaCompileAhead(std::optional<CudaDeviceInfo> device, CudaCompileOptions options,
                   std::filesystem::path cache_dir, unsigned jobs, Plan plan);
  // Drops the compiles not started and waits for those running.
  ~CudaCompileAhead();
  CudaCompileAhead(const CudaCompileAhead&) = delete;
  CudaCompileAhead& operator=(const CudaCompileAhead&) = delete;

  // Waits until every planned compile has finished (tests).
  void wait();

  // The device it compiles for; nullopt when it does nothing.
  [[nodiscard]] const std::optional<CudaDeviceInfo>& device() const { return device_; }
  // Where `opened` (the driver's answer for the same device) would have compiled otherwise: its
  // arch or SM count differs from the prediction. A message saying so, or empty.
  [[nodiscard]] std::string mismatch(const CudaDeviceInfo& opened) const;

 private:
  struct State;
  std::optional<CudaDeviceInfo> device_;
  std::unique_ptr<State> state_;
};

}  // namespace ktune

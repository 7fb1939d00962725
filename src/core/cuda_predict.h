// Facts of a CUDA device before cuInit returns: NVML (libnvidia-ml.so.1, opened with dlopen)
// answers in about 20 ms what the driver answers after its initialisation (0.1-0.2 s on an H200
// host), so that work which depends only on the device's model (rendering and compiling kernels
// for its architecture) can start while the driver starts.
//
// A prediction, never an identity: NVML counts devices in PCI order and CUDA in its own
// (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES), and a MIG instance is a fraction of its GPU. So a
// prediction is made only where it cannot depend on the mapping (every GPU of the machine the
// same model, none in MIG mode, and the index one that CUDA_VISIBLE_DEVICES leaves visible),
// and whatever is recorded (tuning-cache keys, measurements) comes from the driver. Work started
// on a wrong prediction is wasted, not wrong. A tuning-cache lookup may use one (`ktune gemm`'s
// hit without the driver): the key holds the name, compute capability, SM count and driver
// version, so a wrong prediction misses (and the driver is started), while a hit is an answer
// that a tuning on the driver recorded under that same key.
//
// Internal header (src/).
#pragma once

#include <optional>
#include <string>

#include "core/cuda_driver.h"

namespace ktune {

// The predicted facts of CUDA device `index`: name, compute capability, SM count (NVML's CUDA
// cores over the cores per SM of the compute capability), driver version; the other fields 0.
// nullopt without NVML, with GPUs of more than one model, with MIG enabled, for an index that
// CUDA_VISIBLE_DEVICES hides, or for a compute capability whose cores per SM are not known here.
[[nodiscard]] std::optional<CudaDeviceInfo> predict_cuda_device(int index);

// A prediction as messages name it: "NVIDIA H200 (sm_90a, 132 SMs, from NVML)".
[[nodiscard]] std::string prediction_text(const CudaDeviceInfo& predicted);

// How many devices CUDA_VISIBLE_DEVICES (`visible`; nullptr: unset) leaves CUDA on a machine of
// `count` GPUs, as the driver reads it: entries up to the first that names no device (an index
// past the count, text that is not an index or a GPU UUID); nullopt for a MIG instance's UUID
// (a fraction of a GPU: not predicted).
[[nodiscard]] std::optional<unsigned> cuda_visible_count(const char* visible, unsigned count);

// The cores per SM of a compute capability (the CUDA C++ Programming Guide's table of
// arithmetic instructions per SM: 64 on 6.0, 7.x and 8.0, 128 on 6.1-6.2, 8.6-8.9, 9.0, 10.x and
// 12.x); 0 when not known.
[[nodiscard]] int cuda_cores_per_sm(int cc_major, int cc_minor);

// The innermost hint (ScopedCudaDeviceHint) of this thread for device `index`, or nullptr.
[[nodiscard]] const CudaDeviceInfo* cuda_device_hint(int index);

// For the code that asks cuda_device_info() about a device to decide what to compile (the GEMM
// templates' supports() rules count SMs): facts that stand in for device `index` in this thread
// while the object lives. Used to choose what to compile early; never where something is
// measured or recorded.
class ScopedCudaDeviceHint {
 public:
  explicit ScopedCudaDeviceHint(CudaDeviceInfo facts);
  ~ScopedCudaDeviceHint();
  ScopedCudaDeviceHint(const ScopedCudaDeviceHint&) = delete;
  ScopedCudaDeviceHint& operator=(const ScopedCudaDeviceHint&) = delete;

 private:
  friend const CudaDeviceInfo* cuda_device_hint(int index);
  const ScopedCudaDeviceHint* previous_;  // the enclosing hint of this thread (another device's)
  CudaDeviceInfo facts_;
};

}  // namespace ktune

// The CUDA adapter of DeviceAdapter: device 0 of what the process sees (a worker sees one GPU
// through CUDA_VISIBLE_DEVICES), opened on first use, so that a worker serving only CPU
// candidates never touches the driver. Then: the device's primary context (cuBLAS, through the
// runtime, uses it too) and one non-blocking stream.
//
// Launches: a loaded cubin's kernel (cached by cubin, entry and shared bytes) or a
// cuBLAS/cuBLASLt runner (cached for the current problem), then its `then` launches in order on
// the stream. Buffers: CudaProblemBuffers (redzones, pristine copies on the device). For
// problems of kDeviceCheckBytes and more, inputs and outputs are checked on the GPU
// (cuda_check.h) and read back only when an output fails there, for the message: copying and
// comparing on the host took 0.65 s a candidate at 4096^3 bf16 on an H100, longer than the
// tuning itself. Timing: CudaTimer (cuda_timer.h).
//
// A kernel fault (illegal address, ...) is sticky: the context is unusable, so fault() answers
// `restart` and lost() stays true.
#pragma once

#include <memory>

#include "device/device.h"

namespace ktune {

[[nodiscard]] std::unique_ptr<DeviceAdapter> make_cuda_device();

}  // namespace ktune

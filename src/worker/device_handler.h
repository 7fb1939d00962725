// DeviceHandler: what a ktune-worker does with a request for one kind of device. The worker loop
// picks the handler by the request's LaunchSpec kind and creates it on first use, so a worker
// that only ever serves CPU candidates never opens a GPU driver.
#pragma once

#include <memory>

#include "worker/worker_protocol.h"

namespace ktune {

class DeviceHandler {
 public:
  virtual ~DeviceHandler() = default;
  // Loads the candidate, prepares the problem's buffers (kept across requests for the same
  // problem and seed), gets the reference's outputs, verifies and measures as the request asks.
  // Never throws; every failure is the response's outcome. A response with `restart` set tells
  // the loop to exit after sending it.
  [[nodiscard]] virtual BenchmarkResponse handle(const BenchmarkRequest& request) = 0;
};

// LaunchKind::kCpuSharedObject: the CPU benchmarker on host buffers (worker/cpu_handler.cpp).
[[nodiscard]] std::unique_ptr<DeviceHandler> make_cpu_handler();
// LaunchKind::kCudaCubin and kCudaLibrary: device buffers with redzones, CUDA events, cuBLAS
// references (worker/cuda_handler.cpp). The GPU is device 0 of what CUDA_VISIBLE_DEVICES shows.
[[nodiscard]] std::unique_ptr<DeviceHandler> make_cuda_handler();
// LaunchKind::kOpenCLProgram: device buffers with redzones, profiling events, the device that
// $KTUNE_OPENCL_DEVICE names (worker/opencl_handler.cpp).
[[nodiscard]] std::unique_ptr<DeviceHandler> make_opencl_handler();

}  // namespace ktune

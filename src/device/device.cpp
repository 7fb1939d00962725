// Which adapter runs a launch kind, and the adapters' factory.
#include "device/device.h"

#include "device/cpu/cpu_device.h"
#include "device/cuda/cuda_device.h"
#include "device/opencl/opencl_device.h"

namespace ktune {

DeviceKind launch_device(LaunchKind kind) {
  switch (kind) {
    case LaunchKind::kCpuSharedObject:
    case LaunchKind::kCpuLibrary:
      return DeviceKind::kCpu;
    case LaunchKind::kCudaCubin:
    case LaunchKind::kCudaLibrary:
      return DeviceKind::kCuda;
    case LaunchKind::kOpenCLProgram:
      return DeviceKind::kOpenCL;
  }
  return DeviceKind::kCpu;
}

std::unique_ptr<DeviceAdapter> make_device(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return make_cpu_device();
    case DeviceKind::kCuda:
      return make_cuda_device();
    case DeviceKind::kOpenCL:
      return make_opencl_device();
  }
  return make_cpu_device();
}

}  // namespace ktune

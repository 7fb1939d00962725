// Which adapter runs a launch kind, and the adapters' factory.
#include "device/device.h"

#include <string>
#include <utility>

#include "core/build_support.h"
#include "device/cpu/cpu_device.h"
#include "device/cuda/cuda_device.h"
#include "device/opencl/opencl_device.h"

namespace ktune {
namespace {

// A device kind that this build left out (KTUNE_CUDA=OFF, no OpenCL headers...): opening it
// answers not_built(), as opening a device that the machine lacks answers kUnavailable, so that a
// worker asked to run such a candidate reports it like any other unusable device.
class NotBuiltDevice final : public DeviceAdapter {
 public:
  NotBuiltDevice(std::string name, BuildFeature feature)
      : name_(std::move(name)), feature_(feature) {}
  std::string_view name() const override { return name_; }
  Status open() override { return std::unexpected(not_built(feature_)); }
  Result<std::unique_ptr<DeviceProblem>> allocate(const Problem&, std::uint64_t, DataSet) override {
    return std::unexpected(not_built(feature_));
  }
  Result<std::shared_ptr<const DeviceLaunch>> load(const LaunchSpec&, const Problem&) override {
    return std::unexpected(not_built(feature_));
  }

 private:
  std::string name_;
  BuildFeature feature_;
};

}  // namespace

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
#if KTUNE_HAVE_CUDA
      return make_cuda_device();
#else
      return std::make_unique<NotBuiltDevice>("CUDA", BuildFeature::kCuda);
#endif
    case DeviceKind::kOpenCL:
#if KTUNE_HAVE_OPENCL
      return make_opencl_device();
#else
      return std::make_unique<NotBuiltDevice>("OpenCL", BuildFeature::kOpenCL);
#endif
  }
  return make_cpu_device();
}

}  // namespace ktune

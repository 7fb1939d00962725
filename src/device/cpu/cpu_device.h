// The CPU adapter of DeviceAdapter: host buffers (ProblemBuffers: redzones, poisoned outputs,
// pristine copies), shared objects loaded once per path, OpenBLAS calls (kCpuLibrary), the
// host's clock and the targeted cache flush of CpuBenchmarker.
#pragma once

#include <memory>

#include "device/device.h"
#include "ktune/choice/choice.h"

namespace ktune {

[[nodiscard]] std::unique_ptr<DeviceAdapter> make_cpu_device();
// A function of ktune's own process (a choice's load(), a trusted reference) as a launch of the
// CPU device, for RequestFlow::serve and prepare_reference.
[[nodiscard]] std::shared_ptr<const DeviceLaunch> make_cpu_launch(KernelFn fn);

}  // namespace ktune

// The OpenCL adapter of DeviceAdapter: one context with an in-order profiling queue on the device
// that $KTUNE_OPENCL_DEVICE names (one worker per device), programs cached by artifact path,
// kernels by artifact and entry, the problem's buffers on the device with redzones
// (opencl_buffers.h). A run uploads the host buffers (inputs seeded, outputs poisoned), refills
// the redzones, launches, waits; the checks read everything back once, so that
// check_candidate() verifies exactly as on the CPU. Timing: profiling events (END - START) on
// the in-order queue; the flush overwrites a scratch buffer of twice the device's global-memory
// cache (capped at 64 MiB).
//
// A failed enqueue or wait may leave the context unusable (a GPU's lost context): every fault
// answers `restart`, so the next candidate gets a fresh worker.
#pragma once

#include <memory>

#include "device/device.h"

namespace ktune {

[[nodiscard]] std::unique_ptr<DeviceAdapter> make_opencl_device();

}  // namespace ktune

// The request flow of one device kind as the worker module runs it: RequestFlow (device/serve.h)
// on a fresh adapter, reading the parent's reference files with read_reference_file. The worker
// loop keeps one per device kind, created on first use, so that a worker that only ever serves
// CPU candidates never opens a GPU driver; CandidateRunner keeps one for ktune's own process.
#pragma once

#include <memory>

#include "device/serve.h"
#include "ktune/core/device.h"

namespace ktune {

[[nodiscard]] std::unique_ptr<RequestFlow> make_request_flow(DeviceKind kind);

}  // namespace ktune

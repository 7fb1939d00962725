// DeviceAdapter: what ktune needs from one kind of device to run, verify and measure a candidate,
// whatever the device: open it, put a problem's buffers on it (redzones, poisoned outputs,
// pristine copies), load a LaunchSpec's artifact, enqueue it on the buffers, check a run
// (CheckedBuffers: redzones, inputs unchanged, outputs read back, an optional screen where the
// outputs are), and time samples with a cache flush before each. The request flow (serve.h) is
// written once on top of it; src/device/cpu, cuda and opencl are the adapters.
//
// Internal (src/): the worker and CandidateRunner use it; nothing public exposes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "bench/candidate_check.h"
#include "bench/measure_loop.h"
#include "ktune/bench/bench_options.h"
#include "ktune/core/device.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {

// A LaunchSpec (with its `then` launches) loaded on a device, for one problem's shapes; what it
// holds is the adapter's. Only the adapter that loaded it enqueues it.
class DeviceLaunch {
 public:
  virtual ~DeviceLaunch() = default;
};

// One problem's buffers on a device, seeded from (problem, seed) when allocated.
class DeviceProblem : public CheckedBuffers {
 public:
  // One run of `launch` on these buffers, asynchronous where the device is (finish() waits).
  [[nodiscard]] virtual Status enqueue(const DeviceLaunch& launch) = 0;
  // The samples of `launch` on these buffers for measure_samples(): the device's clock and
  // flush. The source lives no longer than this problem.
  [[nodiscard]] virtual Result<std::unique_ptr<SampleSource>> timer(
      const DeviceLaunch& launch, const BenchOptions& options) = 0;
};

class DeviceAdapter {
 public:
  virtual ~DeviceAdapter() = default;
  // "CPU", "CUDA", "OpenCL": for messages.
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Opens the device on first use and keeps the first answer; kUnavailable without one.
  [[nodiscard]] virtual Status open() = 0;
  // The problem's buffers, inputs from `seed` as data set `set` (tensor_fill.h).
  // kResourceExhausted when they do not fit; kInvalidArgument for a problem this device cannot
  // hold (tensor offsets on OpenCL).
  [[nodiscard]] virtual Result<std::unique_ptr<DeviceProblem>> allocate(const Problem& problem,
                                                                        std::uint64_t seed,
                                                                        DataSet set) = 0;
  // Loads `spec` for `problem` (cached where loading costs). kUnavailable when this machine
  // lacks what it needs (a library), kInvalidArgument when a library cannot run the problem.
  [[nodiscard]] virtual Result<std::shared_ptr<const DeviceLaunch>> load(
      const LaunchSpec& spec, const Problem& problem) = 0;

  // What a failed device call left behind: `restart` when the device cannot serve another
  // request (a sticky CUDA error, a lost OpenCL context); the message says so.
  struct Fault {
    std::string message;
    bool restart = false;
  };
  [[nodiscard]] virtual Fault fault(std::string message) { return {std::move(message), false}; }
  // True once a fault has made the device unusable.
  [[nodiscard]] virtual bool lost() const { return false; }
};

// The device that runs a launch kind: CPU for shared objects and CPU libraries, CUDA for cubins
// and CUDA libraries, OpenCL for programs.
[[nodiscard]] DeviceKind launch_device(LaunchKind kind);
// A fresh adapter (nothing opened yet). CUDA: device 0 of what CUDA_VISIBLE_DEVICES shows;
// OpenCL: the device $KTUNE_OPENCL_DEVICE names.
[[nodiscard]] std::unique_ptr<DeviceAdapter> make_device(DeviceKind kind);

}  // namespace ktune

// RequestFlow: the one way a BenchmarkRequest is answered on any device, in a ktune-worker and in
// ktune's own process alike:
//   1. the device opened (once) and the candidate's LaunchSpec loaded (the adapter caches);
//   2. the problem prepared: its buffers on the device and the reference's outputs, from the
//      parent's file, from the reference launch run here, or none; kept while the problem, the
//      seed and the reference's identity stay the same, since seeding large inputs costs more
//      than running many kernels. With a reference launch, a second set of buffers holds the
//      stress data set (tensor_fill.h) and the reference's outputs on it;
//   3. verified by check_candidate() (bench/candidate_check.h) against that reference, twice:
//      on the uniform data set, then on the stress set (or on the uniform set again, its
//      outputs poisoned again), so that neither a kernel right only for small values nor one
//      right only on its first call passes;
//   4. measured by measure_samples() (bench/measure_loop.h) with the device's timer and flush,
//      each timed run starting from poisoned outputs and checked by check_run() after it
//      (device/timed_checks.h), so that a candidate that skips work when called again is
//      rejected, not timed.
// A failed device call goes through DeviceAdapter::fault(): a sticky error answers `restart`,
// and every later request is refused until the worker is replaced.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bench/candidate_check.h"
#include "device/device.h"
#include "device/request.h"

namespace ktune {

// Reads the parent's reference file (the worker module's read_reference_file, which sits above
// this module).
using ReferenceReader = std::function<Result<ReferenceOutputs>(
    const std::filesystem::path& path, const Problem& problem,
    const std::optional<Tolerance>& tolerance)>;

class RequestFlow {
 public:
  RequestFlow(std::unique_ptr<DeviceAdapter> device, ReferenceReader read_reference);
  ~RequestFlow();
  RequestFlow(const RequestFlow&) = delete;
  RequestFlow& operator=(const RequestFlow&) = delete;

  [[nodiscard]] DeviceAdapter& device() { return *device_; }

  // Loads request.launch and answers. Never throws; every failure is the response's outcome.
  [[nodiscard]] BenchmarkResponse serve(const BenchmarkRequest& request);
  // The same with a candidate the caller loaded (in ktune's own process: a choice that has a
  // function but no LaunchSpec); request.launch is not read.
  [[nodiscard]] BenchmarkResponse serve(const BenchmarkRequest& request,
                                        const DeviceLaunch& candidate);

  // Prepares request's problem with `reference` run here (ktune's own process, which trusts
  // it) as its reference: later requests of the same problem and seed that name no reference
  // of their own are verified against it. Returns the reference run's time in ns (for
  // deadlines); kInvalidArgument when it does not run soundly.
  [[nodiscard]] Result<double> prepare_reference(const BenchmarkRequest& request,
                                                 const DeviceLaunch& reference);
  // The prepared problem's reference outputs; null when none.
  [[nodiscard]] const ReferenceOutputs* reference() const;

 private:
  struct Prepared;
  // How one request ends, before it becomes the response.
  struct Verdict {
    Outcome outcome = Outcome::kOk;
    std::string message;
    bool restart = false;
    [[nodiscard]] bool ok() const { return outcome == Outcome::kOk; }
  };

  [[nodiscard]] BenchmarkResponse answer(const BenchmarkRequest& request,
                                         const DeviceLaunch* candidate);
  [[nodiscard]] Verdict run(const BenchmarkRequest& request, const DeviceLaunch* candidate,
                            BenchmarkResponse* response);
  [[nodiscard]] Verdict start(const BenchmarkRequest& request);
  [[nodiscard]] Verdict prepare(const BenchmarkRequest& request);
  [[nodiscard]] Verdict reference_runs(const BenchmarkRequest& request, Prepared& p,
                                       const DeviceLaunch& reference);
  [[nodiscard]] Verdict verify(const BenchmarkRequest& request, const DeviceLaunch& candidate);
  [[nodiscard]] Verdict measure(const BenchmarkRequest& request, const DeviceLaunch& candidate,
                                BenchmarkResponse* response);
  [[nodiscard]] Verdict failure(const Error& error);
  [[nodiscard]] Verdict failure(std::string message);

  std::unique_ptr<DeviceAdapter> device_;
  ReferenceReader read_reference_;
  std::unique_ptr<Prepared> prepared_;
};

}  // namespace ktune

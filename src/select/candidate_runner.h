// CandidateRunner: verifies and measures the candidates of one problem, one at a time.
//
// Every run is a BenchmarkRequest answered by the one request flow (device/serve.h): in a
// ktune-worker through a WorkerPool, or by this process's own RequestFlow on the problem's
// device, so that both are the same code.
//
// CPU problems: a choice with a LaunchSpec (a template's shared object, an OpenBLAS call) runs in
// a worker when a pool is given; choices without one (a library call followed by a host pass),
// and everything when no pool is given, run in this process. With a pool, a reference with a
// LaunchSpec runs only in workers, as on devices (each worker runs it before its first candidate
// of the problem); one without (an extern followed by the host epilogue) runs here and its
// outputs reach the workers through a file in a private directory. This process runs a
// reference itself only without a pool, or once a choice that runs here needs it.
//
// Device problems (CUDA, OpenCL): every candidate and the reference run where the device's
// buffers are, described by LaunchSpecs: in a worker when a pool is given, else in this
// process. The flow runs the reference itself before the problem's first candidate.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/serve.h"
#include "ktune/choice/choice.h"
#include "ktune/select/selector.h"
#include "select/abandon_rule.h"
#include "worker/worker.h"

namespace ktune {

struct RunResult {
  Outcome outcome = Outcome::kOk;
  std::string message;
  std::optional<BenchStats> stats;  // when measured and ok
};

class CandidateRunner {
 public:
  // `pool` null: every candidate runs in this process.
  CandidateRunner(const Backend& backend, const Problem& problem, const SelectorOptions& options,
                  WorkerPool* pool);
  ~CandidateRunner();  // removes the reference file and its directory
  CandidateRunner(const CandidateRunner&) = delete;
  CandidateRunner& operator=(const CandidateRunner&) = delete;

  // Runs the reference once (null: none): in a worker when isolated and it has a LaunchSpec,
  // else here (writing its outputs for the workers when isolated). kInvalidArgument when the
  // reference fails to load or run soundly. May be called again (a stand-in reference found
  // among the candidates): it replaces what the last call prepared.
  [[nodiscard]] Status prepare(Choice* reference);
  // No reference: `candidate`, which has passed run(), is prepared as the reference from now
  // on (StageRunner::adopt_stand_in); on a device it is run as one at once. A failure leaves
  // no reference.
  [[nodiscard]] Status adopt_stand_in(Choice& candidate);
  // Verifies the candidate and, with `measure`, measures it: kAbandoned, with the statistics of
  // its first runs, when they are all clearly slower than the best candidate run() measured
  // before (SelectorOptions::abandon, select/abandon_rule.h).
  [[nodiscard]] RunResult run(Choice& choice, bool measure);
  // Measures the given candidates again, `rounds` times each, alternating between them every
  // round; the stats of each in the same order. Candidates must have passed run().
  // `round_bench`: how each round measures; empty: one warm-up and 3 timed runs.
  [[nodiscard]] Result<std::vector<BenchStats>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_options = std::nullopt);
  // Whether `choice` runs in a worker (else in this process).
  [[nodiscard]] bool isolated(const Choice& choice) const;

 private:
  [[nodiscard]] Status prepare_reference(Choice& reference);
  void clear_reference();  // no reference from now on; the reference file removed
  // The reference prepared by a worker (its time from the response) or in this process.
  [[nodiscard]] Status prepare_in_worker(const Choice& reference, const LaunchSpec& launch);
  [[nodiscard]] Status prepare_here(Choice& reference);
  // A device problem's reference that runs on the host (Choice::runs_on_host): run here on a
  // CPU flow over host copies of the same data, its outputs into the reference file.
  [[nodiscard]] Status prepare_on_host(Choice& reference);
  [[nodiscard]] bool on_device() const { return device_ != DeviceKind::kCpu; }
  // The request for `choice`; `launch` from its LaunchSpec when it has one.
  [[nodiscard]] BenchmarkRequest request_for(const Choice& choice, bool measure,
                                             const BenchOptions& bench);
  // In a worker (the choice's LaunchSpec, the reference file or launch).
  [[nodiscard]] RunResult in_worker(const BenchmarkRequest& request, const BenchOptions& bench);
  // In this process's flow: a device problem's LaunchSpec, or a CPU choice's own function.
  [[nodiscard]] RunResult in_process(Choice& choice, const BenchmarkRequest& request);
  [[nodiscard]] RunResult run_request(Choice& choice, const BenchmarkRequest& request,
                                      const BenchOptions& bench);
  [[nodiscard]] std::chrono::milliseconds deadline(const BenchOptions& bench) const;

  const Backend& backend_;
  const Problem& problem_;
  const SelectorOptions& options_;
  WorkerPool* pool_;
  DeviceKind device_ = DeviceKind::kCpu;
  std::unique_ptr<RequestFlow> local_;          // this process's flow on the problem's device
  Choice* reference_ = nullptr;                 // prepare()'s, for a late prepare_here()
  bool prepared_here_ = false;                  // local_ holds the reference's outputs
  std::optional<LaunchSpec> reference_launch_;  // a reference the workers run
  std::filesystem::path reference_file_;        // a reference only this process can run
  double reference_ns_ = 0;                     // one run of the reference, for deadlines
  double prepare_ms_ = 0;  // the reference's preparing request in a worker, whole, for deadlines
  // The fastest candidates run() measured in full: the abandonment bound and the deadline of
  // every later request. Tracked here, where every request passes, so that whatever order the
  // selection runs candidates in, each is held against the best before it.
  BestSoFar best_;
  // CPU choices run in this process, loaded once.
  std::map<const Choice*, std::shared_ptr<const DeviceLaunch>> loaded_;
  std::uint64_t next_id_ = 1;
};

}  // namespace ktune

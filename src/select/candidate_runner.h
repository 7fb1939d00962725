// CandidateRunner: verifies and measures the candidates of one problem, one at a time.
//
// CPU problems: generated code (a choice with a LaunchSpec) runs in a ktune-worker through a
// WorkerPool when one is given; library calls, and everything when no pool is given, run in this
// process. The reference runs in this process: it is trusted, and its outputs go to the workers
// through a file.
//
// Device problems (CUDA): every candidate and the reference run where the device's buffers are,
// described by LaunchSpecs: in a worker when a pool is given, else in a DeviceHandler of this
// process. The handler runs the reference itself before the problem's first candidate.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/candidate_check.h"
#include "ktune/choice/choice.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "worker/device_handler.h"
#include "ktune/tensor/problem_buffers.h"
#include "ktune/select/selector.h"
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
  ~CandidateRunner();  // removes the reference file
  CandidateRunner(const CandidateRunner&) = delete;
  CandidateRunner& operator=(const CandidateRunner&) = delete;

  // Runs the reference once (null: none) and, with a pool, writes its outputs for the workers.
  // kInvalidArgument when the reference fails to load or run soundly.
  [[nodiscard]] Status prepare(Choice* reference);
  // Verifies the candidate and, with `measure`, measures it.
  [[nodiscard]] RunResult run(Choice& choice, bool measure);
  // Measures the given candidates again, `rounds` times each, alternating between them every
  // round; the stats of each in the same order. Candidates must have passed run().
  // `round_bench`: how each round measures; empty: one warm-up and 3 timed runs.
  [[nodiscard]] Result<std::vector<BenchStats>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_bench = std::nullopt);

 private:
  [[nodiscard]] bool isolated(const Choice& choice) const;
  [[nodiscard]] bool on_device() const { return device_ != DeviceKind::kCpu; }
  [[nodiscard]] Result<BenchmarkRequest> request_for(const Choice& choice, bool measure,
                                                     const BenchOptions& bench);
  // Sends a request to the pool, or to this process's handler for device problems.
  [[nodiscard]] RunResult send(const BenchmarkRequest& request, const BenchOptions& bench);
  [[nodiscard]] std::chrono::milliseconds deadline(const BenchOptions& bench) const;
  [[nodiscard]] RunResult run_in_process(Choice& choice, bool measure);
  [[nodiscard]] RunResult run_in_worker(Choice& choice, bool measure, const BenchOptions& bench);
  [[nodiscard]] RunResult remeasure_in_worker(Choice& choice, const BenchOptions& bench);

  const Backend& backend_;
  const Problem& problem_;
  const SelectorOptions& options_;
  WorkerPool* pool_;
  DeviceKind device_ = DeviceKind::kCpu;
  std::optional<ProblemBuffers> buffers_;         // CPU problems only
  std::optional<LaunchSpec> reference_launch_;    // device problems with a reference
  std::unique_ptr<DeviceHandler> local_handler_;  // device problems without a pool
  CpuBenchmarker bench_;
  std::optional<ReferenceOutputs> reference_;
  std::filesystem::path reference_file_;
  double reference_ns_ = 0;  // one run of the reference, for deadlines
  std::vector<std::pair<const Choice*, KernelFn>> loaded_;  // in-process candidates that passed
  std::uint64_t next_id_ = 1;
};

}  // namespace ktune

// CandidateStageRunner: the StageRunner of Selector::select, a thin adapter over CandidateRunner
// (which runs a candidate in this process or in a worker). The CandidateRunner is made in
// prepare(), after the candidates have compiled, so that a problem's buffers are not held (nor
// seeded) for a selection that the tuning cache answers or that fails to compile.
#pragma once

#include <algorithm>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/core/problem.h"
#include "ktune/select/selector.h"
#include "select/stage_runner.h"

namespace ktune {

class CandidateRunner;  // select/candidate_runner.h

class CandidateStageRunner final : public StageRunner {
 public:
  // `pools`: one per device (SelectorOptions::devices), the first device first; empty: every
  // candidate runs in this process. All must outlive the runner.
  CandidateStageRunner(const Backend& backend, const Problem& problem,
                       const SelectorOptions& options, std::vector<WorkerPool*> pools);
  ~CandidateStageRunner() override;
  CandidateStageRunner(const CandidateStageRunner&) = delete;
  CandidateStageRunner& operator=(const CandidateStageRunner&) = delete;

  // Every device's runner prepared with the reference, in turn (each device computes the
  // reference's outputs itself); the first failure ends it, naming the device.
  [[nodiscard]] Status prepare(Choice* reference) override;
  [[nodiscard]] Status adopt_stand_in(Choice& candidate) override;
  [[nodiscard]] CandidateRun run(Choice& choice, bool measure) override;
  [[nodiscard]] std::size_t devices() const override {
    return std::max<std::size_t>(pools_.size(), 1);
  }
  // A choice that runs in this process (no LaunchSpec on the CPU) runs on the first device's
  // runner while no other device runs anything: it shares the cores their workers measure on.
  [[nodiscard]] CandidateRun run_on(std::size_t device, Choice& choice, bool measure) override;
  [[nodiscard]] Result<std::vector<std::vector<double>>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_bench) override;

 private:
  [[nodiscard]] std::string device_name(std::size_t device) const;

  const Backend& backend_;
  const Problem& problem_;
  const SelectorOptions& options_;
  std::vector<WorkerPool*> pools_;
  std::vector<std::unique_ptr<CandidateRunner>> runners_;  // one per device, from prepare() on
  std::shared_mutex alone_;  // held shared by run_on, exclusively by one that runs here
};

}  // namespace ktune

// CandidateStageRunner: the StageRunner of Selector::select, a thin adapter over CandidateRunner
// (which runs a candidate in this process or in a worker). The CandidateRunner is made in
// prepare(), after the candidates have compiled, so that a problem's buffers are not held (nor
// seeded) for a selection that the tuning cache answers or that fails to compile.
#pragma once

#include <memory>

#include "ktune/backend/backend.h"
#include "ktune/core/problem.h"
#include "ktune/select/selector.h"
#include "select/stage_runner.h"

namespace ktune {

class CandidateRunner;  // select/candidate_runner.h

class CandidateStageRunner final : public StageRunner {
 public:
  // `pool` null: every candidate runs in this process. All must outlive the runner.
  CandidateStageRunner(const Backend& backend, const Problem& problem,
                       const SelectorOptions& options, WorkerPool* pool);
  ~CandidateStageRunner() override;
  CandidateStageRunner(const CandidateStageRunner&) = delete;
  CandidateStageRunner& operator=(const CandidateStageRunner&) = delete;

  [[nodiscard]] Status prepare(Choice* reference) override;
  [[nodiscard]] Status adopt_stand_in(Choice& candidate) override;
  [[nodiscard]] CandidateRun run(Choice& choice, bool measure) override;
  [[nodiscard]] Result<std::vector<std::vector<double>>> remeasure(
      const std::vector<Choice*>& choices, int rounds,
      const std::optional<BenchOptions>& round_bench) override;

 private:
  const Backend& backend_;
  const Problem& problem_;
  const SelectorOptions& options_;
  WorkerPool* pool_;
  std::unique_ptr<CandidateRunner> runner_;  // from prepare() on
};

}  // namespace ktune

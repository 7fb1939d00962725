// CandidateStageRunner: StageRunner over CandidateRunner.
#include "select/candidate_stage_runner.h"

#include "select/candidate_runner.h"

namespace ktune {
namespace {

Error not_prepared() {
  return Error{ErrorCode::kInternal, "candidate runner used before prepare()"};
}

}  // namespace

CandidateStageRunner::CandidateStageRunner(const Backend& backend, const Problem& problem,
                                           const SelectorOptions& options, WorkerPool* pool)
    : backend_(backend), problem_(problem), options_(options), pool_(pool) {}

CandidateStageRunner::~CandidateStageRunner() = default;

Status CandidateStageRunner::prepare(Choice* reference) {
  runner_ = std::make_unique<CandidateRunner>(backend_, problem_, options_, pool_);
  return runner_->prepare(reference);
}

CandidateRun CandidateStageRunner::run(Choice& choice, bool measure) {
  if (!runner_) return {Outcome::kLaunchError, not_prepared().message, std::nullopt};
  RunResult r = runner_->run(choice, measure);
  return {r.outcome, std::move(r.message), r.stats};
}

Result<std::vector<BenchStats>> CandidateStageRunner::remeasure(
    const std::vector<Choice*>& choices, int rounds,
    const std::optional<BenchOptions>& round_bench) {
  if (!runner_) return std::unexpected(not_prepared());
  return runner_->remeasure(choices, rounds, round_bench);
}

}  // namespace ktune

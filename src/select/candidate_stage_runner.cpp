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

Status CandidateStageRunner::adopt_stand_in(Choice& candidate) {
  if (!runner_) return std::unexpected(not_prepared());
  // The stand-in is prepared as a reference is (its LaunchSpec as the requests' reference
  // launch, or run here and passed on in a file): the flow computes its outputs once per
  // worker and compares every later candidate with them.
  return runner_->adopt_stand_in(candidate);
}

CandidateRun CandidateStageRunner::run(Choice& choice, bool measure) {
  if (!runner_) return {Outcome::kLaunchError, not_prepared().message, std::nullopt};
  RunResult r = runner_->run(choice, measure);
  return {r.outcome, std::move(r.message), r.stats};
}

Result<std::vector<std::vector<double>>> CandidateStageRunner::remeasure(
    const std::vector<Choice*>& choices, int rounds,
    const std::optional<BenchOptions>& round_bench) {
  if (!runner_) return std::unexpected(not_prepared());
  // One round per call, so that each round's median stays apart: the decide stage pairs the
  // candidates' rounds (measured back to back) to compare them under the same conditions.
  std::vector<std::vector<double>> out(choices.size());
  for (int r = 0; r < rounds; ++r) {
    auto round = runner_->remeasure(choices, 1, round_bench);
    if (!round) return std::unexpected(round.error());
    if (round->size() != choices.size()) {
      return make_error(ErrorCode::kInternal, "re-measuring: wrong number of statistics");
    }
    for (std::size_t i = 0; i < choices.size(); ++i) out[i].push_back((*round)[i].median_ns);
  }
  return out;
}

}  // namespace ktune

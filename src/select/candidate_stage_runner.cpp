// CandidateStageRunner: StageRunner over CandidateRunner.
#include "select/candidate_stage_runner.h"

#include <fmt/format.h>

#include <mutex>
#include <utility>

#include "select/candidate_runner.h"

namespace ktune {
namespace {

Error not_prepared() {
  return Error{ErrorCode::kInternal, "candidate runner used before prepare()"};
}

}  // namespace

CandidateStageRunner::CandidateStageRunner(const Backend& backend, const Problem& problem,
                                           const SelectorOptions& options,
                                           std::vector<WorkerPool*> pools)
    : backend_(backend), problem_(problem), options_(options), pools_(std::move(pools)) {}

CandidateStageRunner::~CandidateStageRunner() = default;

std::string CandidateStageRunner::device_name(std::size_t device) const {
  if (device < options_.devices.size() && !options_.devices[device].name.empty()) {
    return options_.devices[device].name;
  }
  return fmt::format("device {}", device);
}

Status CandidateStageRunner::prepare(Choice* reference) {
  runners_.clear();
  for (std::size_t d = 0; d < devices(); ++d) {
    runners_.push_back(std::make_unique<CandidateRunner>(backend_, problem_, options_,
                                                         pools_.empty() ? nullptr : pools_[d]));
    if (Status s = runners_.back()->prepare(reference); !s) {
      if (devices() == 1) return s;
      return make_error(s.error().code,
                        fmt::format("on {}: {}", device_name(d), s.error().message));
    }
  }
  return {};
}

Status CandidateStageRunner::adopt_stand_in(Choice& candidate) {
  if (runners_.empty()) return std::unexpected(not_prepared());
  // The stand-in is prepared as a reference is (its LaunchSpec as the requests' reference
  // launch, or run here and passed on in a file): the flow computes its outputs once per
  // worker and compares every later candidate with them. Every device adopts it.
  for (std::size_t d = 0; d < runners_.size(); ++d) {
    if (Status s = runners_[d]->adopt_stand_in(candidate); !s) {
      if (runners_.size() == 1) return s;
      return make_error(s.error().code,
                        fmt::format("on {}: {}", device_name(d), s.error().message));
    }
  }
  return {};
}

CandidateRun CandidateStageRunner::run(Choice& choice, bool measure) {
  if (runners_.empty()) return {Outcome::kLaunchError, not_prepared().message, std::nullopt};
  RunResult r = runners_.front()->run(choice, measure);
  return {r.outcome, std::move(r.message), r.stats};
}

CandidateRun CandidateStageRunner::run_on(std::size_t device, Choice& choice, bool measure) {
  if (device >= runners_.size()) {
    return {Outcome::kLaunchError, not_prepared().message, std::nullopt};
  }
  RunResult r;
  if (runners_.size() > 1 && !runners_.front()->isolated(choice)) {
    const std::unique_lock lock(alone_);
    r = runners_.front()->run(choice, measure);
  } else {
    const std::shared_lock lock(alone_);
    r = runners_[device]->run(choice, measure);
  }
  return {r.outcome, std::move(r.message), r.stats};
}

Result<std::vector<std::vector<double>>> CandidateStageRunner::remeasure(
    const std::vector<Choice*>& choices, int rounds,
    const std::optional<BenchOptions>& round_bench) {
  if (runners_.empty()) return std::unexpected(not_prepared());
  // One round per call, so that each round's median stays apart: the decide stage pairs the
  // candidates' rounds (measured back to back) to compare them under the same conditions.
  std::vector<std::vector<double>> out(choices.size());
  for (int r = 0; r < rounds; ++r) {
    auto round = runners_.front()->remeasure(choices, 1, round_bench);
    if (!round) return std::unexpected(round.error());
    if (round->size() != choices.size()) {
      return make_error(ErrorCode::kInternal, "re-measuring: wrong number of statistics");
    }
    for (std::size_t i = 0; i < choices.size(); ++i) out[i].push_back((*round)[i].median_ns);
  }
  return out;
}

}  // namespace ktune

// SpeculativeDecide (speculative_decide.h).
#include "select/speculative_decide.h"

#include "core/trace.h"

namespace ktune {

SpeculativeDecide::SpeculativeDecide(const SelectContext& ctx, StageRunner& runner,
                                     const std::vector<CandidateRecord>& records)
    : ctx_(ctx), runner_(runner), records_(records), round_(decide_round_bench(ctx.options)) {}

bool SpeculativeDecide::step(const std::vector<std::size_t>& measured) {
  const SelectorOptions& o = ctx_.options;
  if (failed_ || o.close_call_rounds <= 0 || o.close_call_band <= 0) return false;
  const std::vector<std::size_t> finalists =
      deciding_among(records_, measured, o.close_call_band, o.decide_max);
  if (finalists.size() < 2) return false;
  if (!st_) {
    st_.emplace(finalists);
  } else if (st_->d.finalists != finalists) {
    st_ = st_->carried_to(finalists);
    partial_.clear();
  }
  DecideRounds& st = *st_;
  if (st.resolved || st.contenders.size() < 2 || st.least_rounds() >= o.close_call_rounds) {
    return false;
  }
  const std::size_t j = st.contenders[partial_.size()];
  Choice* choice = ctx_.candidates[st.d.finalists[j]].get();
  trace::Span span("decide-ahead", "select", choice->name());
  auto again = runner_.remeasure({choice}, 1, round_);
  if (!again || again->size() != 1 || (*again)[0].size() != 1) {
    failed_ = true;  // the decide stage measures afresh
    st_.reset();
    partial_.clear();
    return false;
  }
  partial_.push_back((*again)[0][0]);
  if (partial_.size() < st.contenders.size()) return true;
  std::vector<std::vector<double>> round;
  for (double m : partial_) round.push_back({m});
  partial_.clear();
  st.add(round);
  if (st.least_rounds() % decide_batch_rounds(o) == 0) (void)st.judge(o.resolution);
  return true;
}

std::optional<DecideRounds> SpeculativeDecide::rounds() const {
  if (!st_ || st_->d.rounds == 0) return std::nullopt;
  return st_;
}

}  // namespace ktune

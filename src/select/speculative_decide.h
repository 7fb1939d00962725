// SpeculativeDecide: the decide stage's rounds, measured while the search waits on compiles.
//
// With overlap (search_batch.h), the measuring thread is idle whenever no compiled candidate
// waits: on an H200 at 4096³, 67-155 ms of a cold GEMM tuning, while the decide stage after the
// search took about 95 ms. In that idle time this measures decide rounds among the finalists of
// the candidates measured so far (decide_stage's band and cap, decide_round_bench's runs), one
// finalist per call, so that a compile that lands waits for one short measurement at most. A
// round is complete once each contender took part, and every decide_batch rounds the rounds are
// judged as the decide stage judges them (dropping the clearly slower, stopping once resolved).
// When a candidate measured later changes the finalists, the rounds are carried over
// (DecideRounds::carried_to): the newcomer takes part from then on. The decide stage goes on
// from them (decide_stage's seed) rather than starting afresh.
//
// Used on one device only, and not while a stand-in for a missing reference is being chosen
// (candidates are taken in order there). Re-measuring that fails once ends it for the search:
// the decide stage then measures afresh (and says so if re-measuring fails there too).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "select/select_stages.h"

namespace ktune {

class SpeculativeDecide {
 public:
  SpeculativeDecide(const SelectContext& ctx, StageRunner& runner,
                    const std::vector<CandidateRecord>& records);

  // One measurement of a finalist among the candidates `measured` (whose records no other thread
  // writes). False when there is nothing to measure: fewer than two finalists, the rounds
  // resolved or at their cap, or re-measuring failed.
  [[nodiscard]] bool step(const std::vector<std::size_t>& measured);

  // The complete rounds so far (the round under way left out); nullopt: none.
  [[nodiscard]] std::optional<DecideRounds> rounds() const;

 private:
  const SelectContext& ctx_;
  StageRunner& runner_;
  const std::vector<CandidateRecord>& records_;
  BenchOptions round_;
  std::optional<DecideRounds> st_;
  std::vector<double> partial_;  // the round under way: medians of st_->contenders[0..size)
  bool failed_ = false;
};

}  // namespace ktune

// BestSoFar: the abandonment bound from the fastest candidates' median and spread, the deadline
// from the best candidate's whole request; and the stages' handling of an abandoned candidate.
#include "select/abandon_rule.h"

#include <gtest/gtest.h>

#include <chrono>

#include "bench/measure_loop.h"
#include "unit/select/select_fixture.h"

namespace ktune {
namespace {

using namespace std::chrono_literals;

// A measurement with median `median` and relative spread `spread` (MAD = spread * median /
// 1.4826).
BenchStats measured(double median, double spread, int runs = 10) {
  return BenchStats{median, median * 0.9, median * 1.5, spread * median / 1.4826, runs};
}

TEST(BestSoFar, NothingSeenGivesNoBoundAndNoDeadline) {
  BestSoFar best;
  EXPECT_TRUE(best.empty());
  EXPECT_EQ(best.abandon_bound_ns(), 0);
  EXPECT_FALSE(best.deadline(5).has_value());
}

TEST(BestSoFar, BoundIsTheBestMedianPlusSigmasOfSpread) {
  BestSoFar best;
  best.observe(measured(1000, 0.05), 100);
  EXPECT_NEAR(best.abandon_bound_ns(), 1000 * (1 + kAbandonSigmas * 0.05), 1e-6);
  // A faster candidate lowers the bound; the spread is the largest of the fastest few.
  best.observe(measured(800, 0.01), 80);
  EXPECT_NEAR(best.abandon_bound_ns(), 800 * (1 + kAbandonSigmas * 0.05), 1e-6);
}

TEST(BestSoFar, QuietMeasurementsStillLeaveTheMinimumMargin) {
  BestSoFar best;
  best.observe(measured(1000, 0), 100);
  EXPECT_NEAR(best.abandon_bound_ns(), 1000 * (1 + kAbandonMinMargin), 1e-6);
}

TEST(BestSoFar, SpreadOfOnlySlowerCandidatesBeyondTheFewIsForgotten) {
  BestSoFar best;
  best.observe(measured(5000, 0.5), 100);  // noisy and slow: pushed out by faster ones
  for (int i = 0; i < kSpreadOver; ++i) best.observe(measured(1000 + i, 0.01), 100);
  EXPECT_NEAR(best.abandon_bound_ns(),
              1000 * (1 + std::max(kAbandonSigmas * 0.01, kAbandonMinMargin)), 1e-6);
}

TEST(BestSoFar, TooFewRunsToKnowTheSpreadGiveNoBound) {
  BestSoFar best;
  best.observe(measured(1000, 0, kAbandonAfterRuns - 1), 100);
  EXPECT_EQ(best.abandon_bound_ns(), 0);
  EXPECT_TRUE(best.deadline(0).has_value());  // its time still bounds a hang
}

TEST(BestSoFar, DeadlineIsAFewBestRequestsPlusStartupAndPreparing) {
  BestSoFar best;
  best.observe(measured(2000, 0.02), 250);  // slower, longer request
  best.observe(measured(1000, 0.02), 120);  // the best: its request counts
  const auto d = best.deadline(/*prepare_ms=*/20);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, kDeadlineStartup +
                    std::chrono::milliseconds(static_cast<long>(20 + kDeadlineFactor * 120)));
  // Seconds, not the old 10 s floor.
  EXPECT_LT(*d, 10s);
}

using AbandonStages = test::SelectFixture;

TEST_F(AbandonStages, AbandonedKeepsItsPartialStatsAndIsNeverThePick) {
  auto cands = test::fake_candidates({{"a"}, {"b"}, {"c"}});
  // b's partial median is the lowest, yet it was abandoned: it must not win or be re-measured.
  runner_.fixed["a"] = {Outcome::kOk, 1000};
  runner_.fixed["b"] = {Outcome::kAbandoned, 500};
  runner_.fixed["c"] = {Outcome::kOk, 1010};
  auto sel = select(cands);
  ASSERT_TRUE(sel.has_value()) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "a");
  const CandidateRecord& b = record_of(*sel, "b");
  EXPECT_EQ(b.outcome, Outcome::kAbandoned);
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_EQ(b.stats->median_ns, 500);
  for (const auto& call : runner_.remeasure_calls) {
    for (const std::string& n : call) EXPECT_NE(n, "b");
  }
  EXPECT_EQ(runner_.verifications.count("b"), 0u);  // never re-verified as the pick
}

TEST_F(AbandonStages, OnlyAbandonedCandidatesLeaveNoValidChoice) {
  auto cands = test::fake_candidates({{"a"}, {"b"}});
  runner_.fixed["a"] = {Outcome::kAbandoned, 900};
  runner_.fixed["b"] = {Outcome::kAbandoned, 800};
  auto sel = select(cands);
  ASSERT_FALSE(sel.has_value());
  EXPECT_EQ(sel.error().code, ErrorCode::kNoValidChoice);
  EXPECT_NE(sel.error().message.find("2 abandoned"), std::string::npos) << sel.error().message;
}

TEST(AbandonedRow, ShowsItsPartialMedianAmongTheFailuresAndIsCounted) {
  TuningRecord r;
  CandidateRecord pick;
  pick.name = "pick";
  pick.stats = measured(1e6, 0.01);
  CandidateRecord slow;
  slow.name = "slow";
  slow.outcome = Outcome::kAbandoned;
  slow.message = "fastest of the first 3 runs is above the bound";
  slow.stats = BenchStats{5e6, 4e6, 6e6, 1e5, 3};
  r.candidates = {slow, pick};
  r.winner = "pick";
  const std::string t = format_autotune_table("op(p)", r, 10, false);
  const auto row = t.find("  slow ");
  ASSERT_NE(row, std::string::npos) << t;
  EXPECT_GT(row, t.find("  pick ")) << t;
  const std::string line = t.substr(row, t.find('\n', row) - row);
  EXPECT_NE(line.find("abandoned"), std::string::npos) << line;
  EXPECT_NE(line.find("median of 3 runs"), std::string::npos) << line;
  EXPECT_NE(t.find("2 candidates (2 valid, 0 failed), 1 of them abandoned as slower"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace ktune

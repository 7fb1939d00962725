// The AUTOTUNE table: the pick first, percentages of the pick's median, and a note where a row's
// median is lower than the pick's (the decide stage chose on paired round ratios).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ktune/select/selector.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CandidateRecord row(const std::string& name, double median_ns) {
  CandidateRecord c;
  c.name = name;
  BenchStats s;
  s.median_ns = s.min_ns = median_ns;
  s.runs = 3;
  c.stats = s;
  return c;
}

TEST(AutotuneTable, ThePickComesFirstAndLowerMediansAreExplained) {
  TuningRecord r;
  r.candidates = {row("slow", 3e6), row("fast_median", 1e6), row("pick", 2e6)};
  r.winner = "pick";
  const std::string t = format_autotune_table("op(p)", r, 10, false);
  const auto pick = t.find("  pick ");
  ASSERT_NE(pick, std::string::npos) << t;
  EXPECT_LT(pick, t.find("  fast_median ")) << t;
  EXPECT_LT(t.find("  fast_median "), t.find("  slow ")) << t;
  EXPECT_THAT(t, HasSubstr("100.0%"));
  EXPECT_THAT(t, HasSubstr("200.0%"));  // fast_median against the pick
  EXPECT_THAT(t, HasSubstr("paired ratios decided for pick"));
}

TEST(AutotuneTable, NoNoteWhenThePickHasTheLowestMedian) {
  TuningRecord r;
  r.candidates = {row("slower", 3e6), row("faster", 1e6)};
  r.winner = "faster";
  const std::string t = format_autotune_table("op(p)", r, 10, false);
  EXPECT_LT(t.find("  faster "), t.find("  slower ")) << t;
  EXPECT_THAT(t, Not(HasSubstr("paired ratios")));
  EXPECT_THAT(t, HasSubstr("33.3%"));
}

// Metrics: a header row names the columns, in the records' order, and each measured row has
// its values there; a row without a value shows "-"; failures have none.
TEST(AutotuneTable, MetricsAreColumnsWithAHeader) {
  TuningRecord r;
  r.candidates = {row("pick", 2e6), row("other", 4e6), row("lost", 1e6)};
  r.candidates[0].metrics = {{"GFLOP/s", 1234.5}, {"GB/s", 2.5}};
  r.candidates[1].metrics = {{"GFLOP/s", 617.25}};
  r.candidates[2].outcome = Outcome::kWrongResult;
  r.candidates[2].message = "max abs error 1";
  r.winner = "pick";
  const std::string t = format_autotune_table("op(p)", r, 10, false);
  EXPECT_THAT(t, HasSubstr("time of best    GFLOP/s       GB/s\n")) << t;
  EXPECT_THAT(t, HasSubstr("100.0%     1234.5      2.500  \n")) << t;
  EXPECT_THAT(t, HasSubstr(" 50.0%      617.2          -  \n")) << t;
  EXPECT_LT(t.find("GFLOP/s"), t.find("  pick ")) << t;
}

TEST(AutotuneTable, NoHeaderWithoutMetrics) {
  TuningRecord r;
  r.candidates = {row("pick", 2e6)};
  r.winner = "pick";
  EXPECT_THAT(format_autotune_table("op(p)", r, 10, false), Not(HasSubstr("of best")));
}

}  // namespace
}  // namespace ktune

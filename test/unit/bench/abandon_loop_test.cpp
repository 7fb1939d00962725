// measure_or_abandon: the measurement loop stops after its first timed runs
// (runs_before_abandoning) when the fastest of them is above the bound, and otherwise samples as
// measure_samples does.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "bench/measure_loop.h"

namespace ktune {
namespace {

// Answers samples from a script (the last value repeats), recording each batch's size.
class ScriptedSource final : public SampleSource {
 public:
  explicit ScriptedSource(std::vector<double> script) : script_(std::move(script)) {}
  Status warm_up(int count) override {
    warmups += count;
    return {};
  }
  Status sample(int count, std::vector<double>* ns) override {
    batches.push_back(count);
    for (int i = 0; i < count; ++i) {
      ns->push_back(script_[std::min(next_++, script_.size() - 1)]);
    }
    return {};
  }
  int warmups = 0;
  std::vector<int> batches;

 private:
  std::vector<double> script_;
  std::size_t next_ = 0;
};

BenchOptions options() {
  BenchOptions o;
  o.warmup_runs = 2;
  o.min_runs = 5;
  o.max_runs = 20;
  o.budget_ms = 1;  // 1e6 ns: 10 runs of 1e5 ns
  return o;
}

TEST(ShouldAbandon, NeedsEnoughRunsAndABound) {
  EXPECT_FALSE(should_abandon({200, 200}, 100));       // fewer than kAbandonAfterRuns
  EXPECT_FALSE(should_abandon({200, 200, 200}, 0));    // no bound
  EXPECT_TRUE(should_abandon({200, 150, 300}, 100));   // every run above
  EXPECT_FALSE(should_abandon({200, 90, 300}, 100));   // one run at or below the bound keeps it
  EXPECT_FALSE(should_abandon({100, 100, 100}, 100));  // at the bound is not above it
}

TEST(MeasureOrAbandon, StopsAfterTheFirstRunsWhenAllAreAboveTheBound) {
  ScriptedSource source({1e5, 1.2e5, 1.1e5, 1e5});
  auto m = measure_or_abandon(options(), source, 0.9e5);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_TRUE(m->abandoned);
  EXPECT_EQ(m->stats.runs, kAbandonAfterRuns);
  EXPECT_EQ(m->stats.min_ns, 1e5);
  EXPECT_EQ(m->stats.median_ns, 1.1e5);
  EXPECT_EQ(source.warmups, 2);  // warmed up and measured as any other: the partial stats count
  EXPECT_EQ(source.batches, (std::vector<int>{1, kAbandonAfterRuns - 1}));
}

TEST(MeasureOrAbandon, OneFastRunAmongTheFirstKeepsMeasuringToTheBudget) {
  ScriptedSource source({1e5, 1.2e5, 0.8e5, 1e5});
  auto m = measure_or_abandon(options(), source, 0.9e5);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->abandoned);
  EXPECT_EQ(m->stats.runs, 10);  // the budget's count from the first sample
  EXPECT_EQ(source.batches, (std::vector<int>{1, kAbandonAfterRuns - 1, 10 - kAbandonAfterRuns}));
}

TEST(MeasureOrAbandon, AShortKernelIsJudgedOnATenthOfItsRunsNotThreeRuns) {
  BenchOptions o = options();
  o.max_runs = 200;
  // 1e4 ns a run: 100 fill the 1 ms budget, a tenth of them is 10.
  EXPECT_EQ(runs_before_abandoning(o, 1e4), 10);
  // Capped by max_runs: 200 of 1e3 ns, not the 100 that would fill a tenth of the budget (and
  // leave nothing to save past the cap).
  EXPECT_EQ(runs_before_abandoning(o, 1e3), 20);
  EXPECT_EQ(runs_before_abandoning(o, 1e6), kAbandonAfterRuns);  // a slow kernel
  ScriptedSource source({1e4});
  auto m = measure_or_abandon(o, source, 0.5e4);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->abandoned);
  EXPECT_EQ(m->stats.runs, 10);
  EXPECT_EQ(source.batches, (std::vector<int>{1, 9}));
}

TEST(MeasureOrAbandon, WithoutABoundSamplesInMeasureSamplesBatches) {
  ScriptedSource source({1e5});
  auto m = measure_or_abandon(options(), source, 0);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->abandoned);
  EXPECT_EQ(m->stats.runs, 10);
  EXPECT_EQ(source.batches, (std::vector<int>{1, 9}));
}

TEST(MeasureOrAbandon, TooFewWantedRunsToAbandonMeasuresThemAll) {
  BenchOptions o = options();
  o.min_runs = 1;
  o.max_runs = kAbandonAfterRuns;  // never more than the first runs: nothing to save
  ScriptedSource source({5e5});
  auto m = measure_or_abandon(o, source, 1e5);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->abandoned);
  EXPECT_EQ(m->stats.runs, 2);  // 1 ms budget / 0.5 ms
}

}  // namespace
}  // namespace ktune

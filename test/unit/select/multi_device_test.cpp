// A selection over several devices at once (StageRunner::devices(), SelectorOptions::devices),
// through the fake runner: the devices measure at the same time; every candidate runs once, on
// one device; the close calls, the pick's re-measuring and its re-verification happen on the
// first device only, so that the pick is the same whatever the number of devices, even when
// they differ in speed; a budgeted strategy is told the same sequence whatever the number; the
// stand-in for a missing reference is the same candidate as on one device; a failure on one
// device costs that candidate alone.
#include <fmt/format.h>
#include <gmock/gmock.h>

#include <algorithm>
#include <set>
#include <string>

#include "select/search_loop.h"
#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

std::vector<FakeChoiceSpec> named(int n) {
  std::vector<FakeChoiceSpec> out;
  for (int i = 0; i < n; ++i) out.push_back({.name = fmt::format("c{}", i)});
  return out;
}

class MultiDeviceTest : public SelectFixture {
 protected:
  MultiDeviceTest() { options_.read_cache = false; }
  // select() through `runner` in place of the fixture's.
  Result<Selection> select_on(FakeRunner& runner, std::vector<ChoicePtr>& candidates,
                              Choice* reference) {
    const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
    return select_with(ctx, backend_, *cache_, key_, reference, runner);
  }
  // Times of 12 candidates: c7 fastest by 5% over c3; the others far behind.
  static void set_times(FakeRunner& runner) {
    for (int i = 0; i < 12; ++i) runner.fixed[fmt::format("c{}", i)] = {.median_ns = 2000.0 + i};
    runner.fixed["c3"] = {.median_ns = 1050};
    runner.fixed["c7"] = {.median_ns = 1000};
  }
  // The devices differ in speed: device 1 is 8% slower, device 2 3% faster, enough to turn
  // c7's first median behind c3's when c7 runs on device 1 and c3 on device 0.
  static void set_devices(FakeRunner& runner, std::size_t n) {
    runner.device_count = n;
    runner.device_scale = {{1, 1.08}, {2, 0.97}, {3, 1.05}};
  }
};

TEST_F(MultiDeviceTest, DevicesMeasureAtOnceAndEachCandidateRunsOnce) {
  auto candidates = fake_candidates(named(8));
  runner_.device_count = 4;
  runner_.run_on_ms = 40;
  FakeChoice reference({.name = "ref"});
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_GE(runner_.most_busy, 2);
  EXPECT_LE(runner_.most_busy, 4);
  std::set<std::size_t> used;
  for (int i = 0; i < 8; ++i) {
    const auto& on = runner_.devices_of[fmt::format("c{}", i)];
    ASSERT_EQ(on.size(), 1u) << "c" << i;  // measured once; re-verifying uses run(), not run_on
    used.insert(on.front());
  }
  EXPECT_GE(used.size(), 2u);
  EXPECT_EQ(runner_.prepared, 1);
}

TEST_F(MultiDeviceTest, ThePickIsTheSameWhateverTheNumberOfDevices) {
  for (std::size_t n : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE(fmt::format("{} device(s)", n));
    FakeRunner runner;
    set_times(runner);
    set_devices(runner, n);
    runner.run_on_ms = 2;
    auto candidates = fake_candidates(named(12));
    FakeChoice reference({.name = "ref"});
    auto sel = select_on(runner, candidates, &reference);
    ASSERT_TRUE(sel) << sel.error().message;
    EXPECT_EQ(sel->record.winner, "c7");
    // Close calls are re-measured on the first device (remeasure()), and the pick verified again
    // there (run() with measure false).
    for (const auto& call : runner.remeasure_calls) EXPECT_THAT(call, testing::Contains("c7"));
    EXPECT_EQ(runner.verifications["c7"], options_.reverify_runs);
  }
}

TEST_F(MultiDeviceTest, AFailureOnOneDeviceCostsThatCandidateAlone) {
  auto candidates = fake_candidates(named(6));
  runner_.device_count = 3;
  runner_.run_on_ms = 5;
  runner_.fixed["c2"] = {.outcome = Outcome::kCrashed};
  runner_.fixed["c4"] = {.outcome = Outcome::kTimedOut};
  runner_.fixed["c5"] = {.median_ns = 10};
  FakeChoice reference({.name = "ref"});
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "c5");
  EXPECT_EQ(record_of(*sel, "c2").outcome, Outcome::kCrashed);
  EXPECT_EQ(record_of(*sel, "c4").outcome, Outcome::kTimedOut);
  for (const char* ok : {"c0", "c1", "c3", "c5"}) {
    EXPECT_EQ(record_of(*sel, ok).outcome, Outcome::kOk) << ok;
  }
}

TEST_F(MultiDeviceTest, ABudgetedSearchLearnsTheSameSequenceOnAnyNumberOfDevices) {
  // Which candidates a seeded strategy evaluates depends only on what it was told, in order:
  // with equal times on every device, the evaluated set is the same on 1 and on 3 devices.
  std::vector<std::vector<Outcome>> outcomes;
  for (std::size_t n : {1u, 3u}) {
    FakeRunner runner;
    for (int i = 0; i < 40; ++i) {
      runner.fixed[fmt::format("c{}", i)] = {.median_ns = 1000.0 + 37.0 * ((i * 7) % 40)};
    }
    runner.device_count = n;
    options_.search.strategy = "random";
    options_.search.max_evals = 12;
    options_.search.seed = 5;
    options_.jobs = 4;
    auto candidates = fake_candidates(named(40));
    FakeChoice reference({.name = "ref"});
    auto sel = select_on(runner, candidates, &reference);
    ASSERT_TRUE(sel) << sel.error().message;
    std::vector<Outcome>& mine = outcomes.emplace_back();
    for (const CandidateRecord& r : sel->record.candidates) mine.push_back(r.outcome);
    EXPECT_EQ(std::count(mine.begin(), mine.end(), Outcome::kNotEvaluated), 28);
  }
  EXPECT_EQ(outcomes[0], outcomes[1]);
}

TEST_F(MultiDeviceTest, WithoutAReferenceTheStandInIsTheFirstToPassAndEveryDeviceComparesWithIt) {
  for (const bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    FakeRunner runner;
    runner.device_count = 3;
    runner.fixed["c0"] = {.outcome = Outcome::kWrongResult};
    runner.output["c4"] = 1;  // differs from the stand-in
    auto candidates = fake_candidates(named(6));
    const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
    std::vector<CandidateRecord> records = initial_records(ctx);
    std::optional<std::string> stand_in;
    auto run = search_stage(ctx, backend_, nullptr, runner, records, &stand_in, overlap);
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_EQ(stand_in, "c1");
    EXPECT_EQ(runner.stand_ins, (std::vector<std::string>{"c1"}));
    // c0 and c1 ran in turn on the first device (run()); the rest spread (run_on()).
    EXPECT_TRUE(runner.devices_of["c0"].empty());
    EXPECT_TRUE(runner.devices_of["c1"].empty());
    for (int i = 2; i < 6; ++i) EXPECT_EQ(runner.devices_of[fmt::format("c{}", i)].size(), 1u);
    EXPECT_EQ(records[4].outcome, Outcome::kWrongResult);
    EXPECT_EQ(run->evaluated, 6u);
  }
}

}  // namespace
}  // namespace ktune::test

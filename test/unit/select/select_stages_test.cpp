// The selection's stages driven through a fake runner with fixed outcomes and times: the pick,
// the deciding candidates, ties, the tuning cache, failures and their outcomes. No compiler and
// no clock. The decide stage, re-verification and the pick's confidence: decide_stage_test.cpp.
#include "select/select_stages.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

using Fixed = FakeRunner::Fixed;

class SelectStagesTest : public SelectFixture {};

// One candidate has nothing to be compared with, but its time is still measured and stored (with
// the settings it was measured under): whoever tunes asks for the time.
TEST_F(SelectStagesTest, ASingleCandidateIsStillMeasured) {
  auto candidates = fake_candidates({{"only"}});
  runner_.fixed = {{"only", {Outcome::kOk, 250}}};
  options_.bench.budget_ms = 7;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "only");
  // Measured, then verified again 5 times as the pick.
  EXPECT_EQ(runner_.measured, (std::vector<bool>{true, false, false, false, false, false}));
  ASSERT_TRUE(record_of(*sel, "only").stats);
  EXPECT_EQ(record_of(*sel, "only").stats->median_ns, 250);
  EXPECT_TRUE(runner_.remeasure_calls.empty());
  ASSERT_TRUE(sel->record.settings);
  EXPECT_EQ(sel->record.settings->budget_ms, 7);
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->settings, sel->record.settings);
}

TEST_F(SelectStagesTest, PicksTheFastest) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kOk, 300}}, {"b", {Outcome::kOk, 100}}, {"c", {Outcome::kOk, 200}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->winner_index, 1u);
  EXPECT_EQ(sel->record.winner, "b");
  EXPECT_FALSE(sel->from_cache);
  EXPECT_EQ(runner_.prepared, 1);
  // Each measured once, then the pick verified again 5 times (verify only).
  EXPECT_EQ(runner_.ran, (std::vector<std::string>{"a", "b", "c", "b", "b", "b", "b", "b"}));
  EXPECT_EQ(runner_.measured,
            (std::vector<bool>{true, true, true, false, false, false, false, false}));
  EXPECT_TRUE(runner_.remeasure_calls.empty()) << "nothing is within 10% of the best";
  ASSERT_TRUE(record_of(*sel, "c").stats);
  EXPECT_EQ(record_of(*sel, "c").stats->median_ns, 200);
  EXPECT_EQ(record_of(*sel, "a").compile_s, 0.25);
}

TEST_F(SelectStagesTest, DecidingCandidatesAreRemeasuredAndTheNewTimesDecide) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}, {"d"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}},
                   {"b", {Outcome::kOk, 300}},
                   {"c", {Outcome::kOk, 104}},
                   {"d", {Outcome::kOk, 106}}};
  runner_.remeasured_ns = {{"a", 110}, {"c", 101}};
  options_.close_call_rounds = 7;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  // c and d are within the 10% band of a, b is not; c is faster measured again, and after one
  // batch of 5 rounds a (9% slower in every round) and d (5%) are significantly slower: decided.
  ASSERT_EQ(runner_.remeasure_calls.size(), 1u);
  EXPECT_EQ(runner_.remeasure_calls[0], (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_EQ(runner_.remeasure_rounds[0], 5);
  EXPECT_EQ(sel->record.winner, "c");
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 110);
  EXPECT_EQ(record_of(*sel, "a").stats->runs, 5) << "the statistics of the round medians";
  EXPECT_EQ(record_of(*sel, "b").stats->median_ns, 300);
}

TEST_F(SelectStagesTest, AWiderBandTakesMoreDecidingCandidates) {
  std::vector<CandidateRecord> records(4);
  const double medians[] = {100, 300, 104, 106};
  for (std::size_t i = 0; i < records.size(); ++i) {
    records[i].stats = FakeRunner::stats(medians[i]);
  }
  EXPECT_EQ(deciding_candidates(records, 0.05, 8), (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(deciding_candidates(records, 0.10, 8), (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_EQ(deciding_candidates(records, 0.10, 2), (std::vector<std::size_t>{0, 2}))
      << "at most `max`, the fastest first";
  EXPECT_TRUE(deciding_candidates(records, 0.01, 8).empty()) << "one alone decides nothing";
  // A measurement whose fastest run was within the band: a stall slowed part of it.
  records[1].stats->min_ns = 103;
  EXPECT_EQ(deciding_candidates(records, 0.05, 8), (std::vector<std::size_t>{0, 2, 1}));
  records[2].outcome = Outcome::kWrongResult;  // a failed candidate never competes
  records[1].stats->min_ns = 300;
  EXPECT_TRUE(deciding_candidates(records, 0.05, 8).empty());
}

TEST_F(SelectStagesTest, TiesGoToTheEarlierCandidate) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kOk, 200}}, {"b", {Outcome::kOk, 100}}, {"c", {Outcome::kOk, 100}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  ASSERT_EQ(runner_.remeasure_calls.size(), 1u);  // b and c, still equal afterwards
  EXPECT_EQ(sel->winner_index, 1u);

  std::vector<CandidateRecord> records(3);
  for (CandidateRecord& r : records) r.stats = FakeRunner::stats(50);
  records[0].outcome = Outcome::kCrashed;
  EXPECT_EQ(pick_stage(records).value(), 1u);
}

TEST_F(SelectStagesTest, ACachedWinnerAnswersWithoutRunning) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 300}}, {"b", {Outcome::kOk, 100}}};
  ASSERT_TRUE(select(candidates));
  runner_.prepared = 0;
  runner_.ran.clear();
  auto again = select(candidates);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->winner_index, 1u);
  EXPECT_EQ(runner_.prepared, 0);
  EXPECT_TRUE(runner_.ran.empty());
  EXPECT_EQ(static_cast<FakeChoice&>(*candidates[0]).compiles(), 1) << "compiled once, not twice";
}

TEST_F(SelectStagesTest, ACachedWinnerThatIsGoneIsIgnored) {
  TuningRecord stale;
  stale.key = key_;
  stale.winner = "gone";
  stale.candidates.push_back(
      CandidateRecord{"fake:gone", "gone", "", Outcome::kOk, "", FakeRunner::stats(1), 0});
  ASSERT_TRUE(cache_->store(stale));
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 300}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_FALSE(sel->from_cache);
  EXPECT_EQ(sel->record.winner, "a");
  EXPECT_EQ(runner_.ran.size(), 7u) << "both measured, the pick verified 5 more times";
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->winner, "a") << "the new tuning replaces the stale record";
}

TEST_F(SelectStagesTest, AFailingCandidateKeepsItsStagesOutcome) {
  auto candidates = fake_candidates(
      {{"unsupported", false}, {"broken", true, false}, {"wrong"}, {"slow"}, {"fast"}});
  runner_.fixed = {{"wrong", {Outcome::kWrongResult, 10}},
                   {"slow", {Outcome::kOk, 500}},
                   {"fast", {Outcome::kOk, 100}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "fast");
  EXPECT_EQ(record_of(*sel, "unsupported").outcome, Outcome::kUnsupported);
  EXPECT_EQ(record_of(*sel, "unsupported").message, "unsupported takes no such problem");
  EXPECT_EQ(record_of(*sel, "broken").outcome, Outcome::kCompileError);
  EXPECT_EQ(record_of(*sel, "broken").message, "broken: syntax error");
  EXPECT_EQ(record_of(*sel, "wrong").outcome, Outcome::kWrongResult);
  EXPECT_EQ(record_of(*sel, "wrong").message, "wrong went wrong");
  EXPECT_FALSE(record_of(*sel, "wrong").stats);
  EXPECT_EQ(static_cast<FakeChoice&>(*candidates[0]).compiles(), 0) << "unsupported: not built";
  EXPECT_EQ(runner_.ran, (std::vector<std::string>{"wrong", "slow", "fast", "fast", "fast", "fast",
                                                   "fast", "fast"}));
}

TEST_F(SelectStagesTest, NoValidCandidateIsAnErrorWithTheSummary) {
  auto candidates =
      fake_candidates({{"unsupported", false}, {"broken", true, false}, {"crashing"}});
  runner_.fixed = {{"crashing", {Outcome::kCrashed, 0}}};
  auto sel = select(candidates);
  ASSERT_FALSE(sel);
  EXPECT_EQ(sel.error().code, ErrorCode::kNoValidChoice);
  EXPECT_EQ(sel.error().message,
            "fake_op(n=1): no valid choice among 3 candidates (1 compile_error, 1 crashed, "
            "1 unsupported); first failure: unsupported: unsupported: unsupported takes no "
            "such problem");
  auto list = cache_->list();
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());
}

TEST_F(SelectStagesTest, WriteCacheOffStoresNothing) {
  options_.write_cache = false;
  auto candidates = fake_candidates({{"a"}, {"b"}});
  ASSERT_TRUE(select(candidates));
  auto list = cache_->list();
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());

  options_.write_cache = true;
  auto sel = select(candidates);
  ASSERT_TRUE(sel);
  list = cache_->list();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->front().winner, "a") << "equal times: the earlier candidate";
  EXPECT_EQ(list->front().candidates.size(), 2u);
}

TEST_F(SelectStagesTest, AFailedRemeasurementKeepsTheFirstTimes) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 102}}, {"b", {Outcome::kOk, 100}}};
  runner_.remeasured_ns = {{"a", 10}};
  runner_.remeasure_fails = true;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(runner_.remeasure_calls.size(), 1u);
  EXPECT_EQ(sel->record.winner, "b");
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 102);
}

TEST_F(SelectStagesTest, AReferenceThatFailsEndsTheSelection) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  FakeChoice broken_reference({"ref", true, false});
  auto sel = select(candidates, &broken_reference);
  ASSERT_FALSE(sel);
  EXPECT_EQ(sel.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(sel.error().message, "fake_op(n=1): reference ref does not compile: ref: syntax error");
  EXPECT_EQ(runner_.prepared, 0);

  FakeChoice reference({"ref"});
  runner_.prepare_status = make_error(ErrorCode::kInvalidArgument, "reference ref wrote NaN");
  sel = select(candidates, &reference);
  ASSERT_FALSE(sel);
  EXPECT_EQ(sel.error().message, "fake_op(n=1): reference ref wrote NaN");
  EXPECT_TRUE(runner_.ran.empty());
}

// Many compile tasks failing and succeeding at once, each writing its own record: under TSan this
// is the race of a shared std::vector<bool> if it comes back.
TEST_F(SelectStagesTest, ParallelCompileKeepsEachCandidatesOutcome) {
  std::vector<FakeChoiceSpec> specs;
  for (int i = 0; i < 64; ++i) specs.push_back({fmt::format("c{}", i), i % 5 != 0, i % 3 != 0});
  auto candidates = fake_candidates(specs);
  options_.jobs = 4;
  const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
  std::vector<CandidateRecord> records = initial_records(ctx);
  ASSERT_TRUE(compile_stage(ctx, backend_, nullptr, records));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Outcome want = !specs[i].supported  ? Outcome::kUnsupported
                         : !specs[i].compiles ? Outcome::kCompileError
                                              : Outcome::kOk;
    EXPECT_EQ(records[i].outcome, want) << specs[i].name;
    EXPECT_EQ(static_cast<FakeChoice&>(*candidates[i]).compiles(), specs[i].supported ? 1 : 0);
  }
}

TEST_F(SelectStagesTest, ReportsTheTableAndThePick) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  options_.out = out;
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 300}}, {"b", {Outcome::kOk, 100}}};
  ASSERT_TRUE(select(candidates));
  ASSERT_TRUE(select(candidates));
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  EXPECT_NE(printed.find("Selected b (info of b)\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("Selected b from the tuning cache in "), std::string::npos) << printed;
}

}  // namespace
}  // namespace ktune::test

// The decide stage, the re-verification of the pick and the pick's confidence, through the fake
// runner: a stall does not decide, noise buys more rounds and a warning, a pick that fails
// verification after timing is replaced, and the confidence is stored and read back.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "select/select_stages.h"
#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

class DecideStageTest : public SelectFixture {
 protected:
  DecideStageTest() { options_.jobs = 1; }

  // select() with options_.out captured; the printed text.
  std::string select_printing(std::vector<ChoicePtr>& candidates) {
    char* text = nullptr;
    std::size_t size = 0;
    std::FILE* out = open_memstream(&text, &size);
    EXPECT_NE(out, nullptr);
    options_.out = out;
    auto sel = select(candidates);
    EXPECT_TRUE(sel) << sel.error().message;
    std::fclose(out);
    options_.out = nullptr;
    std::string printed(text, size);
    std::free(text);
    return printed;
  }

  int total_rounds(const std::string& name) const {
    return runner_.rounds_done.contains(name) ? runner_.rounds_done.at(name) : 0;
  }
};

TEST(MedianInterval, OrderStatisticsOfTheSignTest) {
  EXPECT_EQ(median_interval({}).low, 0);
  // Fewer than 6 values: the whole range (coverage 1 - 2^(1-n)).
  const MedianInterval five = median_interval({5, 1, 4, 2, 3});
  EXPECT_EQ(five.low, 1);
  EXPECT_EQ(five.high, 5);
  // 15 values: the 4th smallest and the 4th largest (coverage 96.5%).
  std::vector<double> v;
  for (int i = 15; i >= 1; --i) v.push_back(i);
  const MedianInterval fifteen = median_interval(v);
  EXPECT_EQ(fifteen.low, 4);
  EXPECT_EQ(fifteen.high, 12);
  // One outlier moves neither bound.
  v[0] = 1e9;
  EXPECT_EQ(median_interval(v).high, 12);
}

// The true winner's first measurement was slowed by a stall through most of its runs (median 30%
// slower; its fastest run shows its real speed): it still takes part, and the rounds decide.
TEST_F(DecideStageTest, AStalledFirstMeasurementDoesNotFlipThePick) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kOk, 130, 100}}, {"b", {Outcome::kOk, 105}}, {"c", {Outcome::kOk, 300}}};
  runner_.remeasured_ns = {{"a", 100}, {"b", 105}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  ASSERT_FALSE(runner_.remeasure_calls.empty());
  EXPECT_EQ(runner_.remeasure_calls[0], (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(sel->record.winner, "a");
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 100);
}

// A round: one warm-up, then timed runs for a tenth of the budget, at most max_runs / 8 of them
// (within 1..25) or decide_round_runs where set (the GPU GEMM's 5).
class DecideRoundTest : public DecideStageTest, public ::testing::WithParamInterface<int> {};

TEST_P(DecideRoundTest, ARoundsRunsFollowTheOptions) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 101}}};
  options_.bench.budget_ms = 20;
  options_.bench.max_runs = 100;
  options_.decide_round_runs = GetParam();
  ASSERT_TRUE(select(candidates));
  ASSERT_FALSE(runner_.remeasure_bench.empty());
  const std::optional<BenchOptions>& round = runner_.remeasure_bench[0];
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->warmup_runs, 1);
  EXPECT_EQ(round->min_runs, 1);
  EXPECT_EQ(round->max_runs, GetParam() > 0 ? GetParam() : 12);
  EXPECT_DOUBLE_EQ(round->budget_ms, 2);
}

INSTANTIATE_TEST_SUITE_P(RunsCap, DecideRoundTest, ::testing::Values(0, 5));

// A 300 ms stall in one round of the true winner (its round median 300 ms instead of 100 ns):
// neither its median of rounds nor the paired ratios move.
TEST_F(DecideStageTest, AStallInOneRoundDoesNotFlipThePick) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 104}}};
  runner_.rounds_ns = {{"a", {100, 100, 300e6, 100, 100}}, {"b", {104}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "a");
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 100);
  ASSERT_TRUE(sel->record.confidence);
  EXPECT_EQ(sel->record.confidence->runner_up, "b");
  EXPECT_DOUBLE_EQ(sel->record.confidence->runner_up_ratio, 1.04);
}

// A clear decision ends after one batch: every contender but the leader is slower in every
// round; a quiet tie ends there too.
TEST_F(DecideStageTest, AResolvedPickEndsAfterOneBatch) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 101}}, {"c", {Outcome::kOk, 108}}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(runner_.remeasure_calls.size(), 1u);
  EXPECT_EQ(sel->record.winner, "a");
  EXPECT_TRUE(sel->record.confidence->trusted);

  auto tied = fake_candidates({{"x"}, {"y"}});
  runner_.fixed = {{"x", {Outcome::kOk, 100}}, {"y", {Outcome::kOk, 100}}};
  runner_.rounds_ns = {{"x", {100, 101, 100, 99, 100}}, {"y", {100, 100, 101, 100, 99}}};
  runner_.remeasure_calls.clear();
  key_.candidate_set = "tied";
  sel = select(tied);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(runner_.remeasure_calls.size(), 1u) << "within 3% either way: resolved";
  EXPECT_TRUE(sel->record.confidence->trusted);
}

// Noisy rounds leave the pick open: quiet thresholds stop at close_call_rounds, noise goes on to
// noisy_rounds and the pick is reported as untrusted, with the numbers.
TEST_F(DecideStageTest, NoiseBuysMoreRoundsAndAWarning) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 105}}};
  runner_.rounds_ns = {{"a", {100, 130, 90, 125, 95}}, {"b", {110, 95, 120, 98, 115}}};
  options_.noise_spread = 1.0;  // spread alone never counts as noise here
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(total_rounds("a"), 15) << "quiet: close_call_rounds";
  EXPECT_TRUE(sel->record.confidence->trusted);

  options_.noise_spread = 0.05;  // the rounds spread about 15%
  runner_.rounds_done.clear();
  key_.candidate_set = "noisy";
  const std::string printed = select_printing(candidates);
  EXPECT_EQ(total_rounds("a"), 30) << "noisy: noisy_rounds";
  EXPECT_NE(printed.find("Warning: fake_op(n=1): the machine was too noisy to trust this pick"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("runner-up b at "), std::string::npos) << printed;
  EXPECT_NE(printed.find("over 30 rounds"), std::string::npos) << printed;
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored && *stored);
  ASSERT_TRUE((*stored)->confidence);
  EXPECT_FALSE((*stored)->confidence->trusted);
  EXPECT_GT((*stored)->confidence->spread, 0.05);
}

// Other processes busy on the cores while measuring: the pick is untrusted even when the rounds
// agree, because the first measurements that chose the finalists were disturbed too.
TEST_F(DecideStageTest, ABusyMachineIsReported) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 200}}};
  runner_.others_load = 1.5;
  const std::string printed = select_printing(candidates);
  EXPECT_NE(printed.find("other processes used 1.50 of 2 cores"), std::string::npos) << printed;
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored && *stored);
  EXPECT_DOUBLE_EQ((*stored)->confidence->others_load, 1.5);
  EXPECT_FALSE((*stored)->confidence->trusted);

  runner_.others_load = 0.2;  // below a quarter of the cores
  key_.candidate_set = "quiet";
  EXPECT_EQ(select_printing(candidates).find("Warning"), std::string::npos);

  runner_.others_load = 1.5;  // a single candidate: nothing for the load to decide
  auto only = fake_candidates({{"only"}});
  key_.candidate_set = "single";
  EXPECT_EQ(select_printing(only).find("Warning"), std::string::npos);
}

// First measurements made while other processes were busy: a candidate 20% behind may be the
// fastest one slowed by the load, so it decides too (noisy_band); on a quiet machine it does not.
TEST_F(DecideStageTest, NoiseWidensTheDecidingBand) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 120}}};
  runner_.remeasured_ns = {{"a", 100}, {"b", 90}};
  auto quiet = select(candidates);
  ASSERT_TRUE(quiet) << quiet.error().message;
  EXPECT_TRUE(runner_.remeasure_calls.empty());
  EXPECT_EQ(quiet->record.winner, "a");

  runner_.others_load = 1.0;
  key_.candidate_set = "busy";
  auto busy = select(candidates);
  ASSERT_TRUE(busy) << busy.error().message;
  ASSERT_FALSE(runner_.remeasure_calls.empty());
  EXPECT_EQ(runner_.remeasure_calls[0], (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(busy->record.winner, "b");
}

// The fastest candidate fails its third verification after timing (a race that is wrong only
// sometimes): it is excluded with that outcome, and the next one, verified as often, is picked.
TEST_F(DecideStageTest, APickFailingReverificationIsReplaced) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 102}}, {"c", {Outcome::kOk, 150}}};
  runner_.failing_verification = {{"a", 3}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "b");
  EXPECT_EQ(record_of(*sel, "a").outcome, Outcome::kWrongResult);
  EXPECT_EQ(record_of(*sel, "a").message,
            "failed re-verification 3 of 5 after timing: a differs this time");
  EXPECT_EQ(runner_.verifications["a"], 3);
  EXPECT_EQ(runner_.verifications["b"], 5);
  EXPECT_EQ(runner_.verifications.count("c"), 0u) << "losers are not verified again";
  EXPECT_EQ(sel->record.confidence->runner_up, "c");
  EXPECT_EQ(sel->record.confidence->reverified, 5);

  // Every candidate failing it leaves no valid choice, and nothing is stored.
  runner_.failing_verification = {{"a", 1}, {"b", 1}, {"c", 2}};
  runner_.verifications.clear();
  key_.candidate_set = "all fail";
  auto none = select(candidates);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNoValidChoice);
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored);
  EXPECT_FALSE(*stored);
}

TEST_F(DecideStageTest, TheConfidenceIsStoredAndReadBack) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, 105}}};
  runner_.others_load = 0.25;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  auto stored = cache_->lookup(key_);
  ASSERT_TRUE(stored && *stored && (*stored)->confidence);
  const PickConfidence& c = *(*stored)->confidence;
  EXPECT_EQ(c.runner_up, "b");
  EXPECT_DOUBLE_EQ(c.runner_up_ratio, 1.05);
  EXPECT_DOUBLE_EQ(c.ratio_low, 1.05);
  EXPECT_DOUBLE_EQ(c.ratio_high, 1.05);
  EXPECT_EQ(c.ratio_rounds, 5);
  EXPECT_DOUBLE_EQ(c.others_load, 0.25);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.reverified, 5);
  EXPECT_TRUE(c.trusted);

  // Through the JSON export and back, field by field.
  auto back = import_json(export_json({**stored}));
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  ASSERT_TRUE(back->front().confidence);
  const PickConfidence& j = *back->front().confidence;
  EXPECT_EQ(j.runner_up, c.runner_up);
  EXPECT_EQ(j.runner_up_ratio, c.runner_up_ratio);
  EXPECT_EQ(j.ratio_low, c.ratio_low);
  EXPECT_EQ(j.ratio_high, c.ratio_high);
  EXPECT_EQ(j.ratio_rounds, c.ratio_rounds);
  EXPECT_EQ(j.spread, c.spread);
  EXPECT_EQ(j.others_load, c.others_load);
  EXPECT_EQ(j.cores, c.cores);
  EXPECT_EQ(j.reverified, c.reverified);
  EXPECT_EQ(j.trusted, c.trusted);

  // An export from before the field reads without it; a confidence of the wrong kind is refused.
  std::string old = export_json({**stored});
  const auto at = old.find("  \"confidence\": {");
  ASSERT_NE(at, std::string::npos) << old;
  std::string without = old;
  without.erase(at, old.find('}', at) + 3 - at);
  auto legacy = import_json(without);
  ASSERT_TRUE(legacy) << legacy.error().message << "\n" << without;
  EXPECT_FALSE(legacy->front().confidence);
  std::string wrong = old;
  wrong.replace(at, old.find('}', at) + 1 - at, "  \"confidence\": 3");
  auto refused = import_json(wrong);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("confidence"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace ktune::test

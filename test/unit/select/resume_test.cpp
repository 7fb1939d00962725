// Resume (select/resume.h): each candidate's outcome is kept in the tuning cache as it is
// measured, and a selection under the same key and settings takes those rows back: such a
// candidate is neither compiled nor run again, unless the decide stage or the pick needs it.
#include "select/resume.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class ResumeTest : public SelectFixture {
 protected:
  ResumeTest() { options_.reverify_runs = 0; }

  // The row an earlier, killed selection kept for `name`.
  void kept_earlier(const std::string& name, Outcome outcome, double median_ns) {
    CandidateRecord r{"fake:" + name, name, "info of " + name, outcome, "", std::nullopt, 0.25};
    if (outcome == Outcome::kOk) {
      r.stats = FakeRunner::stats(median_ns);
    } else {
      r.message = name + " went wrong";
    }
    ASSERT_TRUE(cache_->store_partial(key_, measure_settings(options_), r));
  }
  std::vector<CandidateRecord> partials() {
    auto rows = cache_->partials(key_, measure_settings(options_));
    EXPECT_TRUE(rows.has_value());
    return rows ? *rows : std::vector<CandidateRecord>{};
  }
  static int compiles(const std::vector<ChoicePtr>& cs, std::size_t i) {
    return static_cast<const FakeChoice&>(*cs[i]).compiles();
  }
};

TEST_F(ResumeTest, EveryOutcomeIsKeptAsItIsMeasuredUntilTheRecordIsStored) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.fixed = {
      {"a", {Outcome::kCrashed, 0}}, {"b", {Outcome::kCrashed, 0}}, {"c", {Outcome::kTimedOut, 0}}};
  auto failed = select(candidates, nullptr);
  ASSERT_FALSE(failed);  // no valid choice: no record, the rows stay
  std::vector<std::string> names;
  for (const CandidateRecord& r : partials()) names.push_back(r.name);
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));

  runner_.fixed.clear();
  runner_.ran.clear();
  auto again = select(candidates, nullptr);
  ASSERT_FALSE(again);  // the kept failures are not run again
  EXPECT_TRUE(runner_.ran.empty());
}

TEST_F(ResumeTest, KeptCandidatesAreNeitherCompiledNorMeasuredAgain) {
  options_.close_call_band = 0;  // no decide stage: only the pick may need compiling
  FakeChoice reference({"ref"});
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}, {"d"}});
  kept_earlier("a", Outcome::kOk, 500);
  kept_earlier("b", Outcome::kCrashed, 0);
  runner_.fixed = {{"c", {Outcome::kOk, 300}}, {"d", {Outcome::kOk, 400}}};
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_THAT(runner_.ran, ElementsAre("c", "d"));
  EXPECT_EQ(compiles(candidates, 0), 0);
  EXPECT_EQ(compiles(candidates, 1), 0);
  EXPECT_EQ(sel->record.winner, "c");
  ASSERT_EQ(sel->record.candidates.size(), 4u);
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 500);
  EXPECT_EQ(record_of(*sel, "b").outcome, Outcome::kCrashed);
  EXPECT_TRUE(partials().empty());  // the finished record replaces them
  auto hit = cache_->lookup(key_);
  ASSERT_TRUE(hit && *hit);
  EXPECT_EQ((*hit)->candidates.size(), 4u);
}

TEST_F(ResumeTest, AKeptCandidateThatDecidesIsCompiledAndMeasuredInTheRounds) {
  FakeChoice reference({"ref"});
  auto candidates = fake_candidates({{"fast"}, {"slow"}, {"close"}});
  kept_earlier("fast", Outcome::kOk, 100);
  kept_earlier("slow", Outcome::kOk, 900);
  runner_.fixed = {{"close", {Outcome::kOk, 103}}};
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_THAT(runner_.ran, ElementsAre("close"));
  EXPECT_EQ(compiles(candidates, 0), 1);  // a close call: re-measured, so compiled
  EXPECT_EQ(compiles(candidates, 1), 0);  // far behind: its kept row stands
  ASSERT_FALSE(runner_.remeasure_calls.empty());
  EXPECT_THAT(runner_.remeasure_calls.front(), UnorderedElementsAre("fast", "close"));
}

TEST_F(ResumeTest, WithoutAReferenceTheKeptStandInRunsAgainToStandIn) {
  options_.close_call_band = 0;
  auto candidates = fake_candidates({{"broken"}, {"first"}, {"second"}, {"third"}});
  kept_earlier("broken", Outcome::kCrashed, 0);
  kept_earlier("first", Outcome::kOk, 300);
  kept_earlier("second", Outcome::kOk, 200);
  auto sel = select(candidates, nullptr);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_THAT(runner_.ran, ElementsAre("first", "third"));
  EXPECT_THAT(runner_.stand_ins, ElementsAre("first"));
  ASSERT_TRUE(sel->record.stand_in);
  EXPECT_EQ(*sel->record.stand_in, "first");
  EXPECT_EQ(record_of(*sel, "second").stats->median_ns, 200);
}

TEST_F(ResumeTest, RowsOfOtherSettingsOrCandidatesAreNotTaken) {
  FakeChoice reference({"ref"});
  auto candidates = fake_candidates({{"a"}, {"b"}});
  kept_earlier("gone", Outcome::kOk, 10);  // not among the candidates
  options_.bench.budget_ms += 1;           // measured with other settings: measured again
  kept_earlier("a", Outcome::kOk, 10);
  options_.bench.budget_ms -= 1;
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_THAT(runner_.ran, ElementsAre("a", "b"));
  EXPECT_EQ(sel->record.candidates.size(), 2u);
}

// A budgeted search killed after k evaluations continues where it was: the strategy (same seed,
// same budget) learns the kept candidates' times as it proposes them again, so the rerun measures
// exactly what the uninterrupted run measured after them, and the kept ones count against
// max_evals.
TEST_F(ResumeTest, AResumedBudgetedSearchMeasuresOnlyWhatTheBudgetHasLeft) {
  options_.close_call_band = 0;
  options_.search.strategy = "hill_climbing";
  options_.search.max_evals = 10;
  options_.search.seed = 7;
  options_.jobs = 1;  // batches of one: the order of the search is the order measured
  FakeChoice reference({"ref"});
  std::vector<FakeChoiceSpec> specs;
  for (int x = 0; x < 6; ++x) {
    for (int y = 0; y < 5; ++y) {
      const std::string name = fmt::format("c{}_{}", x, y);
      specs.push_back({.name = name, .info = fmt::format("X={} Y={}", x, y)});
      runner_.fixed[name] = {.median_ns = 1000.0 + 100 * std::abs(x - 4) + 50 * std::abs(y - 2)};
    }
  }
  auto candidates = fake_candidates(specs);
  auto whole = select(candidates, &reference);
  ASSERT_TRUE(whole) << whole.error().message;
  const std::vector<std::string> order = runner_.ran;  // the uninterrupted search
  ASSERT_EQ(order.size(), 10u);

  // The same search killed after its first k measurements: their rows are what it left.
  constexpr std::size_t k = 4;
  cache_ = make_memory_cache();
  for (std::size_t i = 0; i < k; ++i) {
    kept_earlier(order[i], Outcome::kOk, runner_.fixed[order[i]].median_ns);
  }
  runner_.ran.clear();
  auto resumed = select(candidates, &reference);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_THAT(runner_.ran, ElementsAreArray(order.begin() + k, order.end()));
  EXPECT_EQ(resumed->record.winner, whole->record.winner);
  for (const CandidateRecord& r : resumed->record.candidates) {
    if (r.outcome == Outcome::kNotEvaluated) {
      EXPECT_THAT(r.message, HasSubstr("10 of 30 evaluated"));
    }
  }

  // Killed after its last evaluation, before the record was stored: nothing is left to measure.
  cache_ = make_memory_cache();
  for (const std::string& name : order) {
    kept_earlier(name, Outcome::kOk, runner_.fixed[name].median_ns);
  }
  runner_.ran.clear();
  auto done = select(candidates, &reference);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(runner_.ran.empty());
  EXPECT_EQ(done->record.winner, whole->record.winner);
}

TEST_F(ResumeTest, NothingIsKeptWithoutWritingTheCache) {
  options_.write_cache = false;
  FakeChoice reference({"ref"});
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kCrashed, 0}}, {"b", {Outcome::kCrashed, 0}}};
  ASSERT_FALSE(select(candidates, &reference));
  EXPECT_TRUE(partials().empty());
}

}  // namespace
}  // namespace ktune::test

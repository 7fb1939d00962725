// The selection driven by a search strategy and a budget (select/search_loop.h), through the fake
// runner: a budget of k measures exactly k, the rest are not_evaluated and never picked; a time
// limit stops; exhaustive without a budget is the selection as it was; overlap measures what
// compiled, libraries first; a sampled record never answers a request for every candidate.
#include "select/search_loop.h"

#include <fmt/format.h>
#include <gmock/gmock.h>

#include <algorithm>
#include <string>

#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

using testing::HasSubstr;

std::vector<FakeChoiceSpec> named(int n) {
  std::vector<FakeChoiceSpec> out;
  for (int i = 0; i < n; ++i) out.push_back({.name = fmt::format("c{}", i)});
  return out;
}

std::size_t count(const Selection& sel, Outcome o) {
  return static_cast<std::size_t>(
      std::count_if(sel.record.candidates.begin(), sel.record.candidates.end(),
                    [&](const CandidateRecord& r) { return r.outcome == o; }));
}

class SearchLoopTest : public SelectFixture {};

TEST_F(SearchLoopTest, ABudgetOfKMeasuresExactlyKAndNeverPicksTheRest) {
  auto candidates = fake_candidates(named(10));
  // The fastest candidate lies outside the budget: the pick is the best of those measured.
  runner_.fixed["c9"] = {.median_ns = 10};
  runner_.fixed["c2"] = {.median_ns = 500};
  options_.search.strategy = "exhaustive";
  options_.search.max_evals = 4;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "c2");
  EXPECT_EQ(count(*sel, Outcome::kNotEvaluated), 6u);
  EXPECT_EQ(count(*sel, Outcome::kOk), 4u);
  EXPECT_EQ(std::count(runner_.measured.begin(), runner_.measured.end(), true), 4);
  EXPECT_THAT(record_of(*sel, "c9").message,
              HasSubstr("outside the search budget (strategy exhaustive, 4 of 10 evaluated)"));
  EXPECT_EQ(candidates[9]->name(), "c9");
  EXPECT_EQ(static_cast<FakeChoice&>(*candidates[9]).compiles(), 0);
}

TEST_F(SearchLoopTest, CompileFailuresCountAsEvaluationsUnsupportedDoNot) {
  auto specs = named(6);
  specs[0].supported = false;
  specs[1].compiles = false;
  auto candidates = fake_candidates(specs);
  options_.search.strategy = "exhaustive";
  options_.search.max_evals = 3;
  options_.jobs = 1;  // batches of one: the budget is reached candidate by candidate
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(record_of(*sel, "c0").outcome, Outcome::kUnsupported);
  EXPECT_EQ(record_of(*sel, "c1").outcome, Outcome::kCompileError);
  EXPECT_EQ(record_of(*sel, "c2").outcome, Outcome::kOk);
  EXPECT_EQ(record_of(*sel, "c3").outcome, Outcome::kOk);
  EXPECT_EQ(record_of(*sel, "c4").outcome, Outcome::kNotEvaluated);
  EXPECT_EQ(record_of(*sel, "c5").outcome, Outcome::kNotEvaluated);
}

TEST_F(SearchLoopTest, ATimeLimitStopsBetweenCandidates) {
  auto candidates = fake_candidates(named(8));
  options_.search.strategy = "exhaustive";
  options_.search.time_limit_s = 1e-9;  // over after the first check
  options_.jobs = 2;
  auto sel = select(candidates);
  // Nothing was measured: no pick, and every candidate says why.
  ASSERT_FALSE(sel);
  EXPECT_EQ(sel.error().code, ErrorCode::kNoValidChoice);
  EXPECT_THAT(sel.error().message, HasSubstr("not_evaluated"));
  EXPECT_THAT(sel.error().message, HasSubstr("time limit reached"));
  EXPECT_TRUE(runner_.ran.empty());
}

TEST_F(SearchLoopTest, ExhaustiveWithoutABudgetMeasuresEveryCandidateInOrder) {
  auto candidates = fake_candidates(named(5));
  runner_.fixed["c3"] = {.median_ns = 100};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "c3");
  EXPECT_EQ(count(*sel, Outcome::kNotEvaluated), 0u);
  const std::vector<std::string> first(runner_.ran.begin(), runner_.ran.begin() + 5);
  EXPECT_EQ(first, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4"}));
  const std::string table = format_autotune_table("t", sel->record, 10, false);
  EXPECT_THAT(table, HasSubstr("5 candidates (5 valid, 0 failed); "));
}

TEST_F(SearchLoopTest, TheTableCountsTheCandidatesLeftOut) {
  auto candidates = fake_candidates(named(7));
  options_.search.strategy = "exhaustive";
  options_.search.max_evals = 2;
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  const std::string table = format_autotune_table("t", sel->record, 10, false);
  EXPECT_THAT(table, HasSubstr("7 candidates (2 valid, 0 failed, 5 not measured, outside the "
                               "search budget (strategy exhaustive, 2 of 7 evaluated))"));
  EXPECT_THAT(table, testing::Not(HasSubstr("  c6 ")));
}

TEST_F(SearchLoopTest, ASampledRecordNeverAnswersARequestForEveryCandidate) {
  auto candidates = fake_candidates(named(6));
  options_.search.strategy = "exhaustive";
  options_.search.max_evals = 2;
  ASSERT_TRUE(select(candidates));
  const std::size_t ran_budgeted = runner_.ran.size();
  // The same budgeted request: a hit.
  auto again = select(candidates);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  // Every candidate asked for: tuned again, and all six measured.
  options_.search = SearchOptions{};
  auto full = select(candidates);
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_FALSE(full->from_cache);
  EXPECT_EQ(count(*full, Outcome::kNotEvaluated), 0u);
  EXPECT_GT(runner_.ran.size(), ran_budgeted + 5);
  EXPECT_TRUE(record_answers(full->record, options_.search));
}

TEST_F(SearchLoopTest, OverlapMeasuresLibrariesFirstAndEveryCompiledCandidate) {
  auto candidates = fake_candidates(named(4));
  candidates.push_back(std::make_unique<FakeLibrary>("lib"));
  options_.jobs = 1;  // compiles in the order submitted: the reference, the library, c0, ...
  std::vector<CandidateRecord> records;
  const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
  records = initial_records(ctx);
  FakeChoice reference({.name = "ref"});
  auto run = search_stage(ctx, backend_, &reference, runner_, records, nullptr, /*overlap=*/true);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->evaluated, 5u);
  ASSERT_EQ(runner_.ran.size(), 5u);
  EXPECT_EQ(runner_.ran.front(), "lib");
  EXPECT_EQ(runner_.prepared, 1);
  for (const CandidateRecord& r : records) EXPECT_TRUE(r.stats) << r.name;
}

TEST_F(SearchLoopTest, OverlapMeasuresInCompletionOrderWhileOthersCompile) {
  // Two threads: one compiles the reference and then c1 while the other is still on c0.
  auto candidates = fake_candidates({{.name = "c0", .compile_ms = 300}, {.name = "c1"}});
  options_.jobs = 2;
  const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
  std::vector<CandidateRecord> records = initial_records(ctx);
  FakeChoice reference({.name = "ref"});
  auto run = search_stage(ctx, backend_, &reference, runner_, records, nullptr, /*overlap=*/true);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(runner_.ran, (std::vector<std::string>{"c1", "c0"}));
}

TEST_F(SearchLoopTest, OverlapWithoutAReferenceKeepsTheStandInOfCandidateOrder) {
  auto candidates = fake_candidates(named(6));
  runner_.fixed["c0"] = {.outcome = Outcome::kWrongResult};
  const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
  std::vector<CandidateRecord> records = initial_records(ctx);
  std::optional<std::string> stand_in;
  auto run = search_stage(ctx, backend_, nullptr, runner_, records, &stand_in, /*overlap=*/true);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(stand_in, "c1");
  EXPECT_EQ(runner_.ran, (std::vector<std::string>{"c0", "c1", "c2", "c3", "c4", "c5"}));
}

// Resumed candidates (an interrupted run's, records in place), with or without overlap: neither
// compiled nor run, counted against the budget, never marked not evaluated.
TEST_F(SearchLoopTest, ResumedCandidatesCountAgainstTheBudgetAndAreNotRunAgain) {
  for (const bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    runner_.ran.clear();
    auto candidates = fake_candidates(named(6));
    options_.search.strategy = "exhaustive";
    options_.search.max_evals = 4;
    const SelectContext ctx{problem_, candidates, options_, selection_title(problem_)};
    std::vector<CandidateRecord> records = initial_records(ctx);
    const std::vector<char> resumed = {1, 0, 1, 0, 0, 0};
    records[0].stats = FakeRunner::stats(300);
    records[2].outcome = Outcome::kCrashed;
    FakeChoice reference({.name = "ref"});
    auto run = search_stage(ctx, backend_, &reference, runner_, records, nullptr, overlap, resumed);
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_EQ(run->evaluated, 4u);
    EXPECT_EQ(runner_.ran, (std::vector<std::string>{"c1", "c3"}));
    EXPECT_EQ(static_cast<FakeChoice&>(*candidates[0]).compiles(), 0);
    EXPECT_EQ(static_cast<FakeChoice&>(*candidates[2]).compiles(), 0);
    EXPECT_EQ(records[0].outcome, Outcome::kOk);
    EXPECT_EQ(records[2].outcome, Outcome::kCrashed);
    EXPECT_EQ(records[4].outcome, Outcome::kNotEvaluated);
  }
}

}  // namespace
}  // namespace ktune::test

// Decide rounds measured while the search waits on compiles (select/speculative_decide.h), and
// how the decide stage goes on from them: rounds carried to other finalists pair only where both
// took part, a resolved seed with the same finalists costs no more rounds, and a late finalist
// is measured against the leader from when it came.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "select/search_loop.h"
#include "select/select_stages.h"
#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

using ::testing::ElementsAre;

void add_rounds(DecideRounds& st, const std::vector<double>& per_contender, int n) {
  std::vector<std::vector<double>> medians;
  for (double m : per_contender) medians.emplace_back(static_cast<std::size_t>(n), m);
  st.add(medians);
}

TEST(DecideRounds, CarriedToOtherFinalistsPairsOnlyRoundsBothTookPart) {
  DecideRounds st({10, 11, 12});
  add_rounds(st, {100, 100, 200}, 5);
  EXPECT_EQ(st.judge(0.03), 0u);
  EXPECT_TRUE(st.d.dropped[2]);  // 12 is twice as slow in every round
  EXPECT_THAT(st.contenders, ElementsAre(0, 1));
  EXPECT_EQ(st.least_rounds(), 5);

  // 13 joins, 12 stays out (it dropped out), 11 leaves, and the order changes.
  const DecideRounds moved = st.carried_to({13, 10, 12});
  EXPECT_FALSE(moved.resolved);
  EXPECT_EQ(moved.d.rounds, 5);
  EXPECT_THAT(moved.contenders, ElementsAre(0, 1));
  EXPECT_TRUE(moved.d.dropped[2]);
  EXPECT_THAT(moved.d.rounds_ns[0], ElementsAre(0, 0, 0, 0, 0));  // 13 sat them out
  EXPECT_EQ(moved.d.rounds_ns[1], st.d.rounds_ns[0]);
  EXPECT_EQ(moved.least_rounds(), 0);
  EXPECT_TRUE(moved.d.ratios(13, 10).empty());
  EXPECT_EQ(moved.d.ratios(12, 10).size(), 5u);

  DecideRounds next = moved;
  add_rounds(next, {50, 100}, 5);
  EXPECT_THAT(next.d.ratios(13, 10), ElementsAre(0.5, 0.5, 0.5, 0.5, 0.5));
  EXPECT_EQ(next.least_rounds(), 5);
  EXPECT_EQ(next.judge(0.03), 0u);  // 13
  EXPECT_TRUE(next.d.dropped[1]);
  EXPECT_TRUE(next.resolved);

  // The same finalists in another order: still resolved, the same rounds.
  const DecideRounds reordered = next.carried_to({10, 12, 13});
  EXPECT_TRUE(reordered.resolved);
  EXPECT_EQ(reordered.d.rounds_ns[2], next.d.rounds_ns[0]);
}

class SpeculativeDecideTest : public SelectFixture {
 protected:
  SpeculativeDecideTest() {
    backend_.device_kind = DeviceKind::kCuda;  // overlap, as on a GPU
    options_.jobs = 2;
  }
  // The remeasure calls made after `runs` candidates had run.
  std::vector<std::vector<std::string>> remeasured_after(std::size_t runs) const {
    std::vector<std::vector<std::string>> out;
    for (std::size_t c = 0; c < runner_.remeasure_calls.size(); ++c) {
      if (runner_.remeasure_after[c] == runs) out.push_back(runner_.remeasure_calls[c]);
    }
    return out;
  }
  // a (100 ns), b and c, c compiling for 300 ms (the others at once), selected with `reference`
  // (null: none).
  Result<Selection> select_three(double b_ns, double c_ns, Choice* reference) {
    candidates_ = fake_candidates({{.name = "a"}, {.name = "b"}, {.name = "c", .compile_ms = 300}});
    runner_.fixed = {
        {"a", {Outcome::kOk, 100}}, {"b", {Outcome::kOk, b_ns}}, {"c", {Outcome::kOk, c_ns}}};
    return select(candidates_, reference);
  }
  FakeChoice reference_{{.name = "ref"}};
  std::vector<ChoicePtr> candidates_;
};

// a and b measured, c still compiling: their rounds run in the wait, one candidate per call, and
// resolve the pick (b is 3% slower in every round); c lands outside the band, so the decide stage
// has nothing left to measure.
TEST_F(SpeculativeDecideTest, RoundsInTheWaitForCompilesDecideBeforeTheLastLands) {
  auto sel = select_three(103, 500, &reference_);
  ASSERT_TRUE(sel) << sel.error().message;
  ASSERT_GE(runner_.ran.size(), 3u);
  ASSERT_EQ(runner_.ran[2], "c");  // then the pick's re-verification
  EXPECT_EQ(sel->record.winner, "a");
  // Five rounds of two single-candidate calls, all before c ran, none after.
  const auto ahead = remeasured_after(2);
  ASSERT_EQ(ahead.size(), 10u);
  for (const auto& call : ahead) EXPECT_EQ(call.size(), 1u);
  EXPECT_EQ(runner_.remeasure_calls.size(), 10u);
  EXPECT_EQ(runner_.rounds_done["a"], 5);
  EXPECT_EQ(runner_.rounds_done["b"], 5);
  // The rounds decided: a's statistics are its round medians, and b dropped out against it.
  EXPECT_EQ(record_of(*sel, "a").stats->runs, 5);
  ASSERT_TRUE(sel->record.confidence);
  EXPECT_EQ(sel->record.confidence->ratio_rounds, 5);
}

// c lands last inside the band and faster: it joins the rounds from then on, against a (b dropped
// out in the wait), and wins.
TEST_F(SpeculativeDecideTest, ALateFinalistJoinsTheRoundsAndCanWin) {
  auto sel = select_three(106, 95, &reference_);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "c");
  EXPECT_EQ(remeasured_after(2).size(), 10u);
  // After c ran: rounds of c and a only, c first (the faster first median).
  const auto after = remeasured_after(3);
  ASSERT_FALSE(after.empty());
  for (const auto& call : after) EXPECT_THAT(call, ElementsAre("c", "a"));
  EXPECT_EQ(runner_.rounds_done["b"], 5);
  EXPECT_EQ(runner_.rounds_done["c"], 5);
  EXPECT_EQ(runner_.rounds_done["a"], 10);
  // The pick's ratio to a pairs only the rounds c took part in.
  ASSERT_TRUE(sel->record.confidence);
  EXPECT_EQ(sel->record.confidence->runner_up, "a");
  EXPECT_EQ(sel->record.confidence->ratio_rounds, 5);
}

// Off (--no-decide-ahead), or without a reference (the stand-in is chosen in candidate order):
// every round runs after the search.
class AllRoundsAfterTheSearch : public SpeculativeDecideTest {
 protected:
  void expect(Choice* reference) {
    auto sel = select_three(103, 500, reference);
    ASSERT_TRUE(sel) << sel.error().message;
    EXPECT_EQ(sel->record.winner, "a");
    EXPECT_EQ(remeasured_after(3).size(), runner_.remeasure_calls.size());
    ASSERT_FALSE(runner_.remeasure_calls.empty());
    EXPECT_THAT(runner_.remeasure_calls.front(), ElementsAre("a", "b"));
  }
};

TEST_F(AllRoundsAfterTheSearch, WhenOff) {
  options_.decide_ahead = false;
  expect(&reference_);
}

TEST_F(AllRoundsAfterTheSearch, WithoutAReference) { expect(nullptr); }

// Re-measuring that fails in the wait ends the rounds there; the decide stage starts afresh (and
// says so when it fails there too), and the first measurements decide.
TEST_F(SpeculativeDecideTest, ReMeasuringThatFailsInTheWaitLeavesTheFirstMeasurements) {
  runner_.remeasure_fails = true;
  auto sel = select_three(103, 500, &reference_);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "a");
  EXPECT_EQ(remeasured_after(2).size(), 1u);  // one try in the wait
  EXPECT_EQ(remeasured_after(3).size(), 1u);  // one in the decide stage
  EXPECT_EQ(record_of(*sel, "a").stats->median_ns, 100);
}

}  // namespace
}  // namespace ktune::test

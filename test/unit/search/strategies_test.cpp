// Every budgeted strategy on the synthetic recorded spaces: never repeats, stays in range, is
// deterministic for a seed, and on the bowl finds the optimum with far fewer evaluations than a
// random order.
#include <gtest/gtest.h>

#include <set>

#include "ktune/search/simulate.h"
#include "recorded_spaces.h"

namespace ktune {
namespace {

const std::vector<std::string> kBudgeted = {"random", "hill_climbing", "annealing", "genetic",
                                            "model"};

// Runs `name` to the end of the space with batches of `batch`; the order proposed.
std::vector<std::size_t> run_all(const std::string& name, const RecordedSpace& r,
                                 std::uint64_t seed, std::size_t batch,
                                 std::size_t limit = SIZE_MAX) {
  auto s = make_strategy(name, r.space, seed);
  EXPECT_TRUE(s) << name;
  std::vector<std::size_t> order;
  while (order.size() < limit) {
    const std::vector<std::size_t> b = (*s)->propose(batch);
    if (b.empty()) break;
    EXPECT_LE(b.size(), batch);
    for (std::size_t i : b) (*s)->observe(i, i < r.time_ns.size() ? r.time_ns[i] : std::nullopt);
    order.insert(order.end(), b.begin(), b.end());
  }
  return order;
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, ProposesEveryCandidateOnceAndOnlyCandidates) {
  const RecordedSpace r = test::bowl(true, 2);
  for (std::size_t batch : {1u, 7u}) {
    const std::vector<std::size_t> order = run_all(GetParam(), r, 3, batch);
    const std::set<std::size_t> distinct(order.begin(), order.end());
    EXPECT_EQ(distinct.size(), order.size()) << "a candidate proposed twice, batch " << batch;
    EXPECT_EQ(order.size(), r.space.size()) << "batch " << batch;
    ASSERT_FALSE(distinct.empty());
    EXPECT_LT(*distinct.rbegin(), r.space.size());
    // Library candidates (indices 0 and 1 here) come early.
    EXPECT_LT(std::find(order.begin(), order.end(), 0) - order.begin(), 8);
    EXPECT_LT(std::find(order.begin(), order.end(), 1) - order.begin(), 8);
  }
}

TEST_P(EveryStrategy, IsDeterministicForASeed) {
  const RecordedSpace r = test::bowl(true);
  auto first = [&](std::uint64_t seed) { return run_all(GetParam(), r, seed, 4, 120); };
  EXPECT_EQ(first(5), first(5));
  EXPECT_NE(first(5), first(6));
}

TEST_P(EveryStrategy, FailuresAreNeverSettledOn) {
  // On the space with a failing corner the optimum is still found (failures are not "fast").
  const RecordedSpace r = test::bowl(true);
  SimulateOptions o;
  auto score = score_strategy(GetParam(), r, o, 5);
  ASSERT_TRUE(score) << score.error().message;
  EXPECT_EQ(score->reached_fraction, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Search, EveryStrategy, ::testing::ValuesIn(kBudgeted),
                         [](const auto& info) { return info.param; });

// A random order needs about half the space (the optimum is the only point within 2%); every
// guided strategy must get there in under a tenth of it, median over 20 seeds, in batches of 1
// and of 8.
TEST(Search, GuidedStrategiesBeatARandomOrderOnTheBowl) {
  const RecordedSpace r = test::bowl();
  const double tenth = static_cast<double>(r.space.size()) / 10;
  for (std::size_t batch : {1u, 8u}) {
    SimulateOptions o;
    o.batch = batch;
    auto random = score_strategy("random", r, o, 20);
    ASSERT_TRUE(random);
    EXPECT_GT(random->evals.median, tenth * 2) << "the bound must be one a random order misses";
    for (const std::string name : {"hill_climbing", "annealing", "genetic", "model"}) {
      auto s = score_strategy(name, r, o, 20);
      ASSERT_TRUE(s) << name;
      EXPECT_LT(s->evals.median, tenth) << name << " batch " << batch;
      EXPECT_GE(s->reached_fraction, 0.9) << name << " batch " << batch;
    }
  }
}

}  // namespace
}  // namespace ktune

// The replay engine: evaluation counts, simulated time, quartiles, bad recorded spaces.
#include "ktune/search/simulate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "recorded_spaces.h"

namespace ktune {
namespace {

std::size_t optimum_index(const RecordedSpace& r) {
  std::size_t best = 0;
  for (std::size_t i = 0; i < r.time_ns.size(); ++i) {
    if (r.time_ns[i] && (!r.time_ns[best] || *r.time_ns[i] < *r.time_ns[best])) best = i;
  }
  return best;
}

TEST(Simulate, ExhaustiveReachesAtTheOptimumsIndexPlusOne) {
  const RecordedSpace r = test::bowl(true);
  const std::size_t opt = optimum_index(r);
  double time = 0;
  for (std::size_t i = 0; i <= opt; ++i) time += r.cost_s[i];
  SimulateOptions o;
  auto s = score_strategy("exhaustive", r, o, 3);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->evals.median, static_cast<double>(opt + 1));
  EXPECT_NEAR(s->time_s.median, time, 1e-9 * time);
  EXPECT_EQ(s->reached_fraction, 1.0);
  // A budget below the optimum's index: never reached, the median is infinite.
  o.max_evals = opt;
  s = score_strategy("exhaustive", r, o, 3);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->reached_fraction, 0.0);
  EXPECT_TRUE(std::isinf(s->evals.median));
}

TEST(Simulate, BatchesCountFromTheCandidateThatReached) {
  const RecordedSpace r = test::bowl();
  const std::size_t opt = optimum_index(r);
  SimulateOptions o;
  o.batch = 10;
  auto s = make_strategy("exhaustive", r.space, 0);
  ASSERT_TRUE(s);
  const ReplayResult res = replay(**s, r, o);
  EXPECT_TRUE(res.reached);
  EXPECT_EQ(res.evals, opt + 1);
  double time = 0;  // the whole batch that held the optimum was measured
  for (std::size_t i = 0; i < std::min(r.space.size(), (opt / 10 + 1) * 10); ++i)
    time += r.cost_s[i];
  EXPECT_NEAR(res.time_s, time, 1e-9 * time);
}

TEST(Simulate, QuartilesInterpolateAndSortInfinityLast) {
  const Quartiles q = quartiles({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(q.q1, 2);
  EXPECT_DOUBLE_EQ(q.median, 3);
  EXPECT_DOUBLE_EQ(q.q3, 4);
  const double inf = std::numeric_limits<double>::infinity();
  const Quartiles m = quartiles({inf, 1, inf});
  EXPECT_DOUBLE_EQ(m.q1, inf);  // between 1 and inf
  EXPECT_TRUE(std::isinf(m.median));
}

TEST(Simulate, BadRecordedSpacesAreRejected) {
  RecordedSpace r = test::bowl(false, 2);
  r.cost_s.pop_back();
  EXPECT_FALSE(check_recorded_space(r));
  r = test::bowl(false, 2);
  r.space.coords[3][1] = 99;
  auto s = check_recorded_space(r);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("outside"), std::string::npos);
  r = test::bowl(false, 2);
  for (auto& t : r.time_ns) t.reset();
  EXPECT_FALSE(score_strategy("random", r, SimulateOptions{}, 2));
}

}  // namespace
}  // namespace ktune

// compute_stats (bench module), tested here because the cache stores its result: median with the
// even-count rule, extremes and median absolute deviation.
#include "ktune/bench/bench_stats.h"

#include <gtest/gtest.h>

namespace ktune {
namespace {

TEST(ComputeStats, EmptyGivesZeros) {
  const BenchStats s = compute_stats({});
  EXPECT_EQ(s.runs, 0);
  EXPECT_EQ(s.median_ns, 0);
  EXPECT_EQ(s.min_ns, 0);
  EXPECT_EQ(s.max_ns, 0);
  EXPECT_EQ(s.mad_ns, 0);
}

TEST(ComputeStats, SingleSample) {
  const BenchStats s = compute_stats({7.5});
  EXPECT_EQ(s.runs, 1);
  EXPECT_EQ(s.median_ns, 7.5);
  EXPECT_EQ(s.min_ns, 7.5);
  EXPECT_EQ(s.max_ns, 7.5);
  EXPECT_EQ(s.mad_ns, 0);
}

TEST(ComputeStats, OddCountUnsorted) {
  // sorted: 1 2 3 4 100; median 3; deviations 2 1 0 1 97 -> sorted 0 1 1 2 97 -> MAD 1
  const BenchStats s = compute_stats({4, 100, 1, 3, 2});
  EXPECT_EQ(s.runs, 5);
  EXPECT_EQ(s.median_ns, 3);
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.max_ns, 100);
  EXPECT_EQ(s.mad_ns, 1);
}

TEST(ComputeStats, EvenCountTakesMeanOfMiddleTwo) {
  // sorted: 10 20 30 50; median 25; deviations 15 5 5 25 -> sorted 5 5 15 25 -> MAD 10
  const BenchStats s = compute_stats({50, 10, 30, 20});
  EXPECT_EQ(s.runs, 4);
  EXPECT_EQ(s.median_ns, 25);
  EXPECT_EQ(s.min_ns, 10);
  EXPECT_EQ(s.max_ns, 50);
  EXPECT_EQ(s.mad_ns, 10);
}

TEST(ComputeStats, OutlierDoesNotMoveMedianOrMad) {
  const BenchStats a = compute_stats({10, 11, 12, 13, 14});
  const BenchStats b = compute_stats({10, 11, 12, 13, 1e9});
  EXPECT_EQ(a.median_ns, b.median_ns);
  EXPECT_EQ(a.mad_ns, b.mad_ns);
  EXPECT_EQ(b.max_ns, 1e9);
}

}  // namespace
}  // namespace ktune

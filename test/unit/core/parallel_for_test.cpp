// parallel_for: every index once, chunks in order, small ranges inline.
#include "core/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ktune {
namespace {

TEST(ParallelFor, CoversEveryIndexOnceInOrderedChunks) {
  for (std::int64_t n :
       {std::int64_t{0}, std::int64_t{1}, std::int64_t{999}, std::int64_t{1} << 20}) {
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
    const int expected_chunks = parallel_chunks(n, 1000);
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges(
        static_cast<std::size_t>(expected_chunks));
    int chunks = -1;
    parallel_for(
        n, 1000,
        [&](std::int64_t b, std::int64_t e, int chunk) {
          ranges[static_cast<std::size_t>(chunk)] = {b, e};
          for (std::int64_t i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
        },
        &chunks);
    EXPECT_EQ(chunks, expected_chunks);
    for (const auto& s : seen) ASSERT_EQ(s.load(), 1);
    std::int64_t next = 0;
    for (const auto& [b, e] : ranges) {
      EXPECT_EQ(b, next);
      EXPECT_GE(e - b, n >= 1000 ? 1000 : 1);
      next = e;
    }
    EXPECT_EQ(next, n);
  }
}

TEST(ParallelFor, SmallRangesRunInTheCallingThreadAndChunksFollowTheCores) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran;
  parallel_for(10, 1000,
               [&](std::int64_t, std::int64_t, int) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, caller);
  EXPECT_EQ(parallel_chunks(10, 1000), 1);
  EXPECT_EQ(parallel_chunks(0, 1000), 0);
  EXPECT_LE(parallel_chunks(std::int64_t{1} << 40, 1000), usable_cores());
  EXPECT_GE(usable_cores(), 1);
}

}  // namespace
}  // namespace ktune

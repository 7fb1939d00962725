// ThreadPool: every job runs, jobs run in parallel, wait_idle is a barrier, the destructor drains.
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>

namespace ktune {
namespace {

TEST(ThreadPool, RunsEveryJobAndWaitsIdle) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.size(), 2u);
  std::atomic<int> count{0};
  for (int i = 0; i < 200; ++i) pool.submit([&] { count.fetch_add(1); });
  pool.wait_idle();
  EXPECT_EQ(count.load(), 200);
  for (int i = 0; i < 10; ++i) pool.submit([&] { count.fetch_add(1); });
  pool.wait_idle();
  EXPECT_EQ(count.load(), 210);
}

TEST(ThreadPool, WaitIdleOnAnEmptyPoolReturns) {
  ThreadPool pool(1);
  pool.wait_idle();
  SUCCEED();
}

TEST(ThreadPool, DefaultSizeIsAtLeastOne) {
  ThreadPool pool;
  EXPECT_GE(pool.size(), 1u);
}

TEST(ThreadPool, JobsRunConcurrently) {
  ThreadPool pool(2);
  std::latch both(2);  // each job waits for the other: deadlocks unless they run at once
  std::atomic<int> done{0};
  for (int i = 0; i < 2; ++i) {
    pool.submit([&] {
      both.arrive_and_wait();
      done.fetch_add(1);
    });
  }
  pool.wait_idle();
  EXPECT_EQ(done.load(), 2);
}

TEST(ThreadPool, DestructorFinishesQueuedJobs) {
  std::atomic<int> count{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 50; ++i) pool.submit([&] { count.fetch_add(1); });
  }
  EXPECT_EQ(count.load(), 50);
}

}  // namespace
}  // namespace ktune

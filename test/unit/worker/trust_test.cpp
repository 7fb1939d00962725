// The parent's checks of a worker (issue 16): the nonce travels both ways, timings the parent's
// clock rules out are named, process trees are found and killed whatever their sessions, a
// tree's memory counts its children, and threads are told parked from busy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "worker/process_tree.h"
#include "worker/worker_checks.h"
#include "worker/worker_protocol.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using worker_detail::implausible_stats;

TEST(Nonce, IsFreshAndEchoedByRequestAndResponse) {
  Result<std::string> a = make_nonce();
  Result<std::string> b = make_nonce();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
  BenchmarkRequest q;
  q.id = 3;
  Result<WorkerMessage> m = decode_message(encode_request(q, *a));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->nonce, *a);
  BenchmarkResponse r;
  r.id = 3;
  m = decode_message(encode_response(r, *a));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->nonce, *a);
  m = decode_message(encode_response(r));  // no nonce: decodes, with none
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->nonce.empty());
}

BenchStats stats(double min, double median, double max, int runs) {
  return BenchStats{.median_ns = median, .min_ns = min, .max_ns = max, .mad_ns = 0, .runs = runs};
}

TEST(ImplausibleStats, AcceptsTimesThatFitTheWallTime) {
  EXPECT_EQ(implausible_stats(stats(900, 1000, 5000, 100), 1ms), "");
  // Half the runs short, half long: the sum is below runs x median, and still fits.
  EXPECT_EQ(implausible_stats(stats(10, 1000, 1000, 3), std::chrono::nanoseconds(2100)), "");
}

TEST(ImplausibleStats, NamesWhatCannotHaveBeenMeasured) {
  EXPECT_THAT(implausible_stats(stats(0, 0, 0, 3), 1s), HasSubstr("less than a nanosecond"));
  EXPECT_THAT(implausible_stats(stats(1000, 1000, 1000, 100), 50us),
              HasSubstr("of the parent's wall time"));
  // At least two of three runs took the median: 2 x 1 ms in 1.5 ms is impossible.
  EXPECT_THAT(implausible_stats(stats(1, 1e6, 1e6, 3), 1500us), HasSubstr("wall time"));
  EXPECT_THAT(implausible_stats(stats(5, 4, 6, 3), 1s), HasSubstr("out of order"));
  EXPECT_NE(implausible_stats(stats(1, NAN, 2, 3), 1s), "");
  EXPECT_NE(implausible_stats(stats(1, 1, 1, 0), 1s), "");
}

bool reaped_or_gone(pid_t pid) { return !worker_detail::process_id(pid).has_value(); }

// A child that starts a grandchild in its own session, which spins; both are found and killed.
TEST(ProcessTree, FindsAndKillsDescendantsInOtherSessions) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setsid();
      for (;;) ::pause();
    }
    [[maybe_unused]] ssize_t n = ::write(ready[1], &grandchild, sizeof grandchild);
    for (;;) ::pause();
  }
  pid_t grandchild = -1;
  ASSERT_EQ(::read(ready[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  ::close(ready[0]);
  ::close(ready[1]);
  std::vector<worker_detail::ProcessId> found = worker_detail::descendants(child);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pid, grandchild);
  EXPECT_EQ(worker_detail::process_id(grandchild), found[0]);

  worker_detail::kill_tree(child, /*include_root=*/true);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (!reaped_or_gone(grandchild) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(reaped_or_gone(grandchild));
}

// A process seen in the tree earlier, re-parented away since (its parent exited), is killed
// through `known`.
TEST(ProcessTree, KillsKnownDescendantsThatWereReparented) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t orphan = ::fork();
    if (orphan == 0) {
      ::setsid();
      for (;;) ::pause();
    }
    [[maybe_unused]] ssize_t n = ::write(ready[1], &orphan, sizeof orphan);
    ::_exit(0);
  }
  pid_t orphan = -1;
  ASSERT_EQ(::read(ready[0], &orphan, sizeof orphan), static_cast<ssize_t>(sizeof orphan));
  ::close(ready[0]);
  ::close(ready[1]);
  const std::optional<worker_detail::ProcessId> seen = worker_detail::process_id(orphan);
  ASSERT_TRUE(seen);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // the orphan is no longer in its tree
  worker_detail::kill_tree(child, /*include_root=*/false, {*seen});
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (!reaped_or_gone(orphan) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(reaped_or_gone(orphan));
}

TEST(ProcessTree, TreeMemoryCountsChildren) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      static char block[96 << 20];
      std::memset(block, 1, sizeof block);
      [[maybe_unused]] ssize_t n = ::write(ready[1], "x", 1);
      for (;;) ::pause();
    }
    for (;;) ::pause();
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  std::optional<worker_detail::TreeMemory> m = worker_detail::tree_memory(child);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->processes, 2);
  EXPECT_GE(m->resident_bytes, std::size_t{96} << 20);
  worker_detail::kill_tree(child, true);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

// Forked children share their parent's pages until written: a tree of eight processes over one
// 64 MiB block holds 64 MiB, not eight times that (a worker whose candidate forks on every call
// was reported over its memory limit under ASan, where each process's resident set is large).
TEST(ProcessTree, TreeMemoryCountsSharedPagesOnce) {
  constexpr std::size_t kBlock = std::size_t{64} << 20;
  constexpr int kForks = 7;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    static char block[kBlock];
    std::memset(block, 1, sizeof block);
    for (int i = 0; i < kForks; ++i) {
      if (::fork() == 0) {
        [[maybe_unused]] ssize_t n = ::write(ready[1], "x", 1);
        for (;;) ::pause();
      }
    }
    [[maybe_unused]] ssize_t n = ::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  for (int i = 0; i <= kForks; ++i) {
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
  }
  std::optional<worker_detail::TreeMemory> m = worker_detail::tree_memory(child);
  // Each process's own resident set, summed: the block counted once per process. (Under a
  // sanitizer each process also holds tens of MiB of its runtime's own pages, so the sum is
  // compared with this rather than with the block alone.)
  std::size_t rss_sum = 0;
  std::vector<pid_t> tree = {child};
  for (const worker_detail::ProcessId& d : worker_detail::descendants(child)) tree.push_back(d.pid);
  for (pid_t pid : tree) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("VmRSS:")) rss_sum += std::stoull(line.substr(6)) * 1024;
    }
  }
  ASSERT_TRUE(m);
  EXPECT_EQ(m->processes, kForks + 1);
  EXPECT_GE(m->resident_bytes, kBlock);
  EXPECT_LT(m->resident_bytes + kForks * kBlock / 2, rss_sum)
      << "shared pages counted once per process";
  worker_detail::kill_tree(child, true);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(ThreadState, TellsParkedFromBusy) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::atomic<pid_t> parked_tid{0}, sleeping_tid{0}, spinning_tid{0};
  std::atomic<bool> stop{false};
  std::thread parked([&] {
    parked_tid = ::gettid();
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done; });
  });
  std::thread sleeping([&] {
    sleeping_tid = ::gettid();
    while (!stop) std::this_thread::sleep_for(1ms);
  });
  std::thread spinning([&] {
    spinning_tid = ::gettid();
    while (!stop) {
    }
  });
  while (parked_tid == 0 || sleeping_tid == 0 || spinning_tid == 0) std::this_thread::yield();
  const pid_t self = ::getpid();
  // The parked thread reaches its futex shortly after it starts.
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (worker_detail::thread_state(self, parked_tid) != worker_detail::ThreadState::kParked &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(worker_detail::thread_state(self, parked_tid), worker_detail::ThreadState::kParked);
  EXPECT_EQ(worker_detail::thread_state(self, sleeping_tid), worker_detail::ThreadState::kBusy);
  EXPECT_EQ(worker_detail::thread_state(self, spinning_tid), worker_detail::ThreadState::kBusy);
  EXPECT_EQ(worker_detail::thread_state(self, 999999999), worker_detail::ThreadState::kGone);
  stop = true;
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_all();
  parked.join();
  sleeping.join();
  spinning.join();
}

}  // namespace
}  // namespace ktune

// The parent's checks of answers and leftovers (worker_checks.h).
#include "worker/worker_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "worker/process_tree.h"

namespace ktune::worker_detail {
namespace {

// How long threads that appeared during a candidate get to park (an OpenMP team's threads reach
// their futex microseconds after the region ends; a busy machine can delay that).
constexpr std::chrono::milliseconds kSettle{20};

bool contains(const std::vector<pid_t>& v, pid_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The threads of `tids` still not parked after up to kSettle, each as "thread N: <syscall>".
std::vector<std::string> busy_after_settle(pid_t pid, const std::vector<pid_t>& tids) {
  const auto until = std::chrono::steady_clock::now() + kSettle;
  auto nap = std::chrono::microseconds(100);
  std::vector<std::string> busy;
  for (;;) {
    busy.clear();
    for (pid_t tid : tids) {
      std::string what;
      const ThreadState state = thread_state(pid, tid, &what);
      if (state == ThreadState::kBusy || state == ThreadState::kUnknown) {
        busy.push_back(fmt::format("thread {}: {}", tid, what.empty() ? "unreadable" : what));
      }
    }
    if (busy.empty() || std::chrono::steady_clock::now() >= until) return busy;
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(4));
  }
}

}  // namespace

std::string implausible_stats(const BenchStats& s, std::chrono::nanoseconds wall) {
  const double wall_ns = static_cast<double>(wall.count());
  if (!std::isfinite(s.median_ns) || !std::isfinite(s.min_ns) || !std::isfinite(s.max_ns) ||
      !std::isfinite(s.mad_ns) || s.runs < 1) {
    return fmt::format("claims {} runs with a median of {} ns", s.runs, s.median_ns);
  }
  if (s.min_ns < 1.0) {
    return fmt::format("claims a run of {} ns; no call takes less than a nanosecond", s.min_ns);
  }
  if (s.min_ns > s.median_ns || s.median_ns > s.max_ns) {
    return fmt::format("claims min {} ns, median {} ns, max {} ns, out of order", s.min_ns,
                       s.median_ns, s.max_ns);
  }
  const double runs = s.runs;
  const double at_least = std::max(s.min_ns * runs, s.median_ns * std::ceil(runs / 2));
  if (at_least > wall_ns) {
    return fmt::format(
        "claims {} runs of median {:.3f} us, at least {:.3f} ms of running, in {:.3f} ms of the "
        "parent's wall time",
        s.runs, s.median_ns / 1e3, at_least / 1e6, wall_ns / 1e6);
  }
  return {};
}

void ThreadWatch::start(pid_t pid) {
  pid_ = pid;
  adopted_ = threads(pid);
  parked_.clear();
  readable_ = thread_state(pid, pid) != ThreadState::kUnknown;
}

ThreadWatch::Verdict ThreadWatch::after_request(bool host_code) {
  std::vector<pid_t> fresh;
  for (pid_t tid : threads(pid_)) {
    if (tid != pid_ && !contains(adopted_, tid) && !contains(parked_, tid)) fresh.push_back(tid);
  }
  if (fresh.empty()) return {};
  if (!host_code) {
    adopted_.insert(adopted_.end(), fresh.begin(), fresh.end());
    return {};
  }
  if (!readable_) return {.fault = {}, .restart = true};
  const std::vector<std::string> busy = busy_after_settle(pid_, fresh);
  if (!busy.empty()) {
    return {.fault = fmt::format("left {} thread(s) running after the call returned ({}; /proc "
                                 "syscall line); a thread that outlives its call may write "
                                 "another candidate's buffers",
                                 busy.size(), busy.front()),
            .restart = true};
  }
  parked_.insert(parked_.end(), fresh.begin(), fresh.end());
  return {};
}

std::string ThreadWatch::woken_since() {
  std::vector<pid_t> live;
  for (pid_t tid : parked_) {
    if (thread_state(pid_, tid) != ThreadState::kGone) live.push_back(tid);
  }
  parked_ = live;
  const std::vector<std::string> busy = busy_after_settle(pid_, parked_);
  if (busy.empty()) return {};
  return fmt::format("a thread of an earlier candidate is no longer parked ({})", busy.front());
}

}  // namespace ktune::worker_detail

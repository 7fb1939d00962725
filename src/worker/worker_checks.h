// The parent's own checks of a worker's answer and of what a candidate left behind, made
// outside the worker's address space and clock (the worker's guard, worker_guard.h, is inside
// the candidate's reach; these are not).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "ktune/bench/bench_stats.h"

namespace ktune::worker_detail {

// Why `stats` cannot have been measured in `wall` (the time from sending the request to reading
// the answer, on the parent's clock), or empty when they can. Every timed run lies inside the
// exchange, so min x runs and median x ceil(runs / 2) (at least half the samples are no shorter
// than the median) are at most `wall`; no call takes less than a nanosecond (the timer's own
// reading costs more); the statistics must be finite and ordered (min <= median <= max).
[[nodiscard]] std::string implausible_stats(const BenchStats& stats, std::chrono::nanoseconds wall);

// A worker's threads as the parent tracks them. Threads present when the worker answered its
// ping are its own (the main thread, the guardian) and exempt; threads that appear while a
// device runtime or library runs (CUDA, PoCL, OpenBLAS) are adopted; threads that appear while
// host code of a candidate runs (a CPU shared object) must park: an idle thread pool (OpenMP,
// std::thread pools) waits in a futex without a timeout, while a thread that keeps working,
// sleeps or polls after the call returned is a fault. Parked threads must stay parked between
// requests.
class ThreadWatch {
 public:
  struct Verdict {
    std::string fault;     // non-empty: the candidate left threads running
    bool restart = false;  // the threads cannot be inspected: start a fresh worker to be safe
  };

  // At the pong.
  void start(pid_t pid);
  // After a response; `host_code`: the request ran a candidate's own host code.
  [[nodiscard]] Verdict after_request(bool host_code);
  // Before the next request: empty when every vetted thread is still parked (or gone).
  [[nodiscard]] std::string woken_since();

 private:
  pid_t pid_ = -1;
  bool readable_ = true;        // /proc/<pid>/task/<tid>/syscall could be read at start
  std::vector<pid_t> adopted_;  // the worker's own and the runtimes' threads
  std::vector<pid_t> parked_;   // threads of candidates' pools, vetted as parked
};

}  // namespace ktune::worker_detail

// Worker and WorkerPool: generated code runs only in ktune-worker child processes, so that a
// candidate that crashes, hangs, corrupts memory or floods its output costs that candidate alone.
// (Inductor's TuningProcess / TuningProcessPool, with verification and escalation.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/worker/worker_options.h"
#include "worker/worker_protocol.h"

namespace ktune {

// One child process. Move-only; the destructor stops and reaps it.
class Worker {
 public:
  // Spawns the worker with its protocol pipes and waits for the pong.
  [[nodiscard]] static Result<Worker> start(const WorkerOptions& options);

  Worker(Worker&&) noexcept;
  Worker& operator=(Worker&&) noexcept;
  ~Worker();

  // Sends the request and waits at most `deadline` for the response, draining the worker's
  // output all the while. Never fails: a lost worker becomes the response's outcome
  //   kCrashed (message names the signal, or the exit status, or the broken protocol),
  //   kTimedOut (deadline passed; the worker got SIGTERM, then SIGKILL),
  //   kResourceExhausted (memory watchdog over the worker's whole tree, or RLIMIT_CPU),
  //   kCrashed "forged worker answer" (no nonce, times the parent's clock rules out, a second
  //     frame), or "left N process(es)/thread(s) running" (worker_checks.h),
  // and alive() is false afterwards. output_tail holds the worker's recent output either way.
  // A response with restart set asks the caller to stop this worker before the next request.
  [[nodiscard]] BenchmarkResponse run(const BenchmarkRequest& request,
                                      std::chrono::milliseconds deadline);

  [[nodiscard]] bool alive() const;
  // alive(), and nothing an earlier candidate left behind woke up since its answer: no bytes
  // written after it, no descendant, every thread of a candidate's pool still parked. A worker
  // that is not fit is replaced before the next request rather than blamed on it; `why` says why.
  [[nodiscard]] bool fit_for_next(std::string* why = nullptr);
  [[nodiscard]] pid_t pid() const;
  // Closes the request pipe (the worker exits by itself), then SIGTERM, then SIGKILL; reaps.
  void stop();
  // Its input closed, not waited for (WorkerOptions::wait_at_shutdown): it exits by itself.
  void release();

 private:
  struct State;
  explicit Worker(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Workers per device slot (one on the CPU). A request goes to a live worker, starting a fresh
// one first when the last was lost.
class WorkerPool {
 public:
  explicit WorkerPool(WorkerOptions options, int slots = 1);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // kUnavailable only when no worker can be started at all; otherwise see Worker::run.
  [[nodiscard]] Result<BenchmarkResponse> run(const BenchmarkRequest& request,
                                              std::chrono::milliseconds deadline);
  [[nodiscard]] int restarts() const { return restarts_; }
  void shutdown();
  // Told, in a line, when a worker is lost or replaced: which candidate and why (`--verbose`).
  void set_notice(std::function<void(const std::string&)> notice) { notice_ = std::move(notice); }

 private:
  void notify(const std::string& line) const {
    if (notice_) notice_(line);
  }

  WorkerOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int restarts_ = 0;
  std::function<void(const std::string&)> notice_;
};

}  // namespace ktune

// Worker and WorkerPool: generated code runs only in ktune-worker child processes, so that a
// candidate that crashes, hangs, corrupts memory or floods its output costs that candidate alone.
// (Inductor's TuningProcess / TuningProcessPool, with verification and escalation.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
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
  //   kResourceExhausted (memory watchdog or RLIMIT_CPU),
  // and alive() is false afterwards. output_tail holds the worker's recent output either way.
  [[nodiscard]] BenchmarkResponse run(const BenchmarkRequest& request,
                                      std::chrono::milliseconds deadline);

  [[nodiscard]] bool alive() const;
  [[nodiscard]] pid_t pid() const;
  // Closes the request pipe (the worker exits by itself), then SIGTERM, then SIGKILL; reaps.
  void stop();

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

 private:
  WorkerOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  int restarts_ = 0;
};

}  // namespace ktune

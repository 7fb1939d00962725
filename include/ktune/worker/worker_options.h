// WorkerOptions: how ktune starts its ktune-worker processes (the worker module's public part;
// the pool itself, src/worker/worker.h, is internal).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

struct WorkerOptions {
  std::filesystem::path executable;                 // empty: find_worker_executable()
  std::chrono::milliseconds start_timeout{10'000};  // spawn to pong
  std::chrono::milliseconds term_grace{500};        // SIGTERM, then SIGKILL after this
  std::size_t memory_limit_bytes = 0;               // resident-memory watchdog; 0: none
  int cpu_limit_s = 0;                              // RLIMIT_CPU of the worker; 0: none
  std::size_t output_tail_bytes = 8192;             // kept from the worker's stdout and stderr
  // Added to the worker's environment; kMeasurementEnvironment (measurement_env.h) is added
  // for every variable not set here or in ktune's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  // The cores the worker (and every process it starts) runs on, set with sched_setaffinity
  // before it executes; OMP_NUM_THREADS and OPENBLAS_NUM_THREADS get their count unless set in
  // `env` or ktune's environment. Empty: the cores ktune runs on.
  std::vector<int> cpus;
  // At the pool's shutdown: wait for each worker to exit (true), or (false: a process that
  // exits right after, as the CLI does) leave an idle, clean worker to exit by itself: its input
  // closed, which ends it, and its parent-death signal and guardian if it lingers. A CUDA
  // worker's exit (its context torn down) took 60-80 ms on an H200, and the parent's own exit
  // 50 ms more after it (10-17 ms without the wait). A worker with bytes, processes or threads
  // left over is stopped and waited for all the same. Not waited for, it stays a zombie until
  // this process exits.
  bool wait_at_shutdown = true;
};

// One device of a selection that measures on several at once (SelectorOptions::devices): what
// its worker is told on top of WorkerOptions. CUDA: CUDA_VISIBLE_DEVICES=<ordinal>, so that the
// worker sees its GPU as device 0; OpenCL: KTUNE_OPENCL_DEVICE=<platform>:<device>; the CPU: the
// cores it is pinned to.
struct DeviceSlot {
  std::string name;  // for messages and the table: "cuda:1", "opencl:0:1", "cpu:0-3"
  std::vector<std::pair<std::string, std::string>> env;  // replaces WorkerOptions::env entries
  std::vector<int> cpus;                                 // replaces WorkerOptions::cpus
};

// `base` for the worker of `slot`: its env entries replacing those of the same name, its cores.
[[nodiscard]] WorkerOptions worker_options_for(const WorkerOptions& base, const DeviceSlot& slot);

// $KTUNE_WORKER, else <install libexecdir>/ktune-worker, else ktune-worker next to the running
// executable, else <its folder>/../libexec/ktune-worker; kNotFound listing the places tried.
// Programs that embed ktune can set WorkerOptions::executable instead; the installed CMake
// package gives the path as ${ktune_WORKER_EXECUTABLE}.
[[nodiscard]] Result<std::filesystem::path> find_worker_executable();

}  // namespace ktune

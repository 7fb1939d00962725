// CpuBenchmarker: times a CPU kernel: warm-up, cache flush before every timed run, a repetition
// count adapted to a time budget, and robust statistics.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "ktune/bench_stats.h"
#include "ktune/status.h"

namespace ktune {

struct CpuBenchOptions {
  int warmup_runs = 1;     // untimed runs first (page faults, lazy binding, caches)
  double budget_ms = 100;  // target total timed time per candidate
  int min_runs = 3;        // timed runs even when one run exceeds the budget
  int max_runs = 200;      // timed runs at most, however fast the kernel
  // Before each timed run, evict the kernel's data from every cache level, so that each run
  // starts cold and earlier runs cannot warm later ones. With flush ranges set, their cache
  // lines are flushed (clflush on x86: cost proportional to the data, not to the cache); without,
  // a buffer of flush_bytes is written.
  bool flush_cache = true;
  std::size_t flush_bytes = 0;  // 0: twice the last-level cache from sysfs, else 64 MiB
};

class CpuBenchmarker {
 public:
  explicit CpuBenchmarker(CpuBenchOptions options = {});
  // The kernel's buffers as (pointer, bytes), e.g. ProblemBuffers::data_ranges(); replaces the
  // whole-cache flush with a targeted one.
  void set_flush_ranges(std::vector<std::pair<const void*, std::size_t>> ranges);

  [[nodiscard]] const CpuBenchOptions& options() const { return options_; }
  // Runs `run` warmup_runs times, then a count of timed runs chosen from the first timed run and
  // the budget. The first failing run's error is returned.
  [[nodiscard]] Result<BenchStats> measure(const std::function<Status()>& run);
  // Timed samples of several functions interleaved round by round, so that drift in the
  // machine's speed hits all of them alike; for re-measuring close calls.
  [[nodiscard]] Result<std::vector<BenchStats>> measure_interleaved(
      const std::vector<std::function<Status()>>& runs, int rounds);

 private:
  void flush();
  CpuBenchOptions options_;
  std::vector<std::pair<const void*, std::size_t>> ranges_;
  std::vector<unsigned char> flush_buffer_;
  unsigned sink_ = 0;
};

// Bytes of the largest CPU cache this process sees (sysfs), 0 if unknown.
[[nodiscard]] std::size_t last_level_cache_bytes();

}  // namespace ktune

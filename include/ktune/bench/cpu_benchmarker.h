// CpuBenchmarker: times a CPU kernel: warm-up, cache flush before every timed run, a repetition
// count adapted to a time budget, and robust statistics.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/status.h"

namespace ktune {

class CpuBenchmarker {
 public:
  explicit CpuBenchmarker(BenchOptions options = {});
  // The kernel's buffers as (pointer, bytes), e.g. ProblemBuffers::data_ranges(); replaces the
  // whole-cache flush with a targeted one.
  void set_flush_ranges(std::vector<std::pair<const void*, std::size_t>> ranges);

  [[nodiscard]] const BenchOptions& options() const { return options_; }
  // Runs `run` warmup_runs times, then a count of timed runs chosen from the first timed run and
  // the budget. The first failing run's error is returned.
  [[nodiscard]] Result<BenchStats> measure(const std::function<Status()>& run);
  // Timed samples of several functions interleaved round by round, so that drift in the
  // machine's speed hits all of them alike; for re-measuring close calls.
  [[nodiscard]] Result<std::vector<BenchStats>> measure_interleaved(
      const std::vector<std::function<Status()>>& runs, int rounds);

 private:
  friend class CpuSamples;  // the CPU device's samples (src/bench/cpu_samples.h) flush alike
  void flush();
  BenchOptions options_;
  std::vector<std::pair<const void*, std::size_t>> ranges_;
  std::vector<unsigned char> flush_buffer_;
  unsigned sink_ = 0;
};

// Bytes of the largest CPU cache this process sees (sysfs), 0 if unknown.
[[nodiscard]] std::size_t last_level_cache_bytes();

}  // namespace ktune

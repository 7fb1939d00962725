// OpenCLBenchmarker: the measurement loop for OpenCL kernels: warm-up, a cache flush before each
// timed run, a repetition count adapted to the budget (BenchOptions), robust statistics. Each
// timed run reports its own duration (profiling events on an in-order queue: END - START), so
// the loop has no OpenCL types; worker/opencl_handler.cpp supplies the runs.
#pragma once

#include <functional>

#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/status.h"

namespace ktune {

class OpenCLBenchmarker {
 public:
  explicit OpenCLBenchmarker(BenchOptions options) : options_(options) {}
  // `timed_run`: one launch, waited for, its device time in ns. `flush`: evicts the kernel's
  // data before a timed run (called only with options().flush_cache). The first error is
  // returned.
  [[nodiscard]] Result<BenchStats> measure(const std::function<Result<double>()>& timed_run,
                                           const std::function<Status()>& flush) const;
  [[nodiscard]] const BenchOptions& options() const { return options_; }

 private:
  BenchOptions options_;
};

}  // namespace ktune

// OpenCLBenchmarker: warm-up, then a first timed run sets the count from the budget.
#include "bench/opencl_benchmarker.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace ktune {

Result<BenchStats> OpenCLBenchmarker::measure(const std::function<Result<double>()>& timed_run,
                                              const std::function<Status()>& flush) const {
  for (int i = 0; i < options_.warmup_runs; ++i) {
    if (Result<double> t = timed_run(); !t) return std::unexpected(t.error());
  }
  auto once = [&]() -> Result<double> {
    if (options_.flush_cache && flush) {
      if (Status s = flush(); !s) return std::unexpected(s.error());
    }
    return timed_run();
  };
  std::vector<double> samples;
  Result<double> first = once();
  if (!first) return std::unexpected(first.error());
  samples.push_back(*first);
  const double budget_ns = options_.budget_ms * 1e6;
  const int wanted = static_cast<int>(std::clamp(
      std::floor(budget_ns / std::max(*first, 1.0)), static_cast<double>(options_.min_runs),
      static_cast<double>(std::max(options_.max_runs, options_.min_runs))));
  while (static_cast<int>(samples.size()) < wanted) {
    Result<double> t = once();
    if (!t) return std::unexpected(t.error());
    samples.push_back(*t);
  }
  return compute_stats(std::move(samples));
}

}  // namespace ktune

// measure_samples: the one measurement loop (measure_loop.h).
#include "bench/measure_loop.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ktune {

int runs_for_budget(const BenchOptions& options, double first_ns) {
  const double budget_ns = options.budget_ms * 1e6;
  return static_cast<int>(std::clamp(
      std::floor(budget_ns / std::max(first_ns, 1.0)), static_cast<double>(options.min_runs),
      static_cast<double>(std::max(options.max_runs, options.min_runs))));
}

Result<BenchStats> measure_samples(const BenchOptions& options, SampleSource& source) {
  if (Status s = source.warm_up(options.warmup_runs); !s) return std::unexpected(s.error());
  std::vector<double> ns;
  if (Status s = source.sample(1, &ns); !s) return std::unexpected(s.error());
  if (ns.empty()) return make_error(ErrorCode::kInternal, "measure_samples: no first sample");
  const int wanted = runs_for_budget(options, ns.front());
  if (wanted > 1) {
    if (Status s = source.sample(wanted - 1, &ns); !s) return std::unexpected(s.error());
  }
  return compute_stats(std::move(ns));
}

}  // namespace ktune

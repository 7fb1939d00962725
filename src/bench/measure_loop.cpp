// measure_samples: the one measurement loop (measure_loop.h).
#include "bench/measure_loop.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace ktune {

Status SampleSource::sample_each(int count, const std::function<Status()>& before,
                                 std::vector<double>* ns) {
  for (int i = 0; i < count; ++i) {
    if (Status s = before(); !s) return s;
    if (Status s = sample(1, ns); !s) return s;
  }
  return {};
}

int runs_for_budget(const BenchOptions& options, double first_ns) {
  const double budget_ns = options.budget_ms * 1e6;
  return static_cast<int>(std::clamp(
      std::floor(budget_ns / std::max(first_ns, 1.0)), static_cast<double>(options.min_runs),
      static_cast<double>(std::max(options.max_runs, options.min_runs))));
}

int runs_before_abandoning(const BenchOptions& options, double first_ns) {
  const double share = kAbandonBudgetShare * runs_for_budget(options, first_ns);
  return std::max(kAbandonAfterRuns, static_cast<int>(std::ceil(share)));
}

bool should_abandon(const std::vector<double>& ns, double above_ns) {
  if (above_ns <= 0 || std::ssize(ns) < kAbandonAfterRuns) return false;
  return *std::min_element(ns.begin(), ns.end()) > above_ns;
}

Result<BenchStats> measure_samples(const BenchOptions& options, SampleSource& source) {
  Result<Measurement> m = measure_or_abandon(options, source, 0);
  if (!m) return std::unexpected(m.error());
  return m->stats;
}

Result<Measurement> measure_or_abandon(const BenchOptions& options, SampleSource& source,
                                       double above_ns) {
  if (Status s = source.warm_up(options.warmup_runs); !s) return std::unexpected(s.error());
  std::vector<double> ns;
  if (Status s = source.sample(1, &ns); !s) return std::unexpected(s.error());
  if (ns.empty()) return make_error(ErrorCode::kInternal, "measure_samples: no first sample");
  const int wanted = runs_for_budget(options, ns.front());
  // With a bound, the first kAbandonAfterRuns runs form a batch of their own, checked before the
  // rest are asked for: the point is not to spend the budget on a candidate that cannot win.
  int have = 1;
  const int first_runs = runs_before_abandoning(options, ns.front());
  if (above_ns > 0 && wanted > first_runs) {
    if (Status s = source.sample(first_runs - 1, &ns); !s) return std::unexpected(s.error());
    have = first_runs;
    if (should_abandon(ns, above_ns)) return Measurement{compute_stats(std::move(ns)), true};
  }
  if (wanted > have) {
    if (Status s = source.sample(wanted - have, &ns); !s) return std::unexpected(s.error());
  }
  return Measurement{compute_stats(std::move(ns)), false};
}

}  // namespace ktune

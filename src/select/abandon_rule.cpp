// BestSoFar: the abandonment bound and the deadline from the fastest candidates so far.
#include "select/abandon_rule.h"

#include <algorithm>
#include <cmath>

#include "bench/measure_loop.h"

namespace ktune {

void BestSoFar::observe(const BenchStats& stats, double request_ms) {
  if (stats.runs <= 0 || stats.median_ns <= 0) return;
  Seen s{stats.median_ns, relative_spread(stats), stats.runs >= kAbandonAfterRuns, request_ms};
  const auto at =
      std::upper_bound(fastest_.begin(), fastest_.end(), s,
                       [](const Seen& a, const Seen& b) { return a.median_ns < b.median_ns; });
  fastest_.insert(at, s);
  if (std::ssize(fastest_) > kSpreadOver) fastest_.pop_back();
}

double BestSoFar::abandon_bound_ns() const {
  double spread = -1;
  for (const Seen& s : fastest_) {
    if (s.spread_known) spread = std::max(spread, s.spread);
  }
  if (spread < 0) return 0;
  return fastest_.front().median_ns * (1 + std::max(kAbandonSigmas * spread, kAbandonMinMargin));
}

std::optional<std::chrono::milliseconds> BestSoFar::deadline(double prepare_ms) const {
  if (fastest_.empty()) return std::nullopt;
  const double ms = prepare_ms + kDeadlineFactor * fastest_.front().request_ms;
  return kDeadlineStartup + std::chrono::milliseconds(static_cast<long>(std::ceil(ms)));
}

}  // namespace ktune

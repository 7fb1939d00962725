// compute_stats: median, extremes and median absolute deviation of raw timing samples. Robust
// statistics because a timing distribution has a long right tail (interrupts, clock changes).
#include "ktune/bench/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace ktune {
namespace {

// Median of sorted values; the mean of the middle two for an even count. Not empty.
double sorted_median(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  const std::size_t mid = n / 2;
  if (n % 2 == 1) return sorted[mid];
  return (sorted[mid - 1] + sorted[mid]) / 2.0;
}

}  // namespace

BenchStats compute_stats(std::vector<double> samples_ns) {
  BenchStats stats;
  if (samples_ns.empty()) return stats;
  std::sort(samples_ns.begin(), samples_ns.end());
  stats.runs = static_cast<int>(samples_ns.size());
  stats.min_ns = samples_ns.front();
  stats.max_ns = samples_ns.back();
  stats.median_ns = sorted_median(samples_ns);
  // Reuse the buffer for the deviations: the samples are no longer needed.
  for (double& x : samples_ns) x = std::fabs(x - stats.median_ns);
  std::sort(samples_ns.begin(), samples_ns.end());
  stats.mad_ns = sorted_median(samples_ns);
  return stats;
}

double relative_spread(const BenchStats& stats) {
  return stats.median_ns > 0 ? 1.4826 * stats.mad_ns / stats.median_ns : 0;
}

MedianInterval median_interval(std::vector<double> values, double level) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double tail = (1 - level) / 2;
  // k: the 1-based rank of the lower bound. term is P(X = k - 1), below P(X <= k - 1) for X ~
  // Binomial(n, 1/2); k grows while P(X <= k) stays within the tail and low stays below high.
  std::size_t k = 1;
  double term = std::pow(0.5, static_cast<double>(n));
  double below = term;
  while (k < (n + 1) / 2) {
    term = term * static_cast<double>(n - k + 1) / static_cast<double>(k);
    if (below + term > tail) break;
    below += term;
    ++k;
  }
  return {values[k - 1], values[n - k]};
}

}  // namespace ktune

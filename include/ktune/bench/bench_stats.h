// BenchStats: robust statistics of repeated timings.
#pragma once

#include <vector>

namespace ktune {

struct BenchStats {
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double mad_ns = 0;  // median absolute deviation from the median
  int runs = 0;
};

// From raw samples (any order); an empty vector gives zeros.
[[nodiscard]] BenchStats compute_stats(std::vector<double> samples_ns);

// Robust relative spread: 1.4826 MAD / median (the standard deviation's estimate for normal
// data, which one outlier does not move), 0 for a zero median.
[[nodiscard]] double relative_spread(const BenchStats& stats);

// A distribution-free confidence interval of the median of `values` (the sign test's): the k-th
// smallest and the k-th largest value, k the largest with P(Binomial(n, 1/2) < k) <= (1 -
// level) / 2. With fewer values than that needs (n < 6 at 95%) it is their whole range, whose
// coverage is 1 - 2^(1-n). Empty: {0, 0}.
struct MedianInterval {
  double low = 0;
  double high = 0;
};
[[nodiscard]] MedianInterval median_interval(std::vector<double> values, double level = 0.95);

}  // namespace ktune

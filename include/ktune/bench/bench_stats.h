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

}  // namespace ktune

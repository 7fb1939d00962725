// Counts each bin index of X into H, with LANES partial histograms merged at the end. Indices
// outside [0, bins) are written out of bounds: the spec's init keeps them in range.
#include <vector>

void hist(int* H, const int* X, int n, int bins) {
  std::vector<int> lanes(static_cast<std::size_t>(LANES) * bins, 0);
  for (int i = 0; i < n; ++i) ++lanes[static_cast<std::size_t>(i % LANES) * bins + X[i]];
  for (int b = 0; b < bins; ++b) {
    int sum = 0;
    for (int l = 0; l < LANES; ++l) sum += lanes[static_cast<std::size_t>(l) * bins + b];
    H[b] = sum;
  }
}

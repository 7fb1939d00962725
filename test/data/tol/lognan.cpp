// Y = log(X), NaN where X < 0 (legal there: the spec's nan_ok), and Z = X scaled by a factor
// that UNROLL = 4 gets wrong by 1e-3 relative (legal only under Z's own tolerance). PLANT 1
// writes NaN where the reference has a number (X > 0.5); PLANT 2 a number where it has NaN.
#include <cmath>
#include <limits>

void lognan(float* Y, float* Z, const float* X, int n) {
  const float scale = UNROLL == 4 ? 2.002f : 2.0f;
  int i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) {
      Y[i + u] = std::log(X[i + u]);
      Z[i + u] = X[i + u] * scale;
    }
  }
  for (; i < n; ++i) {
    Y[i] = std::log(X[i]);
    Z[i] = X[i] * scale;
  }
  for (i = 0; i < n; ++i) {
    if (PLANT == 1 && X[i] > 0.5f) Y[i] = std::numeric_limits<float>::quiet_NaN();
    if (PLANT == 2 && X[i] < 0) Y[i] = 0;
  }
}

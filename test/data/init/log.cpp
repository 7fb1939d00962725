// y = log(x), UNROLL elements per step.
#include <cmath>

void logx(float* Y, const float* X, int n) {
  int i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) Y[i + u] = std::log(X[i + u]);
  }
  for (; i < n; ++i) Y[i] = std::log(X[i]);
}

// The trusted reference for log.cpp.
#include <cmath>

void logx_ref(float* Y, const float* X, int n) {
  for (int i = 0; i < n; ++i) Y[i] = std::log(X[i]);
}

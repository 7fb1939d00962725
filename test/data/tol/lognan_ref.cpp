// The trusted reference for lognan.cpp.
#include <cmath>

void lognan_ref(float* Y, float* Z, const float* X, int n) {
  for (int i = 0; i < n; ++i) {
    Y[i] = std::log(X[i]);
    Z[i] = X[i] * 2.0f;
  }
}

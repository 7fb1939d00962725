// Elementwise add for ktune's spec tests: C = A + B over n elements.
#include <cstdint>

void add(float* C, const float* A, const float* B, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) C[i] = A[i] + B[i];
}

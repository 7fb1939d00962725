// A tiny kernel with knobs that change nothing but its code: ktune's large-space progress test
// (thousands of configs, each quick to render; only the first ones are ever compiled).
#include <cstdint>

void scale(float* y, const float* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += STEP) {
    for (std::int64_t j = i; j < i + STEP && j < n; ++j) y[j] = x[j] * (1.0f + 0.0f * A * B * C);
  }
}

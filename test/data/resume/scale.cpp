// y = 2x; UNROLL and SHIFT change the loop's shape, never the result.
void scale(float* Y, const float* X, int n) {
  int i = 0;
  for (; i + UNROLL <= n; i += UNROLL) {
    for (int u = 0; u < UNROLL; ++u) Y[i + u] = 2.0f * X[i + u] + 0.0f * SHIFT;
  }
  for (; i < n; ++i) Y[i] = 2.0f * X[i];
}

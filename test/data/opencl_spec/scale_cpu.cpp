// expected_cpu.yaml's C++ kernel: y = 2 x, FAULT == 3 gets element n/2 wrong.
void scale(float* y, const float* x, int n) {
  for (int j = 0; j < n; j += UNROLL) {
    for (int u = 0; u < UNROLL && j + u < n; ++u) {
      const int i = j + u;
      y[i] = (FAULT == 3 && i == n / 2) ? 1.0f + 3.0f * x[i] : 2.0f * x[i];
    }
  }
}

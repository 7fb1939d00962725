// The candidates and their reference in one file, as Kernel Tuner users keep them: UNROLL is
// defined for the candidates only, so the reference's compile fails on line 5.
void scale(float* y, const float* x, long n) {
  long i = 0;
  for (; i + UNROLL <= n; i += UNROLL)
    for (int u = 0; u < UNROLL; ++u) y[i + u] = 2.0f * x[i + u];
  for (; i < n; ++i) y[i] = 2.0f * x[i];
}
void scale_ref(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

// y = 2x in four ways; VARIANT 2 adds 1 to every element (the planted wrong candidate).
void scale(float* Y, const float* X, int n) {
  for (int i = 0; i < n; ++i) {
#if VARIANT == 0
    Y[i] = 2.0f * X[i];
#elif VARIANT == 1
    Y[i] = X[i] + X[i];
#elif VARIANT == 2
    Y[i] = 2.0f * X[i] + 1.0f;
#else
    Y[i] = X[i] * 2.0f;
#endif
  }
}

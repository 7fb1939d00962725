// The trusted reference of scale.cpp.
void scale_ref(float* Y, const float* X, int n) {
  for (int i = 0; i < n; ++i) Y[i] = 2.0f * X[i];
}

// The host reference of host_ref.yaml: y = 2 x, on the CPU.
void scale_ref(float* y, const float* x, int n) {
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

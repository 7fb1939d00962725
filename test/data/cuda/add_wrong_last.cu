// Planted fault: every element right but the last, which is off by one.
extern "C" __global__ void add_wrong_last(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + (i == n - 1 ? 1.0f : 0.0f);
}

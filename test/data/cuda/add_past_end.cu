// Planted fault: writes one element past the end of C (the bound check is off by one), which
// must land in C's redzone and be reported as a redzone violation.
extern "C" __global__ void add_past_end(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == n) c[i] = 0.0f;
}

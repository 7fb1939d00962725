// Planted fault: only the first half of C is written; the rest keeps its poison.
extern "C" __global__ void add_half_written(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) c[i] = a[i] + b[i];
}

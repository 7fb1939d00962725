// Planted fault: computes C correctly, then overwrites its input A.
extern "C" __global__ void add_writes_input(float* c, float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
    a[i] = 0.0f;
  }
}

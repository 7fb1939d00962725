// Planted fault: thread 0 writes through a bogus pointer; the context is lost
// (CUDA_ERROR_ILLEGAL_ADDRESS) and the worker must restart.
extern "C" __global__ void add_illegal_address(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == 0) *reinterpret_cast<volatile float*>(0x10) = 1.0f;
}

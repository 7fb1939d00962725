// y = 2 x through a templated entry (kB threads, kI items each); FAULT plants one broken config
// each on the GPU: 1 an illegal address, 2 a hang, 3 a write past the end of y, 4 one element
// wrong (host_ref.yaml), 5 stray writes far past y's redzone (4 MiB on, over n floats: a wrong
// stride's reach, into whatever the driver mapped there).
template <int kB, int kI>
__global__ void scale(float* __restrict__ y, const float* __restrict__ x, int n) {
  const int base = blockIdx.x * (kB * kI) + threadIdx.x;
#pragma unroll
  for (int i = 0; i < kI; ++i) {
    const int j = base + i * kB;
    if (j < n) y[j] = (FAULT == 4 && j == n / 2) ? 1.0f + 3.0f * x[j] : 2.0f * x[j];
  }
#if FAULT == 1
  if (threadIdx.x == 0) y[(1ll << 40)] = 1.0f;
#elif FAULT == 2
  volatile float* spin = y;
  for (;;) spin[0] = 1.0f;
#elif FAULT == 3
  if (blockIdx.x == 0 && threadIdx.x == 0) y[n + 3] = 1.0f;
#elif FAULT == 5
  const long long far = n + (1ll << 20);
  for (long long j = base; j < n; j += (long long)gridDim.x * kB * kI) y[far + j] = 1.0f;
#endif
}

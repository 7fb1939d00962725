// The reference: one block of 1024 threads, each summing a strided share of x in double, then
// thread 0 adding the 1024 sums in order. Slow (one SM reads everything) but plainly right, and
// accurate: the tuned kernels' float sums are compared against it with a tolerance.
extern "C" __global__ void reduce_naive(float* out, const float* x, float* partials, int n) {
  (void)partials;
  __shared__ double sums[1024];
  double s = 0.0;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int t = 0; t < blockDim.x; t++) total += sums[t];
    out[0] = (float)total;
  }
}

// A sum of n floats in one block through CUB's BlockReduce (CUDA 13 keeps CUB under include/cccl,
// which ktune puts on NVRTC's include path). The spec's parameter is named B, as CUB names a
// template parameter of its own (thread_operators.cuh): with `render: none` no #define B reaches
// CUB's headers.
#include <cub/block/block_reduce.cuh>

template <int kBlock>
__global__ void cub_sum(float* out, const float* x, int n) {
  using Reduce = cub::BlockReduce<float, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  float v = 0.0f;
  for (int i = threadIdx.x; i < n; i += kBlock) v += x[i];
  const float sum = Reduce(storage).Sum(v);
  if (threadIdx.x == 0) out[0] = sum;
}

// A tiled f32 GEMM, row-major C[M,N] = A[M,K] B[K,N], TILE x TILE threads per block, one element
// each; WRONG=1 plants a config that gets C[0][0] wrong (test/cuda/spec_kernels_test.cpp).
template <int kTile>
__global__ void gemm(float* __restrict__ c, const float* __restrict__ a,
                     const float* __restrict__ b, int m, int n, int k) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < k; t += kTile) {
    as[threadIdx.y][threadIdx.x] =
        row < m && t + threadIdx.x < k ? a[(long long)row * k + t + threadIdx.x] : 0.0f;
    bs[threadIdx.y][threadIdx.x] =
        col < n && t + threadIdx.y < k ? b[(long long)(t + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kTile; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (WRONG == 1 && row == 0 && col == 0) acc += 1.0f;
  if (row < m && col < n) c[(long long)row * n + col] = acc;
}

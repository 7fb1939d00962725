// A tiled f32 GEMM for bench/search_strategies.sh record-gpu (in the style of Kernel Tuner's
// matmul example): row-major C[M,N] = A[M,K] B[K,N]. A block of block_size_x x block_size_y
// threads computes a BM x BN tile of C (BM = block_size_y * tile_size_y, BN = block_size_x *
// tile_size_x), each thread tile_size_y x tile_size_x outputs; K goes in steps of TILE_K through
// shared memory (a padding column each against bank conflicts), A stored transposed there so that both operands are read along rows.
//   STRIDED  1: a thread's outputs are block_size apart (neighbouring threads read neighbouring
//               shared words); 0: they are adjacent (tile_size apart between threads)
// Loads and stores are bounds-checked: any config is correct for any M, N, K.
constexpr int BM = block_size_y * tile_size_y;
constexpr int BN = block_size_x * tile_size_x;
constexpr int NT = block_size_x * block_size_y;

extern "C" __global__ void __launch_bounds__(NT)
    gemm(float* __restrict__ c, const float* __restrict__ a, const float* __restrict__ b, int m,
         int n, int k) {
  __shared__ float as[TILE_K][BM + 1];
  __shared__ float bs[TILE_K][BN + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * block_size_x + tx;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < k; k0 += TILE_K) {
    for (int i = tid; i < BM * TILE_K; i += NT) {
      const int r = i / TILE_K, kk = i % TILE_K;
      as[kk][r] = row0 + r < m && k0 + kk < k ? a[(long long)(row0 + r) * k + k0 + kk] : 0.0f;
    }
    for (int i = tid; i < TILE_K * BN; i += NT) {
      const int kk = i / BN, col = i % BN;
      bs[kk][col] = col0 + col < n && k0 + kk < k ? b[(long long)(k0 + kk) * n + col0 + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE_K; ++kk) {
      float ra[tile_size_y], rb[tile_size_x];
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i)
        ra[i] = as[kk][STRIDED ? ty + i * block_size_y : ty * tile_size_y + i];
#pragma unroll
      for (int j = 0; j < tile_size_x; ++j)
        rb[j] = bs[kk][STRIDED ? tx + j * block_size_x : tx * tile_size_x + j];
#pragma unroll
      for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
        for (int j = 0; j < tile_size_x; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < tile_size_y; ++i)
#pragma unroll
    for (int j = 0; j < tile_size_x; ++j) {
      const int r = row0 + (STRIDED ? ty + i * block_size_y : ty * tile_size_y + i);
      const int col = col0 + (STRIDED ? tx + j * block_size_x : tx * tile_size_x + j);
      if (r < m && col < n) c[(long long)r * n + col] = acc[i][j];
    }
}

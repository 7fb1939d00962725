// Portable GEMM on CUDA cores: row-major C[M,N] = A[M,K] * B[K,N] in f16, bf16 or f32 with fp32
// accumulation. Correct on any GPU and for any M, N, K (no alignment assumed): the fallback and
// the f32 path.
//
// Tunables (#defines): BLOCK_M, BLOCK_N, BLOCK_K (block tile staged in shared memory as fp32),
// THREAD_M, THREAD_N (register tile per thread; the block runs
// (BLOCK_M/THREAD_M)*(BLOCK_N/THREAD_N) threads), DTYPE (0 = f16, 1 = bf16, 2 = f32).
// Launch: grid (ceil(N/BLOCK_N), ceil(M/BLOCK_M)), no dynamic shared memory.
// Compiled after kernels/cuda/prelude.cuh (elem_t, to_float, the epilogue hook, store_element),
// which ktune puts in front: NVRTC has no include path to this tree.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(BLOCK_K) || !defined(THREAD_M) || \
    !defined(THREAD_N) || !defined(DTYPE)
#error "gemm_simt.cu needs BLOCK_M BLOCK_N BLOCK_K THREAD_M THREAD_N DTYPE"
#endif

namespace ktune_gemm {

constexpr int kBlockM = BLOCK_M;
constexpr int kBlockN = BLOCK_N;
constexpr int kBlockK = BLOCK_K;
constexpr int kThreadM = THREAD_M;
constexpr int kThreadN = THREAD_N;
constexpr int kThreadsM = kBlockM / kThreadM;  // threads along M
constexpr int kThreadsN = kBlockN / kThreadN;  // threads along N
constexpr int kThreads = kThreadsM * kThreadsN;

static_assert(DTYPE == 0 || DTYPE == 1 || DTYPE == 2, "DTYPE: 0 = f16, 1 = bf16, 2 = f32");
static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0,
              "thread tile must divide block tile");

}  // namespace ktune_gemm

extern "C" __global__ void __launch_bounds__(ktune_gemm::kThreads)
    gemm(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A, const ktune_gemm::elem_t* B, int M,
         int N, int K KTUNE_EPILOGUE_PARAMS) {
  using namespace ktune_gemm;
  // A is stored transposed (k-major) so that the inner loop reads both tiles along a row;
  // the +1 pad spreads the transposing stores over the banks.
  __shared__ float a_tile[kBlockK][kBlockM + 1];
  __shared__ float b_tile[kBlockK][kBlockN];

  const int tid = threadIdx.x;
  const int tx = tid % kThreadsN;
  const int ty = tid / kThreadsN;
  const int block_m = blockIdx.y * kBlockM;
  const int block_n = blockIdx.x * kBlockN;

  // Thread (ty, tx) owns rows ty + i*kThreadsM and columns tx + j*kThreadsN: neighbouring
  // threads read neighbouring shared-memory words and store neighbouring output elements.
  float acc[kThreadM][kThreadN];
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) acc[i][j] = 0.0f;
  }

  for (int k0 = 0; k0 < K; k0 += kBlockK) {
    for (int e = tid; e < kBlockM * kBlockK; e += kThreads) {
      const int r = e / kBlockK;
      const int c = e % kBlockK;
      const int row = block_m + r;
      const int k = k0 + c;
      a_tile[c][r] = (row < M && k < K) ? to_float(A[static_cast<long long>(row) * K + k]) : 0.0f;
    }
    for (int e = tid; e < kBlockK * kBlockN; e += kThreads) {
      const int r = e / kBlockN;
      const int c = e % kBlockN;
      const int k = k0 + r;
      const int col = block_n + c;
      b_tile[r][c] = (k < K && col < N) ? to_float(B[static_cast<long long>(k) * N + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < kBlockK; ++k) {
      float a[kThreadM];
      float b[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) a[i] = a_tile[k][ty + i * kThreadsM];
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) b[j] = b_tile[k][tx + j * kThreadsN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const int row = block_m + ty + i * kThreadsM;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) {
      const int col = block_n + tx + j * kThreadsN;
      if (col < N) {
        store_element(C, row, col, static_cast<long long>(row) * N + col,
                      acc[i][j] KTUNE_EPILOGUE_ARGS);
      }
    }
  }
}

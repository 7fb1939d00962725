// Portable GEMM on CUDA cores: row-major C[M,N] = A[M,K] * B[K,N] in f16, bf16 or f32 with fp32
// accumulation. Correct on any GPU and for any M, N, K (no alignment assumed): the fallback and
// the f32 path.
//
// Tunables (#defines): BLOCK_M, BLOCK_N, BLOCK_K (block tile staged in shared memory as fp32),
// THREAD_M, THREAD_N (register tile per thread; the block runs
// (BLOCK_M/THREAD_M)*(BLOCK_N/THREAD_N) threads), DTYPE (0 = f16, 1 = bf16, 2 = f32).
// Launch: grid (ceil(N/BLOCK_N), ceil(M/BLOCK_M)), no dynamic shared memory.
// Self-contained on purpose (no #include): NVRTC compiles it without include paths.

#if !defined(BLOCK_M) || !defined(BLOCK_N) || !defined(BLOCK_K) || !defined(THREAD_M) || \
    !defined(THREAD_N) || !defined(DTYPE)
#error "gemm_simt.cu needs BLOCK_M BLOCK_N BLOCK_K THREAD_M THREAD_N DTYPE"
#endif

namespace ktune_gemm {

#if DTYPE == 2
typedef float elem_t;
#else
typedef unsigned short elem_t;  // raw f16 or bf16 bits
#endif

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

__device__ __forceinline__ float to_float(elem_t x) {
#if DTYPE == 2
  return x;
#elif DTYPE == 1
  return __int_as_float(static_cast<int>(static_cast<unsigned>(x) << 16));
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
  return f;
#endif
}

__device__ __forceinline__ elem_t from_float(float f) {
#if DTYPE == 2
  return f;
#elif DTYPE == 1
  // bf16 is the high half of the float, rounded to nearest even; NaN stays a quiet NaN.
  const unsigned u = static_cast<unsigned>(__float_as_int(f));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<elem_t>((u >> 16) | 0x40u);
  return static_cast<elem_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
}

// The epilogue (the store_output hook): the value stored at C[row, col] (element idx of C) from
// its fp32 accumulator. ktune renders a fused epilogue as KTUNE_EPILOGUE_* #defines in front
// of this file (include/ktune/core/epilogue.h); without one it is the identity.
#ifndef KTUNE_EPILOGUE
#define KTUNE_EPILOGUE_PARAMS
#define KTUNE_EPILOGUE_ARGS
#define KTUNE_EPILOGUE_BODY \
  {                         \
    (void)row;              \
    (void)col;              \
    (void)idx;              \
    return acc;             \
  }
#endif
#define KTUNE_LOAD(ptr, i) to_float((ptr)[i])
__device__ __forceinline__ float epilogue(int row, int col, long long idx,
                                          float acc KTUNE_EPILOGUE_PARAMS) KTUNE_EPILOGUE_BODY

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
        const long long idx = static_cast<long long>(row) * N + col;
        C[idx] = from_float(epilogue(row, col, idx, acc[i][j] KTUNE_EPILOGUE_ARGS));
      }
    }
  }
}

// The separate epilogue: applies a fused-epilogue description to C in place after a library GEMM
// (cuBLAS or cuBLASLt) wrote it, so that the library plus this kernel is the unfused pair that
// the fused templates compete with. It reads C once and writes it once, 16 bytes per thread
// where N and the pointers allow (memory-bound: 2 * M * N * sizeof(elem) bytes plus the
// operands).
//
// Arguments: the GEMM problem's (C, A, B, M, N, K, then the epilogue's operands); A, B and K
// are unused. #defines: DTYPE (0 = f16, 1 = bf16, 2 = f32) and the KTUNE_EPILOGUE_* hook of
// include/ktune/core/epilogue.h. Launch (epilogue_launch in src/ops/cuda_gemm.cpp): 2-D, 256
// threads; threadIdx.x / blockIdx.x walk a row's 16-byte chunks, threadIdx.y / blockIdx.y the
// rows (a grid-stride loop past 65535 row blocks), so that row and column come without a
// division. Compiled after kernels/cuda/prelude.cuh (elem_t, to_float, the epilogue hook,
// from_float, store_element), which ktune puts in front: NVRTC has no include path to this
// tree.

#if !defined(DTYPE) || !defined(KTUNE_EPILOGUE)
#error "epilogue.cu needs DTYPE and the KTUNE_EPILOGUE_* defines"
#endif

namespace ktune_gemm {

constexpr int kVec = 16 / sizeof(elem_t);  // elements per 16-byte chunk

// Whether every pointer is 16-byte aligned (C and the operands, as KTUNE_EPILOGUE_ARGS lists them).
__device__ __forceinline__ bool aligned16() { return true; }
template <class P, class... R>
__device__ __forceinline__ bool aligned16(const P* p, R... rest) {
  return (reinterpret_cast<unsigned long long>(p) & 15) == 0 && aligned16(rest...);
}

// The operand loads of the chunked path: element j of the 16-byte chunk of a [N] (bias, at the
// chunk's first column col0) or [M, N] operand (residual, at the chunk's first element idx0),
// one 16-byte load at j == 0 kept in `cache` for the chunk's other elements (the elements run in
// order, j from 0), instead of kVec 2-byte loads. rowbias is one element per row.
struct ChunkCache {
  uint4 bias, residual;
};
__device__ __forceinline__ float chunk_element(const uint4& c, int j) {
  return to_float(reinterpret_cast<const elem_t*>(&c)[j]);
}
__device__ __forceinline__ float load_bias(const elem_t* __restrict__ p, int, int col0,
                                           long long, int j, ChunkCache& cache) {
  if (j == 0) cache.bias = __ldg(reinterpret_cast<const uint4*>(p + col0));
  return chunk_element(cache.bias, j);
}
__device__ __forceinline__ float load_residual(const elem_t* __restrict__ p, long long, int,
                                               long long idx0, int j, ChunkCache& cache) {
  if (j == 0) cache.residual = __ldg(reinterpret_cast<const uint4*>(p + idx0));
  return chunk_element(cache.residual, j);
}
__device__ __forceinline__ float load_rowbias(const elem_t* __restrict__ p, int i, int, long long,
                                              int, ChunkCache&) {
  return to_float(p[i]);
}

}  // namespace ktune_gemm

// The hook body of prelude.cuh's epilogue() for element j of the chunk at (row, col0), element
// idx0 of C, its KTUNE_LOAD through the chunk loads above (an operand without a load_<name>
// fails to compile rather than loading wrongly).
#undef KTUNE_LOAD
#define KTUNE_LOAD(ptr, i) ktune_gemm::load_##ptr(ptr, i, col0, idx0, j, cache)
namespace ktune_gemm {
__device__ __forceinline__ float epilogue_chunked(int row, int col0, long long idx0, int j,
                                                  ChunkCache& cache,
                                                  float acc KTUNE_EPILOGUE_PARAMS) {
  (void)cache;
  const int col = col0 + j;
  const long long idx = idx0 + j;
  KTUNE_EPILOGUE_BODY
}
}  // namespace ktune_gemm

extern "C" __global__ void __launch_bounds__(256)
    gemm_epilogue(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A,
                  const ktune_gemm::elem_t* B, int M, int N, int K KTUNE_EPILOGUE_PARAMS) {
  using namespace ktune_gemm;
  (void)A;
  (void)B;
  (void)K;
  const int col = (blockIdx.x * blockDim.x + threadIdx.x) * kVec;  // this thread's chunk
  if (col >= N) return;
  const int row_step = gridDim.y * blockDim.y;
  if (N % kVec == 0 && aligned16(C KTUNE_EPILOGUE_ARGS)) {
    // Whole chunks, each operand's chunk loaded once.
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += row_step) {
      const long long idx = static_cast<long long>(row) * N + col;
      uint4 chunk = *reinterpret_cast<const uint4*>(C + idx);
      elem_t* e = reinterpret_cast<elem_t*>(&chunk);
      ChunkCache cache;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        e[j] = from_float(
            epilogue_chunked(row, col, idx, j, cache, to_float(e[j]) KTUNE_EPILOGUE_ARGS));
      }
      *reinterpret_cast<uint4*>(C + idx) = chunk;
    }
    return;
  }
  // A chunk's elements one at a time (the last chunk of a row may be short).
  const int end = N - col < kVec ? N - col : kVec;
  for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += row_step) {
    const long long idx = static_cast<long long>(row) * N + col;
    for (int j = 0; j < end; ++j) {
      store_element(C, row, col + j, idx + j, to_float(C[idx + j]) KTUNE_EPILOGUE_ARGS);
    }
  }
}

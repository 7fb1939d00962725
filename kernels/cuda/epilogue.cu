// The separate epilogue: applies a fused-epilogue description to C in place after a library GEMM
// (cuBLAS or cuBLASLt) wrote it, so that the library plus this kernel is the unfused pair that
// the fused templates compete with. It reads C once and writes it once, 16 bytes per thread and
// step where N allows (memory-bound: 2 * M * N * sizeof(elem) bytes plus the operands).
//
// Arguments: the GEMM problem's (C, A, B, M, N, K, then the epilogue's operands); A, B and K
// are unused. #defines: DTYPE (0 = f16, 1 = bf16, 2 = f32) and the KTUNE_EPILOGUE_* hook of
// include/ktune/core/epilogue.h. Launch: 1-D, 256 threads, a grid-stride loop over 16-byte chunks.
// Self-contained on purpose (no #include): NVRTC compiles it without include paths.

#if !defined(DTYPE) || !defined(KTUNE_EPILOGUE)
#error "epilogue.cu needs DTYPE and the KTUNE_EPILOGUE_* defines"
#endif

namespace ktune_gemm {

#if DTYPE == 2
typedef float elem_t;
#else
typedef unsigned short elem_t;  // raw f16 or bf16 bits
#endif

constexpr int kVec = 16 / sizeof(elem_t);  // elements per 16-byte chunk

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
  // Round to nearest even, as cvt.rn.bf16 in the fused templates; NaN stays a quiet NaN.
  const unsigned u = static_cast<unsigned>(__float_as_int(f));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<elem_t>((u >> 16) | 0x40u);
  return static_cast<elem_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
}

#define KTUNE_LOAD(ptr, i) to_float((ptr)[i])
__device__ __forceinline__ float epilogue(int row, int col, long long idx,
                                          float acc KTUNE_EPILOGUE_PARAMS) KTUNE_EPILOGUE_BODY

}  // namespace ktune_gemm

extern "C" __global__ void __launch_bounds__(256)
    gemm_epilogue(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A,
                  const ktune_gemm::elem_t* B, int M, int N, int K KTUNE_EPILOGUE_PARAMS) {
  using namespace ktune_gemm;
  (void)A;
  (void)B;
  (void)K;
  const long long total = static_cast<long long>(M) * N;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (N % kVec == 0 && (reinterpret_cast<unsigned long long>(C) & 15) == 0) {
    // Whole chunks: a chunk never straddles a row.
    uint4* chunks = reinterpret_cast<uint4*>(C);
    for (long long v = first; v < total / kVec; v += stride) {
      uint4 chunk = chunks[v];
      elem_t* e = reinterpret_cast<elem_t*>(&chunk);
      const long long idx = v * kVec;
      const int row = static_cast<int>(idx / N);
      const int col = static_cast<int>(idx - static_cast<long long>(row) * N);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        e[j] = from_float(epilogue(row, col + j, idx + j, to_float(e[j]) KTUNE_EPILOGUE_ARGS));
      }
      chunks[v] = chunk;
    }
    return;
  }
  for (long long idx = first; idx < total; idx += stride) {
    const int row = static_cast<int>(idx / N);
    const int col = static_cast<int>(idx - static_cast<long long>(row) * N);
    C[idx] = from_float(epilogue(row, col, idx, to_float(C[idx]) KTUNE_EPILOGUE_ARGS));
  }
}

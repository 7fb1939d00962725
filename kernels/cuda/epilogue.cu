// The separate epilogue: applies a fused-epilogue description to C in place after a library GEMM
// (cuBLAS or cuBLASLt) wrote it, so that the library plus this kernel is the unfused pair that
// the fused templates compete with. It reads C once and writes it once, 16 bytes per thread and
// step where N allows (memory-bound: 2 * M * N * sizeof(elem) bytes plus the operands).
//
// Arguments: the GEMM problem's (C, A, B, M, N, K, then the epilogue's operands); A, B and K
// are unused. #defines: DTYPE (0 = f16, 1 = bf16, 2 = f32) and the KTUNE_EPILOGUE_* hook of
// include/ktune/core/epilogue.h. Launch: 1-D, 256 threads, a grid-stride loop over 16-byte chunks.
// Compiled after kernels/cuda/prelude.cuh (elem_t, to_float, the epilogue hook, from_float),
// which ktune puts in front: NVRTC has no include path to this tree.

#if !defined(DTYPE) || !defined(KTUNE_EPILOGUE)
#error "epilogue.cu needs DTYPE and the KTUNE_EPILOGUE_* defines"
#endif

namespace ktune_gemm {

constexpr int kVec = 16 / sizeof(elem_t);  // elements per 16-byte chunk

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

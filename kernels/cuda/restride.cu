// Copies A and/or B of a GEMM into the launch's workspace with row strides rounded up to 8
// elements (16 bytes), so that the TMA template can load shapes whose N or K is not a multiple
// of 8 (TMA needs 16-byte row strides): the first launch of the "restride+cuda_gemm_tma_..."
// candidates, whose GEMM reads the copies through tensor maps into the workspace.
//
// Workspace layout (restride_layout in src/ops/cuda_gemm_hopper.cpp computes the same): when
// K % 8 != 0, A' [M, Kp] at byte 0 (Kp = K rounded up to 8); when N % 8 != 0, B' [K, Np] after
// it at a 256-byte boundary (at 0 when A is not copied). Blocks with blockIdx.y 0 copy A,
// 1 copy B; each thread writes 16-byte chunks of 8 elements, reading the elements past a
// row's end as zeros (the GEMM's tensor maps stop at K and N anyway).
// Signature: the GEMM's (C, A, B, M, N, K and the epilogue's operands, unused here), then the
// workspace. Compiled after kernels/cuda/prelude.cuh. Any GPU (sm_80+).

#if DTYPE == 2
#error "restride.cu: 16-bit elements (DTYPE 0 or 1)"
#endif

namespace ktune_gemm {

__device__ __forceinline__ long long round8(long long v) { return (v + 7) / 8 * 8; }

// dst [rows, cols rounded up to 8] from src [rows, cols], grid-stride over 16-byte chunks.
__device__ __forceinline__ void restride_rows(elem_t* dst, const elem_t* src, long long rows,
                                              long long cols) {
  const long long padded = round8(cols);
  const long long chunks_per_row = padded / 8;
  const long long chunks = rows * chunks_per_row;
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < chunks;
       c += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long row = c / chunks_per_row;
    const long long col0 = (c % chunks_per_row) * 8;
    const elem_t* s = src + row * cols + col0;
    unsigned v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = col0 + i < cols ? static_cast<unsigned>(s[i]) : 0u;
    const uint4 packed = make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16),
                                    v[4] | (v[5] << 16), v[6] | (v[7] << 16));
    *reinterpret_cast<uint4*>(dst + row * padded + col0) = packed;
  }
}

}  // namespace ktune_gemm

extern "C" __global__ void __launch_bounds__(256)
    restride(ktune_gemm::elem_t* C, const ktune_gemm::elem_t* A, const ktune_gemm::elem_t* B,
             int M, int N, int K KTUNE_EPILOGUE_PARAMS, void* workspace) {
  using namespace ktune_gemm;
  (void)C;
  const bool copy_a = K % 8 != 0;
  const bool copy_b = N % 8 != 0;
  const long long a_bytes =
      copy_a ? (static_cast<long long>(M) * round8(K) * 2 + 255) / 256 * 256 : 0;
  unsigned char* ws = static_cast<unsigned char*>(workspace);
  if (blockIdx.y == 0 && copy_a) {
    restride_rows(reinterpret_cast<elem_t*>(ws), A, M, K);
  } else if (blockIdx.y == 1 && copy_b) {
    restride_rows(reinterpret_cast<elem_t*>(ws + a_bytes), B, K, N);
  }
}

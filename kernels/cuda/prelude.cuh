// The shared prelude of the built-in CUDA kernels (kernels/cuda/*.cu). NVRTC has no include path
// to this tree, so ktune puts this file in front of each kernel when rendering it
// (src/ops/cuda_gemm_common.cpp), after the DTYPE and fused-epilogue #defines and under its own #line
// name. Needs DTYPE (0 = f16, 1 = bf16, 2 = f32).
//
// In namespace ktune_gemm: elem_t with to_float and from_float; the epilogue (the store_output
// hook, the identity unless KTUNE_EPILOGUE_* are defined) and KTUNE_LOAD; for f16 and bf16,
// pack2 and store_output of two neighbouring elements; smem_u32; and grouped_tile, the grouped
// block rasterization of the tiled kernels.
// At the end: the cp.async copies, fence_proxy_async and store_element (one element).

#if !defined(DTYPE)
#error "prelude.cuh needs DTYPE"
#endif

namespace ktune_gemm {

#if DTYPE == 2
typedef float elem_t;
#else
typedef unsigned short elem_t;  // raw f16 or bf16 bits
#endif

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
  // bf16 is the high half of the float, rounded to nearest even (as cvt.rn.bf16x2 in pack2);
  // NaN stays a quiet NaN.
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

#if DTYPE != 2
// Two floats rounded to nearest even, `lo` in the low half.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
#if DTYPE == 1
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
}

// Stores C[row, col] and C[row, col + 1] through the epilogue (col even), for any N and C
// offset: one packed 4-byte store when both are inside the row and C + idx is 4-byte aligned
// (always so for N and the offset even), else element stores (an odd N's last column, or rows
// that start on an odd element). One predicate per pair keeps the aligned case at one store.
__device__ __forceinline__ void store_output(elem_t* C, int M, int N, int row, int col, float v0,
                                             float v1 KTUNE_EPILOGUE_PARAMS) {
  if (row < M && col < N) {
    const long long idx = static_cast<long long>(row) * N + col;
    const float r0 = epilogue(row, col, idx, v0 KTUNE_EPILOGUE_ARGS);
    const bool second = col + 1 < N;
    const bool packed = second && (reinterpret_cast<unsigned long long>(C + idx) & 3ull) == 0;
    if (packed) {
      *reinterpret_cast<unsigned*>(C + idx) =
          pack2(r0, epilogue(row, col + 1, idx + 1, v1 KTUNE_EPILOGUE_ARGS));
    } else {
      C[idx] = from_float(r0);
      if (second) C[idx + 1] = from_float(epilogue(row, col + 1, idx + 1, v1 KTUNE_EPILOGUE_ARGS));
    }
  }
}
#endif

// The 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  unsigned r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

// Grouped rasterization of a 1-D grid over grid_m x grid_n output tiles: group_m block rows sweep
// the columns together, so that consecutive blocks share A rows and B columns in L2. Sets the
// tile of block `pid`; false when the block has none (the grid is exactly grid_m * grid_n).
__device__ __forceinline__ bool grouped_tile(int pid, int grid_m, int grid_n, int group_m,
                                             int& pid_m, int& pid_n) {
  const int group_blocks = group_m * grid_n;
  const int first_m = (pid / group_blocks) * group_m;
  const int group_rows = grid_m - first_m < group_m ? grid_m - first_m : group_m;
  pid_m = first_m + (pid % group_blocks) % group_rows;
  pid_n = (pid % group_blocks) / group_rows;
  return pid_m < grid_m && pid_n < grid_n;
}

// Shared by several kernels (issue 21): the cp.async tile copies of the tensor-core templates,
// the async-proxy fence of the Hopper ones, and the one-element store of the kernels that store
// element by element. Unused helpers cost nothing: NVRTC emits only what a kernel calls, so
// sm_90-only instructions here do not reach an sm_80 build that does not use them.

// 16-byte global -> shared copy; with `valid` false nothing is read and the chunk is zeroed.
// The "memory" clobbers keep the compiler from moving shared-memory accesses across the copies.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's commit groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Makes this thread's shared-memory writes (cp.async, generic proxy) visible to wgmma's reads
// (async proxy); a barrier after it extends that to the other threads' writes. sm_90 and later.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Stores C[row, col] (element idx of C) through the epilogue from its fp32 value: the store of
// the kernels without a paired layout (SIMT, the separate epilogue's unaligned path).
__device__ __forceinline__ void store_element(elem_t* C, int row, int col, long long idx,
                                              float v KTUNE_EPILOGUE_PARAMS) {
  C[idx] = from_float(epilogue(row, col, idx, v KTUNE_EPILOGUE_ARGS));
}

}  // namespace ktune_gemm

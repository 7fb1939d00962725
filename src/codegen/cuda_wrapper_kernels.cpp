// The generated CUDA programs' own kernels, as text: the pointwise kernel and its functors and
// transpose, then the row kernels (softmax, sum, layer norm: cuda_wrapper_rows.cpp), each
// templated on the element type with fp32 math, 16-byte accesses where the shape allows them.
#include <string>

#include "codegen/cuda_wrapper_snippets.h"

namespace ktune::codegen::detail {

std::string_view cuda_kernels_snippet() {
  static const std::string text =
      std::string(
          R"KT(// ---- Element access: every kernel computes in fp32, one rounding at the store.
__device__ __forceinline__ float ktune_f(float v) { return v; }
__device__ __forceinline__ float ktune_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float ktune_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T ktune_to(float v);
template <>
__device__ __forceinline__ float ktune_to<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half ktune_to<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 ktune_to<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
// 16 bytes of elements: one vector load or store.
template <class T>
struct alignas(16) KtuneVec {
  T v[16 / sizeof(T)];
};

// ---- Pointwise: y[i] = f(x[i], z[..]), z absent (null), of y's shape (cols 0) or a vector of
// `cols` broadcast over the rows (a bias). kVec: 16 bytes per thread and step, where the element
// count (and cols) divide into whole vectors; the emitter decides.
struct KtuneRelu {
  __device__ float operator()(float x, float) const { return fmaxf(x, 0.0f); }
};
struct KtuneGelu {
  __device__ float operator()(float x, float) const {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  }
};
struct KtuneSilu {
  __device__ float operator()(float x, float) const { return x / (1.0f + expf(-x)); }
};
struct KtuneAdd {  // add and bias_add
  __device__ float operator()(float x, float z) const { return x + z; }
};
struct KtuneScale {
  float alpha;
  __device__ float operator()(float x, float) const { return x * alpha; }
};

template <bool kVec, class T, class F>
__device__ __forceinline__ void ktune_pointwise(T* __restrict__ y, const T* __restrict__ x,
                                const T* __restrict__ z, long long n, long long cols, F f) {
  constexpr int kWidth = kVec ? 16 / sizeof(T) : 1;
  const long long steps = n / kWidth;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < steps;
       s += stride) {
    const long long i = s * kWidth;
    // The broadcast operand's index: z[i % cols] (a bias per column), z[i / -cols] (cols < 0: a
    // bias per row, the same for a whole chunk); 32-bit division where the sizes allow.
    const bool small = n <= 0x7fffffff;
    const long long zi =
        cols == 0  ? i
        : cols > 0 ? (small ? static_cast<unsigned>(i) % static_cast<unsigned>(cols) : i % cols)
                   : (small ? static_cast<unsigned>(i) / static_cast<unsigned>(-cols) : i / -cols);
    if constexpr (kVec) {
      const KtuneVec<T> xv = *reinterpret_cast<const KtuneVec<T>*>(x + i);
      KtuneVec<T> zv{}, out;
      if (z != nullptr && cols < 0) {
#pragma unroll
        for (int e = 0; e < kWidth; ++e) zv.v[e] = z[zi];
      } else if (z != nullptr) {
        zv = *reinterpret_cast<const KtuneVec<T>*>(z + zi);
      }
#pragma unroll
      for (int e = 0; e < kWidth; ++e) out.v[e] = ktune_to<T>(f(ktune_f(xv.v[e]), ktune_f(zv.v[e])));
      *reinterpret_cast<KtuneVec<T>*>(y + i) = out;
    } else {
      y[i] = ktune_to<T>(f(ktune_f(x[i]), z != nullptr ? ktune_f(z[zi]) : 0.0f));
    }
  }
}

// ---- Transpose: y[N,M] = x[M,N] through a 32 x 33 shared tile (both sides coalesced).
template <class T>
__device__ __forceinline__ void ktune_transpose(T* __restrict__ y, const T* __restrict__ x, int m, int n) {
  __shared__ T tile[32][33];
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) {
    const int r = r0 + j, c = c0 + threadIdx.x;
    if (r < m && c < n) tile[j][threadIdx.x] = x[static_cast<long long>(r) * n + c];
  }
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += 8) {
    const int r = c0 + j, c = r0 + threadIdx.x;  // y's row r is x's column
    if (r < n && c < m) y[static_cast<long long>(r) * m + c] = tile[threadIdx.x][j];
  }
}

// 2-byte elements with both row lengths a multiple of 8 (every row of x and y 16-byte aligned):
// 64 x 64 tiles moved 16 bytes per thread and access. Loads: 8 threads per tile row. Stores:
// each thread gathers 8 elements of a tile column into one 16-byte store of y's row, 16 lanes
// of a warp on 16 rows, the other 16 on the next 16 bytes of the same rows (whole 32-byte
// sectors). The pitch of 66 elements (33 words) keeps both sides free of bank conflicts.
template <class T>
__device__ __forceinline__ void ktune_transpose_vec(T* __restrict__ y, const T* __restrict__ x, int m, int n) {
  static_assert(sizeof(T) == 2, "16-byte chunks of 8 elements");
  __shared__ __align__(16) T tile[64][66];
  const int c0 = blockIdx.x * 64, r0 = blockIdx.y * 64, t = threadIdx.x;
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const int r = (t >> 3) + 32 * p, c = (t & 7) * 8;
    if (r0 + r < m && c0 + c < n) {
      const uint4 v =
          *reinterpret_cast<const uint4*>(x + static_cast<long long>(r0 + r) * n + c0 + c);
      unsigned* s = reinterpret_cast<unsigned*>(&tile[r][c]);  // 4-byte aligned: 132-byte pitch
      s[0] = v.x;
      s[1] = v.y;
      s[2] = v.z;
      s[3] = v.w;
    }
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < 2; ++p) {
    const int c = (t & 15) + 16 * (t >> 7) + 32 * p;  // a tile column: y's row c0 + c
    const int r = ((t >> 4) & 7) * 8;                  // tile rows r..r+7: 8 of y's columns
    if (c0 + c < n && r0 + r < m) {
      KtuneVec<T> v;
#pragma unroll
      for (int e = 0; e < 8; ++e) v.v[e] = tile[r + e][c];
      *reinterpret_cast<KtuneVec<T>*>(y + static_cast<long long>(c0 + c) * m + r0 + r) = v;
    }
  }
}
)KT") +
      std::string(cuda_row_kernels_snippet());
  return text;
}

}  // namespace ktune::codegen::detail

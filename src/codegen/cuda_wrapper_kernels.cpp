// The generated CUDA programs' own kernels, as text: the pointwise kernel and its functors,
// transpose, and the row kernels (softmax, sum, layer norm), each templated on the element type
// with fp32 math, 16-byte accesses where the emitter says the shape allows them.
#include "codegen/cuda_wrapper_snippets.h"

namespace ktune::codegen::detail {

std::string_view cuda_kernels_snippet() {
  return R"KT(// ---- Element access: every kernel computes in fp32, one rounding at the store.
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
__global__ void ktune_pointwise(T* __restrict__ y, const T* __restrict__ x,
                                const T* __restrict__ z, long long n, long long cols, F f) {
  constexpr int kWidth = kVec ? 16 / sizeof(T) : 1;
  const long long steps = n / kWidth;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long s = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; s < steps;
       s += stride) {
    const long long i = s * kWidth;
    const long long zi = cols ? i % cols : i;
    if constexpr (kVec) {
      const KtuneVec<T> xv = *reinterpret_cast<const KtuneVec<T>*>(x + i);
      KtuneVec<T> zv{}, out;
      if (z != nullptr) zv = *reinterpret_cast<const KtuneVec<T>*>(z + zi);
#pragma unroll
      for (int e = 0; e < kWidth; ++e) out.v[e] = ktune_to<T>(f(ktune_f(xv.v[e]), ktune_f(zv.v[e])));
      *reinterpret_cast<KtuneVec<T>*>(y + i) = out;
    } else {
      y[i] = ktune_to<T>(f(ktune_f(x[i]), z != nullptr ? ktune_f(z[zi]) : 0.0f));
    }
  }
}

// 256 threads, a grid-stride loop over at most 2^20 blocks.
template <bool kVec, class T, class F>
static void ktune_launch_pointwise(T* y, const T* x, const T* z, long long n, long long cols, F f,
                                   cudaStream_t stream) {
  const long long width = kVec ? 16 / sizeof(T) : 1;
  const long long blocks = std::min<long long>(std::max<long long>((n / width + 255) / 256, 1),
                                               1 << 20);
  ktune_pointwise<kVec><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(y, x, z, n, cols, f);
}

// ---- Transpose: y[N,M] = x[M,N] through a 32 x 33 shared tile (both sides coalesced).
template <class T>
__global__ void ktune_transpose(T* __restrict__ y, const T* __restrict__ x, int m, int n) {
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

template <class T>
static void ktune_launch_transpose(T* y, const T* x, int m, int n, cudaStream_t stream) {
  const dim3 grid((n + 31) / 32, (m + 31) / 32);
  ktune_transpose<<<grid, dim3(32, 8), 0, stream>>>(y, x, m, n);
}

// ---- Row kernels: one block per row, fp32 statistics reduced over the block.
__device__ __forceinline__ float ktune_warp_reduce(float v, bool max) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = max ? fmaxf(v, w) : v + w;
  }
  return v;
}
// Every thread gets the block's result; `scratch` holds 32 floats.
__device__ __forceinline__ float ktune_block_reduce(float v, bool max, float* scratch) {
  v = ktune_warp_reduce(v, max);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();  // the previous reduction's readers are done with scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (max ? -INFINITY : 0.0f);
  return ktune_warp_reduce(v, max);
}

// Each element of a row: f(j, x[j]) for the block's share of row `row` of n elements, with
// 16-byte loads under kVec (n a multiple of the vector width, so that every row is aligned).
template <bool kVec, class T, class F>
__device__ __forceinline__ void ktune_row_for(const T* __restrict__ row, int n, F f) {
  if constexpr (kVec) {
    constexpr int kWidth = 16 / sizeof(T);
    for (int c = threadIdx.x; c < n / kWidth; c += blockDim.x) {
      const KtuneVec<T> v = reinterpret_cast<const KtuneVec<T>*>(row)[c];
#pragma unroll
      for (int e = 0; e < kWidth; ++e) f(c * kWidth + e, ktune_f(v.v[e]));
    }
  } else {
    for (int j = threadIdx.x; j < n; j += blockDim.x) f(j, ktune_f(row[j]));
  }
}
// out[j] = g(j, in[j]) over the row, stored as wide as it was loaded.
template <bool kVec, class T, class G>
__device__ __forceinline__ void ktune_row_map(T* __restrict__ out, const T* __restrict__ in, int n,
                                              G g) {
  if constexpr (kVec) {
    constexpr int kWidth = 16 / sizeof(T);
    for (int c = threadIdx.x; c < n / kWidth; c += blockDim.x) {
      const KtuneVec<T> v = reinterpret_cast<const KtuneVec<T>*>(in)[c];
      KtuneVec<T> w;
#pragma unroll
      for (int e = 0; e < kWidth; ++e) w.v[e] = ktune_to<T>(g(c * kWidth + e, ktune_f(v.v[e])));
      reinterpret_cast<KtuneVec<T>*>(out)[c] = w;
    }
  } else {
    for (int j = threadIdx.x; j < n; j += blockDim.x) out[j] = ktune_to<T>(g(j, ktune_f(in[j])));
  }
}

// softmax(scale * x) of each row, the max subtracted so that exp cannot overflow.
template <bool kVec, class T>
__global__ void ktune_row_softmax(T* __restrict__ y, const T* __restrict__ x, int n,
                                  float scale) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<long long>(blockIdx.x) * n;
  T* yr = y + static_cast<long long>(blockIdx.x) * n;
  float mx = -INFINITY;
  ktune_row_for<kVec>(xr, n, [&](int, float v) { mx = fmaxf(mx, v * scale); });
  mx = ktune_block_reduce(mx, true, scratch);
  float sum = 0.0f;
  ktune_row_for<kVec>(xr, n, [&](int, float v) { sum += expf(v * scale - mx); });
  const float inv = 1.0f / ktune_block_reduce(sum, false, scratch);
  ktune_row_map<kVec>(yr, xr, n, [&](int, float v) { return expf(v * scale - mx) * inv; });
}

template <bool kVec, class T>
__global__ void ktune_row_sum(T* __restrict__ y, const T* __restrict__ x, int n) {
  __shared__ float scratch[32];
  float sum = 0.0f;
  ktune_row_for<kVec>(x + static_cast<long long>(blockIdx.x) * n, n,
                      [&](int, float v) { sum += v; });
  sum = ktune_block_reduce(sum, false, scratch);
  if (threadIdx.x == 0) y[blockIdx.x] = ktune_to<T>(sum);
}

// (x - mean) / sqrt(var + eps) * gamma + beta, the biased variance from a second pass.
template <bool kVec, class T>
__global__ void ktune_layer_norm(T* __restrict__ y, const T* __restrict__ x,
                                 const T* __restrict__ gamma, const T* __restrict__ beta, int n,
                                 float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<long long>(blockIdx.x) * n;
  T* yr = y + static_cast<long long>(blockIdx.x) * n;
  float sum = 0.0f;
  ktune_row_for<kVec>(xr, n, [&](int, float v) { sum += v; });
  const float mean = ktune_block_reduce(sum, false, scratch) / n;
  float sq = 0.0f;
  ktune_row_for<kVec>(xr, n, [&](int, float v) { sq += (v - mean) * (v - mean); });
  const float rstd = rsqrtf(ktune_block_reduce(sq, false, scratch) / n + eps);
  ktune_row_map<kVec>(yr, xr, n, [&](int j, float v) {
    return (v - mean) * rstd * ktune_f(gamma[j]) + ktune_f(beta[j]);
  });
}
)KT";
}

}  // namespace ktune::codegen::detail

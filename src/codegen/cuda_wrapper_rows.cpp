// The generated CUDA programs' row kernels, as text (after cuda_kernels_snippet()): one block
// per row, fp32 statistics reduced over the block. softmax and layer_norm hold the block's row
// in registers (kChunks 16-byte chunks, or elements, per thread: one read of the row from
// global memory); kChunks 0 is the fallback for rows too long for that, which streams the row
// from global memory once per pass. The emitter (row_plan in cuda_wrapper_run.cpp) picks the
// block size and kChunks from the row's length.
#include "codegen/cuda_wrapper_snippets.h"

namespace ktune::codegen::detail {

std::string_view cuda_row_kernels_snippet() {
  return R"KT(// ---- Row kernels: one block per row, fp32 statistics reduced over the block.
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
  if (warps == 1) return v;  // one warp: the shuffles gave every lane the result
  __syncthreads();  // the previous reduction's readers are done with scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (max ? -INFINITY : 0.0f);
  return ktune_warp_reduce(v, max);
}

// A chunk of a row in fp32: 16 bytes of elements under kVec (rows a multiple of the width, so
// every chunk is aligned and whole), one element otherwise.
template <bool kVec, class T>
struct KtuneChunk {
  static constexpr int kW = kVec ? 16 / sizeof(T) : 1;
  float v[kW];
  __device__ __forceinline__ void load(const T* __restrict__ p) {
    if constexpr (kVec) {
      const KtuneVec<T> c = *reinterpret_cast<const KtuneVec<T>*>(p);
#pragma unroll
      for (int e = 0; e < kW; ++e) v[e] = ktune_f(c.v[e]);
    } else {
      v[0] = ktune_f(*p);
    }
  }
  __device__ __forceinline__ void store(T* __restrict__ p) const {
    if constexpr (kVec) {
      KtuneVec<T> c;
#pragma unroll
      for (int e = 0; e < kW; ++e) c.v[e] = ktune_to<T>(v[e]);
      *reinterpret_cast<KtuneVec<T>*>(p) = c;
    } else {
      *p = ktune_to<T>(v[0]);
    }
  }
};
// The first element of this thread's chunk k: chunks interleave over the block, so that each
// load of the block is contiguous.
template <bool kVec, class T>
__device__ __forceinline__ int ktune_chunk_at(int k) {
  return (threadIdx.x + k * blockDim.x) * KtuneChunk<kVec, T>::kW;
}

// The streaming fallback: f(j, x[j]) for the block's share of a row of n elements.
template <bool kVec, class T, class F>
__device__ __forceinline__ void ktune_row_for(const T* __restrict__ row, int n, F f) {
  KtuneChunk<kVec, T> c;
  for (int j = threadIdx.x * c.kW; j < n; j += blockDim.x * c.kW) {
    c.load(row + j);
#pragma unroll
    for (int e = 0; e < c.kW; ++e) f(j + e, c.v[e]);
  }
}
// out[j] = g(j, in[j]) over the row, stored as wide as it was loaded.
template <bool kVec, class T, class G>
__device__ __forceinline__ void ktune_row_map(T* __restrict__ out, const T* __restrict__ in, int n,
                                              G g) {
  KtuneChunk<kVec, T> c;
  for (int j = threadIdx.x * c.kW; j < n; j += blockDim.x * c.kW) {
    c.load(in + j);
#pragma unroll
    for (int e = 0; e < c.kW; ++e) c.v[e] = g(j + e, c.v[e]);
    c.store(out + j);
  }
}

// softmax(scale * x) of each row, the max subtracted so that exp cannot overflow.
template <bool kVec, int kChunks, class T>
__device__ __forceinline__ void ktune_row_softmax(T* __restrict__ y, const T* __restrict__ x, int n,
                                  float scale) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<long long>(blockIdx.x) * n;
  T* yr = y + static_cast<long long>(blockIdx.x) * n;
  if constexpr (kChunks == 0) {
    float mx = -INFINITY;
    ktune_row_for<kVec>(xr, n, [&](int, float v) { mx = fmaxf(mx, v * scale); });
    mx = ktune_block_reduce(mx, true, scratch);
    float sum = 0.0f;
    ktune_row_for<kVec>(xr, n, [&](int, float v) { sum += expf(v * scale - mx); });
    const float inv = 1.0f / ktune_block_reduce(sum, false, scratch);
    ktune_row_map<kVec>(yr, xr, n, [&](int, float v) { return expf(v * scale - mx) * inv; });
  } else {
    KtuneChunk<kVec, T> c[kChunks];
    constexpr int kW = KtuneChunk<kVec, T>::kW;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {  // every load in flight before the first use
      if (ktune_chunk_at<kVec, T>(k) < n) c[k].load(xr + ktune_chunk_at<kVec, T>(k));
    }
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) >= n) continue;
#pragma unroll
      for (int e = 0; e < kW; ++e) mx = fmaxf(mx, c[k].v[e] * scale);
    }
    mx = ktune_block_reduce(mx, true, scratch);
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) >= n) continue;
#pragma unroll
      for (int e = 0; e < kW; ++e) {
        c[k].v[e] = expf(c[k].v[e] * scale - mx);
        sum += c[k].v[e];
      }
    }
    const float inv = 1.0f / ktune_block_reduce(sum, false, scratch);
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) >= n) continue;
#pragma unroll
      for (int e = 0; e < kW; ++e) c[k].v[e] *= inv;
      c[k].store(yr + ktune_chunk_at<kVec, T>(k));
    }
  }
}

template <bool kVec, class T>
__device__ __forceinline__ void ktune_row_sum(T* __restrict__ y, const T* __restrict__ x, int n) {
  __shared__ float scratch[32];
  float sum = 0.0f;
  ktune_row_for<kVec>(x + static_cast<long long>(blockIdx.x) * n, n,
                      [&](int, float v) { sum += v; });
  sum = ktune_block_reduce(sum, false, scratch);
  if (threadIdx.x == 0) y[blockIdx.x] = ktune_to<T>(sum);
}

// (x - mean) / sqrt(var + eps) * gamma + beta, the biased variance from a second pass (over
// the registers, or over the row again in the fallback); gamma and beta as wide as the row.
template <bool kVec, int kChunks, class T>
__device__ __forceinline__ void ktune_layer_norm(T* __restrict__ y, const T* __restrict__ x,
                                 const T* __restrict__ gamma, const T* __restrict__ beta, int n,
                                 float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<long long>(blockIdx.x) * n;
  T* yr = y + static_cast<long long>(blockIdx.x) * n;
  if constexpr (kChunks == 0) {
    float sum = 0.0f;
    ktune_row_for<kVec>(xr, n, [&](int, float v) { sum += v; });
    const float mean = ktune_block_reduce(sum, false, scratch) / n;
    float sq = 0.0f;
    ktune_row_for<kVec>(xr, n, [&](int, float v) { sq += (v - mean) * (v - mean); });
    const float rstd = rsqrtf(ktune_block_reduce(sq, false, scratch) / n + eps);
    ktune_row_map<kVec>(yr, xr, n, [&](int j, float v) {
      return (v - mean) * rstd * ktune_f(gamma[j]) + ktune_f(beta[j]);
    });
  } else {
    KtuneChunk<kVec, T> c[kChunks];
    constexpr int kW = KtuneChunk<kVec, T>::kW;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) < n) c[k].load(xr + ktune_chunk_at<kVec, T>(k));
    }
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) >= n) continue;
#pragma unroll
      for (int e = 0; e < kW; ++e) sum += c[k].v[e];
    }
    const float mean = ktune_block_reduce(sum, false, scratch) / n;
    float sq = 0.0f;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      if (ktune_chunk_at<kVec, T>(k) >= n) continue;
#pragma unroll
      for (int e = 0; e < kW; ++e) sq += (c[k].v[e] - mean) * (c[k].v[e] - mean);
    }
    const float rstd = rsqrtf(ktune_block_reduce(sq, false, scratch) / n + eps);
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      const int j = ktune_chunk_at<kVec, T>(k);
      if (j >= n) continue;
      KtuneChunk<kVec, T> g, b;
      g.load(gamma + j);
      b.load(beta + j);
#pragma unroll
      for (int e = 0; e < kW; ++e) c[k].v[e] = (c[k].v[e] - mean) * rstd * g.v[e] + b.v[e];
      c[k].store(yr + j);
    }
  }
}
)KT";
}

}  // namespace ktune::codegen::detail

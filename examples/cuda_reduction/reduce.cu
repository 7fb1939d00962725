// A two-pass float sum: reduce_partial<BLOCK, ITEMS, VEC, SHUFFLE> runs NBLOCKS blocks over the
// input with a grid-stride loop and writes one partial sum per block into `partials` (the spec's
// scratch buffer); reduce_final<BLOCK, SHUFFLE>, one block, sums the NBLOCKS partials into out[0].
// NBLOCKS comes as a #define (a tuning parameter); the template arguments come from the spec's
// entry names, e.g. `reduce_partial<{{BLOCK}}, {{ITEMS}}, {{VEC}}, {{SHUFFLE}}>`.
//
// Both kernels take every argument of the spec, in its order: (out, x, partials, n). The template
// parameters are spelled kBlock, ... because the tuning parameters (BLOCK, ...) are #defines too.

#ifndef NBLOCKS
#error "NBLOCKS (the first pass's grid size) must be defined"
#endif

// One block's sum of each thread's v, returned to thread 0. kShuffle: warp shuffles, then one warp
// over the warps' sums; otherwise the classic shared-memory tree.
template <int kBlock, int kShuffle>
__device__ float block_sum(float v) {
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "a block: whole warps, at most 1024 threads");
  if constexpr (kShuffle) {
    __shared__ float warp_sums[kBlock / 32];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = lane < kBlock / 32 ? warp_sums[lane] : 0.0f;
      for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    }
    return v;
  } else {
    __shared__ float s[kBlock];
    s[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int d = kBlock / 2; d > 0; d /= 2) {
      if (threadIdx.x < d) s[threadIdx.x] += s[threadIdx.x + d];
      __syncthreads();
    }
    return s[0];
  }
}

// kVec consecutive floats from x[i]: one 8- or 16-byte load when all are inside, else one by one.
template <int kVec>
__device__ float load_sum(const float* __restrict__ x, long long i, long long n) {
  if constexpr (kVec == 4) {
    if (i + 4 <= n) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(x + i));
      return (v.x + v.y) + (v.z + v.w);
    }
  } else if constexpr (kVec == 2) {
    if (i + 2 <= n) {
      const float2 v = __ldg(reinterpret_cast<const float2*>(x + i));
      return v.x + v.y;
    }
  }
  float s = 0.0f;
  for (int k = 0; k < kVec; k++)
    if (i + k < n) s += __ldg(x + i + k);
  return s;
}

template <int kBlock, int kItems, int kVec, int kShuffle>
__global__ void reduce_partial(float* out, const float* __restrict__ x,
                               float* __restrict__ partials, int n) {
  (void)out;
  // Each iteration a thread issues kItems independent loads of kVec floats, kBlock * kVec apart so
  // that a warp's loads stay contiguous; kItems accumulators keep the adds independent too.
  constexpr long long kPerBlock = (long long)kBlock * kItems * kVec;
  const long long stride = (long long)gridDim.x * kPerBlock;
  float acc[kItems];
#pragma unroll
  for (int k = 0; k < kItems; k++) acc[k] = 0.0f;
  for (long long base = blockIdx.x * kPerBlock + (long long)threadIdx.x * kVec; base < n;
       base += stride) {
#pragma unroll
    for (int k = 0; k < kItems; k++) {
      const long long i = base + (long long)k * kBlock * kVec;
      if (i < n) acc[k] += load_sum<kVec>(x, i, n);
    }
  }
  float v = 0.0f;
#pragma unroll
  for (int k = 0; k < kItems; k++) v += acc[k];
  v = block_sum<kBlock, kShuffle>(v);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

template <int kBlock, int kShuffle>
__global__ void reduce_final(float* out, const float* __restrict__ x,
                             const float* __restrict__ partials, int n) {
  (void)x;
  (void)n;
  float v = 0.0f;
  for (int i = threadIdx.x; i < NBLOCKS; i += kBlock) v += partials[i];
  v = block_sum<kBlock, kShuffle>(v);
  if (threadIdx.x == 0) out[0] = v;
}

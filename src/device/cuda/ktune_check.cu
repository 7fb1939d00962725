// The checking kernels of CudaChecker (cuda_check.h): screen, fill, pattern and differ. One
// source, two compilers: where the build finds nvcc, it compiles this file into a fatbin at build
// time (cmake/embed_fatbin.cmake), which the CUDA device loads as it opens; elsewhere, or where
// the driver refuses that image, NVRTC compiles this text (embedded by ktune_embed_sources,
// src/CMakeLists.txt) for the device in the worker. So: no includes (NVRTC gets no include
// paths), `extern "C"` entry points (looked up by name), nothing architecture-specific (the
// fatbin holds SASS for each major architecture and PTX for later ones).

// compare()'s element rules (src/tensor/compare.cpp) on the GPU. Each warp adds its squared
// differences, squared expected values and count of failing elements to counters[0..2].
// Elements that fail are left out of the norms: any failure sends the caller to the host.
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

__device__ __forceinline__ double value_of(u16 bits, int kind) {
  if (kind == 0) {  // f16
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return (double)f;
  }
  return (double)__uint_as_float(((u32)bits) << 16);  // bf16
}
__device__ __forceinline__ double value_of(u32 bits, int) { return (double)__uint_as_float(bits); }
__device__ __forceinline__ double value_of(u64 bits, int) {
  return __longlong_as_double((long long)bits);
}

// finite_only: an infinity fails too (a reference's output screened alone, against itself:
// check_output_alone's rule).
template <typename Bits, int KIND>
__device__ void screen(const Bits* actual, const Bits* expected, long long n, u64 poison,
                       double atol, double rtol, u64* counters, int finite_only) {
  double d2 = 0, e2 = 0;
  u64 bad = 0;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const Bits ab = actual[i];
    const double a = value_of(ab, KIND), e = value_of(expected[i], KIND);
    const bool a_finite = a - a == 0, e_finite = e - e == 0;
    if ((u64)ab == poison || a != a || e != e) {
      ++bad;
    } else if (!a_finite || !e_finite) {
      if (a != e || finite_only) ++bad;  // equal infinities pass and add nothing
    } else {
      const double diff = a > e ? a - e : e - a;
      if (diff > atol + rtol * (e < 0 ? -e : e)) {
        ++bad;
      } else {
        d2 += (a - e) * (a - e);
        e2 += e * e;
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, o);
    e2 += __shfl_down_sync(0xffffffffu, e2, o);
    bad += __shfl_down_sync(0xffffffffu, bad, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd((double*)&counters[0], d2);
    atomicAdd((double*)&counters[1], e2);
    if (bad) atomicAdd(&counters[2], bad);
  }
}

extern "C" __global__ void ktune_screen_f16(const u16* a, const u16* e, long long n, u64 poison,
                                            double atol, double rtol, u64* counters, int finite_only) {
  screen<u16, 0>(a, e, n, poison, atol, rtol, counters, finite_only);
}
extern "C" __global__ void ktune_screen_bf16(const u16* a, const u16* e, long long n, u64 poison,
                                             double atol, double rtol, u64* counters, int finite_only) {
  screen<u16, 1>(a, e, n, poison, atol, rtol, counters, finite_only);
}
extern "C" __global__ void ktune_screen_f32(const u32* a, const u32* e, long long n, u64 poison,
                                            double atol, double rtol, u64* counters, int finite_only) {
  screen<u32, 2>(a, e, n, poison, atol, rtol, counters, finite_only);
}
extern "C" __global__ void ktune_screen_f64(const u64* a, const u64* e, long long n, u64 poison,
                                            double atol, double rtol, u64* counters, int finite_only) {
  screen<u64, 3>(a, e, n, poison, atol, rtol, counters, finite_only);
}

// fill_random's values (src/tensor/tensor_fill.cpp) for a dense row-major view, made on the
// GPU: element i is the (i + 1)-th draw of splitmix64 from `seed`, turned into the dtype's value
// with the host's arithmetic (exact in double) and rounded with the host's conversions (ported
// below bit for bit), so both give the same bytes. dtype: 0 f16, 1 bf16, 2 f32, 3 f64, 4 i8,
// 5 i32, 6 i64 (DType's order).
__device__ __forceinline__ u64 draw(u64 seed, u64 i) {
  u64 z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ u16 to_half_bits(float value) {
  const u32 f = __float_as_uint(value);
  const u16 sign = (u16)((f >> 16) & 0x8000u);
  const u32 abs = f & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return (u16)(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return (u16)(sign | 0x7C00u);
  if (abs < 0x38800000u) {
    if (abs < 0x33000000u) return sign;
    const u32 exp = abs >> 23;
    const u32 mant = (abs & 0x7FFFFFu) | 0x800000u;
    const u32 shift = 126 - exp;
    u32 half = mant >> shift;
    const u32 rem = mant & ((1u << shift) - 1);
    const u32 halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return (u16)(sign | half);
  }
  u32 half = ((abs >> 13) - (112u << 10));
  const u32 rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return (u16)(sign | half);
}
__device__ __forceinline__ u16 to_bf16_bits(float value) {
  u32 f = __float_as_uint(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return (u16)((f >> 16) | 0x40u);
  f += 0x7FFFu + ((f >> 16) & 1u);
  return (u16)(f >> 16);
}
__device__ __forceinline__ double fill_value(u64 bits, int dtype, int stress) {
  const bool floating = dtype <= 3;
  if (stress) {
    const double sign = (bits & 3u) == 0 ? 1.0 : -1.0;
    if (floating) {
      const bool half = dtype <= 1;
      const int lo = half ? -3 : -6;
      const int span = half ? 6 : 12;
      const int e = lo + (int)(((bits >> 32) * (u64)span) >> 32);
      const double u = (double)((bits >> 2) & ((1u << 29) - 1)) * 0x1.0p-29;
      return sign * ldexp(1.0 + u, e);
    }
    const u64 max = dtype == 4 ? 128 : dtype == 5 ? 1024 : (1u << 20);
    const u64 k = ((bits >> 32) * (max + 1)) >> 32;
    const double v = sign * (double)k;
    return dtype == 4 && v > 127 ? 127 : v;
  }
  if (!floating) return (double)(long long)(((bits >> 32) * 17u) >> 32) - 8.0;
  return 2.0 * ((double)(bits >> 11) * 0x1.0p-53) - 1.0;
}
extern "C" __global__ void ktune_fill(unsigned char* out, long long n, u64 seed, int dtype,
                                      int stress) {
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const double v = fill_value(draw(seed, (u64)i), dtype, stress);
    // The uniform set is half-open: a value that rounding carried up to 1 becomes the largest
    // below 1 (only +1 can appear: every value is in [-1, 1)).
    switch (dtype) {
      case 0: {
        u16 h = to_half_bits((float)v);
        if (!stress && h == 0x3C00u) h = to_half_bits((float)(1.0 - 0x1.0p-11));
        ((u16*)out)[i] = h;
        break;
      }
      case 1: {
        u16 b = to_bf16_bits((float)v);
        if (!stress && b == 0x3F80u) b = to_bf16_bits((float)(1.0 - 0x1.0p-8));
        ((u16*)out)[i] = b;
        break;
      }
      case 2: {
        float f = (float)v;
        if (!stress && f >= 1.0f) f = (float)(1.0 - 0x1.0p-24);
        ((float*)out)[i] = f;
        break;
      }
      case 3:
        ((double*)out)[i] = v;
        break;
      case 4:
        ((signed char*)out)[i] = (signed char)(long long)v;
        break;
      case 5:
        ((int*)out)[i] = (int)(long long)v;
        break;
      default:
        ((long long*)out)[i] = (long long)v;
        break;
    }
  }
}

// `bytes` bytes at p filled with the `size`-byte little-endian pattern (size 1, 2, 4 or 8),
// repeated from p on (a buffer's poison: HostBuffer::poison).
extern "C" __global__ void ktune_pattern(unsigned char* p, long long bytes, u64 pattern,
                                         int size) {
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += step) {
    p[i] = (unsigned char)(pattern >> (8 * (int)(i & (size - 1))));
  }
}

// Counts the differing 4-byte words of a and b (bytes / 4 of them), then the trailing bytes.
// Where a or b is not 4-byte aligned (the redzone after a buffer of an odd number of 2-byte
// elements), the differing bytes of all words * 4 + tail.
extern "C" __global__ void ktune_differ(const u32* a, const u32* b, long long words, int tail,
                                        u64* counters) {
  u64 bad = 0;
  const long long step = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if ((((u64)a | (u64)b) & 3u) != 0) {
    const unsigned char* ca = (const unsigned char*)a;
    const unsigned char* cb = (const unsigned char*)b;
    for (long long i = first; i < words * 4 + tail; i += step) bad += ca[i] != cb[i];
  } else {
    for (long long i = first; i < words; i += step) bad += a[i] != b[i];
    if (blockIdx.x == 0 && threadIdx.x < tail) {
      const unsigned char* ta = (const unsigned char*)(a + words);
      const unsigned char* tb = (const unsigned char*)(b + words);
      bad += ta[threadIdx.x] != tb[threadIdx.x];
    }
  }
  for (int o = 16; o > 0; o >>= 1) bad += __shfl_down_sync(0xffffffffu, bad, o);
  if ((threadIdx.x & 31) == 0 && bad) atomicAdd(&counters[2], bad);
}

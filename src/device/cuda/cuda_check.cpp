// CudaChecker: the screening kernels (compiled by NVRTC in the worker) and their launches.
#include "device/cuda/cuda_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/nvrtc_library.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {
namespace {

constexpr int kThreads = 256;

// compare()'s element rules (src/tensor/compare.cpp) on the GPU. Each warp adds its squared
// differences, squared expected values and count of failing elements to counters[0..2].
// Elements that fail are left out of the norms: any failure sends the caller to the host.
constexpr const char* kSource = R"(
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
extern "C" __global__ void ktune_differ(const u32* a, const u32* b, long long words, int tail,
                                        u64* counters) {
  u64 bad = 0;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += step) {
    bad += a[i] != b[i];
  }
  if (blockIdx.x == 0 && threadIdx.x < tail) {
    const unsigned char* ta = (const unsigned char*)(a + words);
    const unsigned char* tb = (const unsigned char*)(b + words);
    bad += ta[threadIdx.x] != tb[threadIdx.x];
  }
  for (int o = 16; o > 0; o >>= 1) bad += __shfl_down_sync(0xffffffffu, bad, o);
  if ((threadIdx.x & 31) == 0 && bad) atomicAdd(&counters[2], bad);
}
)";

constexpr const char* kScreenEntries[4] = {"ktune_screen_f16", "ktune_screen_bf16",
                                           "ktune_screen_f32", "ktune_screen_f64"};

int screen_index(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 0;
    case DType::kBF16:
      return 1;
    case DType::kF32:
      return 2;
    case DType::kF64:
      return 3;
    default:
      return -1;
  }
}

}  // namespace

CudaChecker::CudaChecker(const CudaDriver& cu, int sm_count)
    : cu_(cu), blocks_(std::max(1, sm_count) * 4) {}

CudaChecker::~CudaChecker() {
  if (counters_ != 0) (void)cu_.MemFree(counters_);
}

bool CudaChecker::screens(DType dtype) { return screen_index(dtype) >= 0; }

Result<std::string> CudaChecker::compile(const std::string& arch) {
  Result<const NvrtcLibrary*> nv = nvrtc_library();
  if (!nv) return std::unexpected(nv.error());
  Result<NvrtcCompiled> compiled =
      nvrtc_compile(**nv, kSource, "ktune_check.cu", {"--gpu-architecture=" + arch});
  if (!compiled) return std::unexpected(compiled.error());
  if (compiled->result != NVRTC_SUCCESS || compiled->cubin.empty()) {
    return make_error(ErrorCode::kCompile,
                      fmt::format("the checking kernels do not compile for {}: {}", arch,
                                  compiled->log.empty() ? (*nv)->GetErrorString(compiled->result)
                                                        : compiled->log));
  }
  return std::move(compiled->cubin);
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::create(const CudaDriver& cu,
                                                         const std::string& arch, int sm_count) {
  return create(cu, compile(arch), sm_count);
}

Result<std::unique_ptr<CudaChecker>> CudaChecker::create(const CudaDriver& cu,
                                                         Result<std::string> cubin, int sm_count) {
  if (!cubin) return std::unexpected(cubin.error());
  std::unique_ptr<CudaChecker> checker(new CudaChecker(cu, sm_count));
  const std::filesystem::path name = "ktune_check.cubin";
  for (int i = 0; i < 4; ++i) {
    auto k = CudaKernel::from_image(cu, cubin->data(), name, kScreenEntries[i], 0);
    if (!k) return std::unexpected(k.error());
    checker->screen_[i] = std::move(*k);
  }
  auto differ = CudaKernel::from_image(cu, cubin->data(), name, "ktune_differ", 0);
  if (!differ) return std::unexpected(differ.error());
  checker->differ_ = std::move(*differ);
  auto fill = CudaKernel::from_image(cu, cubin->data(), name, "ktune_fill", 0);
  if (!fill) return std::unexpected(fill.error());
  checker->fill_ = std::move(*fill);
  auto pattern = CudaKernel::from_image(cu, cubin->data(), name, "ktune_pattern", 0);
  if (!pattern) return std::unexpected(pattern.error());
  checker->pattern_ = std::move(*pattern);
  KTUNE_CU(MemAlloc(&checker->counters_, 3 * sizeof(std::uint64_t)));
  return checker;
}

Status CudaChecker::launch(const CudaKernel& kernel, std::int64_t n, void** params,
                           CUstream stream) {
  const std::int64_t needed = (n + kThreads - 1) / kThreads;
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::clamp<std::int64_t>(needed, 1, blocks_)), 1, 1};
  g.block = {kThreads, 1, 1};
  if (CUresult r = kernel.launch(g, stream, params); r != CUDA_SUCCESS) {
    return cuda_status(cu_, r, "LaunchKernel (check)");
  }
  return {};
}

Status CudaChecker::run(const CudaKernel& kernel, std::int64_t n, void** params, CUstream stream) {
  const CudaDriver& cu = cu_;
  KTUNE_CU(MemsetD8Async(counters_, 0, 3 * sizeof(std::uint64_t), stream));
  if (Status s = launch(kernel, n, params, stream); !s) return s;
  KTUNE_CU(StreamSynchronize(stream));
  std::uint64_t host[3] = {0, 0, 0};
  KTUNE_CU(MemcpyDtoH(host, counters_, sizeof(host)));
  std::memcpy(sums_, host, sizeof(sums_));
  bad_ = host[2];
  return {};
}

Status CudaChecker::screen(DType dtype, CUdeviceptr actual, CUdeviceptr expected, std::int64_t n,
                           double atol, double rtol, bool finite_only, CUstream stream) {
  const int index = screen_index(dtype);
  if (index < 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("CudaChecker: cannot screen {}", dtype_name(dtype)));
  }
  long long count = n;
  std::uint64_t poison = poison_bits(dtype);
  int finite = finite_only ? 1 : 0;
  void* params[] = {&actual, &expected, &count, &poison, &atol, &rtol, &counters_, &finite};
  return run(*screen_[index], n, params, stream);
}

Result<bool> CudaChecker::outputs_pass(DType dtype, CUdeviceptr actual, CUdeviceptr expected,
                                       std::int64_t n, const Tolerance& tolerance,
                                       CUstream stream) {
  if (Status s = screen(dtype, actual, expected, n, tolerance.atol, tolerance.rtol, false, stream);
      !s) {
    return std::unexpected(s.error());
  }
  if (bad_ > 0) return false;
  // compare(): with an all-zero reference the absolute norm stands in for the relative one.
  const double rel_l2 = sums_[1] > 0 ? std::sqrt(sums_[0] / sums_[1]) : std::sqrt(sums_[0]);
  return rel_l2 <= tolerance.max_rel_l2;
}

Result<bool> CudaChecker::sound(DType dtype, CUdeviceptr values, std::int64_t n, CUstream stream,
                                double* sum_of_squares) {
  // Against itself, with no tolerance: every written, finite element passes and adds its square.
  if (Status s = screen(dtype, values, values, n, 0, 0, true, stream); !s) {
    return std::unexpected(s.error());
  }
  *sum_of_squares = sums_[1];
  return bad_ == 0;
}

Result<bool> CudaChecker::equal(CUdeviceptr a, CUdeviceptr b, std::size_t bytes, CUstream stream) {
  long long words = static_cast<long long>(bytes / 4);
  int tail = static_cast<int>(bytes % 4);
  void* params[] = {&a, &b, &words, &tail, &counters_};
  if (Status s = run(*differ_, std::max<long long>(words, 1), params, stream); !s) {
    return std::unexpected(s.error());
  }
  return bad_ == 0;
}

}  // namespace ktune

namespace ktune {

Status CudaChecker::fill(CUdeviceptr out, DType dtype, std::int64_t n, std::uint64_t seed,
                         DataSet set, CUstream stream) {
  if (n <= 0) return {};
  long long count = n;
  int code = static_cast<int>(dtype);  // DType's order is the kernel's
  int stress = set == DataSet::kStress ? 1 : 0;
  void* params[] = {&out, &count, &seed, &code, &stress};
  return launch(*fill_, n, params, stream);
}

Status CudaChecker::poison(CUdeviceptr p, std::size_t bytes, DType dtype, CUstream stream) {
  if (bytes == 0) return {};
  long long count = static_cast<long long>(bytes);
  std::uint64_t pattern = poison_bits(dtype);
  int size = static_cast<int>(dtype_size(dtype));
  void* params[] = {&p, &count, &pattern, &size};
  return launch(*pattern_, count, params, stream);
}

}  // namespace ktune

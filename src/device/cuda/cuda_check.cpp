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

template <typename Bits, int KIND>
__device__ void screen(const Bits* actual, const Bits* expected, long long n, u64 poison,
                       double atol, double rtol, u64* counters) {
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
      if (a != e) ++bad;  // equal infinities pass and add nothing
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
                                            double atol, double rtol, u64* counters) {
  screen<u16, 0>(a, e, n, poison, atol, rtol, counters);
}
extern "C" __global__ void ktune_screen_bf16(const u16* a, const u16* e, long long n, u64 poison,
                                             double atol, double rtol, u64* counters) {
  screen<u16, 1>(a, e, n, poison, atol, rtol, counters);
}
extern "C" __global__ void ktune_screen_f32(const u32* a, const u32* e, long long n, u64 poison,
                                            double atol, double rtol, u64* counters) {
  screen<u32, 2>(a, e, n, poison, atol, rtol, counters);
}
extern "C" __global__ void ktune_screen_f64(const u64* a, const u64* e, long long n, u64 poison,
                                            double atol, double rtol, u64* counters) {
  screen<u64, 3>(a, e, n, poison, atol, rtol, counters);
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
  Result<std::string> cubin = compile(arch);
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
  KTUNE_CU(MemAlloc(&checker->counters_, 3 * sizeof(std::uint64_t)));
  return checker;
}

Status CudaChecker::run(const CudaKernel& kernel, std::int64_t n, void** params, CUstream stream) {
  const CudaDriver& cu = cu_;
  KTUNE_CU(MemsetD8Async(counters_, 0, 3 * sizeof(std::uint64_t), stream));
  const std::int64_t needed = (n + kThreads - 1) / kThreads;
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::clamp<std::int64_t>(needed, 1, blocks_)), 1, 1};
  g.block = {kThreads, 1, 1};
  if (CUresult r = kernel.launch(g, stream, params); r != CUDA_SUCCESS) {
    return cuda_status(cu, r, "LaunchKernel (check)");
  }
  KTUNE_CU(StreamSynchronize(stream));
  std::uint64_t host[3] = {0, 0, 0};
  KTUNE_CU(MemcpyDtoH(host, counters_, sizeof(host)));
  std::memcpy(sums_, host, sizeof(sums_));
  bad_ = host[2];
  return {};
}

Result<bool> CudaChecker::outputs_pass(DType dtype, CUdeviceptr actual, CUdeviceptr expected,
                                       std::int64_t n, const Tolerance& tolerance,
                                       CUstream stream) {
  const int index = screen_index(dtype);
  if (index < 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("CudaChecker: cannot screen {}", dtype_name(dtype)));
  }
  long long count = n;
  std::uint64_t poison = poison_bits(dtype);
  double atol = tolerance.atol;
  double rtol = tolerance.rtol;
  void* params[] = {&actual, &expected, &count, &poison, &atol, &rtol, &counters_};
  if (Status s = run(*screen_[index], n, params, stream); !s) return std::unexpected(s.error());
  if (bad_ > 0) return false;
  // compare(): with an all-zero reference the absolute norm stands in for the relative one.
  const double rel_l2 = sums_[1] > 0 ? std::sqrt(sums_[0] / sums_[1]) : std::sqrt(sums_[0]);
  return rel_l2 <= tolerance.max_rel_l2;
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

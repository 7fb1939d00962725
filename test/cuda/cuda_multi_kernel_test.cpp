// CudaMultiKernel on a GPU: variants are host functions enqueueing NVRTC-compiled kernels on the
// caller's stream and device pointers; a broken variant (one element written, a wrong element,
// NaN) is excluded and never picked, the caller's output is the pick's, the pick is stored under
// the GPU's identity. Without a GPU: creation says that there is no context or driver.
#include "ktune/runtime/cuda_multi_kernel.h"

#include <cuda.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/nvrtc_library.h"
#include "core/cuda_driver.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;

constexpr const char* kKernels = R"(
extern "C" __global__ void add(float* y, const float* a, const float* b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}
extern "C" __global__ void add_first_only(float* y, const float* a, const float* b, long long n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) y[0] = a[0] + b[0];
}
extern "C" __global__ void add_off_by_one(float* y, const float* a, const float* b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i] + (i == n - 1 ? 1.0f : 0.0f);
}
extern "C" __global__ void add_nan(float* y, const float* a, const float* b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = i == n / 2 ? __int_as_float(0x7fc00000) : a[i] + b[i];
}
// Right and slower: each thread walks its element 64 times.
extern "C" __global__ void add_slow(float* y, const float* a, const float* b, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
  for (int r = 0; r < 64; ++r) s = a[i] + b[i] + 0.0f * s;
  y[i] = s;
}
)";

const CudaDriver* g_cu = nullptr;
CUfunction g_add = nullptr, g_first_only = nullptr, g_off_by_one = nullptr, g_nan = nullptr,
           g_slow = nullptr;

void launch(CUfunction f, CUstream_st* stream, float* y, const float* a, const float* b,
            std::int64_t n) {
  long long count = n;
  void* params[] = {&y, &a, &b, &count};
  const auto blocks = static_cast<unsigned>((n + 255) / 256);
  (void)g_cu->LaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
}
void add(CUstream_st* s, float* y, const float* a, const float* b, std::int64_t n) {
  launch(g_add, s, y, a, b, n);
}
void first_only(CUstream_st* s, float* y, const float* a, const float* b, std::int64_t n) {
  launch(g_first_only, s, y, a, b, n);
}
void off_by_one(CUstream_st* s, float* y, const float* a, const float* b, std::int64_t n) {
  launch(g_off_by_one, s, y, a, b, n);
}
void nan_writer(CUstream_st* s, float* y, const float* a, const float* b, std::int64_t n) {
  launch(g_nan, s, y, a, b, n);
}
void slow(CUstream_st* s, float* y, const float* a, const float* b, std::int64_t n) {
  launch(g_slow, s, y, a, b, n);
}

using Add = CudaMultiKernel<float*, const float*, const float*, std::int64_t>;

ShapeKey bucket(float* const&, const float* const&, const float* const&, const std::int64_t& n) {
  return {n, 0, 0, 0};
}
std::size_t y_bytes(float* const&, const float* const&, const float* const&,
                    const std::int64_t& n) {
  return static_cast<std::size_t>(n) * sizeof(float);
}

MultiKernelOptions options(TuningCache* cache = nullptr) {
  MultiKernelOptions o;
  o.name = "cuda_add";
  o.cache = cache;
  o.report = nullptr;
  o.bench = {.warmup_runs = 1, .budget_ms = 2, .min_runs = 3, .max_runs = 20};
  return o;
}

class CudaMultiKernelGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<const CudaDriver*> driver = cuda_driver();
    if (!driver) GTEST_SKIP() << "[SKIP] no GPU: " << driver.error().message;
    g_cu = *driver;
    const CudaDriver& cu = *g_cu;
    ASSERT_EQ(cu.DevicePrimaryCtxRetain(&ctx_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cu.CtxSetCurrent(ctx_), CUDA_SUCCESS);
    Result<CudaDeviceInfo> info = cuda_device_info(0);
    ASSERT_TRUE(info) << info.error().message;
    Result<const NvrtcLibrary*> nv = nvrtc_library();
    ASSERT_TRUE(nv) << nv.error().message;
    Result<NvrtcCompiled> c =
        nvrtc_compile(**nv, kKernels, "mk.cu", {"--gpu-architecture=" + info->arch()});
    ASSERT_TRUE(c) << c.error().message;
    ASSERT_EQ(c->result, NVRTC_SUCCESS) << c->log;
    ASSERT_EQ(cu.ModuleLoadData(&module_, c->cubin.data()), CUDA_SUCCESS);
    for (auto [f, name] : {std::pair{&g_add, "add"},
                           {&g_first_only, "add_first_only"},
                           {&g_off_by_one, "add_off_by_one"},
                           {&g_nan, "add_nan"},
                           {&g_slow, "add_slow"}}) {
      ASSERT_EQ(cu.ModuleGetFunction(f, module_, name), CUDA_SUCCESS) << name;
    }
    ASSERT_EQ(cu.StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    std::vector<float> a(kN), b(kN);
    for (std::int64_t i = 0; i < kN; ++i) {
      a[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i % 11) - 2;
      b[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i % 5);
    }
    want_.resize(kN);
    for (std::size_t i = 0; i < want_.size(); ++i) want_[i] = a[i] + b[i];
    for (CUdeviceptr* p : {&a_, &b_, &y_}) ASSERT_EQ(cu.MemAlloc(p, kN * 4), CUDA_SUCCESS);
    ASSERT_EQ(cu.MemcpyHtoD(a_, a.data(), kN * 4), CUDA_SUCCESS);
    ASSERT_EQ(cu.MemcpyHtoD(b_, b.data(), kN * 4), CUDA_SUCCESS);
    ASSERT_EQ(cu.MemsetD8(y_, 0, kN * 4), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (g_cu == nullptr || ctx_ == nullptr) return;
    for (CUdeviceptr p : {a_, b_, y_}) {
      if (p != 0) (void)g_cu->MemFree(p);
    }
    if (stream_ != nullptr) (void)g_cu->StreamDestroy(stream_);
    if (module_ != nullptr) (void)g_cu->ModuleUnload(module_);
    (void)g_cu->DevicePrimaryCtxRelease(0);
  }
  Status call(Add& mk) {
    return mk(stream_, reinterpret_cast<float*>(y_), reinterpret_cast<const float*>(a_),
              reinterpret_cast<const float*>(b_), kN);
  }
  std::vector<float> y() {
    std::vector<float> out(kN);
    EXPECT_EQ(g_cu->StreamSynchronize(stream_), CUDA_SUCCESS);
    EXPECT_EQ(g_cu->MemcpyDtoH(out.data(), y_, kN * 4), CUDA_SUCCESS);
    return out;
  }
  static constexpr std::int64_t kN = 1 << 20;
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr a_ = 0, b_ = 0, y_ = 0;
  std::vector<float> want_;
};

TEST_F(CudaMultiKernelGpu, BrokenVariantsAreExcludedAndTheCallerGetsThePicksResult) {
  auto cache = make_memory_cache();
  auto mk = Add::create(options(cache.get()),
                        {{"first_only", &first_only},
                         {"add", &add},
                         {"off_by_one", &off_by_one},
                         {"nan", &nan_writer},
                         {"slow", &slow}},
                        &bucket, {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  Status s = call(*mk);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(y(), want_);
  const std::string pick = *mk->picked(bucket(nullptr, nullptr, nullptr, kN));
  EXPECT_TRUE(pick == "add" || pick == "slow") << pick;
  const std::vector<MultiKernelFailure> failures = mk->failures();
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures[0].variant, "first_only");
  EXPECT_EQ(failures[0].outcome, Outcome::kUnwrittenOutput);
  EXPECT_THAT(failures[0].message, HasSubstr("as the reference"));
  EXPECT_EQ(failures[1].variant, "off_by_one");
  EXPECT_EQ(failures[1].outcome, Outcome::kWrongResult);
  EXPECT_EQ(failures[2].variant, "nan");
  EXPECT_EQ(failures[2].outcome, Outcome::kNanOutput);
  auto records = cache->list();
  ASSERT_TRUE(records.has_value());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].winner, pick);
  EXPECT_THAT((*records)[0].key.device, HasSubstr("cuda: "));
  // A second call is the pick alone, on the caller's buffers.
  ASSERT_EQ(g_cu->MemsetD8(y_, 0, kN * 4), CUDA_SUCCESS);
  s = call(*mk);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(y(), want_);
  EXPECT_EQ(mk->benchmarks_run(), 1u);
}

// Without a GPU the driver or the context is missing: creation says so, nothing crashes.
TEST(CudaMultiKernel, CreationWithoutAGpuSaysWhatIsMissing) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is present";
  auto mk = Add::create(options(), {{"add", &add}}, &bucket, {{0, &y_bytes, ArgUse::kOut}});
  ASSERT_FALSE(mk.has_value());
  EXPECT_EQ(mk.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(mk.error().message, HasSubstr("CudaMultiKernel: no CUDA driver"));
}

}  // namespace
}  // namespace ktune

// CudaBackend and CudaKernel: NVRTC compilation to cubins, the code cache, compile errors and
// fingerprints run wherever the toolkit is installed; loading and launching need a GPU and skip
// without one.
#include "ktune/backend/cuda_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/artifact_digest.h"
#include "backend/cuda_module.h"
#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// y = a * x + Y_SCALE * y: the define must reach the kernel for the GPU test's numbers to hold.
constexpr const char* kSaxpy = R"(extern "C" __global__ void saxpy(float a, const float* x,
                                                                  float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + Y_SCALE * y[i];
}
)";

KernelSource saxpy_source(std::string y_scale = "2.0f") {
  KernelSource s;
  s.name = "saxpy_Y_SCALE" + y_scale;
  s.code = kSaxpy;
  s.entry = "saxpy";
  s.signature = {{"a", ArgRole::kScalar, DType::kF32},
                 {"x", ArgRole::kIn, DType::kF32},
                 {"y", ArgRole::kInOut, DType::kF32},
                 {"n", ArgRole::kScalar, DType::kI32}};
  s.defines = {{"Y_SCALE", std::move(y_scale)}};
  return s;
}

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A backend for `arch`, or the reason to skip: NVRTC absent (the toolkit is not installed).
#define KTUNE_BACKEND_OR_SKIP(var, arch_name, dir)                            \
  Result<CudaBackend> var = CudaBackend::create({.arch = arch_name}, dir);    \
  if (!var && var.error().code == ErrorCode::kUnavailable) {                  \
    GTEST_SKIP() << "[SKIP] NVRTC is not installed: " << var.error().message; \
  }                                                                           \
  ASSERT_TRUE(var) << var.error().message

CudaDeviceInfo device_info(std::string name, int major, int minor, int sms) {
  CudaDeviceInfo d;
  d.name = std::move(name);
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sms;
  d.driver_version = 13000;
  return d;
}

// A backend for a described device (compiling ahead of the driver) takes its arch, SM count and
// fingerprint, and touches no driver.
TEST(CudaBackendForDevice, TakesTheDevicesArchSmCountAndFingerprint) {
  TempDir dir("cuda-backend-for-device");
  const CudaDeviceInfo h100 = device_info("NVIDIA H100 PCIe", 9, 0, 114);
  Result<CudaBackend> b = CudaBackend::for_device({}, dir.path(), h100);
  if (!b && b.error().code == ErrorCode::kUnavailable) GTEST_SKIP() << b.error().message;
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->arch(), "sm_90a");
  EXPECT_EQ(b->device_fingerprint(), h100.fingerprint());
  double sms = 0, cc = 0;
  for (const auto& [name, value] : b->device_limits()) {
    if (name == "sm_count") sms = value;
    if (name == "cc_major") cc = value;
  }
  EXPECT_EQ(sms, 114);
  EXPECT_EQ(cc, 9);
  const CudaDeviceInfo a100 = device_info("NVIDIA A100", 8, 0, 108);
  Result<CudaBackend> ampere = CudaBackend::for_device({}, dir.path(), a100);
  ASSERT_TRUE(ampere) << ampere.error().message;
  EXPECT_EQ(ampere->arch(), "sm_80");
}

// Two backends of one process compiling the same source at once (the one compiling ahead of the
// driver and the tuning's) run NVRTC once: the second joins the first's run.
TEST(CudaBackendForDevice, BackendsShareACompileUnderWay) {
  TempDir dir("cuda-backend-shared");
  std::atomic<int> nvrtc_runs{0};
  CudaCompileOptions options;
  options.on_command = [&](const std::string&, const std::string&) { ++nvrtc_runs; };
  const CudaDeviceInfo h100 = device_info("NVIDIA H100", 9, 0, 132);
  Result<CudaBackend> ahead = CudaBackend::for_device(options, dir.path(), h100);
  if (!ahead && ahead.error().code == ErrorCode::kUnavailable) {
    GTEST_SKIP() << ahead.error().message;
  }
  ASSERT_TRUE(ahead) << ahead.error().message;
  options.arch = "sm_90a";
  Result<CudaBackend> tuning = CudaBackend::create(options, dir.path());
  ASSERT_TRUE(tuning) << tuning.error().message;
  // Several sources, each compiled by both at once, so that the runs overlap.
  for (int i = 0; i < 4; ++i) {
    const KernelSource source = saxpy_source(std::to_string(i + 2) + ".0f");
    std::atomic<int> ready{0};
    Result<Artifact> a = make_error(ErrorCode::kInternal, "unset");
    Result<Artifact> b = make_error(ErrorCode::kInternal, "unset");
    std::thread t([&] {
      ++ready;
      while (ready < 2) {
      }
      a = ahead->compile(source);
    });
    ++ready;
    while (ready < 2) {
    }
    b = tuning->compile(source);
    t.join();
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(a->path, b->path);
  }
  EXPECT_EQ(nvrtc_runs, 4) << "a source compiled twice";
}

// NVML's prediction, where there is one, agrees with the driver on what compiling needs.
TEST(CudaPredict, AgreesWithTheDriver) {
  EXPECT_EQ(cuda_cores_per_sm(9, 0), 128);
  EXPECT_EQ(cuda_cores_per_sm(8, 0), 64);
  EXPECT_EQ(cuda_cores_per_sm(8, 9), 128);
  EXPECT_EQ(cuda_cores_per_sm(42, 0), 0);
  EXPECT_FALSE(predict_cuda_device(-1));
  std::optional<CudaDeviceInfo> predicted = predict_cuda_device(0);
  Result<CudaDeviceInfo> real = cuda_device_info(0);
  if (!real) {
    EXPECT_FALSE(predicted) << "a prediction without a device";
    GTEST_SKIP() << "[SKIP] no GPU: " << real.error().message;
  }
  if (!predicted) GTEST_SKIP() << "[SKIP] NVML predicts nothing on this machine";
  EXPECT_EQ(predicted->arch(), real->arch());
  EXPECT_EQ(predicted->sm_count, real->sm_count);
  EXPECT_EQ(predicted->driver_version, real->driver_version);
  EXPECT_EQ(predicted->fingerprint(), real->fingerprint()) << "a tuning-cache hit would be missed";
}

// CUDA_VISIBLE_DEVICES as the driver reads it: a prediction for an index it hides would answer
// a tuning-cache hit for a device CUDA cannot see.
TEST(CudaPredict, ReadsCudaVisibleDevicesAsTheDriverDoes) {
  EXPECT_EQ(cuda_visible_count(nullptr, 4), 4u);
  EXPECT_EQ(cuda_visible_count("", 4), 0u);
  EXPECT_EQ(cuda_visible_count("-1", 4), 0u);
  EXPECT_EQ(cuda_visible_count("NoDevFiles", 4), 0u);
  EXPECT_EQ(cuda_visible_count("2", 4), 1u);
  EXPECT_EQ(cuda_visible_count("0, 3,1", 4), 3u);
  EXPECT_EQ(cuda_visible_count("0,1,2,3,0", 4), 4u) << "never more than the machine has";
  EXPECT_EQ(cuda_visible_count("1,7,2", 4), 1u) << "the list ends at an index past the count";
  EXPECT_EQ(cuda_visible_count("1,x,2", 4), 1u);
  EXPECT_EQ(cuda_visible_count("0,", 4), 1u);
  EXPECT_EQ(cuda_visible_count("GPU-7d4a6e84-28a5-34ce-cd98-1d0fa3ebe495,1", 2), 2u);
  EXPECT_EQ(cuda_visible_count("MIG-7d4a6e84-28a5-34ce-cd98-1d0fa3ebe495", 2), std::nullopt);
  EXPECT_EQ(cuda_visible_count("0", 0), 0u);
}

class CudaBackendArch : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaBackendArch, CompilesACubinThenHitsTheCodeCache) {
  TempDir dir("cuda-backend");
  KTUNE_BACKEND_OR_SKIP(backend, GetParam(), dir.path());
  EXPECT_EQ(backend->arch(), GetParam());

  Result<Artifact> first = backend->compile(saxpy_source());
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_GT(first->compile_s, 0);
  EXPECT_EQ(first->path.extension(), ".cubin");
  EXPECT_TRUE(first->path.string().starts_with(dir.path().string()));
  const std::string cubin = read_bytes(first->path);
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
  // The source that was compiled stays beside its cubin.
  std::filesystem::path cu = first->path;
  cu.replace_extension(".cu");
  EXPECT_EQ(read_bytes(cu), CudaBackend::translation_unit(saxpy_source()));

  Result<Artifact> second = backend->compile(saxpy_source());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second->key, first->key);
  EXPECT_EQ(second->path, first->path);
  EXPECT_EQ(second->compile_s, 0);
}

INSTANTIATE_TEST_SUITE_P(Archs, CudaBackendArch, ::testing::Values("sm_80", "sm_90a"));

TEST(CudaBackend, KeyDependsOnDefinesArchAndFlags) {
  TempDir dir("cuda-backend-keys");
  KTUNE_BACKEND_OR_SKIP(sm80, "sm_80", dir.path());
  Result<CudaBackend> sm90 = CudaBackend::create({.arch = "sm_90a"}, dir.path());
  ASSERT_TRUE(sm90) << sm90.error().message;
  Result<CudaBackend> fast = CudaBackend::create(
      {.arch = "sm_80", .flags = {"-std=c++17", "-default-device", "--use_fast_math"}}, dir.path());
  ASSERT_TRUE(fast) << fast.error().message;

  Result<Artifact> a = sm80->compile(saxpy_source("2.0f"));
  Result<Artifact> b = sm80->compile(saxpy_source("3.0f"));
  Result<Artifact> c = sm90->compile(saxpy_source("2.0f"));
  Result<Artifact> d = fast->compile(saxpy_source("2.0f"));
  ASSERT_TRUE(a && b && c && d);
  EXPECT_NE(a->key, b->key);
  EXPECT_NE(a->key, c->key);
  EXPECT_NE(a->key, d->key);
  EXPECT_FALSE(c->from_cache);
  EXPECT_FALSE(d->from_cache);
}

TEST(CudaBackend, SyntaxErrorIsACompileErrorWithNvrtcsLine) {
  TempDir dir("cuda-backend-error");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_80", dir.path());
  KernelSource bad = saxpy_source();
  bad.name = "saxpy_broken";
  bad.code = "extern \"C\" __global__ void saxpy(float* y) {\n  y[0] = Y_SCALE\n}\n";
  Result<Artifact> r = backend->compile(bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kCompile);
  // The source's own line numbers, not counting the defines put before it.
  EXPECT_THAT(r.error().message,
              AllOf(StartsWith("saxpy_broken: NVRTC "), HasSubstr("--gpu-architecture=sm_80"),
                    HasSubstr("saxpy_broken(3): error"), HasSubstr("expected a \";\"")));
  // Nothing was committed to the cache.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
    files += e.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(files, 0u);
}

// NVRTC reads no header folder of its own: the toolkit's is passed, so that a user's kernel on
// half types can include what the CUDA docs tell it to.
TEST(CudaBackend, AKernelCanIncludeTheToolkitsHalfTypeHeaders) {
  TempDir dir("cuda-backend-headers");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_90a", dir.path());
  KernelSource s = saxpy_source();
  s.name = "half_scale";
  s.code =
      "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
      "extern \"C\" __global__ void half_scale(__half* y, const __nv_bfloat16* x) {\n"
      "  y[threadIdx.x] = __float2half(Y_SCALE * __bfloat162float(x[threadIdx.x]));\n}\n";
  Result<Artifact> r = backend->compile(s);
  ASSERT_TRUE(r) << r.error().message;
}

TEST(CudaBackend, TranslationUnitIsDefinesThenSourceUnderItsName) {
  KernelSource s = saxpy_source();
  s.defines.push_back({"BLOCK", "128"});
  const std::string tu = CudaBackend::translation_unit(s);
  EXPECT_EQ(tu, std::string("// generated by ktune: saxpy_Y_SCALE2.0f\n"
                            "#line 1 \"<tuning parameters>\"\n"
                            "#define Y_SCALE 2.0f\n"
                            "#define BLOCK 128\n"
                            "#line 1 \"saxpy_Y_SCALE2.0f\"\n") +
                    kSaxpy);
}

TEST(CudaBackend, Fingerprints) {
  TempDir dir("cuda-backend-fp");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_90a", dir.path());
  EXPECT_THAT(backend->toolchain_fingerprint(),
              AllOf(StartsWith("nvrtc "), EndsWith(" sm_90a -std=c++17 -default-device")));
  EXPECT_EQ(backend->kind(), DeviceKind::kCuda);
  if (cuda_driver()) {
    Result<CudaDeviceInfo> info = cuda_device_info(0);
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(backend->device_fingerprint(), info->fingerprint());
  } else {
    EXPECT_EQ(backend->device_fingerprint(), "no device; arch sm_90a");
  }
}

TEST(CudaBackend, RejectsArchitecturesThatGiveNoCubin) {
  TempDir dir("cuda-backend-arch");
  KTUNE_BACKEND_OR_SKIP(probe, "sm_80", dir.path());
  for (const char* arch : {"compute_90", "90", "sm_", "sm_90x", "sm_10"}) {
    Result<CudaBackend> b = CudaBackend::create({.arch = arch}, dir.path());
    ASSERT_FALSE(b) << arch;
    EXPECT_EQ(b.error().code, ErrorCode::kInvalidArgument) << arch;
    EXPECT_THAT(b.error().message, HasSubstr(arch));
  }
}

TEST(CudaBackend, NoArchWithoutAGpuIsUnavailable) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is visible: the arch comes from it";
  TempDir dir("cuda-backend-nogpu");
  KTUNE_BACKEND_OR_SKIP(probe, "sm_80", dir.path());
  Result<CudaBackend> b = CudaBackend::create({}, dir.path());
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(b.error().message, HasSubstr("no GPU visible; pass an arch such as sm_90a"));
}

TEST(CudaBackend, LoadInTheCompilingProcessIsRefused) {
  TempDir dir("cuda-backend-load");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_80", dir.path());
  Result<Artifact> a = backend->compile(saxpy_source());
  ASSERT_TRUE(a) << a.error().message;
  Result<std::unique_ptr<Module>> m = backend->load(*a);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(m.error().message, HasSubstr("ktune-worker"));
}

TEST(CudaBackend, ConcurrentCompilesOfDifferentSources) {
  TempDir dir("cuda-backend-threads");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_90a", dir.path());
  std::vector<std::string> failures;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      Result<Artifact> a = backend->compile(saxpy_source(std::to_string(t + 5) + ".0f"));
      if (!a || a->from_cache) {
        std::lock_guard lock(mu);
        failures.push_back(a ? "unexpected cache hit" : a.error().message);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_THAT(failures, ::testing::IsEmpty());
}

// The same source from several threads at once: one NVRTC run; the others wait for it and get its
// cubin as a hit (the library candidates of a problem share one epilogue kernel).
TEST(CudaBackend, ConcurrentCompilesOfOneSourceRunNvrtcOnce) {
  TempDir dir("cuda-backend-same");
  KTUNE_BACKEND_OR_SKIP(backend, "sm_90a", dir.path());
  std::mutex mu;
  std::vector<Result<Artifact>> results;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      Result<Artifact> a = backend->compile(saxpy_source("7.0f"));
      std::lock_guard lock(mu);
      results.push_back(std::move(a));
    });
  }
  for (std::thread& t : threads) t.join();
  int compiled = 0;
  for (const Result<Artifact>& a : results) {
    ASSERT_TRUE(a.has_value()) << a.error().message;
    EXPECT_EQ(a->path, results[0]->path);
    compiled += a->from_cache ? 0 : 1;
  }
  EXPECT_EQ(compiled, 1);
}

// ---- On a GPU: load the cubin through CudaKernel, launch, read back. ----

// The primary context of device 0, current on this thread for the test's lifetime.
class GpuContext {
 public:
  static Result<std::unique_ptr<GpuContext>> open() {
    Result<const CudaDriver*> drv = cuda_driver();
    if (!drv) return std::unexpected(drv.error());
    const CudaDriver& cu = **drv;
    CUdevice dev = 0;
    KTUNE_CU(DeviceGet(&dev, 0));
    CUcontext ctx = nullptr;
    KTUNE_CU(DevicePrimaryCtxRetain(&ctx, dev));
    auto g = std::unique_ptr<GpuContext>(new GpuContext(cu, dev));
    KTUNE_CU(CtxSetCurrent(ctx));
    return g;
  }
  ~GpuContext() { (void)cu_.DevicePrimaryCtxRelease(dev_); }
  const CudaDriver& cu() const { return cu_; }

 private:
  GpuContext(const CudaDriver& cu, CUdevice dev) : cu_(cu), dev_(dev) {}
  const CudaDriver& cu_;
  CUdevice dev_;
};

struct DeviceBuffer {
  const CudaDriver& cu;
  CUdeviceptr ptr = 0;
  ~DeviceBuffer() {
    if (ptr != 0) (void)cu.MemFree(ptr);
  }
};

#define KTUNE_GPU_OR_SKIP(var)                                  \
  Result<std::unique_ptr<GpuContext>> var = GpuContext::open(); \
  if (!var && var.error().code == ErrorCode::kUnavailable) {    \
    GTEST_SKIP() << "[SKIP] no GPU: " << var.error().message;   \
  }                                                             \
  ASSERT_TRUE(var) << var.error().message

#define ASSERT_CU(call) ASSERT_EQ((call), CUDA_SUCCESS) << #call

TEST(CudaKernel, SaxpyRunsOnTheGpu) {
  KTUNE_GPU_OR_SKIP(gpu);
  const CudaDriver& cu = (*gpu)->cu();
  TempDir dir("cuda-kernel");
  Result<CudaBackend> backend = CudaBackend::create({}, dir.path());  // the GPU's own arch
  ASSERT_TRUE(backend) << backend.error().message;
  Result<Artifact> art = backend->compile(saxpy_source("2.0f"));
  ASSERT_TRUE(art) << art.error().message;
  Result<std::unique_ptr<CudaKernel>> kernel = CudaKernel::load(cu, art->path, "saxpy", 0);
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_THAT((*kernel)->describe(), AllOf(StartsWith("regs="), HasSubstr(" shared=0+0")));

  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(3 * i + 1);
  }
  DeviceBuffer dx{cu}, dy{cu};
  ASSERT_CU(cu.MemAlloc(&dx.ptr, n * sizeof(float)));
  ASSERT_CU(cu.MemAlloc(&dy.ptr, n * sizeof(float)));
  ASSERT_CU(cu.MemcpyHtoD(dx.ptr, x.data(), n * sizeof(float)));
  ASSERT_CU(cu.MemcpyHtoD(dy.ptr, y.data(), n * sizeof(float)));
  float a = 0.5f;
  int count = n;
  void* params[] = {&a, &dx.ptr, &dy.ptr, &count};
  LaunchGeometry g;
  g.block = {128, 1, 1};
  g.grid = {(n + 127) / 128, 1, 1};
  ASSERT_CU((*kernel)->launch(g, nullptr, params));
  ASSERT_CU(cu.CtxSynchronize());
  std::vector<float> out(n);
  ASSERT_CU(cu.MemcpyDtoH(out.data(), dy.ptr, n * sizeof(float)));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], 0.5f * x[i] + 2.0f * y[i]) << "at " << i;
  }

  LaunchGeometry empty = g;
  empty.grid = {0, 1, 1};
  EXPECT_EQ((*kernel)->launch(empty, nullptr, params), CUDA_ERROR_INVALID_VALUE);
  LaunchGeometry huge = g;
  huge.grid = {std::uint64_t{1} << 33, 1, 1};
  EXPECT_EQ((*kernel)->launch(huge, nullptr, params), CUDA_ERROR_INVALID_VALUE);
}

TEST(CudaKernel, OptsInToLargeDynamicSharedMemory) {
  KTUNE_GPU_OR_SKIP(gpu);
  const CudaDriver& cu = (*gpu)->cu();
  Result<CudaDeviceInfo> info = cuda_device_info(0);
  ASSERT_TRUE(info) << info.error().message;
  const std::uint32_t bytes = 64 * 1024;
  if (info->max_shared_per_block_optin < static_cast<int>(bytes)) {
    GTEST_SKIP() << "[SKIP] this GPU allows a block only " << info->max_shared_per_block_optin
                 << " bytes of shared memory";
  }
  TempDir dir("cuda-kernel-smem");
  Result<CudaBackend> backend = CudaBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  KernelSource s;
  s.name = "smem_sum";
  s.entry = "smem_sum";
  s.code = R"(extern "C" __global__ void smem_sum(int* out, int n) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < n; ++i) s += buf[i];
    *out = s;
  }
}
)";
  Result<Artifact> art = backend->compile(s);
  ASSERT_TRUE(art) << art.error().message;
  Result<std::unique_ptr<CudaKernel>> kernel = CudaKernel::load(cu, art->path, "smem_sum", bytes);
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_THAT((*kernel)->describe(), HasSubstr("shared=0+65536"));
  DeviceBuffer out{cu};
  ASSERT_CU(cu.MemAlloc(&out.ptr, sizeof(int)));
  int n = static_cast<int>(bytes / sizeof(int));
  void* params[] = {&out.ptr, &n};
  LaunchGeometry g;
  g.block = {256, 1, 1};
  g.shared_bytes = bytes;
  ASSERT_CU((*kernel)->launch(g, nullptr, params));
  ASSERT_CU(cu.CtxSynchronize());
  int sum = 0;
  ASSERT_CU(cu.MemcpyDtoH(&sum, out.ptr, sizeof(int)));
  EXPECT_EQ(sum, n * (n - 1) / 2);

  // More than any block may have: the opt-in fails at load, naming the entry.
  Result<std::unique_ptr<CudaKernel>> too_big = CudaKernel::load(
      cu, art->path, "smem_sum", static_cast<std::uint32_t>(info->max_shared_per_block_optin) + 1);
  ASSERT_FALSE(too_big);
  EXPECT_THAT(too_big.error().message,
              AllOf(HasSubstr("entry 'smem_sum'"), HasSubstr("cuFuncSetAttribute")));
}

TEST(CudaKernel, LoadErrorsNameTheCubinAndEntry) {
  KTUNE_GPU_OR_SKIP(gpu);
  const CudaDriver& cu = (*gpu)->cu();
  TempDir dir("cuda-kernel-errors");
  Result<CudaBackend> backend = CudaBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  Result<Artifact> art = backend->compile(saxpy_source());
  ASSERT_TRUE(art) << art.error().message;

  Result<std::unique_ptr<CudaKernel>> missing = CudaKernel::load(cu, art->path, "nope", 0);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message,
              AllOf(HasSubstr(art->path.string()), HasSubstr("entry 'nope'"),
                    HasSubstr("CUDA_ERROR_NOT_FOUND"), HasSubstr("extern \"C\"")));

  std::filesystem::path text = dir.path() / "not_a_cubin";
  std::ofstream(text) << "hello";
  // Not committed by a code cache: no digest recorded, so refused before it is read as a cubin.
  Result<std::unique_ptr<CudaKernel>> unrecorded = CudaKernel::load(cu, text, "saxpy", 0);
  ASSERT_FALSE(unrecorded);
  EXPECT_THAT(unrecorded.error().message, HasSubstr("no digest recorded"));
  ASSERT_TRUE(record_artifact_digest(text, "hello"));
  Result<std::unique_ptr<CudaKernel>> junk = CudaKernel::load(cu, text, "saxpy", 0);
  ASSERT_FALSE(junk);
  EXPECT_THAT(junk.error().message, HasSubstr("not a cubin"));

  // A cubin of another major architecture does not load on this GPU.
  const std::string other = backend->arch().starts_with("sm_8") ? "sm_90a" : "sm_80";
  Result<CudaBackend> other_backend = CudaBackend::create({.arch = other}, dir.path());
  ASSERT_TRUE(other_backend) << other_backend.error().message;
  Result<Artifact> other_art = other_backend->compile(saxpy_source());
  ASSERT_TRUE(other_art) << other_art.error().message;
  Result<std::unique_ptr<CudaKernel>> wrong = CudaKernel::load(cu, other_art->path, "saxpy", 0);
  ASSERT_FALSE(wrong);
  EXPECT_THAT(wrong.error().message, HasSubstr("compiled for this GPU's architecture?"));
}

}  // namespace
}  // namespace ktune::test

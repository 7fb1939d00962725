// cuBLAS and cuBLASLt choices: names, cache keys, launch specs and problem checks everywhere;
// the libraries' loading where the toolkit is installed; real GEMMs against a host reference
// where a GPU is present.
#include "ktune/choice/cublas_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "choice/cublas_gemm_runner.h"
#include "choice/cublas_library.h"
#include "core/cuda_driver.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::vector<int> kBind = {0, 1, 2, 3, 4, 5};  // C, A, B, M, N, K

// Row-major C[m,n] = A[m,k] B[k,n]; each matrix's row stride is its column count plus `pad`,
// each view starts `offset` elements into its storage.
Problem gemm_problem(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                     std::int64_t pad = 0, std::int64_t offset = 0,
                     Device device = {DeviceKind::kCuda, 0}) {
  auto matrix = [&](std::int64_t rows, std::int64_t cols) {
    TensorSpec t;
    t.dtype = dtype;
    t.device = device;
    t.sizes = {rows, cols};
    t.strides = {cols + pad, 1};
    t.offset = offset;
    return t;
  };
  auto scalar = [](const char* name, std::int64_t v) {
    return ProblemArg{KernelParam{name, ArgRole::kScalar, DType::kI32}, TensorSpec{}, v};
  };
  Problem p;
  p.op = "matmul";
  p.name = "M=" + std::to_string(m) + ",N=" + std::to_string(n) + ",K=" + std::to_string(k);
  p.args.push_back({KernelParam{"C", ArgRole::kOut, dtype}, matrix(m, n), std::int64_t{0}});
  p.args.push_back({KernelParam{"A", ArgRole::kIn, dtype}, matrix(m, k), std::int64_t{0}});
  p.args.push_back({KernelParam{"B", ArgRole::kIn, dtype}, matrix(k, n), std::int64_t{0}});
  p.args.push_back(scalar("M", m));
  p.args.push_back(scalar("N", n));
  p.args.push_back(scalar("K", k));
  return p;
}

std::vector<ChoicePtr> all_choices(const std::vector<int>& bind, int lt_count) {
  std::vector<ChoicePtr> out = make_cublaslt_gemm_choices(bind, lt_count);
  out.insert(out.begin(), make_cublas_gemm_choice(bind));
  return out;
}

TEST(CublasChoice, NamesInfosAndKinds) {
  std::vector<ChoicePtr> c = all_choices(kBind, 3);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0]->name(), "cublas_gemm");
  EXPECT_EQ(c[0]->info(), "cublasGemmEx");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c[i + 1]->name(), "cublaslt_algo" + std::to_string(i));
    EXPECT_EQ(c[i + 1]->info(), "cublasLt heuristic #" + std::to_string(i));
  }
  for (const ChoicePtr& choice : c) {
    EXPECT_EQ(choice->kind(), Choice::Kind::kExtern);
    EXPECT_EQ(choice->artifact(), nullptr);
  }
  EXPECT_TRUE(make_cublaslt_gemm_choices(kBind, 0).empty());
}

TEST(CublasChoice, HashKeysDifferByLibraryAlgoAndBindAndAreStable) {
  std::vector<ChoicePtr> a = all_choices(kBind, 3);
  std::vector<ChoicePtr> again = all_choices(kBind, 3);
  std::vector<ChoicePtr> rebound = all_choices({0, 2, 1, 3, 4, 5}, 3);
  std::set<std::string> keys;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->hash_key(), again[i]->hash_key()) << a[i]->name();
    keys.insert(a[i]->hash_key());
    keys.insert(rebound[i]->hash_key());
  }
  EXPECT_EQ(keys.size(), 2 * a.size());
}

TEST(CublasChoice, LaunchSpecsNameTheLibraryAlgoAndBind) {
  Problem p = gemm_problem(DType::kBF16, 64, 32, 16);
  std::vector<ChoicePtr> c = all_choices(kBind, 2);
  auto blas = c[0]->launch_spec(p);
  ASSERT_TRUE(blas) << blas.error().message;
  EXPECT_EQ(blas->kind, LaunchKind::kCudaLibrary);
  EXPECT_EQ(blas->library, "cublas");
  EXPECT_EQ(blas->algo, -1);
  EXPECT_EQ(blas->bind, kBind);
  auto lt = c[2]->launch_spec(p);
  ASSERT_TRUE(lt) << lt.error().message;
  EXPECT_EQ(lt->kind, LaunchKind::kCudaLibrary);
  EXPECT_EQ(lt->library, "cublaslt");
  EXPECT_EQ(lt->algo, 1);
  EXPECT_EQ(lt->bind, kBind);
}

TEST(CublasChoice, SupportsCudaGemmsOfEachDtype) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    Problem p = gemm_problem(dtype, 67, 45, 129);
    for (const ChoicePtr& c : all_choices(kBind, 2)) {
      Status s = c->supports(p);
      EXPECT_TRUE(s) << c->name() << " " << dtype_name(dtype) << ": " << s.error().message;
    }
  }
}

// A backend that nothing may use: library calls neither compile nor load through one.
class UnusedBackend final : public Backend {
 public:
  DeviceKind kind() const override { return DeviceKind::kCuda; }
  std::string device_fingerprint() const override { return "none"; }
  std::string toolchain_fingerprint() const override { return "none"; }
  Result<Artifact> compile(const KernelSource&) const override {
    ADD_FAILURE() << "compile called";
    return make_error(ErrorCode::kInternal, "unused");
  }
  Result<std::unique_ptr<Module>> load(const Artifact&) const override {
    ADD_FAILURE() << "load called";
    return make_error(ErrorCode::kInternal, "unused");
  }
};

TEST(CublasChoice, CompilesNothingAndRunsOnlyInTheWorker) {
  Problem p = gemm_problem(DType::kF16, 8, 8, 8);
  UnusedBackend backend;
  for (const ChoicePtr& c : all_choices(kBind, 1)) {
    EXPECT_TRUE(c->compile(backend));
    auto fn = c->load(backend, p);
    ASSERT_FALSE(fn);
    EXPECT_THAT(fn.error().message, HasSubstr("runs in the CUDA worker"));
  }
}

// The message of supports() for `p`, which must fail, for both libraries alike.
std::string rejection(const Problem& p, const std::vector<int>& bind = kBind) {
  std::vector<ChoicePtr> c = all_choices(bind, 1);
  Status blas = c[0]->supports(p);
  Status lt = c[1]->supports(p);
  EXPECT_FALSE(blas);
  EXPECT_FALSE(lt);
  if (blas || lt) return "";
  EXPECT_EQ(blas.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(c[1]->launch_spec(p));  // no launch spec for a problem it cannot run
  EXPECT_THAT(blas.error().message, StartsWith("cublas_gemm: "));
  EXPECT_THAT(lt.error().message, StartsWith("cublaslt_algo0: "));
  return blas.error().message;
}

TEST(CublasChoice, RejectsWhatItCannotRun) {
  EXPECT_THAT(rejection(gemm_problem(DType::kF32, 8, 8, 8, 0, 0, Device{})),
              HasSubstr("'C' (c) is on cpu; expected a CUDA device"));
  EXPECT_THAT(rejection(gemm_problem(DType::kF64, 8, 8, 8)),
              HasSubstr("'C' (c) must be f32, f16 or bf16; got f64"));
  Problem mixed = gemm_problem(DType::kF16, 8, 8, 8);
  mixed.args[2].param.dtype = DType::kBF16;
  mixed.args[2].tensor.dtype = DType::kBF16;
  EXPECT_THAT(rejection(mixed), HasSubstr("'B' (b) must have c's dtype f16; got bf16"));
  Problem shape = gemm_problem(DType::kF16, 8, 8, 8);
  shape.args[1].tensor.sizes = {8, 9};
  EXPECT_THAT(rejection(shape), HasSubstr("'A' (a) has sizes [8,9]; expected [8,8]"));
  Problem transposed = gemm_problem(DType::kF16, 8, 4, 8);
  transposed.args[2].tensor.strides = {1, 8};
  EXPECT_THAT(rejection(transposed), HasSubstr("unit inner stride"));
  Problem three_d = gemm_problem(DType::kF16, 8, 8, 8);
  three_d.args[0].tensor.sizes = {1, 8, 8};
  three_d.args[0].tensor.strides = {64, 8, 1};
  EXPECT_THAT(rejection(three_d), HasSubstr("'C' (c) must be 2-D"));
  Problem input_c = gemm_problem(DType::kF16, 8, 8, 8);
  input_c.args[0].param.role = ArgRole::kIn;
  EXPECT_THAT(rejection(input_c), HasSubstr("'C' (c) must be an out or inout buffer; got in"));
  EXPECT_THAT(rejection(gemm_problem(DType::kF16, 0, 8, 8)),
              HasSubstr("'M' (m) must hold an integer in [1, 2147483647]"));
  EXPECT_THAT(
      rejection(gemm_problem(DType::kF16, 8, 8, 8), {0, 1, 2, 3, 4}),
      HasSubstr("bind must hold 6 or 7 argument indices {c, a, b, m, n, k[, bias]}; got 5"));
  EXPECT_THAT(rejection(gemm_problem(DType::kF16, 8, 8, 8), {0, 1, 2, 3, 4, 6}),
              HasSubstr("bind index 6 (k) is outside the problem's 6 arguments"));
  EXPECT_THAT(rejection(gemm_problem(DType::kF16, 8, 8, 8), {0, 1, 2, 1, 4, 5}),
              HasSubstr("'A' (m) must be an i32 or i64 scalar; got in f16"));
}

TEST(CublasChoice, PlanKeepsRowStridesAndAlignments) {
  // Padded rows and views 3 elements into their storage: 6 bytes for f16.
  auto plan = make_cublas_gemm_plan(gemm_problem(DType::kF16, 16, 24, 40, 5, 3), kBind, "t");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->m, 16);
  EXPECT_EQ(plan->n, 24);
  EXPECT_EQ(plan->k, 40);
  EXPECT_EQ(plan->ldc, 29);
  EXPECT_EQ(plan->lda, 45);
  EXPECT_EQ(plan->ldb, 29);
  EXPECT_EQ(plan->align_c, 2u);
  auto aligned = make_cublas_gemm_plan(gemm_problem(DType::kF32, 4, 4, 4, 0, 8), kBind, "t");
  ASSERT_TRUE(aligned) << aligned.error().message;
  EXPECT_EQ(aligned->align_a, 16u);  // 32 bytes in: capped at 16
  // A one-row matrix's row stride is irrelevant: the column count stands in.
  Problem row = gemm_problem(DType::kF32, 1, 8, 4);
  row.args[0].tensor.strides = {0, 1};
  auto one_row = make_cublas_gemm_plan(row, kBind, "t");
  ASSERT_TRUE(one_row) << one_row.error().message;
  EXPECT_EQ(one_row->ldc, 8);
}

TEST(CublasLibrary, OpensAndReportsItsVersion) {
  auto lt = cublaslt_api();
  if (!lt) GTEST_SKIP() << "[SKIP] no cuBLASLt here: " << lt.error().message;
  auto blas = cublas_api();
  ASSERT_TRUE(blas) << blas.error().message;
  EXPECT_THAT((*lt)->path, HasSubstr("libcublasLt.so.1"));
  EXPECT_THAT((*blas)->path, HasSubstr("libcublas.so.1"));
  const std::string major = std::to_string((*lt)->major) + ".";
  EXPECT_THAT((*lt)->version, StartsWith(major));
  EXPECT_THAT((*blas)->version, StartsWith(major));
  // Cache keys name the loaded files by their real names, found without loading them.
  auto real_name = [](const std::string& path) {
    return std::filesystem::canonical(path).filename().string();
  };
  EXPECT_THAT(cublas_version_text(), StartsWith("cuBLAS " + real_name((*blas)->path) + " "));
  EXPECT_THAT(cublaslt_version_text(), StartsWith("cuBLASLt " + real_name((*lt)->path) + " "));
  Status s = cublas_status(**blas, CUBLAS_STATUS_NOT_SUPPORTED, "GemmEx(handle, ...)");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, StartsWith("cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED ("));
  Status lts = cublaslt_status(**lt, CUBLAS_STATUS_INVALID_VALUE, "Matmul(handle, ...)");
  ASSERT_FALSE(lts);
  EXPECT_THAT(lts.error().message, StartsWith("cublasLtMatmul: CUBLAS_STATUS_INVALID_VALUE ("));
  EXPECT_TRUE(cublas_status(**blas, CUBLAS_STATUS_SUCCESS, "Create"));
}

TEST(CublasRunner, RejectsABadLaunchSpecBeforeTouchingTheGpu) {
  Problem p = gemm_problem(DType::kBF16, 8, 8, 8);
  LaunchSpec spec;
  spec.kind = LaunchKind::kCudaLibrary;
  spec.library = "cudnn";
  spec.bind = kBind;
  auto r = CublasGemmRunner::create(spec, p, nullptr);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("library cublas or cublaslt; got cuda_library 'cudnn'"));
  spec.library = "cublaslt";
  spec.algo = -1;
  r = CublasGemmRunner::create(spec, p, nullptr);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("algo must be >= 0"));
  spec.library = "cublas";
  spec.bind = {0, 1, 2};
  r = CublasGemmRunner::create(spec, p, nullptr);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("bind must hold 6 or 7 argument indices"));
}

// The device, its primary context (current while the object lives), a stream and allocations.
struct Gpu {
  const CudaDriver* cu = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  std::vector<CUdeviceptr> allocations;

  Status open() {
    auto drv = cuda_driver();
    if (!drv) return std::unexpected(drv.error());
    cu = *drv;
    const CudaDriver& c = *cu;
    if (Status s = cuda_status(c, c.DeviceGet(&dev, 0), "DeviceGet"); !s) return s;
    if (Status s = cuda_status(c, c.DevicePrimaryCtxRetain(&ctx, dev), "Retain"); !s) return s;
    if (Status s = cuda_status(c, c.CtxSetCurrent(ctx), "CtxSetCurrent"); !s) return s;
    return cuda_status(c, c.StreamCreate(&stream, CU_STREAM_NON_BLOCKING), "StreamCreate");
  }
  ~Gpu() {
    if (!cu) return;
    for (CUdeviceptr p : allocations) (void)cu->MemFree(p);
    if (stream) (void)cu->StreamDestroy(stream);
    if (ctx) (void)cu->DevicePrimaryCtxRelease(dev);
  }
};

#define GPU_OR_SKIP(gpu)                                        \
  Gpu gpu;                                                      \
  if (Status gpu_s = gpu.open(); !gpu_s) {                      \
    GTEST_SKIP() << "[SKIP] no GPU: " << gpu_s.error().message; \
  }

// Runs `library` (algo for cublaslt) on random data and compares with a host reference.
void check_gemm(Gpu& gpu, const std::string& library, int algo, DType dtype, std::int64_t m,
                std::int64_t n, std::int64_t k, std::int64_t pad = 0, std::int64_t offset = 0) {
  SCOPED_TRACE(library + " algo " + std::to_string(algo) + " " + std::string(dtype_name(dtype)) +
               " m,n,k=" + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string(k) +
               " pad " + std::to_string(pad) + " offset " + std::to_string(offset));
  const CudaDriver& cu = *gpu.cu;
  Problem p = gemm_problem(dtype, m, n, k, pad, offset);
  const std::size_t esize = dtype_size(dtype);
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<std::byte>> host(3);
  std::vector<CUdeviceptr> args(p.args.size(), 0);
  for (std::size_t i = 0; i < 3; ++i) {
    const TensorSpec& t = p.args[i].tensor;
    host[i].assign(t.storage_bytes(), std::byte{0xff});  // C: NaN everywhere until written
    if (i > 0) {
      for (std::int64_t e = 0; e < t.numel(); ++e) {
        store_element(dtype, host[i].data() + t.storage_index(e) * esize, dist(rng));
      }
    }
    CUdeviceptr base = 0;
    ASSERT_EQ(cu.MemAlloc(&base, host[i].size()), CUDA_SUCCESS);
    gpu.allocations.push_back(base);
    ASSERT_EQ(cu.MemcpyHtoD(base, host[i].data(), host[i].size()), CUDA_SUCCESS);
    args[i] = base + static_cast<CUdeviceptr>(t.offset) * esize;
  }
  LaunchSpec spec;
  spec.kind = LaunchKind::kCudaLibrary;
  spec.library = library;
  spec.algo = algo;
  spec.bind = kBind;
  auto runner = CublasGemmRunner::create(spec, p, gpu.stream);
  ASSERT_TRUE(runner) << runner.error().message;
  EXPECT_FALSE((*runner)->info().empty());
  std::printf("%s\n", (*runner)->info().c_str());
  Status s = (*runner)->run(args);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(cu.StreamSynchronize(gpu.stream), CUDA_SUCCESS);
  std::vector<std::byte> out(host[0].size());
  ASSERT_EQ(cu.MemcpyDtoH(out.data(), gpu.allocations[gpu.allocations.size() - 3], out.size()),
            CUDA_SUCCESS);
  const double rel = dtype == DType::kF32 ? 1e-5 : dtype == DType::kF16 ? 2e-3 : 1e-2;
  const TensorSpec& tc = p.args[0].tensor;
  const TensorSpec& ta = p.args[1].tensor;
  const TensorSpec& tb = p.args[2].tensor;
  int bad = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        ref += load_element(dtype, host[1].data() + ta.storage_index(i * k + kk) * esize) *
               load_element(dtype, host[2].data() + tb.storage_index(kk * n + j) * esize);
      }
      const double got = load_element(dtype, out.data() + tc.storage_index(i * n + j) * esize);
      if (!(std::abs(got - ref) <= rel * (std::abs(ref) + 1)) && ++bad <= 5) {
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << got << "; expected " << ref;
      }
    }
  }
  EXPECT_EQ(bad, 0);
  // C's storage outside the view (before it, padding between rows) stays untouched.
  std::vector<bool> in_view(static_cast<std::size_t>(tc.storage_elements()), false);
  for (std::int64_t e = 0; e < tc.numel(); ++e) in_view[tc.storage_index(e)] = true;
  for (std::size_t e = 0; e < in_view.size(); ++e) {
    if (in_view[e]) continue;
    for (std::size_t byte = 0; byte < esize; ++byte) {
      ASSERT_EQ(out[e * esize + byte], std::byte{0xff}) << "C's storage element " << e;
    }
  }
}

TEST(CublasGpu, CublasGemmExMatchesTheHostReference) {
  GPU_OR_SKIP(gpu);
  check_gemm(gpu, "cublas", -1, DType::kBF16, 67, 45, 129);
  check_gemm(gpu, "cublas", -1, DType::kF16, 128, 256, 64);
  check_gemm(gpu, "cublas", -1, DType::kF32, 33, 17, 65);
  check_gemm(gpu, "cublas", -1, DType::kBF16, 64, 96, 32, 8, 16);  // padded rows, offset views
  check_gemm(gpu, "cublas", -1, DType::kF32, 1, 5, 3);
  check_gemm(gpu, "cublas", -1, DType::kBF16, 64, 64, 64, 0, 1);  // 2-byte aligned views
}

TEST(CublasGpu, CublasLtAlgosMatchTheHostReference) {
  GPU_OR_SKIP(gpu);
  check_gemm(gpu, "cublaslt", 0, DType::kBF16, 128, 256, 64);
  check_gemm(gpu, "cublaslt", 1, DType::kBF16, 128, 256, 64);
  check_gemm(gpu, "cublaslt", 0, DType::kBF16, 67, 45, 129);
  check_gemm(gpu, "cublaslt", 0, DType::kF16, 64, 96, 32, 8, 16);
  check_gemm(gpu, "cublaslt", 0, DType::kF32, 33, 17, 65);
  // Views 2 bytes into their storage: the heuristic is told, and picks algorithms that cope.
  check_gemm(gpu, "cublaslt", 0, DType::kBF16, 64, 64, 64, 0, 1);
}

TEST(CublasGpu, AnAlgoPastTheHeuristicsListIsRejected) {
  GPU_OR_SKIP(gpu);
  LaunchSpec spec;
  spec.kind = LaunchKind::kCudaLibrary;
  spec.library = "cublaslt";
  spec.algo = 100000;
  spec.bind = kBind;
  auto r = CublasGemmRunner::create(spec, gemm_problem(DType::kBF16, 64, 64, 64), gpu.stream);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message, HasSubstr("cublaslt_algo100000: the heuristic returned only"));
}

TEST(CublasGpu, RunChecksItsArguments) {
  GPU_OR_SKIP(gpu);
  LaunchSpec spec;
  spec.kind = LaunchKind::kCudaLibrary;
  spec.library = "cublas";
  spec.bind = kBind;
  auto r = CublasGemmRunner::create(spec, gemm_problem(DType::kBF16, 64, 64, 64), gpu.stream);
  ASSERT_TRUE(r) << r.error().message;
  Status s = (*r)->run({0, 0, 0});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("run with 3 arguments; the problem has 6"));
  s = (*r)->run({0, 0, 0, 0, 0, 0});
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("a null device address"));
}

}  // namespace
}  // namespace ktune::test

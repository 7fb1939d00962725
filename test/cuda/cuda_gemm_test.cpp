// The built-in CUDA GEMM: its problem, search spaces, launch and supports hooks everywhere, and
// NVRTC compilation of every bf16 config (a sample of the others) where the toolkit is
// installed. Results on a GPU are checked by the GPU suite.
#include "ktune/ops/cuda_gemm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "core/thread_pool.h"
#include "ktune/backend/cuda_backend.h"
#include "support/all_choices.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<KernelTemplate> find_template(DType dtype, const std::string& name) {
  for (std::shared_ptr<KernelTemplate>& t : cuda_gemm_templates(dtype)) {
    if (t->desc().name == name) return t;
  }
  return nullptr;
}

std::int64_t param(const Config& c, std::string_view name) {
  return std::get<std::int64_t>(*c.find(name));
}

// Compiles `choices` for `arch` on 2 threads; returns "name: message" for each failure.
std::vector<std::string> compile_all(const std::string& arch, std::vector<ChoicePtr>& choices,
                                     const Problem& problem) {
  TempDir cache("cuda-gemm");
  Result<CudaBackend> backend = CudaBackend::create({.arch = arch}, cache.path());
  if (!backend) return {"backend: " + backend.error().message};
  std::vector<std::string> failures;
  std::mutex mu;
  {
    ThreadPool pool(2);
    for (ChoicePtr& c : choices) {
      pool.submit([&, choice = c.get()] {
        std::string failure;
        if (Status s = choice->compile(*backend); !s) {
          failure = s.error().message;
        } else if (Result<LaunchSpec> spec = choice->launch_spec(problem); !spec) {
          failure = spec.error().message;
        } else if (spec->kind != LaunchKind::kCudaCubin || spec->entry != "gemm") {
          failure = "unexpected launch spec";
        }
        if (!failure.empty()) {
          std::lock_guard lock(mu);
          failures.push_back(choice->name() + ": " + failure);
        }
      });
    }
    pool.wait_idle();
  }
  return failures;
}

// Every `stride`-th choice of the template.
std::vector<ChoicePtr> sample(const KernelTemplate& t, std::size_t stride) {
  std::vector<ChoicePtr> all = all_choices(&t);
  std::vector<ChoicePtr> out;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(std::move(all[i]));
  return out;
}

bool nvrtc_missing() {
  TempDir cache("cuda-gemm-probe");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_90a"}, cache.path());
  return !backend && backend.error().code == ErrorCode::kUnavailable;
}

TEST(CudaGemm, ProblemIsContiguousRowMajorOnTheGpu) {
  const Problem p = cuda_gemm_problem(32, 48, 64, DType::kBF16, 1);
  EXPECT_EQ(p.op, "gemm");
  EXPECT_EQ(p.name, "M=32,N=48,K=64,bf16");
  ASSERT_EQ(p.args.size(), 6u);
  EXPECT_EQ(p.args[0].tensor.key(), "bf16[32,48]{48,1}+0@cuda:1");
  EXPECT_EQ(p.args[1].tensor.key(), "bf16[32,64]{64,1}+0@cuda:1");
  EXPECT_EQ(p.args[2].tensor.key(), "bf16[64,48]{48,1}+0@cuda:1");
  EXPECT_EQ(p.args[0].param.role, ArgRole::kOut);
  EXPECT_EQ(p.args[5].param.name, "K");
  EXPECT_EQ(std::get<std::int64_t>(p.args[5].scalar), 64);
}

TEST(CudaGemm, TemplatesPerDtype) {
  auto names = [](DType d) {
    std::vector<std::string> out;
    for (auto& t : cuda_gemm_templates(d)) out.push_back(t->desc().name);
    return out;
  };
  EXPECT_EQ(names(DType::kBF16),
            (std::vector<std::string>{"cuda_gemm_mma_bf16", "cuda_gemm_simt_bf16"}));
  EXPECT_EQ(names(DType::kF16),
            (std::vector<std::string>{"cuda_gemm_mma_f16", "cuda_gemm_simt_f16"}));
  EXPECT_EQ(names(DType::kF32), (std::vector<std::string>{"cuda_gemm_simt_f32"}));
  EXPECT_TRUE(names(DType::kF64).empty());
  EXPECT_EQ(cuda_gemm_candidates(DType::kI32).reference, nullptr);
}

TEST(CudaGemm, SpacesAreModerateAndWithinTheHardwareLimits) {
  auto mma = find_template(DType::kBF16, "cuda_gemm_mma_bf16");
  ASSERT_NE(mma, nullptr);
  const std::vector<Config> configs = all_configs(mma->space());
  EXPECT_GE(configs.size(), 30u);
  EXPECT_LE(configs.size(), 60u);
  for (const Config& c : configs) {
    const std::int64_t threads = (param(c, "BLOCK_M") / param(c, "WARP_M")) *
                                 (param(c, "BLOCK_N") / param(c, "WARP_N")) * 32;
    EXPECT_GE(threads, 128) << c.str();
    EXPECT_LE(threads, 256) << c.str();
    EXPECT_LE(param(c, "WARP_M") * param(c, "WARP_N"), 64 * 64) << c.str();
    const std::int64_t smem =
        param(c, "STAGES") * (param(c, "BLOCK_M") + param(c, "BLOCK_N")) * param(c, "BLOCK_K") * 2;
    EXPECT_LE(smem, kCudaGemmMaxSharedBytes) << c.str();
  }
  auto simt = find_template(DType::kF32, "cuda_gemm_simt_f32");
  ASSERT_NE(simt, nullptr);
  EXPECT_GE(all_configs(simt->space()).size(), 4u);
  EXPECT_LE(all_configs(simt->space()).size(), 8u);
}

TEST(CudaGemm, MmaLaunchCoversTheMatrix) {
  auto mma = find_template(DType::kBF16, "cuda_gemm_mma_bf16");
  ASSERT_NE(mma, nullptr);
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{1000, 1000, 1000},
                         {4096, 4096, 4096},
                         {1, 8, 8},
                         {0, 64, 64}}) {
    const Problem p = cuda_gemm_problem(m, n, k, DType::kBF16);
    for (const Config& c : all_configs(mma->space())) {
      Result<LaunchGeometry> g = mma->desc().launch(c, p);
      ASSERT_TRUE(g.has_value()) << g.error().message;
      const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
      const std::int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      EXPECT_EQ(g->grid[0], static_cast<std::uint64_t>(std::max<std::int64_t>(tiles, 1)))
          << c.str();
      EXPECT_EQ(g->grid[1], 1u);
      EXPECT_EQ(g->block[0], static_cast<std::uint64_t>((bm / param(c, "WARP_M")) *
                                                        (bn / param(c, "WARP_N")) * 32));
      EXPECT_EQ(g->shared_bytes, static_cast<std::uint32_t>(param(c, "STAGES") * (bm + bn) *
                                                            param(c, "BLOCK_K") * 2));
    }
  }
}

TEST(CudaGemm, SimtLaunchCoversTheMatrix) {
  auto simt = find_template(DType::kF32, "cuda_gemm_simt_f32");
  ASSERT_NE(simt, nullptr);
  const Problem p = cuda_gemm_problem(1000, 999, 7, DType::kF32);
  for (const Config& c : all_configs(simt->space())) {
    Result<LaunchGeometry> g = simt->desc().launch(c, p);
    ASSERT_TRUE(g.has_value()) << g.error().message;
    const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
    EXPECT_GE(static_cast<std::int64_t>(g->grid[0]) * bn, 999) << c.str();
    EXPECT_GE(static_cast<std::int64_t>(g->grid[1]) * bm, 1000) << c.str();
    EXPECT_EQ(g->block[0], static_cast<std::uint64_t>((bm / param(c, "THREAD_M")) *
                                                      (bn / param(c, "THREAD_N"))));
    EXPECT_EQ(g->shared_bytes, 0u);
  }
}

TEST(CudaGemm, MmaSupportsOnlyAlignedRows) {
  auto mma = find_template(DType::kBF16, "cuda_gemm_mma_bf16");
  ASSERT_NE(mma, nullptr);
  std::vector<ChoicePtr> choices = all_choices(mma);
  ASSERT_FALSE(choices.empty());
  const Choice& c = *choices.front();
  EXPECT_TRUE(c.supports(cuda_gemm_problem(1000, 1000, 1000, DType::kBF16)).has_value());
  EXPECT_TRUE(c.supports(cuda_gemm_problem(1, 8, 8, DType::kBF16)).has_value());
  EXPECT_TRUE(c.supports(cuda_gemm_problem(999, 8, 8, DType::kBF16)).has_value());  // any M

  Status k_odd = c.supports(cuda_gemm_problem(64, 64, 1001, DType::kBF16));
  ASSERT_FALSE(k_odd.has_value());
  EXPECT_THAT(k_odd.error().message, HasSubstr("K=1001"));
  Status n_odd = c.supports(cuda_gemm_problem(64, 1004, 64, DType::kBF16));
  ASSERT_FALSE(n_odd.has_value());
  EXPECT_THAT(n_odd.error().message, HasSubstr("N=1004"));

  Problem offset = cuda_gemm_problem(64, 64, 64, DType::kBF16);
  offset.args[1].tensor.offset = 4;  // 8 bytes: cp.async needs 16
  Status misaligned = c.supports(offset);
  ASSERT_FALSE(misaligned.has_value());
  EXPECT_THAT(misaligned.error().message, HasSubstr("offset"));

  Problem strided = cuda_gemm_problem(64, 64, 64, DType::kBF16);
  strided.args[2].tensor.strides = {72, 1};
  EXPECT_FALSE(c.supports(strided).has_value());

  EXPECT_FALSE(c.supports(cuda_gemm_problem(64, 64, 64, DType::kF16)).has_value());  // dtype
}

TEST(CudaGemm, SimtSupportsAnyShape) {
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32}) {
    auto simt = find_template(d, std::string("cuda_gemm_simt_") + std::string(dtype_name(d)));
    ASSERT_NE(simt, nullptr);
    for (const ChoicePtr& c : all_choices(simt)) {
      for (auto [m, n, k] : {std::array<std::int64_t, 3>{999, 1001, 1003}, {1, 1, 1}, {5, 3, 0}}) {
        Status s = c->supports(cuda_gemm_problem(m, n, k, d));
        EXPECT_TRUE(s.has_value()) << c->name() << ": " << s.error().message;
      }
    }
  }
}

TEST(CudaGemm, CandidatesAreTemplatesThenCublasWithCublasAsReference) {
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 3);
  ASSERT_NE(set.reference, nullptr);
  EXPECT_EQ(set.reference->name(), "cublas_gemm_fp32_reduction");
  std::size_t templates = 0;
  for (auto& t : cuda_gemm_templates(DType::kBF16)) templates += all_configs(t->space()).size();
  ASSERT_EQ(set.candidates.size(), templates + 1 + 3);
  EXPECT_EQ(set.candidates[templates]->name(), "cublas_gemm");
  EXPECT_EQ(set.candidates[templates + 1]->name(), "cublaslt_algo0");
  EXPECT_EQ(set.candidates.back()->name(), "cublaslt_algo2");
  for (std::size_t i = 0; i < templates; ++i) {
    EXPECT_EQ(set.candidates[i]->kind(), Choice::Kind::kTemplate);
  }
  EXPECT_NE(set.candidates[0]->name().find("cuda_gemm_mma_bf16_BLOCK_M"), std::string::npos);
}

TEST(CudaGemm, TheSimtTemplateIsLeftOutWhereTheTensorCoresServe) {
  auto count_simt = [](const CudaGemmCandidates& set) {
    return std::count_if(set.candidates.begin(), set.candidates.end(), [](const ChoicePtr& c) {
      return c->name().find("_simt_") != std::string::npos;
    });
  };
  const Problem served = cuda_gemm_problem(256, 256, 256, DType::kBF16);
  const Problem ragged = cuda_gemm_problem(255, 255, 255, DType::kBF16);  // N % 8, K % 8
  const Problem f32 = cuda_gemm_problem(256, 256, 256, DType::kF32);
  EXPECT_EQ(count_simt(cuda_gemm_candidates(DType::kBF16, 2, &served)), 0);
  EXPECT_GT(count_simt(cuda_gemm_candidates(DType::kBF16, 2, &served, true)), 0);
  EXPECT_GT(count_simt(cuda_gemm_candidates(DType::kBF16, 2, &ragged)), 0);
  EXPECT_GT(count_simt(cuda_gemm_candidates(DType::kF32, 2, &f32)), 0);
}

// Every bf16 config of both templates for the H100; the bulk of this file's time (about 0.5 s
// of NVRTC per MMA config).
TEST(CudaGemm, CompilesEveryBf16ConfigForSm90a) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  std::vector<ChoicePtr> choices;
  for (auto& t : cuda_gemm_templates(DType::kBF16)) {
    for (ChoicePtr& c : all_choices(t)) choices.push_back(std::move(c));
  }
  const std::vector<std::string> failures =
      compile_all("sm_90a", choices, cuda_gemm_problem(1000, 1000, 1000, DType::kBF16));
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

// A sample of the rest: f16 and f32 for the H100, every dtype for the A100.
TEST(CudaGemm, CompilesASampleOfTheOtherConfigs) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  auto take = [](std::vector<ChoicePtr>& into, std::vector<ChoicePtr> from) {
    for (ChoicePtr& c : from) into.push_back(std::move(c));
  };
  std::vector<ChoicePtr> f16;
  take(f16, sample(*find_template(DType::kF16, "cuda_gemm_mma_f16"), 8));
  take(f16, sample(*find_template(DType::kF16, "cuda_gemm_simt_f16"), 4));
  std::vector<ChoicePtr> f32 = all_choices(find_template(DType::kF32, "cuda_gemm_simt_f32"));
  std::vector<ChoicePtr> sm80;
  take(sm80, sample(*find_template(DType::kBF16, "cuda_gemm_mma_bf16"), 9));
  take(sm80, sample(*find_template(DType::kF16, "cuda_gemm_mma_f16"), 17));
  take(sm80, sample(*find_template(DType::kF32, "cuda_gemm_simt_f32"), 4));

  std::vector<std::string> failures =
      compile_all("sm_90a", f16, cuda_gemm_problem(256, 256, 256, DType::kF16));
  for (std::string& f : compile_all("sm_90a", f32, cuda_gemm_problem(256, 256, 256, DType::kF32))) {
    failures.push_back(std::move(f));
  }
  // Each choice checks its launch spec on a problem of its own dtype: sm_80 mixes dtypes, so
  // only compilation is checked there.
  TempDir cache("cuda-gemm-sm80");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_80"}, cache.path());
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  EXPECT_GE(sm80.size(), 6u);
  std::mutex mu;
  {
    ThreadPool pool(2);
    for (ChoicePtr& c : sm80) {
      pool.submit([&, choice = c.get()] {
        if (Status s = choice->compile(*backend); !s) {
          std::lock_guard lock(mu);
          failures.push_back(choice->name() + ": " + s.error().message);
        }
      });
    }
    pool.wait_idle();
  }
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

}  // namespace
}  // namespace ktune::test

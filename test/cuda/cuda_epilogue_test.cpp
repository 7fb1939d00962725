// Fused epilogues on CUDA: the candidate set of a fused problem (templates with the epilogue in
// their store, library GEMMs followed by the separate epilogue kernel, cuBLASLt's own fused
// epilogue), NVRTC compilation of every epilogue step into both templates and the separate
// kernel for sm_80 and sm_90a, and on a GPU every fused candidate verified against the unfused
// reference, with a template that skips a step caught.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "core/thread_pool.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/choice/cublas_choice.h"
#include "ktune/ops/cuda_gemm.h"
#include "ktune/select/selector.h"
#include "support/all_choices.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

Epilogue parse(const char* text) {
  Result<Epilogue> e = Epilogue::parse(text);
  KTUNE_CHECK(e.has_value());
  return *e;
}

// Every step at least once, in three epilogues.
const char* const kEpilogues[] = {"bias,relu", "rowbias,scale=0.5,gelu,residual", "silu"};

TEST(CudaEpilogue, AFusedProblemCarriesTheOperandsAfterK) {
  const Problem p = cuda_gemm_problem(64, 128, 32, DType::kBF16, 0, parse("bias,relu,residual"));
  EXPECT_EQ(p.name, "M=64,N=128,K=32,bf16,bias+relu+residual");
  ASSERT_EQ(p.args.size(), 8u);
  EXPECT_EQ(p.args[6].param.name, "bias");
  EXPECT_EQ(p.args[6].tensor.sizes, (std::vector<std::int64_t>{128}));
  EXPECT_EQ(p.args[7].param.name, "residual");
  EXPECT_EQ(p.args[7].tensor.sizes, (std::vector<std::int64_t>{64, 128}));
  EXPECT_NE(p.key(), cuda_gemm_problem(64, 128, 32, DType::kBF16, 0, parse("bias")).key());
}

TEST(CudaEpilogue, CandidatesAreFusedTemplatesUnfusedPairsAndCublasLtsOwnEpilogue) {
  const Epilogue e = parse("bias,relu");
  const Problem p = cuda_gemm_problem(256, 256, 256, DType::kBF16, 0, e);
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 2, &p, false, e);
  ASSERT_NE(set.reference, nullptr);
  EXPECT_EQ(set.reference->name(), "cublas_gemm_fp32_reduction+epilogue");
  std::vector<std::string> names;
  for (const ChoicePtr& c : set.candidates) names.push_back(c->name());
  EXPECT_THAT(names, ::testing::Contains(HasSubstr("cuda_gemm_mma_bf16_bias_relu_BLOCK_M")));
  EXPECT_THAT(names, ::testing::IsSupersetOf({"cublas_gemm+epilogue", "cublaslt_algo0+epilogue",
                                              "cublaslt_algo1+epilogue", "cublaslt_bias_relu_algo0",
                                              "cublaslt_bias_relu_algo1"}));
  for (const ChoicePtr& c : set.candidates) {
    EXPECT_TRUE(c->supports(p).has_value()) << c->name();
    if (c->name() == "cublaslt_bias_relu_algo0") {
      Result<LaunchSpec> spec = c->launch_spec(p);
      ASSERT_TRUE(spec.has_value());
      EXPECT_EQ(spec->bind, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
      EXPECT_EQ(spec->library_epilogue, cublaslt_epilogue_of(e));
      EXPECT_TRUE(spec->then.empty());
    }
  }
  // GELU has no exact cuBLASLt equivalent; rowbias and residual no cuBLASLt operand.
  EXPECT_EQ(cublaslt_epilogue_of(parse("bias,gelu")), 0);
  EXPECT_EQ(cublaslt_epilogue_of(parse("rowbias")), 0);
  EXPECT_NE(cublaslt_epilogue_of(parse("relu")), 0);
  // A fused template refuses the plain problem and the other way round.
  const Problem plain = cuda_gemm_problem(256, 256, 256, DType::kBF16);
  EXPECT_FALSE(set.candidates[0]->supports(plain).has_value());
  EXPECT_FALSE(cuda_gemm_candidates(DType::kBF16, 1).candidates[0]->supports(p).has_value());
}

bool nvrtc_missing() {
  TempDir cache("cuda-epilogue-probe");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_90a"}, cache.path());
  return !backend && backend.error().code == ErrorCode::kUnavailable;
}

// A few configs of each template and the pair's separate kernel, per epilogue and arch.
TEST(CudaEpilogue, EveryStepCompilesIntoBothTemplatesAndTheSeparateKernel) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    TempDir cache("cuda-epilogue");
    Result<CudaBackend> backend = CudaBackend::create({.arch = arch}, cache.path());
    ASSERT_TRUE(backend.has_value()) << backend.error().message;
    std::vector<std::pair<ChoicePtr, Problem>> work;
    for (const char* text : kEpilogues) {
      const Epilogue e = parse(text);
      for (DType dtype : {DType::kBF16, DType::kF32}) {
        const Problem p = cuda_gemm_problem(200, 256, 64, dtype, 0, e);
        for (auto& t : cuda_gemm_templates(dtype, e)) {
          std::vector<ChoicePtr> all = all_choices(t);
          for (std::size_t i = 0; i < all.size(); i += 23) work.emplace_back(std::move(all[i]), p);
        }
        work.emplace_back(cuda_epilogue_template(dtype, e)->choice(Config{}), p);
      }
    }
    std::vector<std::string> failures;
    std::mutex mu;
    {
      ThreadPool pool(2);
      for (auto& [choice, problem] : work) {
        pool.submit([&, c = choice.get(), p = &problem] {
          std::string failure;
          if (Status s = c->compile(*backend); !s) {
            failure = s.error().message;
          } else if (Result<LaunchSpec> spec = c->launch_spec(*p); !spec) {
            failure = spec.error().message;
          }
          if (!failure.empty()) {
            std::lock_guard lock(mu);
            failures.push_back(std::string(arch) + " " + c->name() + ": " + failure);
          }
        });
      }
      pool.wait_idle();
    }
    EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
  }
}

TEST(CudaEpilogue, CompileOnlyCoversThePairsSeparateKernel) {
  ScratchDir cache("gemm-cli-epilogue");
  CliResult r = run_cli(cache.path(), {"gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype",
                                       "f32", "--arch", "sm_80", "--compile-only", "--epilogue",
                                       "bias,silu", "--cublaslt-algos", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 8 SIMT configs plus the separate kernel, compiled once for both pairs.
  EXPECT_THAT(r.output, HasSubstr("Compiled 10 candidates for sm_80 (0 failed)"));
  EXPECT_EQ(count_artifacts(cache.path(), ".cubin"), 9);
  CliResult bad = run_cli(cache.path(),
                          {"gemm", "--m", "8", "--n", "8", "--k", "8", "--epilogue", "bias,bias"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--epilogue: 'bias' appears twice"));
}

// A leading scale folds into the library GEMMs' alpha: the scale alone is no pass over C, a
// scale before other steps leaves them to the separate kernel or to cuBLASLt's own epilogue;
// a scale after another step is not folded (the order matters).
TEST(CudaEpilogue, LeadingScaleFoldsIntoTheLibrariesAlpha) {
  auto names_of = [](const CudaGemmCandidates& set) {
    std::map<std::string, const Choice*> out;
    for (const ChoicePtr& c : set.candidates) out[c->name()] = c.get();
    return out;
  };
  const Problem alone = cuda_gemm_problem(64, 64, 64, DType::kBF16, 0, parse("scale=0.125"));
  CudaGemmCandidates a = cuda_gemm_candidates(DType::kBF16, 2, &alone, false, parse("scale=0.125"));
  auto names = names_of(a);
  ASSERT_TRUE(names.contains("cublas_gemm_scaled"));
  ASSERT_TRUE(names.contains("cublaslt_scaled_algo1"));
  EXPECT_FALSE(names.contains("cublas_gemm_scaled+epilogue"));
  Result<LaunchSpec> spec = names["cublas_gemm_scaled"]->launch_spec(alone);
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  EXPECT_EQ(spec->alpha, 0.125);
  EXPECT_TRUE(spec->then.empty());
  EXPECT_THAT(names["cublaslt_scaled_algo1"]->info(), HasSubstr("alpha=0.125"));
  // The unscaled ones stay, and their keys differ from the scaled ones'.
  ASSERT_TRUE(names.contains("cublas_gemm+epilogue"));
  EXPECT_NE(names["cublas_gemm_scaled"]->hash_key(),
            make_cublas_gemm_choice({0, 1, 2, 3, 4, 5})->hash_key());

  const Epilogue chain = parse("scale=0.5,bias,relu");
  const Problem p = cuda_gemm_problem(64, 64, 64, DType::kBF16, 0, chain);
  CudaGemmCandidates b = cuda_gemm_candidates(DType::kBF16, 1, &p, false, chain);
  names = names_of(b);
  ASSERT_TRUE(names.contains("cublas_gemm_scaled+epilogue"));
  ASSERT_TRUE(names.contains("cublaslt_scaled_bias_relu_algo0"));
  spec = names["cublaslt_scaled_bias_relu_algo0"]->launch_spec(p);
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  EXPECT_EQ(spec->alpha, 0.5);
  EXPECT_EQ(spec->bind, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_NE(spec->library_epilogue, 0);

  const Epilogue late = parse("bias,scale=2");
  const Problem q = cuda_gemm_problem(64, 64, 64, DType::kBF16, 0, late);
  for (const auto& [name, c] : names_of(cuda_gemm_candidates(DType::kBF16, 1, &q, false, late))) {
    EXPECT_EQ(name.find("scaled"), std::string::npos) << name;
  }
}

// On a GPU: every candidate of each fused problem verifies against cuBLAS + the separate
// epilogue, and a template that fuses only "bias" fails on a "bias,relu" problem.
class CudaEpilogueGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
    backend_.emplace(CudaBackend::create({}, cache_dir_.path()));
    ASSERT_TRUE(backend_->has_value()) << (*backend_).error().message;
    options_.bench.budget_ms = 1;
    options_.bench.min_runs = 1;
    options_.bench.max_runs = 3;
    options_.out = nullptr;
    options_.progress = nullptr;
    options_.worker.executable = worker_exe();
  }
  Result<Selection> select(const Problem& p, std::vector<ChoicePtr>& candidates,
                           Choice* reference) {
    Selector selector(**backend_, *cache_, options_);
    return selector.select(p, candidates, reference);
  }

  TempDir cache_dir_{"cuda-epilogue-gpu"};
  std::optional<Result<CudaBackend>> backend_;
  std::unique_ptr<TuningCache> cache_ = make_memory_cache();
  SelectorOptions options_;
};

TEST_F(CudaEpilogueGpu, EveryFusedCandidateMatchesTheUnfusedReference) {
  for (const char* text : kEpilogues) {
    const Epilogue e = parse(text);
    for (DType dtype : {DType::kBF16, DType::kF32}) {
      const Problem p = cuda_gemm_problem(200, 256, 64, dtype, 0, e);
      CudaGemmCandidates set = cuda_gemm_candidates(dtype, 2, &p, true, e);
      Result<Selection> sel = select(p, set.candidates, set.reference.get());
      ASSERT_TRUE(sel.has_value()) << text << ": " << sel.error().message;
      for (const CandidateRecord& c : sel->record.candidates) {
        // Abandoned (issue 19): verified, then measured no further as clearly slower.
        EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
            << text << " " << c.name << ": " << c.message;
      }
    }
  }
}

// The scaled library GEMMs (alpha) verify against cuBLAS + the separate scale, in bf16 and f32.
TEST_F(CudaEpilogueGpu, ScaledLibraryGemmsMatchTheUnfusedReference) {
  for (const char* text : {"scale=0.125", "scale=0.5,bias,relu", "scale=-2,gelu"}) {
    const Epilogue e = parse(text);
    for (DType dtype : {DType::kBF16, DType::kF32}) {
      const Problem p = cuda_gemm_problem(200, 256, 64, dtype, 0, e);
      CudaGemmCandidates set = cuda_gemm_candidates(dtype, 2, &p, false, e);
      std::vector<ChoicePtr> scaled;
      for (ChoicePtr& c : set.candidates) {
        if (c->name().find("scaled") != std::string::npos) scaled.push_back(std::move(c));
      }
      ASSERT_GE(scaled.size(), 3u) << text;
      Result<Selection> sel = select(p, scaled, set.reference.get());
      ASSERT_TRUE(sel.has_value()) << text << ": " << sel.error().message;
      for (const CandidateRecord& c : sel->record.candidates) {
        EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned ||
                    c.outcome == Outcome::kUnsupported)
            << text << " " << c.name << ": " << c.message;
      }
      // cublas_gemm_scaled(+epilogue) runs everywhere: verified (then maybe abandoned as slower).
      const Outcome first = sel->record.candidates[0].outcome;
      EXPECT_TRUE(first == Outcome::kOk || first == Outcome::kAbandoned) << text;
    }
  }
}

// Rows that do not divide into 16-byte chunks (N = 250): the separate kernel's element path
// (the reference's), checked against the candidates that compute the epilogue themselves.
TEST_F(CudaEpilogueGpu, TheSeparateKernelsElementPathMatchesTheFusedCandidates) {
  for (const char* text : kEpilogues) {
    const Epilogue e = parse(text);
    for (DType dtype : {DType::kBF16, DType::kF32}) {
      const Problem p = cuda_gemm_problem(200, 250, 64, dtype, 0, e);
      CudaGemmCandidates set = cuda_gemm_candidates(dtype, 0, &p, true, e);
      std::vector<ChoicePtr> fused;
      for (ChoicePtr& c : set.candidates) {
        if (c->supports(p).has_value() && c->name().find("+epilogue") == std::string::npos) {
          fused.push_back(std::move(c));
        }
      }
      ASSERT_FALSE(fused.empty()) << text;
      Result<Selection> sel = select(p, fused, set.reference.get());
      ASSERT_TRUE(sel.has_value()) << text << ": " << sel.error().message;
      for (const CandidateRecord& c : sel->record.candidates) {
        EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
            << text << " " << c.name << ": " << c.message;
      }
    }
  }
}

TEST_F(CudaEpilogueGpu, ATemplateThatSkipsAStepFailsVerification) {
  const Problem p = cuda_gemm_problem(256, 256, 128, DType::kBF16, 0, parse("bias,relu"));
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &p, false, parse("bias,relu"));
  std::vector<ChoicePtr> candidates;
  // Same arguments (C, A, B, M, N, K, bias), but no ReLU in the store.
  std::vector<ChoicePtr> bias_only =
      all_choices(cuda_gemm_templates(DType::kBF16, parse("bias"))[0]);
  candidates.push_back(std::move(bias_only[0]));
  candidates.push_back(std::move(set.candidates.back()));  // a correct one: cublas + epilogue
  Result<Selection> sel = select(p, candidates, set.reference.get());
  ASSERT_TRUE(sel.has_value()) << sel.error().message;
  EXPECT_EQ(sel->record.candidates[0].outcome, Outcome::kWrongResult)
      << sel->record.candidates[0].message;
  EXPECT_EQ(sel->record.candidates[1].outcome, Outcome::kOk);
}

}  // namespace
}  // namespace ktune::test

// open_dispatcher over an `op: cuda.gemm` spec. Without a GPU: the tuning-cache key is the one
// `ktune gemm` (a Selector over cuda_gemm_tuning) stores under, the table maps stored picks onto
// the served candidates, and opening says what is missing. On a GPU: the picks of `ktune tune
// spec.yaml` are served on the caller's stream at exact and nearest shapes, checked against a
// host GEMM, and an unseen shape is tuned in the background and served exactly after.
#include <cuda.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/ops/cuda_gemm.h"
#include "support/cli_run.h"
#include "tuning/cuda_op_dispatch.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSpec = R"yaml(name: gemm_dispatch
op: cuda.gemm
dtype: bf16
problems:
  - {name: wide, M: 128, N: 256, K: 64}
  - {name: tall, M: 512, N: 128, K: 256}
)yaml";

Spec load(const ScratchDir& dir) {
  Result<Spec> spec = load_spec(write_text(dir.path(), "gemm.yaml", kSpec));
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  return spec ? *spec : Spec{};
}

CudaBackend hopper(const ScratchDir& cache) {
  CudaCompileOptions o;
  o.arch = "sm_90a";  // compiling only: no GPU needed
  Result<CudaBackend> b = CudaBackend::create(o, cache.path());
  EXPECT_TRUE(b.has_value()) << b.error().message;
  return std::move(*b);
}

TEST(CudaGemmDispatcher, KeysEachProblemAsKtuneGemmDoes) {
  ScratchDir cache("gemm-dispatch-cache"), dir("gemm-dispatch-spec");
  const Spec spec = load(dir);
  const CudaBackend backend = hopper(cache);
  std::unique_ptr<TuningCache> memory = make_memory_cache();
  for (const ProblemDecl& decl : spec.problems) {
    Result<CudaGemmTuning> mine = cuda_gemm_spec_tuning(backend, spec, decl, {});
    ASSERT_TRUE(mine.has_value()) << mine.error().message;
    // What tune_gemm (tools/ktune/gemm_run.cpp) keys `ktune gemm --m M --n N --k K` with.
    CudaGemmRequest request;
    request.m = *problem_size(decl, "M");
    request.n = *problem_size(decl, "N");
    request.k = *problem_size(decl, "K");
    request.dtype = DType::kBF16;
    CudaGemmTuning gemm = cuda_gemm_tuning(backend, request, cuda_gemm_selector_defaults());
    const TuningKey want = Selector(backend, *memory, gemm.options)
                               .key_for(gemm.problem, gemm.candidates, gemm.reference.get());
    const std::size_t count = mine->candidates.size();
    EXPECT_EQ(cuda_gemm_spec_key(backend, *mine).digest(), want.digest()) << decl.name;
    EXPECT_EQ(mine->candidates.size(), count);  // lent and given back
    // Another candidate set is another key: --cublaslt-algos is part of it.
    DispatcherOptions::CudaGemm one;
    one.cublaslt_algos = 1;
    Result<CudaGemmTuning> fewer = cuda_gemm_spec_tuning(backend, spec, decl, one);
    ASSERT_TRUE(fewer.has_value());
    EXPECT_NE(cuda_gemm_spec_key(backend, *fewer).digest(), want.digest());
  }
}

// A record as a tuning stores it, `winner` the one valid and measured row.
TuningRecord record_of(CudaGemmTuning& t, const CudaBackend& backend, const std::string& winner) {
  TuningRecord r;
  r.key = cuda_gemm_spec_key(backend, t);
  r.winner = winner;
  for (const ChoicePtr& c : t.candidates) {
    CandidateRecord row{c->hash_key(), c->name(), c->info(), Outcome::kOk, "", std::nullopt, 0};
    if (c->name() == winner) row.stats = BenchStats{1000, 900, 1100, 10, 5};
    r.candidates.push_back(std::move(row));
  }
  return r;
}

TEST(CudaGemmDispatcher, TableServesEachStoredPickAmongEveryShapesCandidates) {
  ScratchDir cache("gemm-dispatch-cache"), dir("gemm-dispatch-spec");
  const Spec spec = load(dir);
  const CudaBackend backend = hopper(cache);
  std::unique_ptr<TuningCache> memory = make_memory_cache();
  Result<CudaGemmTuning> wide = cuda_gemm_spec_tuning(backend, spec, spec.problems[0], {});
  ASSERT_TRUE(wide.has_value());
  ASSERT_TRUE(memory->store(record_of(*wide, backend, "cublaslt_algo2")));
  // The second problem untuned: served by the nearest or the default.
  std::vector<ChoicePtr> served = cuda_gemm_served_candidates(backend, spec, {});
  bool simt = false;
  for (const ChoicePtr& c : served) simt = simt || c->name().starts_with("cuda_gemm_simt_bf16");
  EXPECT_TRUE(simt) << "the SIMT template serves shapes the tensor-core ones cannot";
  Result<DispatchTableBuild> built =
      make_cuda_gemm_dispatch_table(spec, served, backend, *memory, {}, std::nullopt);
  ASSERT_TRUE(built.has_value()) << built.error().message;
  const DispatchTable& t = built->table;
  EXPECT_EQ(t.size_names, (std::vector<std::string>{"M", "N", "K"}));
  EXPECT_EQ(t.candidates[t.default_choice].name, "cublas_gemm");
  ASSERT_EQ(t.tuned.size(), 1u);
  EXPECT_EQ(t.tuned[0].sizes, (std::vector<std::int64_t>{128, 256, 64}));
  EXPECT_EQ(t.candidates[t.tuned[0].choice].name, "cublaslt_algo2");

  // A record of another candidate set (--cublaslt-algos 1) is not read with the defaults.
  DispatcherOptions::CudaGemm one;
  one.cublaslt_algos = 1;
  Result<CudaGemmTuning> tall = cuda_gemm_spec_tuning(backend, spec, spec.problems[1], one);
  ASSERT_TRUE(tall.has_value());
  ASSERT_TRUE(memory->store(record_of(*tall, backend, "cublas_gemm")));
  built = make_cuda_gemm_dispatch_table(spec, served, backend, *memory, {}, std::nullopt);
  ASSERT_TRUE(built.has_value()) << built.error().message;
  EXPECT_EQ(built->table.tuned.size(), 1u);
  std::vector<ChoicePtr> served_one = cuda_gemm_served_candidates(backend, spec, one);
  built = make_cuda_gemm_dispatch_table(spec, served_one, backend, *memory, one, std::nullopt);
  ASSERT_TRUE(built.has_value()) << built.error().message;
  ASSERT_EQ(built->table.tuned.size(), 1u);
  EXPECT_EQ(built->table.tuned[0].sizes, (std::vector<std::int64_t>{512, 128, 256}));

  auto unknown = make_cuda_gemm_dispatch_table(spec, served, backend, *memory, {}, "cublas");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message, HasSubstr("default_choice 'cublas' is not a candidate"));
}

TEST(CudaGemmDispatcher, OpeningWithoutAGpuSaysWhatIsMissing) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is present";
  ScratchDir cache("gemm-dispatch-cache"), dir("gemm-dispatch-spec");
  DispatcherOptions options;
  options.cache_dir = cache.path();
  auto d = open_dispatcher(write_text(dir.path(), "gemm.yaml", kSpec), options);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, ErrorCode::kUnavailable) << d.error().message;
}

}  // namespace
}  // namespace ktune::test

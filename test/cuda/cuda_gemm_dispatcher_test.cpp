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
#include "gpu_stream_fixture.h"
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

// bf16 of a float that has one (small integers: the GEMMs below are exact in bf16 and fp32).
std::uint16_t bf16(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<std::uint16_t>(bits >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

class CudaGemmDispatcherGpu : public GpuStreamTest {
 protected:
  DispatcherOptions options(const ScratchDir& cache) const {
    DispatcherOptions o;
    o.cache_dir = cache.path();
    o.cuda_stream = stream_;
    o.cuda_gemm.cublaslt_algos = 1;  // as tuned below
    return o;
  }
  // C = A B through the dispatcher, A and B of -1, 0, 1; every element checked against the host.
  void check_gemm(Dispatcher& d, std::int32_t m, std::int32_t n, std::int32_t k) {
    std::vector<std::uint16_t> a(std::size_t(m) * k), b(std::size_t(k) * n), c(std::size_t(m) * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = bf16(float(int(i * 7 % 3) - 1));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = bf16(float(int(i * 5 % 3) - 1));
    CUdeviceptr da = 0, db = 0, dc = 0;
    ASSERT_EQ(cu_->MemAlloc(&da, a.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemAlloc(&db, b.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemAlloc(&dc, c.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemcpyHtoD(da, a.data(), a.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemcpyHtoD(db, b.data(), b.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemsetD8(dc, 0xff, c.size() * 2), CUDA_SUCCESS);  // NaN until written
    void* args[] = {reinterpret_cast<void*>(dc),
                    reinterpret_cast<void*>(da),
                    reinterpret_cast<void*>(db),
                    &m,
                    &n,
                    &k};
    Status s = d.call({{"M", m}, {"N", n}, {"K", k}}, args);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_EQ(cu_->StreamSynchronize(stream_), CUDA_SUCCESS);
    ASSERT_EQ(cu_->MemcpyDtoH(c.data(), dc, c.size() * 2), CUDA_SUCCESS);
    (void)cu_->MemFree(da);
    (void)cu_->MemFree(db);
    (void)cu_->MemFree(dc);
    for (std::int32_t i = 0; i < m; ++i) {
      for (std::int32_t j = 0; j < n; ++j) {
        float want = 0;
        for (std::int32_t p = 0; p < k; ++p) {
          want += from_bf16(a[std::size_t(i) * k + p]) * from_bf16(b[std::size_t(p) * n + j]);
        }
        ASSERT_EQ(from_bf16(c[std::size_t(i) * n + j]), want)
            << "C[" << i << "," << j << "] of " << m << "x" << n << "x" << k;
      }
    }
  }
};

TEST_F(CudaGemmDispatcherGpu, ServesWhatKtuneTuneStoredAtExactAndNearestShapes) {
  ScratchDir cache("gemm-dispatch-cache"), dir("gemm-dispatch-spec");
  const std::string spec = write_text(dir.path(), "gemm.yaml", kSpec);
  CliResult tuned =
      run_cli(cache.path(), {"tune", spec, "--cublaslt-algos", "1", "--budget-ms", "2", "-q"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  auto d = open_dispatcher(spec, options(cache));
  ASSERT_TRUE(d.has_value()) << d.error().message;
  for (const Sizes& shape :
       {Sizes{{"M", 128}, {"N", 256}, {"K", 64}}, Sizes{{"M", 512}, {"N", 128}, {"K", 256}}}) {
    auto served = (*d)->lookup(shape);
    ASSERT_TRUE(served.has_value()) << served.error().message;
    EXPECT_EQ(served->source, Dispatcher::Source::kExact);
    check_gemm(**d, int(shape[0].second), int(shape[1].second), int(shape[2].second));
  }
  // An untuned shape: the nearest pick, launched for its own sizes.
  auto nearest = (*d)->lookup({{"M", 200}, {"N", 192}, {"K", 128}});
  ASSERT_TRUE(nearest.has_value()) << nearest.error().message;
  EXPECT_EQ(nearest->source, Dispatcher::Source::kNearest);
  check_gemm(**d, 200, 192, 128);
  EXPECT_EQ((*d)->background_tunings(), 0);
}

TEST_F(CudaGemmDispatcherGpu, TunesAnUnseenShapeInTheBackgroundThenServesItExactly) {
  ScratchDir cache("gemm-dispatch-cache"), dir("gemm-dispatch-spec");
  const std::string spec = write_text(dir.path(), "gemm.yaml", kSpec);
  DispatcherOptions o = options(cache);
  o.tune_unseen = true;
  SelectorOptions fast = cuda_gemm_selector_defaults();
  fast.out = nullptr;
  fast.progress = nullptr;
  fast.bench.budget_ms = 2;
  o.cuda_gemm.selector = fast;
  auto d = open_dispatcher(spec, o);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  // Nothing tuned: cuBLAS serves while the shape is tuned.
  auto first = (*d)->lookup({{"M", 320}, {"N", 256}, {"K", 192}});
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(first->source, Dispatcher::Source::kDefault);
  EXPECT_EQ(*first->name, "cublas_gemm");
  check_gemm(**d, 320, 256, 192);
  Status done = (*d)->wait_for_background();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*d)->background_tunings(), 1);
  auto after = (*d)->lookup({{"M", 320}, {"N", 256}, {"K", 192}});
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->source, Dispatcher::Source::kExact);
  check_gemm(**d, 320, 256, 192);
  // Stored under `ktune gemm`'s key: its run on the same shape measures nothing.
  CliResult gemm = run_cli(cache.path(), {"gemm", "--m", "320", "--n", "256", "--k", "192",
                                          "--dtype", "bf16", "--cublaslt-algos", "1"});
  ASSERT_EQ(gemm.exit_code, 0) << gemm.output;
  EXPECT_THAT(gemm.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(gemm.output, HasSubstr("Pick: " + *after->name));
}

}  // namespace
}  // namespace ktune::test

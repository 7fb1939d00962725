// tune_spec and what `ktune tune` and ktune.tune() share around it: the problem selection and its
// error, the spec's Selector settings, the loop over a spec's problems (shared candidates, one
// entry per problem tuned or failed, the cache answering the second time) and the refusal of op
// specs and of a cache folder others can write.
#include "ktune/tuning/tune_spec.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "ktune/backend/cpu_backend.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

constexpr const char* kSpec = R"(name: mm
kernel: {source: mm.cpp, entry: mm}
args:
  - {name: C, role: out, dtype: f32, shape: [M, N]}
  - {name: A, role: in, dtype: f32, shape: [M, K]}
  - {name: B, role: in, dtype: f32, shape: [K, N]}
  - {name: M, dtype: i32, value: M}
  - {name: N, dtype: i32, value: N}
  - {name: K, dtype: i32, value: K}
problems:
  - {name: small, M: 16, N: 32, K: 64}
  - {name: skinny, M: 2, N: 64, K: 32}
params:
  BLOCK: [4, 8]
seed: 7
search: {strategy: random, max_evals: 9}
tolerance: {rtol: 1e-3, atol: 1e-4}
)";

class TuneSpecTest : public testing::Test {
 protected:
  Spec spec(const std::string& text = kSpec) {
    std::filesystem::copy_file(data_path("cli/mm.cpp"), dir_.path() / "mm.cpp",
                               std::filesystem::copy_options::overwrite_existing);
    auto s = load_spec(write_text(dir_.path(), "mm.yaml", text));
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : Spec{};
  }
  SelectorOptions fast(const Spec& s) {
    SelectorOptions o = spec_selector_options(s, cpu_tune_defaults());
    o.search = {};  // every candidate
    o.bench.budget_ms = 2;
    o.bench.min_runs = 3;
    o.out = nullptr;
    o.progress = nullptr;
    o.isolate = false;
    return o;
  }
  TempDir dir_;
};

TEST_F(TuneSpecTest, ProblemSelectionNamesTheProblems) {
  const Spec s = spec();
  const std::vector<std::string> ok = {"skinny", "0"};
  EXPECT_TRUE(check_problem_selection(s, ok, "--problem"));
  const std::vector<std::string> bad = {"small", "nope", "5"};
  Status st = check_problem_selection(s, bad, "problem=");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.error().message,
            s.file.string() +
                ": problem= 'nope', '5' matches no problem; the spec's problems are: small (0), "
                "skinny (1)");
  EXPECT_TRUE(problem_selected({}, s.problems[1], 1));
  EXPECT_TRUE(problem_selected(ok, s.problems[1], 1));
  EXPECT_TRUE(problem_selected(ok, s.problems[0], 0));
  const std::vector<std::string> by_problem_name = {"M=2,N=64,K=32"};
  EXPECT_FALSE(problem_selected(by_problem_name, s.problems[1], 1));
  EXPECT_TRUE(problem_selected(by_problem_name, s.problems[1], 1, "M=2,N=64,K=32"));
}

TEST_F(TuneSpecTest, SelectorOptionsTakeTheSpecsSettings) {
  const Spec s = spec();
  const SelectorOptions o = spec_selector_options(s, cpu_tune_defaults());
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.search.strategy, "random");
  EXPECT_EQ(o.search.max_evals, 9u);
  ASSERT_TRUE(o.tolerance);
  EXPECT_DOUBLE_EQ(o.tolerance->rtol, 1e-3);
  EXPECT_GT(cpu_tune_defaults().worker.memory_limit_bytes, std::size_t{0});
}

TEST_F(TuneSpecTest, TunesTheSelectedProblemsThenAnswersFromTheCache) {
  const Spec s = spec();
  auto backend = CpuBackend::create({}, dir_.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  SpecTuneRequest request;
  request.problems = {"skinny"};
  std::vector<std::string> seen;
  request.after = [&](const SpecProblemTuning& one) { seen.push_back(one.name); };
  auto tuned = tune_spec(s, *backend, *cache, fast(s), request);
  ASSERT_TRUE(tuned) << tuned.error().message;
  ASSERT_EQ(tuned->problems.size(), 1u);
  const SpecProblemTuning& one = tuned->problems[0];
  EXPECT_EQ(one.index, 1u);
  EXPECT_EQ(one.name, "skinny");
  ASSERT_TRUE(one.selection) << one.selection.error().message;
  EXPECT_FALSE(one.selection->from_cache);
  EXPECT_EQ(one.candidates, (std::vector<std::string>{"mm_BLOCK4", "mm_BLOCK8"}));
  EXPECT_EQ(one.selection->record.winner, one.candidates[one.selection->winner_index]);
  EXPECT_EQ(seen, std::vector<std::string>{"skinny"});
  ASSERT_TRUE(tuned->shared_choices);  // a c++ spec without size_defines
  EXPECT_FALSE(tuned->interrupted);

  request.problems.clear();
  auto all = tune_spec(s, *backend, *cache, fast(s), request);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->problems.size(), 2u);
  ASSERT_TRUE(all->problems[0].selection && all->problems[1].selection);
  EXPECT_FALSE(all->problems[0].selection->from_cache);
  EXPECT_TRUE(all->problems[1].selection->from_cache);
}

// cache_only (what `ktune tune` asks before the CUDA driver starts): the problems the cache
// answers, in spec order, up to the first it does not; nothing compiled or run for that one, no
// hook called. Then a run from there (request.first) tunes it and goes on.
TEST_F(TuneSpecTest, CacheOnlyAnswersUpToTheFirstMissThenTheRestRunFromThere) {
  const Spec s = spec();
  auto backend = CpuBackend::create({}, dir_.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  SpecTuneRequest request;
  request.problems = {"small"};
  ASSERT_TRUE(tune_spec(s, *backend, *cache, fast(s), request));
  request.problems.clear();
  std::vector<std::string> before, after;
  request.before = [&](const ProblemDecl& d, const SpecChoices&) { before.push_back(d.name); };
  request.after = [&](const SpecProblemTuning& one) { after.push_back(one.name); };
  request.cache_only = true;
  auto answered = tune_spec(s, *backend, *cache, fast(s), request);
  ASSERT_TRUE(answered) << answered.error().message;
  ASSERT_EQ(answered->problems.size(), 1u);
  ASSERT_TRUE(answered->problems[0].selection);
  EXPECT_TRUE(answered->problems[0].selection->from_cache);
  EXPECT_EQ(answered->unanswered, 1u);
  EXPECT_EQ(before, std::vector<std::string>{"small"});
  EXPECT_EQ(after, std::vector<std::string>{"small"});
  EXPECT_EQ(cache->list()->size(), 1u);  // skinny: nothing measured, nothing stored

  request.cache_only = false;
  request.first = *answered->unanswered;
  auto rest = tune_spec(s, *backend, *cache, fast(s), request);
  ASSERT_TRUE(rest) << rest.error().message;
  ASSERT_EQ(rest->problems.size(), 1u);
  EXPECT_EQ(rest->problems[0].name, "skinny");
  ASSERT_TRUE(rest->problems[0].selection);
  EXPECT_FALSE(rest->problems[0].selection->from_cache);
  EXPECT_FALSE(rest->unanswered);

  // Every problem answered: no miss to report.
  request.cache_only = true;
  request.first = 0;
  auto all = tune_spec(s, *backend, *cache, fast(s), request);
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->problems.size(), 2u);
  EXPECT_FALSE(all->unanswered);
}

TEST_F(TuneSpecTest, AProblemThatFailsIsAnEntryAndTheOthersAreTuned) {
  // Every candidate is wrong at n = 3 only: that problem has no valid candidate.
  write_text(dir_.path(), "copy.cpp",
             "#include <cstdint>\n"
             "void copy(float* C, const float* A, std::int64_t n) {\n"
             "  for (std::int64_t i = 0; i < n; ++i) C[i] = n == 3 ? A[i] + UNROLL : A[i];\n"
             "}\n");
  write_text(dir_.path(), "copy_ref.cpp",
             "#include <cstdint>\n"
             "void copy_ref(float* C, const float* A, std::int64_t n) {\n"
             "  for (std::int64_t i = 0; i < n; ++i) C[i] = A[i];\n"
             "}\n");
  const Spec s = spec(R"(name: copy
kernel: {source: copy.cpp, entry: copy}
args:
  - {name: C, role: out, dtype: f32, shape: [n]}
  - {name: A, role: in, dtype: f32, shape: [n]}
  - {name: n, dtype: i64, value: n}
problems:
  - {name: two, n: 2}
  - {name: three, n: 3}
  - {name: four, n: 4}
params:
  UNROLL: [1, 2]
reference:
  kernel: {source: copy_ref.cpp, entry: copy_ref}
)");
  auto backend = CpuBackend::create({}, dir_.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  auto tuned = tune_spec(s, *backend, *cache, fast(s), {});
  ASSERT_TRUE(tuned) << tuned.error().message;
  ASSERT_EQ(tuned->problems.size(), 3u);
  EXPECT_TRUE(tuned->problems[0].selection);
  ASSERT_FALSE(tuned->problems[1].selection);
  EXPECT_EQ(tuned->problems[1].name, "three");
  EXPECT_EQ(tuned->problems[1].selection.error().code, ErrorCode::kNoValidChoice);
  EXPECT_TRUE(tuned->problems[2].selection);
}

TEST_F(TuneSpecTest, OpSpecsAreTheOpsToTune) {
  const Spec s = spec("name: g\nop: cuda.gemm\nproblems:\n  - {M: 8, N: 8, K: 8}\n");
  auto backend = CpuBackend::create({}, dir_.path() / "cache");
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  auto tuned = tune_spec(s, *backend, *cache, fast(s), {});
  ASSERT_FALSE(tuned);
  EXPECT_EQ(tuned.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(TuneSpecTest, ACacheFolderOthersCanWriteIsRefused) {
  const std::filesystem::path folder = dir_.path() / "shared";
  std::filesystem::create_directories(folder / "code");
  ASSERT_EQ(::chmod((folder / "code").c_str(), 0777), 0);
  Status refused = prepare_cache_dir(folder, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("writable by"), std::string::npos)
      << refused.error().message;
  std::string warned;
  EXPECT_TRUE(prepare_cache_dir(folder, true, [&](const std::string& w) { warned = w; }));
  EXPECT_EQ(warned, refused.error().message);
  EXPECT_TRUE(prepare_cache_dir(dir_.path() / "absent", false));
}

}  // namespace
}  // namespace ktune::test

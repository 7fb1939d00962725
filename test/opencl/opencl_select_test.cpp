// End to end on the OpenCL device (PoCL in CI): the Selector compiles OpenCL templates in the
// parent and verifies and measures them in a ktune-worker against a naive OpenCL reference run
// in the worker; planted faults (an out-of-bounds write, a write into an input, an endless
// loop, a compile error, a wrong result) each cost only their own candidate.
// Without OpenCL every test prints [SKIP] and passes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ktune/backend/opencl_backend.h"
#include "ktune/ops/opencl_ops.h"
#include "ktune/select/selector.h"
#include "support/all_choices.h"
#include "support/opencl_require.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

// Few and short measurements: PoCL compiles dominate the test time.
SelectorOptions quick_options() {
  SelectorOptions o;
  o.bench.warmup_runs = 1;
  o.bench.budget_ms = 5;
  o.bench.min_runs = 2;
  o.bench.max_runs = 5;
  o.bench.flush_cache = false;
  o.close_call_rounds = 2;
  o.jobs = 1;
  o.read_cache = false;
  o.write_cache = false;
  o.out = nullptr;
  o.progress = nullptr;
  o.seed = 7;
  return o;
}

SearchSpace small_gemm_space() {
  std::vector<Param> params = {
      {"MWG", {std::int64_t{32}, std::int64_t{64}}},
      {"NWG", {std::int64_t{32}}},
      {"KWG", {std::int64_t{16}}},
      {"MDIMC", {std::int64_t{8}}},
      {"NDIMC", {std::int64_t{8}}},
      {"VWM", {std::int64_t{1}, std::int64_t{4}}},
      {"VWN", {std::int64_t{1}, std::int64_t{4}}},
      {"SA", {std::int64_t{0}, std::int64_t{1}}},
      {"SB", {std::int64_t{0}, std::int64_t{1}}},
  };
  // 6 configs: both vector widths with and without local memory, two tile heights cached.
  auto space =
      SearchSpace::create(std::move(params), {"VWM == VWN", "SA == SB", "SA == 1 || MWG == 32"});
  EXPECT_TRUE(space) << space.error().message;
  return std::move(*space);
}

std::map<std::string, const CandidateRecord*> by_name(const TuningRecord& record) {
  std::map<std::string, const CandidateRecord*> out;
  for (const CandidateRecord& c : record.candidates) out[c.name] = &c;
  return out;
}

TEST(OpenCLSelect, TunesASmallGemmInAWorkerAgainstTheNaiveReference) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-gemm");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  Selector selector(*backend, *cache, quick_options());
  const Problem problem = opencl_gemm_problem(64, 96, 80);
  std::vector<ChoicePtr> candidates = all_choices(opencl_gemm_template(small_gemm_space()));
  ASSERT_EQ(candidates.size(), 6u);
  ChoicePtr reference = opencl_gemm_reference();
  Result<Selection> sel = selector.select(problem, candidates, reference.get());
  ASSERT_TRUE(sel) << sel.error().message;
  ASSERT_EQ(sel->record.candidates.size(), 6u);
  for (const CandidateRecord& c : sel->record.candidates) {
    // Abandoned (issue 19): verified, then measured no further as clearly slower.
    EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
        << c.name << ": " << c.message;
    ASSERT_TRUE(c.stats.has_value()) << c.name;
    EXPECT_GT(c.stats->median_ns, 0) << c.name;
  }
  EXPECT_EQ(sel->record.winner, candidates[sel->winner_index]->name());
  EXPECT_THAT(sel->record.winner, HasSubstr("opencl_gemm_MWG"));
  EXPECT_THAT(sel->record.key.device, HasSubstr(backend->device_name()));
}

TEST(OpenCLSelect, TunesTheRowSumInProcessWithoutWorkers) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-rowsum");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  SelectorOptions options = quick_options();
  options.isolate = false;  // the runner's own OpenCL handler
  Selector selector(*backend, *cache, options);
  const Problem problem = opencl_row_sum_problem(50, 1002);  // cols % 4 != 0: VW=4 unsupported
  auto space = SearchSpace::create({{"WGS", {std::int64_t{16}, std::int64_t{64}}},
                                    {"VW", {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}}}},
                                   {"WGS == 64 || VW == 1"});
  ASSERT_TRUE(space) << space.error().message;
  std::vector<ChoicePtr> candidates = all_choices(opencl_row_sum_template(std::move(*space)));
  ASSERT_EQ(candidates.size(), 4u);
  ChoicePtr reference = opencl_row_sum_reference();
  Result<Selection> sel = selector.select(problem, candidates, reference.get());
  ASSERT_TRUE(sel) << sel.error().message;
  int ok = 0;
  for (const CandidateRecord& c : sel->record.candidates) {
    if (c.name.find("VW4") != std::string::npos) {
      EXPECT_EQ(c.outcome, Outcome::kUnsupported) << c.name << ": " << c.message;
      EXPECT_THAT(c.message, HasSubstr("cols; expected a multiple of VW=4, got 1002"));
    } else {
      // Abandoned (issue 19): verified, then measured no further as clearly slower.
      EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
          << c.name << ": " << c.message;
      ++ok;
    }
  }
  EXPECT_EQ(ok, 3);
}

// A GEMM kernel of the built-in signature with a planted fault, launched one work-item per
// output (the naive reference's geometry).
ChoicePtr planted(const std::string& name, const std::string& body) {
  KernelTemplateDesc desc;
  desc.name = name;
  desc.entry = "gemm";
  desc.source =
      "__kernel void gemm(__global float* C, __global const float* A, __global const float* B,\n"
      "                   const int M, const int N, const int K) {\n"
      "  const int row = get_global_id(0), col = get_global_id(1);\n"
      "  if (row >= M || col >= N) return;\n"
      "  float acc = 0.0f;\n"
      "  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];\n"
      "  C[row * N + col] = acc;\n" +
      body + "}\n";
  const Problem model = opencl_gemm_problem(1, 1, 1);
  desc.signature = model.signature();
  desc.launch = [](const Config&, const Problem& p) -> Result<LaunchGeometry> {
    LaunchGeometry g;
    g.grid = {static_cast<std::uint64_t>(std::get<std::int64_t>(p.args[3].scalar)),
              static_cast<std::uint64_t>(std::get<std::int64_t>(p.args[4].scalar)), 1};
    return g;
  };
  return KernelTemplate::create(std::move(desc), SearchSpace())->choice(Config{});
}

TEST(OpenCLSelect, PlantedFaultsCostOneCandidateEach) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-faults");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  auto cache = make_memory_cache();
  SelectorOptions options = quick_options();
  // Room for PoCL's first-launch code generation in a fresh worker, small enough for a test.
  options.run_timeout = std::chrono::milliseconds(10000);
  Selector selector(*backend, *cache, options);
  const Problem problem = opencl_gemm_problem(24, 40, 16);

  std::vector<ChoicePtr> candidates;
  candidates.push_back(planted("good", ""));
  candidates.push_back(planted("oob_write", "  if (row == 0 && col == 0) C[M * N + 7] = 1.0f;\n"));
  candidates.push_back(
      planted("input_write", "  if (row == 0 && col == 0) ((__global float*)A)[3] = 0.5f;\n"));
  candidates.push_back(planted("endless", "  while (M > 0) C[row * N + col] += 1.0f;\n"));
  candidates.push_back(planted("syntax", "  this is not OpenCL C;\n"));
  candidates.push_back(planted("wrong", "  if (row == 1 && col == 2) C[row * N + col] += 1.0f;\n"));
  ChoicePtr reference = opencl_gemm_reference();
  Result<Selection> sel = selector.select(problem, candidates, reference.get());
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "good");
  auto rec = by_name(sel->record);
  ASSERT_EQ(rec.size(), 6u);
  EXPECT_EQ(rec["good"]->outcome, Outcome::kOk) << rec["good"]->message;
  EXPECT_EQ(rec["oob_write"]->outcome, Outcome::kRedzoneViolation) << rec["oob_write"]->message;
  EXPECT_THAT(rec["oob_write"]->message, HasSubstr("C (after the end)"));
  EXPECT_EQ(rec["input_write"]->outcome, Outcome::kInputModified) << rec["input_write"]->message;
  EXPECT_THAT(rec["input_write"]->message, HasSubstr("A"));
  EXPECT_EQ(rec["endless"]->outcome, Outcome::kTimedOut) << rec["endless"]->message;
  EXPECT_EQ(rec["syntax"]->outcome, Outcome::kCompileError) << rec["syntax"]->message;
  EXPECT_THAT(rec["syntax"]->message, HasSubstr("clBuildProgram"));
  EXPECT_EQ(rec["wrong"]->outcome, Outcome::kWrongResult) << rec["wrong"]->message;
  EXPECT_THAT(rec["wrong"]->message, HasSubstr("output C"));
}

// No reference on a device: the first candidate that passes the checks that need none (after
// one that writes out of bounds) stands in, is probed as a reference, and a wrong candidate
// after it fails against it; in a worker and in process alike.
TEST(OpenCLSelect, WithoutAReferenceTheFirstValidCandidateStandsIn) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-stand-in");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  for (const bool isolate : {true, false}) {
    auto cache = make_memory_cache();
    SelectorOptions options = quick_options();
    options.isolate = isolate;
    options.run_timeout = std::chrono::milliseconds(10000);
    Selector selector(*backend, *cache, options);
    std::vector<ChoicePtr> candidates;
    candidates.push_back(
        planted("oob_write", "  if (row == 0 && col == 0) C[M * N + 7] = 1.0f;\n"));
    candidates.push_back(planted("good", ""));
    candidates.push_back(
        planted("wrong", "  if (row == 1 && col == 2) C[row * N + col] += 1.0f;\n"));
    candidates.push_back(planted("also_good", "  C[row * N + col] = acc * 1.0f;\n"));
    Result<Selection> sel = selector.select(opencl_gemm_problem(24, 40, 16), candidates, nullptr);
    ASSERT_TRUE(sel) << sel.error().message;
    ASSERT_TRUE(sel->record.stand_in) << "isolate " << isolate;
    EXPECT_EQ(*sel->record.stand_in, "good");
    auto rec = by_name(sel->record);
    EXPECT_EQ(rec["oob_write"]->outcome, Outcome::kRedzoneViolation) << rec["oob_write"]->message;
    EXPECT_EQ(rec["good"]->outcome, Outcome::kOk) << rec["good"]->message;
    EXPECT_EQ(rec["wrong"]->outcome, Outcome::kWrongResult) << rec["wrong"]->message;
    // Verified against the stand-in; as fast as it, but on a loaded machine its first timed runs
    // may land above the abandonment bound.
    EXPECT_TRUE(rec["also_good"]->outcome == Outcome::kOk ||
                rec["also_good"]->outcome == Outcome::kAbandoned)
        << rec["also_good"]->message;
  }
}

}  // namespace
}  // namespace ktune::test

// Fused epilogues in the OpenCL GEMM template, on the OpenCL device (PoCL in CI): every epilogue
// step fused into two configs (plain and vector loads, global and local memory, two K blocks,
// ragged edges in M and N), tuned by the Selector in a worker and verified against the naive
// kernel with the epilogue after its dot product; that reference itself checked against the
// host's naive GEMM and Epilogue::apply (so the check does not rest on the rendered hook alone);
// a template that skips the hook fails verification; and the CLI's --epilogue errors.
// Without OpenCL the device tests print [SKIP] and pass.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bench/candidate_check.h"
#include "ktune/backend/opencl_backend.h"
#include "ktune/ops/opencl_ops.h"
#include "ktune/select/selector.h"
#include "ktune/tensor/problem_buffers.h"
#include "support/all_choices.h"
#include "support/cli_run.h"
#include "support/opencl_require.h"
#include "support/temp_dir.h"
#include "worker/device_handler.h"
#include "worker/worker_protocol.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

// Ragged: M, N not multiples of the 32x32 tile, K = 19 two K blocks of 16 with a short second;
// N % 4 == 0 so that the vector config serves.
constexpr std::int64_t kM = 37, kN = 44, kK = 19;
constexpr std::uint64_t kSeed = 7;

Epilogue parse(const std::string& text) {
  Result<Epilogue> e = Epilogue::parse(text);
  EXPECT_TRUE(e) << e.error().message;
  return e ? *e : Epilogue{};
}

SelectorOptions quick_options() {
  SelectorOptions o;
  o.bench.warmup_runs = 1;
  o.bench.budget_ms = 5;
  o.bench.min_runs = 2;
  o.bench.max_runs = 3;
  o.bench.flush_cache = false;
  o.close_call_rounds = 0;
  o.jobs = 2;
  o.read_cache = false;
  o.write_cache = false;
  o.out = nullptr;
  o.progress = nullptr;
  o.seed = kSeed;
  return o;
}

// Two configs, PoCL compiles being slow: scalar loads from global memory, and 4-wide vectors
// through local memory.
SearchSpace two_configs() {
  std::vector<Param> params = {
      {"MWG", {std::int64_t{32}}},
      {"NWG", {std::int64_t{32}}},
      {"KWG", {std::int64_t{16}}},
      {"MDIMC", {std::int64_t{8}}},
      {"NDIMC", {std::int64_t{8}}},
      {"VWM", {std::int64_t{1}, std::int64_t{4}}},
      {"VWN", {std::int64_t{1}, std::int64_t{4}}},
      {"SA", {std::int64_t{0}, std::int64_t{1}}},
      {"SB", {std::int64_t{0}, std::int64_t{1}}},
  };
  auto space =
      SearchSpace::create(std::move(params), {"VWM == VWN", "SA == SB", "(VWM == 1) == (SA == 0)"});
  EXPECT_TRUE(space) << space.error().message;
  return std::move(*space);
}

class OpenCLEpilogue : public testing::Test {
 protected:
  // Tunes `candidates` on the fused problem against the fused naive reference.
  TuningRecord tune(const Epilogue& e, std::vector<ChoicePtr> candidates) {
    Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir_.path());
    EXPECT_TRUE(backend) << backend.error().message;
    if (!backend) return {};
    auto cache = make_memory_cache();
    Selector selector(*backend, *cache, quick_options());
    ChoicePtr reference = opencl_gemm_reference(e);
    Result<Selection> sel =
        selector.select(opencl_gemm_problem(kM, kN, kK, 0, e), candidates, reference.get());
    EXPECT_TRUE(sel) << sel.error().message;
    return sel ? sel->record : TuningRecord{};
  }

  // Every fused config of the template passes verification and is measured.
  void expect_fused_pass(const std::string& text, const std::string& tag) {
    const Epilogue e = parse(text);
    const TuningRecord record = tune(e, all_choices(opencl_gemm_template(two_configs(), e)));
    ASSERT_EQ(record.candidates.size(), 2u);
    EXPECT_EQ(opencl_gemm_problem(kM, kN, kK, 0, e).name, "M=37,N=44,K=19,f32," + e.name());
    for (const CandidateRecord& c : record.candidates) {
      EXPECT_THAT(c.name, HasSubstr("opencl_gemm_" + tag + "_MWG32"));
      // Verified; the slower of the two may be abandoned after its first timed runs.
      EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
          << c.name << ": " << c.message;
      EXPECT_TRUE(c.stats.has_value()) << c.name;
    }
  }

  TempDir dir_{"opencl-epilogue"};
};

// Every step at least once across the three: bias, rowbias, scale, relu, gelu, silu, residual.
TEST_F(OpenCLEpilogue, BiasReluFusedMatchesTheUnfusedReference) {
  KTUNE_REQUIRE_OPENCL();
  expect_fused_pass("bias,relu", "bias_relu");
}

TEST_F(OpenCLEpilogue, RowbiasScaleGeluResidualFusedMatchesTheUnfusedReference) {
  KTUNE_REQUIRE_OPENCL();
  expect_fused_pass("rowbias,scale=0.5,gelu,residual", "rowbias_scale_0_5_gelu_residual");
}

TEST_F(OpenCLEpilogue, SiluFusedMatchesTheUnfusedReference) {
  KTUNE_REQUIRE_OPENCL();
  expect_fused_pass("silu", "silu");
}

// The real template with its hook's body replaced by the identity: the operands still arrive,
// the epilogue is never applied.
TEST_F(OpenCLEpilogue, ATemplateThatSkipsTheHookIsAWrongResult) {
  KTUNE_REQUIRE_OPENCL();
  const Epilogue e = parse("bias,relu");
  const std::shared_ptr<KernelTemplate> real = opencl_gemm_template(two_configs(), e);
  KernelTemplateDesc desc = real->desc();
  desc.name = "skips_hook";
  const std::size_t at = desc.source.find("#define KTUNE_EPILOGUE_BODY ");
  ASSERT_NE(at, std::string::npos);
  desc.source.replace(at, desc.source.find('\n', at) - at,
                      "#define KTUNE_EPILOGUE_BODY { (void)row; (void)col; (void)idx; "
                      "(void)bias; return acc; }");
  std::vector<ChoicePtr> candidates;
  candidates.push_back(std::move(all_choices(KernelTemplate::create(desc, two_configs()))[1]));
  candidates.push_back(std::move(all_choices(real)[1]));
  const TuningRecord record = tune(e, std::move(candidates));
  ASSERT_EQ(record.candidates.size(), 2u);
  for (const CandidateRecord& c : record.candidates) {
    if (c.name.starts_with("skips_hook")) {
      EXPECT_EQ(c.outcome, Outcome::kWrongResult) << c.name << ": " << c.message;
      EXPECT_THAT(c.message, HasSubstr("output C"));
    } else {
      EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
          << c.name << ": " << c.message;
    }
  }
  EXPECT_THAT(record.winner, HasSubstr("opencl_gemm_bias_relu_MWG32"));
}

// The fused naive reference against the host: C = A B in double, then Epilogue::apply, checked
// by the OpenCL handler from a reference file as the parent would send it.
TEST_F(OpenCLEpilogue, TheFusedReferenceMatchesTheHostEpilogue) {
  KTUNE_REQUIRE_OPENCL();
  const Epilogue e = parse("bias,rowbias,scale=-0.75,gelu,silu,residual,relu");
  const Problem problem = opencl_gemm_problem(kM, kN, kK, 0, e);
  ProblemBuffers host = ProblemBuffers::create(problem, kSeed);
  const KernelFn on_host = [&](void* const* args) -> Status {
    auto* c = static_cast<float*>(args[0]);
    const auto* a = static_cast<const float*>(args[1]);
    const auto* b = static_cast<const float*>(args[2]);
    for (std::int64_t i = 0; i < kM; ++i) {
      for (std::int64_t j = 0; j < kN; ++j) {
        double acc = 0;
        for (std::int64_t k = 0; k < kK; ++k) acc += double(a[i * kK + k]) * b[k * kN + j];
        c[i * kN + j] = static_cast<float>(acc);
      }
    }
    std::vector<const float*> operands;
    for (std::size_t i = 6; i < problem.args.size(); ++i) {
      operands.push_back(static_cast<const float*>(args[i]));
    }
    e.apply(c, kM, kN, operands);
    return {};
  };
  Result<ReferenceOutputs> expected = run_reference(on_host, host, nullptr);
  ASSERT_TRUE(expected) << expected.error().message;
  const std::filesystem::path file = dir_.path() / "expected.bin";
  ASSERT_TRUE(write_reference_file(file, problem, *expected));

  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir_.path());
  ASSERT_TRUE(backend) << backend.error().message;
  ChoicePtr reference = opencl_gemm_reference(e);
  ASSERT_TRUE(reference->compile(*backend));
  Result<LaunchSpec> launch = reference->launch_spec(problem);
  ASSERT_TRUE(launch) << launch.error().message;
  BenchmarkRequest request;
  request.candidate = reference->name();
  request.launch = *launch;
  request.problem = problem;
  request.seed = kSeed;
  request.expected = file;
  request.measure = false;
  const BenchmarkResponse response = make_request_flow(DeviceKind::kOpenCL)->serve(request);
  EXPECT_EQ(response.outcome, Outcome::kOk)
      << outcome_name(response.outcome) << ": " << response.message;
  EXPECT_EQ(reference->name(),
            "opencl_gemm_naive_bias_rowbias_scale__0_75_gelu_silu_residual_relu");
}

TEST(OpenCLEpilogueCli, AnUnknownStepIsAUsageErrorListingTheSteps) {
  TempDir cache("opencl-epilogue-cli");
  const CliResult r = run_cli(
      cache.path(), {"opencl-gemm", "--m", "8", "--n", "8", "--k", "8", "--epilogue", "bias,tanh"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: --epilogue: unknown step 'tanh'; expected a "
                                  "comma-separated list of bias, rowbias, scale=<number>, relu, "
                                  "gelu, silu, residual"));
}

}  // namespace
}  // namespace ktune::test

// `ktune gemm` end to end: compiling without a GPU, a clear error without one, and on a GPU a
// real tuning run followed by a tuning-cache hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "support/cli_run.h"
#include "support/compile_ahead_trace.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GemmCli, CompilesEveryTemplateCandidateWithoutAGpu) {
  ScratchDir cache("gemm-cli");
  // f32: the SIMT template only (the tensor-core one is f16/bf16), so this stays quick.
  CliResult r = run_cli(cache.path(), {"gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype",
                                       "f32", "--arch", "sm_80", "--compile-only"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Compiled 8 candidates for sm_80 (0 failed)"));
  EXPECT_EQ(count_artifacts(cache.path(), ".cubin"), 8);  // the SIMT space
}

TEST(GemmCli, RejectsBadArguments) {
  ScratchDir cache("gemm-cli");
  CliResult dtype = run_cli(cache.path(), {"gemm", "--m", "8", "--n", "8", "--k", "8", "--dtype",
                                           "i8", "--arch", "sm_80", "--compile-only"});
  EXPECT_EQ(dtype.exit_code, 2) << dtype.output;
  EXPECT_THAT(dtype.output, HasSubstr("--dtype: expected bf16, f16 or f32, got 'i8'"));
  CliResult size = run_cli(cache.path(), {"gemm", "--m", "0", "--n", "8", "--k", "8"});
  EXPECT_EQ(size.exit_code, 2) << size.output;
  EXPECT_THAT(size.output, HasSubstr("--m: Value 0 not in range 1 to"));
}

TEST(GemmCli, SaysSoWhenThereIsNoGpu) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is present";
  ScratchDir cache("gemm-cli");
  CliResult r = run_cli(cache.path(), {"gemm", "--m", "64", "--n", "64", "--k", "64"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("error: "));
  EXPECT_THAT(r.output, HasSubstr("arch")) << "the message should say how to compile only";
}

TEST(GemmCli, TunesOnTheGpuThenHitsTheTuningCache) {
  if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
  ScratchDir cache("gemm-cli");
  const std::vector<std::string> args = {"gemm", "--m", "256",         "--n", "512",
                                         "--k",  "384", "--budget-ms", "2"};
  CliResult first = run_cli(cache.path(), args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("AUTOTUNE gemm("));
  EXPECT_THAT(first.output, HasSubstr("Pick: "));
  EXPECT_THAT(first.output, HasSubstr("cublas_gemm"));
  CliResult second = run_cli(cache.path(), args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(second.output, Not(HasSubstr("the flags given differ")));
  // Other measurement flags still hit, and the hit says which settings answered.
  CliResult other = run_cli(cache.path(), {"gemm", "--m", "256", "--n", "512", "--k", "384",
                                           "--budget-ms", "3", "--graph-calls", "0"});
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(other.output, HasSubstr("[tuning cache] stored with --budget-ms 2 --min-runs 5"));
  EXPECT_THAT(other.output, HasSubstr("the flags given differ (--budget-ms 3 --graph-calls 0)"));
}

// The templates compile for the GPU that NVML predicts while the driver starts (GemmCompileAhead):
// they are compiled ahead, no kernel is compiled twice (the tuning joins the compiles under way
// or finds their cubins), and a tuning-cache hit compiles nothing ahead.
TEST(GemmCli, CompilesAheadOfTheDriverAndNothingTwice) {
  if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
  if (!predict_cuda_device(0)) GTEST_SKIP() << "[SKIP] NVML predicts no device here";
  ScratchDir cache("gemm-cli-ahead");
  const std::filesystem::path trace = cache.path() / "trace.json";
  const std::vector<std::string> args = {"gemm", "--m", "2048",    "--n",
                                         "2048", "--k", "2048",    "--budget-ms",
                                         "2",    "-v",  "--trace", trace.string()};
  CliResult first = run_cli(cache.path(), args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::map<std::string, int> nvrtc_runs = nvrtc_runs_of(first.output);
  ASSERT_FALSE(nvrtc_runs.empty()) << first.output;
  for (const auto& [kernel, runs] : nvrtc_runs) EXPECT_EQ(runs, 1) << kernel;
  // How much earlier the compiles start is for the benchmark (bench/gpu/ab_cold.sh) to show;
  // here, that they ran ahead at all, each candidate's once.
  std::map<std::string, int> ahead = compiled_ahead(trace);
  ASSERT_FALSE(ahead.empty()) << "nothing compiled ahead";
  for (const auto& [kernel, runs] : ahead) {
    EXPECT_EQ(runs, 1) << kernel;
    EXPECT_EQ(nvrtc_runs[kernel], 1) << kernel << " compiled ahead, yet not by NVRTC once";
  }

  std::filesystem::remove(trace);
  CliResult hit = run_cli(cache.path(), args);
  ASSERT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_TRUE(compiled_ahead(trace).empty()) << "compiled ahead for a tuning-cache hit";
  // The hit is answered for the device NVML reports, before the driver would start.
  EXPECT_THAT(hit.output, HasSubstr("without starting the CUDA driver"));
  for (const nlohmann::json& e : trace_events(trace)) {
    EXPECT_FALSE(e["name"] == "open" && e["args"]["detail"] == "CUDA driver")
        << "the driver was started for a tuning-cache hit";
  }
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  CliResult json_hit = run_cli(cache.path(), json_args);
  ASSERT_EQ(json_hit.exit_code, 0) << json_hit.output;
  EXPECT_THAT(json_hit.output, HasSubstr("\"from_cache\": true"));
  EXPECT_THAT(json_hit.output, HasSubstr("without starting the CUDA driver"));

  // A device that CUDA_VISIBLE_DEVICES hides is not answered for from NVML's list.
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved =
      before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  CliResult hidden = run_cli(cache.path(), args);
  if (saved) {
    ::setenv("CUDA_VISIBLE_DEVICES", saved->c_str(), 1);
  } else {
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  EXPECT_NE(hidden.exit_code, 0) << hidden.output;
  EXPECT_THAT(hidden.output, Not(HasSubstr("without starting the CUDA driver")));
}

}  // namespace
}  // namespace ktune::test

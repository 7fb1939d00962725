// `ktune gemm` end to end: compiling without a GPU, a clear error without one, and on a GPU a
// real tuning run followed by a tuning-cache hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/cuda_driver.h"
#include "support/cli_run.h"

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

}  // namespace
}  // namespace ktune::test

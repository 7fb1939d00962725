// `ktune tune` on an `op: cuda.gemm` spec: compiling every candidate of each problem without a
// GPU, the same clear error as `ktune gemm` without one, flags of the other spec form refused,
// and on a GPU a real tuning run whose result `ktune gemm` then finds in the tuning cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// $KTUNE_TEST_SOURCE_DIR overrides the source folder compiled in, as in data_path.
std::string source_path(const std::string& rel) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return std::string(moved && *moved ? moved : KTUNE_SOURCE_DIR) + "/" + rel;
}

std::string write_spec(const ScratchDir& dir, const std::string& text) {
  const std::string path = (dir.path() / "gemm.yaml").string();
  std::ofstream(path) << text;
  return path;
}

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(GemmSpec, CompilesEveryCandidateOfEachProblemWithoutAGpu) {
  ScratchDir cache("gemm-spec");
  // f32: the SIMT template only (the tensor-core one is f16/bf16), so this stays quick.
  const std::string spec = write_spec(cache, R"y(name: gemm_f32
op: cuda.gemm
dtype: f32
problems:
  - {name: small, M: 64, N: 64, K: 64}
  - {M: 32, N: 256, K: 128}
)y");
  CliResult r = run_cli(cache.path(), {"tune", spec, "--arch", "sm_80", "--compile-only"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, "Compiled 8 candidates for sm_80 (0 failed)"), 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Compiled the candidates of 2 problem(s)"));
  // The second problem's candidates are the first's: code-cache hits, nothing compiled twice.
  EXPECT_EQ(count_artifacts(cache.path(), ".cubin"), 8);
  // `ktune gemm` renders the same sources: its compile finds them in the code cache too.
  CliResult gemm = run_cli(cache.path(), {"gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype",
                                          "f32", "--arch", "sm_80", "--compile-only"});
  ASSERT_EQ(gemm.exit_code, 0) << gemm.output;
  EXPECT_EQ(count_artifacts(cache.path(), ".cubin"), 8);
}

TEST(GemmSpec, ProblemSelectsOneShape) {
  ScratchDir cache("gemm-spec");
  const std::string spec =
      write_spec(cache,
                 "name: g\nop: cuda.gemm\ndtype: f32\nproblems: [{M: 8, N: 8, K: 8}, {M: 9, N: 9, "
                 "K: 9}]\n");
  CliResult r =
      run_cli(cache.path(), {"tune", spec, "--arch", "sm_80", "--compile-only", "--problem", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, "Compiled 8 candidates"), 1) << r.output;
  CliResult none =
      run_cli(cache.path(), {"tune", spec, "--arch", "sm_80", "--compile-only", "--problem", "x"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("--problem 'x' matches no problem; the spec's problems are: "
                                     "M=8,N=8,K=8 (0), M=9,N=9,K=9 (1)"));
}

TEST(GemmSpec, RefusesFlagsOfTheOtherSpecForm) {
  ScratchDir cache("gemm-spec");
  CliResult cpu_flag = run_cli(
      cache.path(),
      {"tune", source_path("examples/cuda_gemm/gemm_bf16.yaml"), "--cxx", "g++", "--no-flush"});
  EXPECT_EQ(cpu_flag.exit_code, 2) << cpu_flag.output;
  EXPECT_THAT(cpu_flag.output,
              HasSubstr("gemm_bf16.yaml: --no-flush, --cxx do not apply to op: cuda.gemm specs"));
  CliResult gpu_flag = run_cli(
      cache.path(), {"tune", source_path("examples/matmul_cpu/matmul.yaml"), "--arch", "sm_80"});
  EXPECT_EQ(gpu_flag.exit_code, 2) << gpu_flag.output;
  EXPECT_THAT(
      gpu_flag.output,
      HasSubstr(
          "matmul.yaml: --arch does not apply to c++ kernel specs (only to op: and cuda specs)"));
}

TEST(GemmSpec, SaysSoWhenThereIsNoGpuAsKtuneGemmDoes) {
  if (cuda_driver()) GTEST_SKIP() << "[SKIP] a GPU is present";
  ScratchDir cache("gemm-spec");
  CliResult r = run_cli(cache.path(), {"tune", source_path("examples/cuda_gemm/gemm_bf16.yaml")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  CliResult gemm = run_cli(cache.path(), {"gemm", "--m", "64", "--n", "64", "--k", "64"});
  EXPECT_EQ(gemm.exit_code, 1) << gemm.output;
  // Said once, not once per problem, and in ktune gemm's words (which say how to compile only).
  EXPECT_EQ(r.output, gemm.output);
  EXPECT_THAT(r.output, HasSubstr("arch"));
}

TEST(GemmSpec, TunesTheExampleOnTheGpuThenHitsTheTuningCache) {
  if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
  ScratchDir cache("gemm-spec");
  const std::vector<std::string> args = {
      "tune", source_path("examples/cuda_gemm/gemm_bf16.yaml"), "--problem", "2", "--budget-ms",
      "2"};
  CliResult first = run_cli(cache.path(), args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("AUTOTUNE gemm(M=1024,N=1024,K=1024,bf16)"));
  EXPECT_THAT(first.output, HasSubstr("Pick: "));
  EXPECT_THAT(first.output, HasSubstr("Tuned gemm 1024x1024x1024 bf16"));
  EXPECT_THAT(first.output, HasSubstr("Tuned 1 problem(s)"));
  EXPECT_THAT(first.output, HasSubstr("(0 from the tuning cache)"));
  std::vector<std::string> verbose = args;
  verbose.push_back("-v");
  CliResult second = run_cli(cache.path(), verbose);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(second.output, HasSubstr("(1 from the tuning cache)"));
  // Answered for the device NVML reports, before the driver would start (where NVML predicts).
  if (predict_cuda_device(0)) {
    EXPECT_THAT(second.output, HasSubstr("without starting the CUDA driver"));
    // A problem the cache does not answer starts the driver there, and is tuned.
    std::vector<std::string> two = verbose;
    two.insert(two.end(), {"--problem", "skinny32"});
    CliResult mixed = run_cli(cache.path(), two);
    ASSERT_EQ(mixed.exit_code, 0) << mixed.output;
    EXPECT_THAT(mixed.output, HasSubstr("answered 1 problem(s) from the tuning cache"));
    EXPECT_THAT(mixed.output, Not(HasSubstr("without starting the CUDA driver")));
    EXPECT_THAT(mixed.output, HasSubstr("AUTOTUNE gemm(M=32,N=8192,K=8192,bf16)"));
    EXPECT_THAT(mixed.output, HasSubstr("Tuned 2 problem(s)"));
    EXPECT_THAT(mixed.output, HasSubstr("(1 from the tuning cache)"));
  }
  // The key is ktune gemm's: the same shape through it is a hit as well.
  CliResult gemm = run_cli(
      cache.path(), {"gemm", "--m", "1024", "--n", "1024", "--k", "1024", "--dtype", "bf16"});
  ASSERT_EQ(gemm.exit_code, 0) << gemm.output;
  EXPECT_THAT(gemm.output, HasSubstr("compiled nothing, measured nothing"));
}

}  // namespace
}  // namespace ktune::test

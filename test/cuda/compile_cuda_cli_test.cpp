// `ktune compile --device cuda`: without a GPU (NVRTC and nvcc for sm_90a, forced picks) the
// program is emitted and built; the flags that belong to the CPU path are usage errors. On a GPU:
// tuned, built, its benchmark run, and its bad arguments refused with exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/cuda_driver.h"
#include "core/file_util.h"
#include "ktune/codegen/cuda_wrapper.h"
#include "mlp_bf16_graph.h"
#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

bool nvcc_found() {
  std::error_code ec;
  const std::string nvcc = codegen::CudaBuildOptions::default_nvcc();
  return nvcc.find('/') == std::string::npos ? true : std::filesystem::exists(nvcc, ec);
}

CliResult run_program(const std::vector<std::string>& argv) {
  auto r = run_process(argv);
  if (!r) return {-1, r.error().message};
  return {r->exit_code, r->output};
}

// Fused, the MLP is gemms alone: the host code only. Unfused, its bias and relu nodes are the
// program's own kernels, whose nvcc run starts before the (forced) picks are made. Into one
// folder, unfused first: the fused program leaves no kernels of the earlier one behind.
TEST(CompileCudaCli, ForcedPicksEmitAndBuildWithoutAGpu) {
  ScratchDir out("compile-cuda-out");
  for (bool fuse : {false, true}) {
    SCOPED_TRACE(fuse ? "fused" : "--no-fuse");
    ScratchDir cache("compile-cuda-cache");
    const std::string graph = write_text(out.path(), "mlp.yaml", kMlpBf16Graph);
    const std::string dir = (out.path() / "prog").string();
    std::vector<std::string> args = {"compile",      graph,         "-o",     dir,
                                     "--device",     "cuda",        "--arch", "sm_90a",
                                     "--force-pick", "cublas_gemm", "-q"};
    if (!fuse) args.push_back("--no-fuse");
    const bool build = nvcc_found();
    if (!build) args.push_back("--no-build");
    CliResult r = run_cli(cache.path(), args);
    if (r.output.find("NVRTC") != std::string::npos && r.exit_code != 0) {
      GTEST_SKIP() << "[SKIP] " << r.output;
    }
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr("Compiled graph mlp_block for CUDA (sm_90a): 5 steps, 2 gemm(s)"));
    if (fuse) {
      EXPECT_THAT(r.output, HasSubstr("h+h_bias+a: cublas_gemm+epilogue (forced)"));
      EXPECT_THAT(r.output, HasSubstr("o+y: cublas_gemm+epilogue (forced)"));
    }
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/mlp_block.cpp"));
    for (const char* f : {"/mlp_block_kernels.cu", "/mlp_block_kernels.S"}) {
      EXPECT_EQ(std::filesystem::is_regular_file(dir + f), !fuse) << f;
    }
    if (build) {
      EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/libmlp_block.so"));
      EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/mlp_block"));
      EXPECT_EQ(std::filesystem::is_regular_file(dir + "/mlp_block_kernels.cubin"), !fuse);
    }
  }
}

TEST(CompileCudaCli, CpuOnlyFlagsAreUsageErrors) {
  ScratchDir cache("compile-cuda-cache"), out("compile-cuda-out");
  const std::string graph = write_text(out.path(), "mlp.yaml", kMlpBf16Graph);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--planner", "pool"}, {"--gemm-spec", graph}}) {
    std::vector<std::string> args = {"compile",  graph,    "-o",     out.path().string(),
                                     "--device", "cuda:0", "--arch", "sm_90a"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliResult r = run_cli(cache.path(), args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr("apply to --device cpu")) << extra[0];
  }
}

TEST(CompileCudaCli, TunedProgramRunsAndRefusesBadArguments) {
  if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
  ScratchDir cache("compile-cuda-cache"), out("compile-cuda-out");
  const std::string graph = write_text(out.path(), "mlp.yaml", kMlpBf16Graph);
  const std::string dir = (out.path() / "prog").string();
  CliResult r = run_cli(cache.path(), {"compile", graph, "-o", dir, "--device", "cuda",
                                       "--cublaslt-algos", "2", "--budget-ms", "2", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 gemm(s) (0 from the tuning cache)"));
  CliResult bench = run_program({dir + "/mlp_block", "5", "1"});
  EXPECT_EQ(bench.exit_code, 0) << bench.output;
  CliResult bad = run_program({dir + "/mlp_block", "abc"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("usage"));
  // The second compile: both problems from the tuning cache.
  r = run_cli(cache.path(), {"compile", graph, "-o", dir, "--device", "cuda", "--cublaslt-algos",
                             "2", "--budget-ms", "2", "-q", "--no-build"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 gemm(s) (2 from the tuning cache)"));
}

}  // namespace
}  // namespace ktune::test

// Users' CUDA kernels from specs through the real CLI: every CUDA example compiles through NVRTC
// for sm_90a without a GPU (templated entries lowered by name expressions); on a GPU, planted
// faults (an illegal address, a hang, an out-of-bounds write) cost one candidate each.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "support/cli_run.h"
#include "support/compile_ahead_trace.h"

namespace ktune::test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string source_path(const std::string& rel) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return std::string(moved && *moved ? moved : KTUNE_SOURCE_DIR) + "/" + rel;
}

struct Example {
  const char* spec;
  const char* problem;
};

class CudaExample : public testing::TestWithParam<Example> {};

// One problem each, to keep CI's time: the other problems differ in sizes only.
TEST_P(CudaExample, CompilesForSm90aWithoutAGpu) {
  ScratchDir cache("cuda-example");
  CliResult r = run_cli(cache.path(), {"tune", source_path(GetParam().spec), "--compile-only",
                                       "--arch", "sm_90a", "--problem", GetParam().problem});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(0 failed)"));
  EXPECT_GT(count_artifacts(cache.path(), ".cubin"), 100);  // a real space, reference included
}

INSTANTIATE_TEST_SUITE_P(Examples, CudaExample,
                         testing::Values(Example{"examples/cuda_conv2d/spec.yaml", "f7"},
                                         Example{"examples/cuda_reduction/spec.yaml", "n2e24"}));

TEST(CudaSpec, AnEntryMissingFromTheSourceIsACompileErrorNamingIt) {
  ScratchDir dir("cuda-missing-entry");
  const std::string spec = (dir.path() / "spec.yaml").string();
  std::filesystem::copy_file(data_path("cuda_spec/scale.cu"), dir.path() / "scale.cu");
  std::ofstream(spec) << "name: nope\n"
                         "kernel:\n"
                         "  language: cuda\n"
                         "  source: scale.cu\n"
                         "  entry: scael<{{B}}, 1>\n"
                         "  launch: {grid: [ceil_div(n, B)], block: [B]}\n"
                         "args:\n"
                         "  - {name: y, role: out, dtype: f32, shape: [n]}\n"
                         "  - {name: x, role: in, dtype: f32, shape: [n]}\n"
                         "  - {name: count, role: scalar, dtype: i32, value: n}\n"
                         "problems:\n  - {n: 100}\n"
                         "params:\n  B: [64]\n  FAULT: [0]\n";
  CliResult r = run_cli(dir.path() / "cache", {"tune", spec, "--compile-only", "--arch", "sm_90a"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("scael"));
  EXPECT_THAT(r.output, HasSubstr("(1 failed)"));
}

TEST(CudaSpecGpu, PlantedFaultsCostOneCandidateEach) {
  if (!cuda_device_info(0)) GTEST_SKIP() << "[SKIP] no CUDA GPU";
  ScratchDir cache("cuda-spec-faults");
  CliResult r = run_cli(cache.path(), {"tune", data_path("cuda_spec/faults.yaml"),
                                       "--run-timeout-ms", "5000", "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // 2 x 2 healthy configs (B = 2048 is over the device's limits), 4 planted, all measured before
  // the healthy ones but B = 64, I = 1: the stray writes (illegal addresses on an H200) cost
  // their candidate only, whatever they reached.
  EXPECT_THAT(r.output, HasSubstr("8 candidates (4 valid, 4 failed)"));
  EXPECT_THAT(r.output, HasSubstr("over the device's limits"));
  EXPECT_THAT(r.output, HasSubstr("timed_out"));
  EXPECT_THAT(r.output, HasSubstr("redzone_violation"));
  EXPECT_THAT(r.output, HasSubstr("Selected scale_cuda_B"));
}

// CUB from the toolkit's cccl/ folder, a parameter named as one of CUB's template parameters
// kept out of its headers by `render: none`: every config compiles without a GPU. On the GPU it
// tunes against the host reference.
TEST(CudaSpec, AKernelOnCubCompilesWithItsParameterOutOfTheHeaders) {
  ScratchDir cache("cuda-spec-cub");
  CliResult r = run_cli(cache.path(), {"tune", data_path("cuda_spec/cub_sum.yaml"),
                                       "--compile-only", "--arch", "sm_90a", "--no-cache"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(0 failed)")) << r.output;
}

TEST(CudaSpecGpu, AKernelOnCubTunes) {
  if (!cuda_device_info(0)) GTEST_SKIP() << "[SKIP] no CUDA GPU";
  ScratchDir cache("cuda-spec-cub-gpu");
  CliResult r = run_cli(cache.path(), {"tune", data_path("cuda_spec/cub_sum.yaml"), "--no-cache",
                                       "--budget-ms", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("3 candidates (3 valid, 0 failed)")) << r.output;
}

// The two other reference forms of a cuda spec build without a GPU: cuBLAS as the reference of a
// GEMM-shaped spec (and as a competing candidate), and a host C++ reference (CPU compiler).
TEST(CudaSpec, CublasAndHostReferencesCompileWithoutAGpu) {
  for (const char* spec : {"cuda_spec/gemm_cublas.yaml", "cuda_spec/host_ref.yaml"}) {
    ScratchDir cache("cuda-spec-refs");
    CliResult r = run_cli(cache.path(), {"tune", data_path(spec), "--compile-only", "--arch",
                                         "sm_90a", "--no-cache"});
    EXPECT_EQ(r.exit_code, 0) << spec << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("(0 failed)")) << spec;
  }
}

// On the GPU: cuBLAS verifies a user's GEMM kernel and competes with it; a host C++ reference
// verifies a CUDA kernel. The planted wrong element fails against either.
TEST(CudaSpecGpu, CublasAndHostReferencesCatchAWrongElement) {
  if (!cuda_device_info(0)) GTEST_SKIP() << "[SKIP] no CUDA GPU";
  ScratchDir cache("cuda-spec-refs-gpu");
  CliResult r = run_cli(cache.path(), {"tune", data_path("cuda_spec/gemm_cublas.yaml"),
                                       "--no-cache", "--budget-ms", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("5 candidates (4 valid, 1 failed)"));
  EXPECT_THAT(r.output, ContainsRegex("gemm_cuda_TILE16_WRONG1 +wrong_result"));
  EXPECT_THAT(r.output, HasSubstr("cublas"));
  EXPECT_THAT(r.output, Not(HasSubstr("no reference")));
  CliResult h = run_cli(cache.path(), {"tune", data_path("cuda_spec/host_ref.yaml"), "--no-cache",
                                       "--budget-ms", "5"});
  ASSERT_EQ(h.exit_code, 0) << h.output;
  EXPECT_THAT(h.output, HasSubstr("5 candidates (4 valid, 1 failed)"));
  EXPECT_THAT(h.output, ContainsRegex("scale_host_ref_B64_I1_FAULT4 +wrong_result"));
  EXPECT_THAT(h.output, HasSubstr("first at [50000]"));
}

// A user's CUDA kernels compile ahead of the driver too (compile_spec_ahead): the first problem's
// templates, each through NVRTC once, the tuning joining them.
TEST(CudaSpecGpu, CompilesTheFirstProblemAheadOfTheDriver) {
  if (!cuda_device_info(0)) GTEST_SKIP() << "[SKIP] no CUDA GPU";
  if (!predict_cuda_device(0)) GTEST_SKIP() << "[SKIP] NVML predicts no device here";
  ScratchDir cache("cuda-spec-ahead");
  const std::filesystem::path trace = cache.path() / "trace.json";
  CliResult r =
      run_cli(cache.path(), {"tune", data_path("cuda_spec/gemm_cublas.yaml"), "--no-cache",
                             "--budget-ms", "5", "-v", "--trace", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("5 candidates (4 valid, 1 failed)"));
  EXPECT_FALSE(compiled_ahead(trace).empty()) << "nothing compiled ahead";
  const std::map<std::string, int> runs = nvrtc_runs_of(r.output);
  ASSERT_FALSE(runs.empty()) << r.output;
  for (const auto& [kernel, n] : runs) EXPECT_EQ(n, 1) << kernel << " compiled twice";
}

// Problems the tuning cache answers need no driver (as `ktune gemm`'s hits): asked first, in spec
// order, on a backend for the device NVML reports; the driver starts at the first problem not
// answered, whose templates compile meanwhile.
TEST(CudaSpecGpu, AnswersHitsBeforeTheDriverAndTunesTheRest) {
  if (!cuda_device_info(0)) GTEST_SKIP() << "[SKIP] no CUDA GPU";
  if (!predict_cuda_device(0)) GTEST_SKIP() << "[SKIP] NVML predicts no device here";
  ScratchDir cache("cuda-spec-hits");
  const std::string spec = data_path("cuda_spec/gemm_cublas.yaml");
  const auto opened_driver = [](const std::filesystem::path& trace) {
    for (const nlohmann::json& e : trace_events(trace)) {
      if (e["name"] == "open" && e["args"]["detail"] == "CUDA driver") return true;
    }
    return false;
  };
  CliResult first =
      run_cli(cache.path(), {"tune", spec, "--problem", "square", "--budget-ms", "5"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("(0 from the tuning cache)"));

  const std::filesystem::path hit_trace = cache.path() / "hit.json";
  CliResult hit = run_cli(cache.path(), {"tune", spec, "--problem", "square", "--budget-ms", "5",
                                         "-v", "--trace", hit_trace.string()});
  ASSERT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, HasSubstr("(1 from the tuning cache)"));
  EXPECT_THAT(hit.output, HasSubstr("answered 1 problem(s) from the tuning cache for "));
  EXPECT_THAT(hit.output, HasSubstr("without starting the CUDA driver"));
  EXPECT_FALSE(opened_driver(hit_trace)) << hit.output;

  // Both problems: square answered, odd tuned on the driver (its templates compiled ahead).
  const std::filesystem::path mixed_trace = cache.path() / "mixed.json";
  CliResult mixed = run_cli(
      cache.path(), {"tune", spec, "--budget-ms", "5", "-v", "--trace", mixed_trace.string()});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.output;
  EXPECT_THAT(mixed.output, HasSubstr("answered 1 problem(s) from the tuning cache for "));
  EXPECT_THAT(mixed.output, Not(HasSubstr("without starting the CUDA driver")));
  EXPECT_THAT(mixed.output, HasSubstr("Tuned 2 problem(s)"));
  EXPECT_THAT(mixed.output, HasSubstr("(1 from the tuning cache)"));
  EXPECT_TRUE(opened_driver(mixed_trace));
  EXPECT_FALSE(compiled_ahead(mixed_trace).empty()) << "odd's templates not compiled ahead";
  // The answered problem's table comes before the tuned one's, as in spec order.
  const std::size_t square = mixed.output.find("AUTOTUNE gemm_cuda(square)");
  ASSERT_NE(square, std::string::npos) << mixed.output;
  EXPECT_LT(square, mixed.output.find("AUTOTUNE gemm_cuda(odd)")) << mixed.output;

  // Everything answered: no driver.
  const std::filesystem::path all_trace = cache.path() / "all.json";
  CliResult all = run_cli(cache.path(),
                          {"tune", spec, "--budget-ms", "5", "-v", "--trace", all_trace.string()});
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_THAT(all.output, HasSubstr("(2 from the tuning cache)"));
  EXPECT_THAT(all.output, HasSubstr("answered 2 problem(s) from the tuning cache for "));
  EXPECT_FALSE(opened_driver(all_trace)) << all.output;
}

}  // namespace
}  // namespace ktune::test

// A user's OpenCL kernel from a spec, end to end through the real CLI on the OpenCL device (PoCL
// in CI): examples/opencl_stencil tuned, and planted faults in one config each (an out-of-bounds
// write, an endless loop) costing that candidate only. Without OpenCL every test skips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"
#include "support/opencl_require.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string source_path(const std::string& rel) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return std::string(moved && *moved ? moved : KTUNE_SOURCE_DIR) + "/" + rel;
}

// Short measurements: PoCL's compiles are most of the time.
const std::vector<std::string> kQuick = {"--budget-ms",   "2", "--min-runs",      "2",
                                         "--max-runs",    "3", "--decide-rounds", "0",
                                         "--warmup-runs", "1"};

std::vector<std::string> with_quick(std::vector<std::string> args) {
  args.insert(args.end(), kQuick.begin(), kQuick.end());
  return args;
}

TEST(OpenCLSpec, TheStencilExampleTunesEndToEnd) {
  KTUNE_REQUIRE_OPENCL();
  ScratchDir cache("ocl-stencil");
  CliResult r = run_cli(
      cache.path(),
      with_quick({"tune", source_path("examples/opencl_stencil/spec.yaml"), "--problem", "ci"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("AUTOTUNE heat_step(ci)"));
  EXPECT_THAT(r.output, HasSubstr("132 candidates (132 valid, 0 failed)"));
  EXPECT_THAT(r.output, HasSubstr("over the device's limits"));
  EXPECT_THAT(r.output, HasSubstr("Selected heat_step_WG_X"));
  // Again: every candidate from the code cache, the pick from the tuning cache.
  CliResult again = run_cli(
      cache.path(),
      with_quick({"tune", source_path("examples/opencl_stencil/spec.yaml"), "--problem", "ci"}));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("1 from the tuning cache"));
}

TEST(OpenCLSpec, AnOutOfBoundsWriteAndAHangCostOneCandidateEach) {
  KTUNE_REQUIRE_OPENCL();
  ScratchDir cache("ocl-faults");
  CliResult r = run_cli(cache.path(), with_quick({"tune", data_path("opencl_spec/faults.yaml"),
                                                  "--run-timeout-ms", "4000", "--no-cache"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("8 candidates (6 valid, 2 failed)"));
  EXPECT_THAT(r.output, HasSubstr("redzone_violation"));
  EXPECT_THAT(r.output, HasSubstr("timed_out"));
  EXPECT_THAT(r.output, HasSubstr("Selected scale_faults_WG"));
  EXPECT_THAT(r.output, Not(HasSubstr("FAULT=1 (")));
}

TEST(OpenCLSpec, SpaceCountsAgainstTheDevicesLimits) {
  KTUNE_REQUIRE_OPENCL();
  ScratchDir cache("ocl-space");
  CliResult r = run_cli(cache.path(), {"space", data_path("opencl_spec/faults.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("problem n=10000:"));
  EXPECT_THAT(r.output, HasSubstr("8 candidate(s) to compile"));
}

}  // namespace
}  // namespace ktune::test

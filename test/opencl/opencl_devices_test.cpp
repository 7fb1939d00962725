// `ktune tune SPEC --devices all` on two OpenCL devices of one platform: PoCL made to show two
// CPU devices (POCL_DEVICES="pthread pthread"), one worker each (KTUNE_OPENCL_DEVICE), measuring
// at once through the real CLI. An out-of-bounds write and a hang cost their candidate alone on
// whichever device ran them; every other candidate's outcome equals a one-device run's; a device
// the platform lacks is a usage error. Skipped without OpenCL, or where the first OpenCL
// platform is not PoCL (then POCL_DEVICES shows no second device).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "support/cli_run.h"
#include "support/opencl_require.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

// PoCL with two devices for the tests of this file.
class OpenCLDevices : public testing::Test {
 protected:
  void SetUp() override { ::setenv("POCL_DEVICES", "pthread pthread", 1); }
  void TearDown() override { ::unsetenv("POCL_DEVICES"); }
};

const std::vector<std::string> kQuick = {
    "--budget-ms",      "2",    "--min-runs", "2", "--max-runs", "3", "--no-abandon",
    "--run-timeout-ms", "4000", "--no-cache"};

std::vector<std::string> args(std::vector<std::string> more) {
  std::vector<std::string> a = {"tune", data_path("opencl_spec/faults.yaml")};
  a.insert(a.end(), kQuick.begin(), kQuick.end());
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// "NAME  outcome" of the table's failures, and the valid names, as "name=ok|outcome".
std::set<std::string> outcomes(const std::string& output) {
  std::set<std::string> out;
  const std::regex row(R"(\n  (scale_faults_\S+)\s+(\S+))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), row);
       it != std::sregex_iterator(); ++it) {
    const std::string second = (*it)[2];
    const bool failed = second.find_first_of("0123456789") != 0;  // a time starts with a digit
    out.insert((*it)[1].str() + "=" + (failed ? second : "ok"));
  }
  return out;
}

TEST_F(OpenCLDevices, TwoDevicesMeasureAtOnceAndFaultsCostOneCandidateEach) {
  KTUNE_REQUIRE_OPENCL();
  ScratchDir cache("ocl-devices");
  const CliResult two = run_cli(cache.path(), args({"--devices", "all", "-v"}));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  if (two.output.find("on 2 devices at once") == std::string::npos) {
    GTEST_SKIP() << "the first OpenCL platform is not PoCL: no second device\n" << two.output;
  }
  EXPECT_THAT(two.output, testing::ContainsRegex("\\(opencl:[0-9]+:0, opencl:[0-9]+:1\\)"));
  EXPECT_THAT(two.output, HasSubstr("8 candidates (6 valid, 2 failed)"));
  EXPECT_THAT(two.output, testing::ContainsRegex("opencl:[0-9]+:[01]: worker: lost running "
                                                 "scale_faults_WG64_ITEMS1_FAULT2 \\(timed_out"));
  const CliResult one = run_cli(cache.path(), args({}));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const std::set<std::string> a = outcomes(one.output), b = outcomes(two.output);
  EXPECT_EQ(a.size(), 8u) << one.output;
  EXPECT_EQ(a, b);
  EXPECT_TRUE(b.contains("scale_faults_WG64_ITEMS1_FAULT1=redzone_violation"));
  EXPECT_TRUE(b.contains("scale_faults_WG64_ITEMS1_FAULT2=timed_out"));
}

TEST_F(OpenCLDevices, ADeviceThePlatformLacksIsAUsageError) {
  KTUNE_REQUIRE_OPENCL();
  ScratchDir cache("ocl-devices-bad");
  const CliResult r = run_cli(cache.path(), args({"--devices", "0,99"}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, testing::ContainsRegex("OpenCL platform [0-9]+ has [0-9]+ device\\(s\\); "
                                               "there is no device 99"));
  const CliResult both = run_cli(cache.path(), args({"--devices", "0", "--opencl-device", "0"}));
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_THAT(both.output, HasSubstr("cannot be combined with --opencl-device"));
}

}  // namespace
}  // namespace ktune::test

// `ktune tune SPEC --devices 0,1` on the CPU: two "devices", each a worker pinned to its own core,
// measuring at once, through the real CLI and real workers. The picks and every candidate's
// outcome equal a one-device run's; a crash, a hang and a wrong answer each cost their candidate
// alone, whichever device ran it, and -v names the device whose worker was lost; each worker is
// pinned and told its thread count; the records are keyed apart from a whole-machine tuning;
// a bad list is a usage error with nothing tuned. Needs two cores (CI's machine has two).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "support/cli_run.h"
#include "support/cores.h"
#include "support/exported_picks.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Cheap measurement; --no-abandon: abandoning depends on the best time seen so far, which
// differs with the order the devices happen to take the candidates in.
std::vector<std::string> tune_args(const std::string& spec, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"tune", data_path(spec),    "--no-abandon", "--budget-ms",
                                   "5",    "--run-timeout-ms", "3000"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(DevicesCli, TwoCpuDevicesPickAndFailAsOneDevice) {
  KTUNE_REQUIRE_TWO_CORES(two_cores);
  ScratchDir one, two;
  const CliResult single = run_cli(one.path(), tune_args("devices/devices.yaml"));
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const CliResult r =
      run_cli(two.path(), tune_args("devices/devices.yaml", {"--devices", two_cores, "-v"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("verifying and measuring 9 candidates on 2 devices at once "
                                  "(cpu:"));
  // The crash and the hang each cost one worker of the device that ran them: -v says which.
  EXPECT_THAT(r.output, testing::ContainsRegex(
                            "cpu:[0-9]+: worker: lost running scale_devices_WORK3_FAULT1_PINNED0 "
                            "\\(crashed"));
  EXPECT_THAT(r.output, testing::ContainsRegex(
                            "cpu:[0-9]+: worker: lost running scale_devices_WORK3_FAULT2_PINNED0 "
                            "\\(timed_out"));
  EXPECT_THAT(r.output, HasSubstr("Selected scale_devices_WORK1_FAULT0_PINNED0"));
  const Picks s = exported(one.path());
  const Picks d = exported(two.path());
  ASSERT_EQ(s.winner.size(), 1u);
  EXPECT_EQ(d.winner, s.winner);
  EXPECT_EQ(d.outcomes, s.outcomes);
  const std::set<std::string>& outcomes = d.outcomes.begin()->second;
  EXPECT_EQ(outcomes.size(), 9u);
  EXPECT_TRUE(outcomes.contains("scale_devices_WORK3_FAULT1_PINNED0=crashed"));
  EXPECT_TRUE(outcomes.contains("scale_devices_WORK3_FAULT2_PINNED0=timed_out"));
  EXPECT_TRUE(outcomes.contains("scale_devices_WORK3_FAULT3_PINNED0=wrong_result"));
}

TEST(DevicesCli, EachWorkerIsPinnedToItsCoreAndToldItsThreadCount) {
  KTUNE_REQUIRE_TWO_CORES(two_cores);
  ScratchDir cache;
  // Every candidate is right only in a worker on one core with OMP_NUM_THREADS=1.
  const CliResult pinned =
      run_cli(cache.path(), tune_args("devices/pinned.yaml", {"--devices", two_cores}));
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  EXPECT_THAT(pinned.output, HasSubstr("6 candidates (6 valid, 0 failed)"));
  // One device of both cores: pinned to two, so every candidate answers wrong.
  const CliResult whole = run_cli(cache.path(), tune_args("devices/pinned.yaml", {"--no-cache"}));
  EXPECT_EQ(whole.exit_code, 1) << whole.output;
  EXPECT_THAT(whole.output, HasSubstr("no valid choice among 6 candidates"));
}

TEST(DevicesCli, PicksForOneCoreDevicesAreKeyedApartFromTheWholeMachine) {
  KTUNE_REQUIRE_TWO_CORES(two_cores);
  ScratchDir cache;
  const auto devices = tune_args("devices/devices.yaml", {"--devices", two_cores});
  ASSERT_EQ(run_cli(cache.path(), devices).exit_code, 0);
  const CliResult again = run_cli(cache.path(), devices);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("(1 from the tuning cache)"));
  // The same spec on the whole machine measures what the kernels do on every core: not served
  // the one-core picks.
  const CliResult whole = run_cli(cache.path(), tune_args("devices/devices.yaml"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_THAT(whole.output, HasSubstr("(0 from the tuning cache)"));
}

TEST(DevicesCli, ABudgetedSearchEvaluatesTheSameCandidatesOnOneDeviceAndOnTwo) {
  KTUNE_REQUIRE_TWO_CORES(two_cores);
  ScratchDir one, two;
  const std::vector<std::string> budget = {"--strategy", "random",        "--max-evals",
                                           "4",          "--search-seed", "3"};
  std::vector<std::string> on_two = budget;
  on_two.insert(on_two.end(), {"--devices", two_cores});
  const CliResult a = run_cli(one.path(), tune_args("devices/devices.yaml", budget));
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const CliResult b = run_cli(two.path(), tune_args("devices/devices.yaml", on_two));
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_THAT(b.output, HasSubstr("strategy random, 4 of 9 evaluated"));
  const Picks s = exported(one.path());
  const Picks d = exported(two.path());
  EXPECT_EQ(d.outcomes, s.outcomes);  // the same 4 evaluated, the same 5 not_evaluated
  EXPECT_EQ(d.winner, s.winner);
}

TEST(DevicesCli, ABadListIsAUsageErrorAndNothingIsTuned) {
  ScratchDir cache;
  const std::map<std::vector<std::string>, std::string> cases = {
      {{"--devices", "0,0"}, "core 0 is in two devices"},
      {{"--devices", "4095"}, "core 4095 is not one ktune may run on"},
      {{"--devices", "x"}, "--devices x: 'x' is not an index"},
      {{"--devices", "1-0"}, "'1-0' is not a range a-b with a <= b"},
      {{"--devices", "0", "--in-process"}, "cannot be combined with --in-process"},
  };
  for (const auto& [flags, message] : cases) {
    const CliResult r = run_cli(cache.path(), tune_args("devices/devices.yaml", flags));
    EXPECT_EQ(r.exit_code, 2) << fmt::format("{}", fmt::join(flags, " ")) << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(message));
    EXPECT_THAT(r.output, Not(HasSubstr("AUTOTUNE")));
  }
  EXPECT_EQ(count_artifacts(cache.path()), 0);
}

}  // namespace
}  // namespace ktune::test

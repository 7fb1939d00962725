// Every numeric option of every command is range-checked when it is parsed: a value outside is a
// usage error (exit 2) whose message names the flag and the range, before any spec is read or
// device opened. One row per option and command; the values sit just outside each range.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

struct RangeCase {
  std::string command;  // tune, gemm or opencl-gemm
  std::string flag;
  std::string value;     // just outside the range
  std::string expected;  // the range as the message says it
};

// The arguments a command needs besides the flag under test. A spec path that does not exist:
// the range check must come first.
std::vector<std::string> base_args(const std::string& command) {
  if (command == "tune") return {"tune", "no-such-spec.yaml"};
  return {command, "--m", "8", "--n", "8", "--k", "8"};
}

std::vector<RangeCase> range_cases() {
  std::vector<RangeCase> cases;
  // The selector flags, on each command that takes them.
  for (const std::string cmd : {"tune", "gemm", "opencl-gemm"}) {
    cases.push_back({cmd, "--jobs", "0", "not in range 1 to 4096"});
    cases.push_back({cmd, "--budget-ms", "0", "not in range 0.001"});
    cases.push_back({cmd, "--budget-ms", "-5", "not in range 0.001"});
    cases.push_back({cmd, "--min-runs", "0", "not in range 1 to 1000000"});
    cases.push_back({cmd, "--max-runs", "0", "not in range 1 to 1000000"});
    cases.push_back({cmd, "--warmup-runs", "-1", "not in range 0 to 1000000"});
    cases.push_back({cmd, "--close-call-band", "-0.5", "not in range 0"});
    cases.push_back({cmd, "--decide-rounds", "1001", "not in range 0 to 1000"});
    cases.push_back({cmd, "--seed", "-1", "not in range 0 to 18446744073709551615"});
    cases.push_back({cmd, "--top", "-1", "not in range 0 to 1000000"});
    cases.push_back({cmd, "--run-timeout-ms", "0", "not in range 1 to 86400000"});
  }
  for (const std::string cmd : {"tune", "opencl-gemm"}) {
    cases.push_back({cmd, "--memory-limit-mb", "-1", "not in range 0 to 1073741824"});
  }
  cases.push_back({"tune", "--compile-timeout-s", "0", "not in range 1 to 86400"});
  cases.push_back({"tune", "--device", "-1", "not in range 0 to 1023"});
  cases.push_back({"gemm", "--device", "-1", "not in range 0 to 1023"});
  cases.push_back({"gemm", "--graph-calls", "-2", "not in range -1 to 1000"});
  cases.push_back({"gemm", "--cublaslt-algos", "-1", "not in range 0 to 1000"});
  cases.push_back({"gemm", "--regret-rounds", "-1", "not in range 0 to 100000"});
  for (const std::string cmd : {"gemm", "opencl-gemm"}) {
    for (const std::string size : {"--m", "--n", "--k"}) {
      cases.push_back({cmd, size, "0", "not in range 1 to 2147483648"});
    }
  }
  return cases;
}

TEST(FlagRanges, EveryNumericOptionOutsideItsRangeExitsTwoWithTheRange) {
  ScratchDir cache("flag-ranges");
  for (const RangeCase& c : range_cases()) {
    std::vector<std::string> args = base_args(c.command);
    // --m/--n/--k are in the base arguments: the last one given wins in CLI11, so append.
    args.push_back(c.flag);
    args.push_back(c.value);
    const CliResult r = run_cli(cache.path(), args);
    SCOPED_TRACE(c.command + " " + c.flag + " " + c.value);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.flag + ": Value " + c.value + " " + c.expected));
  }
}

TEST(FlagRanges, MinRunsAboveMaxRunsIsAUsageError) {
  ScratchDir cache("flag-ranges");
  const std::string spec = data_path("cli/mm.yaml");
  CliResult r = run_cli(cache.path(), {"tune", spec, "--min-runs", "9", "--max-runs", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--min-runs 9 is above --max-runs 3"));
  // Against the other's default (tune: at most 200 runs).
  r = run_cli(cache.path(), {"tune", spec, "--min-runs", "300"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--min-runs 300 is above --max-runs 200"));
}

}  // namespace
}  // namespace ktune::test

// `ktune simulate` and `ktune cache export --format` on bad input: a strategy that does not
// exist, seeds, batch, budget or target out of range are usage errors (exit 2) naming the option
// and the accepted values; an input that is not T4 is a reported error (exit 1) naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

// Four configs of one parameter and a library call; X=2 is the fastest.
constexpr const char* kT4 = R"({"schema_version": "1.0.0", "results": [
  {"configuration": {"X": 1}, "times": {"runtimes": [3.0]}, "invalidity": "correct", "correctness": 1},
  {"configuration": {"X": 2}, "times": {"runtimes": [1.0]}, "invalidity": "correct", "correctness": 1},
  {"configuration": {"X": 3}, "times": {"runtimes": []}, "invalidity": "compile", "correctness": 1},
  {"configuration": {"X": 4}, "times": {"runtimes": [2.0]}, "invalidity": "correct", "correctness": 1}]})";

class SimulateErrors : public ::testing::Test {
 protected:
  SimulateErrors() : cache_("simulate-cache"), dir_("simulate-input") {
    t4_ = write_text(dir_.path(), "space.t4.json", kT4);
  }
  CliResult simulate(std::vector<std::string> extra) {
    std::vector<std::string> args = {"simulate", "--t4", t4_, "--seeds", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(cache_.path(), args);
  }
  ScratchDir cache_;
  ScratchDir dir_;
  std::string t4_;
};

TEST_F(SimulateErrors, AGoodSpaceIsScored) {
  const CliResult r = simulate({"--strategy", "exhaustive,random"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Exhaustive reaches X=2 at its second evaluation, on every seed.
  EXPECT_THAT(r.output, HasSubstr("4 candidates (1 parameters)"));
  EXPECT_THAT(r.output, testing::ContainsRegex("exhaustive +2.0 2.0 2.0"));
}

TEST_F(SimulateErrors, UnknownStrategyNamesTheAcceptedOnes) {
  const CliResult r = simulate({"--strategy", "random,bogus"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--strategy"));
  EXPECT_THAT(r.output, HasSubstr("hill_climbing"));
}

TEST_F(SimulateErrors, NumbersOutOfRangeNameTheOptionAndRange) {
  struct Case {
    std::string flag, value, expected;
  };
  for (const Case& c :
       {Case{"--seeds", "0", "not in range 1 to 100000"}, Case{"--seeds", "-3", "not in range 1"},
        Case{"--batch", "0", "not in range 1 to 4096"}, Case{"--max-evals", "0", "not in range 1"},
        Case{"--within", "-0.5", "not in range 0"}}) {
    const CliResult r = simulate({c.flag, c.value});
    EXPECT_EQ(r.exit_code, 2) << c.flag << " " << c.value << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.flag)) << c.flag;
    EXPECT_THAT(r.output, HasSubstr(c.expected)) << c.flag;
  }
}

TEST_F(SimulateErrors, BadInputIsAReportedError) {
  const std::string bad = write_text(dir_.path(), "bad.json", R"({"results": [{"times": {}}]})");
  CliResult r = run_cli(cache_.path(), {"simulate", "--t4", bad});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bad.json"));
  EXPECT_THAT(r.output, HasSubstr("$.results[0]"));
  r = run_cli(cache_.path(), {"simulate", "--t4", t4_, "--problem", "p"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli(cache_.path(), {"simulate"});  // an empty cache: nothing to replay
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no tuning record"));
}

TEST_F(SimulateErrors, ExportFormatIsChecked) {
  const CliResult r = run_cli(cache_.path(), {"cache", "export", "--format", "csv", "-o", "x"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--format"));
}

}  // namespace
}  // namespace ktune::test

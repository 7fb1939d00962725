// End to end through the real CLI: a spec's per-argument init: decides what data the kernel sees,
// in the worker, on both verification sets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// log(x) on x in [0.5, 2): every candidate verifies (also on the stress set, which draws from
// the same range), and one is picked.
TEST(InitCli, LogOfAPositiveInitTunes) {
  ScratchDir cache("init-log");
  CliResult r = run_cli(cache.path(), {"tune", data_path("init/log.yaml"), "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("3 candidates (3 valid, 0 failed)"));
  EXPECT_THAT(r.output, HasSubstr("Selected logx_UNROLL"));
  EXPECT_THAT(r.output, Not(HasSubstr("nan_output")));
}

// The planted case: without init:, ktune's own data has x < 0, the reference's log is NaN
// there, and nothing is tuned: today's behaviour, kept.
TEST(InitCli, LogWithoutInitIsNanOutput) {
  ScratchDir cache("init-log-none");
  CliResult r =
      run_cli(cache.path(), {"tune", data_path("init/log_noinit.yaml"), "--budget-ms", "2"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nan_output"));
  EXPECT_THAT(r.output, HasSubstr("Tuned 0 problem(s)"));
}

// A histogram indexes H with X's values: the int init over `bins - 1` keeps every index in
// range for both problems (ktune's own integers, in [-8, 8], would write before H).
TEST(InitCli, HistogramOverIntInitsTunesEveryProblem) {
  ScratchDir cache("init-hist");
  CliResult r = run_cli(cache.path(), {"tune", data_path("init/hist.yaml"), "--budget-ms", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("AUTOTUNE hist(n=20000,bins=100)"));
  EXPECT_THAT(r.output, HasSubstr("AUTOTUNE hist(n=5000,bins=1000)"));
  EXPECT_THAT(r.output, HasSubstr("Tuned 2 problem(s)"));
  EXPECT_THAT(r.output, HasSubstr("3 candidates (3 valid, 0 failed)"));
  EXPECT_THAT(r.output, Not(HasSubstr("redzone_violation")));
}

}  // namespace
}  // namespace ktune::test

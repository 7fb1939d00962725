// Progress through the real CLI: the live lines of a terminal ($KTUNE_PROGRESS=tty stands in for
// one: the test reads a pipe), the plain lines of a log, and how soon a space of thousands of
// configs shows progress.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// $KTUNE_PROGRESS for the CLI runs of one test.
class ProgressMode {
 public:
  explicit ProgressMode(const char* mode) { ::setenv("KTUNE_PROGRESS", mode, 1); }
  ~ProgressMode() { ::unsetenv("KTUNE_PROGRESS"); }
  ProgressMode(const ProgressMode&) = delete;
  ProgressMode& operator=(const ProgressMode&) = delete;
};

// --no-abandon: these tests read the progress lines' counts, where a candidate abandoned as
// slower (on a loaded machine, any of them may be) shows as ", 1 failed".
std::vector<std::string> tune_small(const std::string& spec) {
  return {"tune",       data_path(spec), "--problem", "small",
          "--no-cache", "--budget-ms",   "2",         "--no-abandon"};
}

TEST(ProgressCli, ATerminalGetsOneFinishedLinePerPhase) {
  ProgressMode tty("tty");
  ScratchDir cache("progress-tty");
  const CliResult r = run_cli(cache.path(), tune_small("cli/mm.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("\r\x1b[Kktune: mm(small): compiling on "));
  EXPECT_THAT(r.output, HasSubstr("\r\x1b[Kktune: mm(small): compiled 4/4 in "));
  EXPECT_THAT(r.output, HasSubstr("\r\x1b[Kktune: mm(small): measured 4/4 in "));
  EXPECT_THAT(r.output, HasSubstr("; best ")) << "the fastest candidate, with its time";
  EXPECT_THAT(r.output, HasSubstr("re-verified ")) << "the pick's checks have a line too";
  EXPECT_THAT(r.output, Not(HasSubstr("ktune: compiled 1/4\n"))) << "no log lines on a terminal";
  EXPECT_THAT(r.output, HasSubstr("\nAUTOTUNE mm(small)")) << "the table starts on its own line";
}

TEST(ProgressCli, ALogGetsThePlainLines) {
  ProgressMode plain("plain");
  ScratchDir cache("progress-plain");
  const CliResult r = run_cli(cache.path(), tune_small("cli/mm.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("ktune: mm(small): compiling 4 candidates on "));
  EXPECT_THAT(r.output, HasSubstr("ktune: compiled 4/4\n"));
  EXPECT_THAT(r.output, HasSubstr("ktune: measured 4/4\n"));
  EXPECT_THAT(r.output, Not(HasSubstr("\r"))) << "nothing redrawn in a log";
  EXPECT_THAT(r.output, Not(HasSubstr("ktune: compile mm_"))) << "commands need --verbose";
}

// 4096 configs: the first progress line comes before any compile finishes. The CLI is stopped
// after 2 s (the issue asks for a line within 1 s; the margin is for a loaded CI machine), and
// what it printed by then must include the compile stage's header. Locally: 0.07 s. Exhaustive,
// so that all 4096 are compiled; by default (a budgeted search) the search says so first.
TEST(ProgressCli, AThousandsOfConfigsSpaceShowsProgressAtOnce) {
  ProgressMode plain("plain");
  ScratchDir cache("progress-big");
  const char* moved = std::getenv("KTUNE_TEST_CLI");
  ProcessOptions options;
  options.timeout = std::chrono::seconds(2);
  const auto r = run_process(
      {moved && *moved ? moved : KTUNE_CLI, "--cache-dir", cache.path().string(), "tune",
       data_path("progress/big_space.yaml"), "--no-cache", "-j1", "--strategy", "exhaustive"},
      options);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out) << "4096 compiles cannot be done in 2 s: " << r->output;
  EXPECT_THAT(r->output, HasSubstr("ktune: scale(small): compiling 4096 candidates on 1 threads"));
  const auto budgeted =
      run_process({moved && *moved ? moved : KTUNE_CLI, "--cache-dir", cache.path().string(),
                   "tune", data_path("progress/big_space.yaml"), "--no-cache", "-j1"},
                  options);
  ASSERT_TRUE(budgeted) << budgeted.error().message;
  EXPECT_THAT(budgeted->output,
              HasSubstr("ktune: scale(small): searching 4096 candidates with strategy model, at "
                        "most 409 measured, in batches of 1"));
}

}  // namespace
}  // namespace ktune::test

// --verbose against a planted crash (test/data/faults/faults.cpp): each compiler command line,
// and the candidate that cost a worker and why; without --verbose, or with --quiet, neither.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "faults/fault_support.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(VerboseFaults, NamesCompilerCommandsAndTheCandidateThatCostAWorker) {
  ScratchDir dir("verbose-crash");
  const std::string spec = write_fault_spec(dir, {0, 10});  // 10: a segfault
  std::vector<std::string> args = fault_tune_args(spec);
  args.emplace_back("--verbose");
  const CliResult r = run_cli(dir.path() / "cache", args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("ktune: compile add_FAULT10: "));
  EXPECT_THAT(r.output, HasSubstr("-shared -fPIC")) << "the command line as run";
  EXPECT_THAT(r.output, HasSubstr("ktune: worker: lost running add_FAULT10 (crashed: "));
  EXPECT_THAT(r.output, HasSubstr("SIGSEGV"));

  // The same crash again from the code cache: no compiles, so no command lines; the worker's
  // loss is still told.
  args.emplace_back("--retune");
  const CliResult again = run_cli(dir.path() / "cache", args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, Not(HasSubstr("ktune: compile add_FAULT")));
  EXPECT_THAT(again.output, HasSubstr("ktune: worker: lost running add_FAULT10 (crashed: "));
}

TEST(VerboseFaults, WithoutVerboseOrWithQuietNeitherIsPrinted) {
  ScratchDir dir("verbose-off");
  const std::string spec = write_fault_spec(dir, {0, 10});
  const CliResult plain = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_THAT(plain.output, HasSubstr("ktune: measured 2/2"));
  EXPECT_THAT(plain.output, Not(HasSubstr("ktune: compile ")));
  EXPECT_THAT(plain.output, Not(HasSubstr("worker: lost")));

  std::vector<std::string> args = fault_tune_args(spec);
  args.insert(args.end(), {"--verbose", "--quiet", "--retune"});
  const CliResult quiet = run_cli(dir.path() / "cache", args);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_THAT(quiet.output, Not(HasSubstr("ktune: "))) << "--quiet wins over --verbose";
}

}  // namespace
}  // namespace ktune::test

// What a user sees on bad input: exit 2 for usage errors, exit 1 and a message that names the
// file, line and what was expected for a bad spec; nothing is written to the caches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGoodArgs = R"(args:
  - {name: C, role: out, dtype: f32, shape: [n]}
  - {name: A, role: in, dtype: f32, shape: [n]}
  - {name: B, role: in, dtype: f32, shape: [n]}
  - {name: n, dtype: i32, value: n}
)";

class CliErrors : public ::testing::Test {
 protected:
  CliErrors() : cache_("errors-cache"), dir_("errors-specs") {
    std::filesystem::copy_file(data_path("cli/faulty.cpp"), dir_.path() / "faulty.cpp");
  }
  CliResult tune_text(const std::string& text) {
    return run_cli(cache_.path(), {"tune", write_text(dir_.path(), "spec.yaml", text)});
  }
  ScratchDir cache_;
  ScratchDir dir_;
};

TEST_F(CliErrors, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli(cache_.path(), {}).exit_code, 2);
  EXPECT_EQ(run_cli(cache_.path(), {"frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_cli(cache_.path(), {"tune"}).exit_code, 2);
  EXPECT_EQ(run_cli(cache_.path(), {"tune", "x.yaml", "--budget-ms", "fast"}).exit_code, 2);
  EXPECT_EQ(run_cli(cache_.path(), {"--help"}).exit_code, 0);
}

TEST_F(CliErrors, DecideFlagsOutOfRangeExitTwoWithTheRange) {
  CliResult r = run_cli(cache_.path(), {"tune", "x.yaml", "--decide-rounds", "-1"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not in range 0 to 1000"));
  r = run_cli(cache_.path(), {"tune", "x.yaml", "--close-call-band", "-0.5"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--close-call-band"));
}

TEST_F(CliErrors, MissingSpecFile) {
  CliResult r = run_cli(cache_.path(), {"tune", (dir_.path() / "nope.yaml").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("error: "));
  EXPECT_THAT(r.output, HasSubstr("nope.yaml"));
}

TEST_F(CliErrors, SyntaxErrorNamesTheLine) {
  CliResult r = tune_text("name: add\nkernel: {source: faulty.cpp, entry: add\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("spec.yaml:"));
  EXPECT_THAT(r.output, HasSubstr("syntax error"));
}

TEST_F(CliErrors, UnknownDtypeNamesLineAndChoices) {
  std::string args = kGoodArgs;
  args.replace(args.find("dtype: f32"), 10, "dtype: f33");
  CliResult r = tune_text("name: add\nkernel: {source: faulty.cpp, entry: add}\n" + args +
                          "problems:\n  - {n: 8}\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("spec.yaml:4:"));
  EXPECT_THAT(r.output, HasSubstr("unknown dtype 'f33'"));
  EXPECT_THAT(r.output, HasSubstr("f16, bf16, f32"));
}

TEST_F(CliErrors, RestrictionNamingUnknownParameter) {
  CliResult r =
      tune_text(std::string("name: add\nkernel: {source: faulty.cpp, entry: add}\n") + kGoodArgs +
                "problems:\n  - {n: 8}\nparams:\n  FAULT: [0, 1]\nrestrictions:\n"
                "  - FAULTS < 2\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("spec.yaml:13:5: restrictions[0]"));
  EXPECT_THAT(r.output, HasSubstr("FAULTS"));
  EXPECT_THAT(r.output, HasSubstr("FAULT"));
  EXPECT_EQ(count_artifacts(cache_.path()), 0);
}

TEST_F(CliErrors, AllCandidatesFailingIsAReportedError) {
  CliResult r = tune_text(std::string("name: add\nkernel: {source: faulty.cpp, entry: add}\n") +
                          kGoodArgs + "problems:\n  - {n: 8}\nparams:\n  FAULT: [2, 6]\n");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no valid choice among 2 candidates"));
  EXPECT_THAT(r.output, HasSubstr("1 compile_error"));
  EXPECT_THAT(r.output, HasSubstr("1 nan_output"));
}

}  // namespace
}  // namespace ktune::test

// `ktune tune` with a search budget, end to end: --max-evals measures that many candidates, the
// table counts the rest, the record answers the same budgeted request but never one for every
// candidate; the spec's `search:` section does the same and the flags override it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// mm.yaml's kernel over 12 configs, one problem, no extern (the reference is a kernel too).
std::string twelve_config_spec(const std::filesystem::path& dir, const std::string& search) {
  std::filesystem::copy_file(data_path("cli/mm.cpp"), dir / "mm.cpp");
  return write_text(dir, "mm12.yaml",
                    "name: mm12\n"
                    "kernel: {source: mm.cpp, entry: mm}\n"
                    "args:\n"
                    "  - {name: C, role: out, dtype: f32, shape: [M, N]}\n"
                    "  - {name: A, role: in, dtype: f32, shape: [M, K]}\n"
                    "  - {name: B, role: in, dtype: f32, shape: [K, N]}\n"
                    "  - {name: M, dtype: i32, value: M}\n"
                    "  - {name: N, dtype: i32, value: N}\n"
                    "  - {name: K, dtype: i32, value: K}\n"
                    "problems:\n"
                    "  - {name: small, M: 8, N: 16, K: 16}\n"
                    "params:\n"
                    "  BLOCK: [1, 2, 4, 8, 16, 32]\n"
                    "  PAD: [0, 1]\n"
                    "reference:\n"
                    "  kernel: {source: mm.cpp, entry: mm, flags: [-DBLOCK=4, -DPAD=0]}\n" +
                        search);
}

TEST(SearchCli, MaxEvalsMeasuresThatManyAndTheRecordAnswersOnlyABudgetedRequest) {
  ScratchDir dir("search-cli");
  const std::string spec = twelve_config_spec(dir.path(), "");
  const std::vector<std::string> budgeted = {"tune",        spec, "--budget-ms", "1",
                                             "--max-evals", "5",  "--strategy",  "exhaustive"};
  CliResult first = run_cli(dir.path() / "cache", budgeted);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output,
              HasSubstr("12 candidates (5 valid, 0 failed, 7 not measured, outside the search "
                        "budget (strategy exhaustive, 5 of 12 evaluated))"));
  // Not row by row.
  EXPECT_THAT(first.output, Not(HasSubstr("not_evaluated ")));
  // Only what was evaluated was compiled: five candidates and the reference.
  EXPECT_EQ(count_artifacts(dir.path() / "cache"), 6);

  CliResult again = run_cli(dir.path() / "cache", budgeted);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("[tuning cache]"));
  EXPECT_THAT(again.output, HasSubstr("7 not measured, outside the search budget"));

  // Every candidate asked for: the sampled record does not answer.
  CliResult full = run_cli(dir.path() / "cache", {"tune", spec, "--budget-ms", "1"});
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_THAT(full.output, Not(HasSubstr("[tuning cache]")));
  EXPECT_THAT(full.output, HasSubstr("made by a budgeted search; measuring every candidate"));
  // All 12 measured (none left out of the summary's parenthesis); on a loaded machine one may be
  // abandoned as slower, which is valid and follows the parenthesis.
  EXPECT_THAT(full.output, HasSubstr("12 candidates (12 valid, 0 failed)"));
}

TEST(SearchCli, TheSpecsSearchSectionAppliesAndTheFlagsOverrideIt) {
  ScratchDir dir("search-spec");
  const std::string spec =
      twelve_config_spec(dir.path(), "search: {strategy: exhaustive, max_evals: 3, seed: 7}\n");
  CliResult from_spec =
      run_cli(dir.path() / "cache", {"tune", spec, "--budget-ms", "1", "--no-cache"});
  ASSERT_EQ(from_spec.exit_code, 0) << from_spec.output;
  EXPECT_THAT(from_spec.output, HasSubstr("(strategy exhaustive, 3 of 12 evaluated)"));
  CliResult flag = run_cli(dir.path() / "cache",
                           {"tune", spec, "--budget-ms", "1", "--no-cache", "--max-evals", "4"});
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  EXPECT_THAT(flag.output, HasSubstr("(strategy exhaustive, 4 of 12 evaluated)"));
}

}  // namespace
}  // namespace ktune::test

// End to end through the real CLI: a C++ spec without a reference, one candidate planted wrong.
// The first valid candidate stands in for the reference, the wrong one fails as wrong_result,
// the output says so loudly, and the spec's metrics are columns of the table, stored with the
// record (export) and shown again on the cache hit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

TEST(NoReferenceCli, TheFirstValidCandidateStandsInAndTheWrongOneFails) {
  ScratchDir cache("no-reference");
  const std::vector<std::string> tune = {"tune", data_path("no_reference/scale.yaml"),
                                         "--budget-ms", "2"};
  std::vector<std::string> logged = tune;
  const std::string log = (cache.path() / "tune.jsonl").string();
  logged.insert(logged.end(), {"--json-log", log});
  CliResult r = run_cli(cache.path(), logged);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string note =
      "no reference: candidates compared with each other (against the first valid candidate, "
      "scale_VARIANT0)";
  EXPECT_THAT(r.output, HasSubstr("  " + note + "\n"));
  EXPECT_THAT(r.output, HasSubstr("benchmarking; " + note));
  EXPECT_THAT(r.output, HasSubstr("4 candidates (3 valid, 1 failed)"));
  EXPECT_THAT(r.output, testing::ContainsRegex("scale_VARIANT2 +wrong_result"));
  EXPECT_THAT(r.output, HasSubstr("[comparison basis: stands in for the missing reference]"));
  EXPECT_THAT(r.output, HasSubstr("GB/s    Gelem/s"));  // the metrics' header

  std::ifstream in(log);
  std::stringstream lines;
  lines << in.rdbuf();
  EXPECT_THAT(lines.str(), HasSubstr("\"stand_in\":\"scale_VARIANT0\"")) << lines.str();
  EXPECT_THAT(lines.str(), HasSubstr("\"metrics\":{\"GB/s\":")) << lines.str();

  CliResult exported = run_cli(cache.path(), {"cache", "export", "-"});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("\"stand_in\": \"scale_VARIANT0\""));
  EXPECT_THAT(exported.output, HasSubstr("\"name\": \"Gelem/s\""));

  CliResult hit = run_cli(cache.path(), tune);
  ASSERT_EQ(hit.exit_code, 0) << hit.output;
  EXPECT_THAT(hit.output, HasSubstr("[tuning cache]"));
  EXPECT_THAT(hit.output, HasSubstr("  " + note + "\n"));
  EXPECT_THAT(hit.output, HasSubstr("GB/s    Gelem/s"));
  EXPECT_THAT(hit.output, HasSubstr("compiled nothing, measured nothing"));
}

}  // namespace
}  // namespace ktune::test

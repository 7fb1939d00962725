// A tuning's record carries its candidates' parameters through the cache, the T4 export and
// `ktune simulate`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

TEST(SimulateCli, ATunedRecordIsExportedAsT4AndReplayed) {
  ScratchDir cache("simulate-cli-cache");
  CliResult tuned = run_cli(
      cache.path(), {"tune", data_path("cli/mm.yaml"), "--problem", "small", "--budget-ms", "2"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;

  const std::string file = (cache.path() / "small.t4.json").string();
  CliResult exported = run_cli(cache.path(), {"cache", "export", "--format", "t4", "-o", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema_version"], "1.0.0");
  std::vector<int> blocks;
  for (const auto& r : doc["results"]) {
    if (r["configuration"].contains("BLOCK")) blocks.push_back(r["configuration"]["BLOCK"]);
  }
  EXPECT_EQ(blocks, (std::vector<int>{4, 8, 16}));  // the spec's order; 32 is restricted away

  // From the cache (its only record) and from the T4 file: the same space, 3 templates and the
  // library call.
  for (std::vector<std::string> source :
       {std::vector<std::string>{}, std::vector<std::string>{"--t4", file}}) {
    std::vector<std::string> args = {"simulate", "--seeds", "3", "--strategy", "exhaustive,model"};
    args.insert(args.end(), source.begin(), source.end());
    CliResult sim = run_cli(cache.path(), args);
    ASSERT_EQ(sim.exit_code, 0) << sim.output;
    EXPECT_THAT(sim.output, HasSubstr("4 candidates (1 parameters)"));
    EXPECT_THAT(sim.output, HasSubstr("model"));
  }
  CliResult templates = run_cli(cache.path(), {"simulate", "--t4", file, "--no-library", "--json",
                                               "--seeds", "2", "--strategy", "random"});
  ASSERT_EQ(templates.exit_code, 0) << templates.output;
  const nlohmann::json sim = nlohmann::json::parse(templates.output);
  EXPECT_EQ(sim["candidates"], 3);
  EXPECT_EQ(sim["strategies"][0]["reached_fraction"], 1.0);
}

}  // namespace
}  // namespace ktune::test

// Bad search input is a usage error that names the option and the accepted range: the flags
// (exit 2 before any spec is read) and the spec's `search:` section (file:line:col, exit 1 as
// every error in a spec).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

struct BadFlag {
  std::string flag;
  std::string value;
  std::string expected;
};

TEST(SearchInput, BadSearchFlagsExitTwoNamingTheFlagAndTheRange) {
  ScratchDir cache("search-flags");
  const std::vector<BadFlag> cases = {
      {"--strategy", "bogus", "--strategy: unknown strategy 'bogus'; expected one of auto"},
      {"--max-evals", "0", "--max-evals: Value 0 not in range 1 to"},
      {"--max-evals", "-3", "--max-evals: Value -3 not in range 0 to"},
      {"--time-limit-s", "0", "--time-limit-s: Value 0 not in range 0.001"},
      {"--time-limit-s", "-2", "--time-limit-s: Value -2 not in range 0.001"},
      {"--search-seed", "-1", "--search-seed: Value -1 not in range 0 to"},
  };
  for (const std::string command : {"tune", "gemm"}) {
    for (const BadFlag& c : cases) {
      std::vector<std::string> args =
          command == "tune" ? std::vector<std::string>{"tune", "no-such-spec.yaml"}
                            : std::vector<std::string>{"gemm", "--m", "8", "--n", "8", "--k", "8"};
      args.push_back(c.flag);
      args.push_back(c.value);
      const CliResult r = run_cli(cache.path(), args);
      SCOPED_TRACE(command + " " + c.flag + " " + c.value);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_THAT(r.output, HasSubstr(c.expected));
    }
  }
}

TEST(SearchInput, BadSearchSectionNamesTheFieldWithItsPosition) {
  ScratchDir dir("search-spec");
  const std::string spec_head = std::string(
                                    "name: mm\n"
                                    "kernel: {source: ") +
                                data_path("cli/mm.cpp") +
                                ", entry: mm}\n"
                                "args:\n"
                                "  - {name: C, role: out, dtype: f32, shape: [M, N]}\n"
                                "  - {name: A, role: in, dtype: f32, shape: [M, K]}\n"
                                "  - {name: B, role: in, dtype: f32, shape: [K, N]}\n"
                                "  - {name: M, dtype: i32, value: M}\n"
                                "  - {name: N, dtype: i32, value: N}\n"
                                "  - {name: K, dtype: i32, value: K}\n"
                                "problems:\n"
                                "  - {name: small, M: 4, N: 4, K: 4}\n"
                                "params:\n"
                                "  BLOCK: [4, 8]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"search: {strategy: bogus}\n", ":14:20: search.strategy: unknown strategy 'bogus'"},
      {"search: {max_evals: 0}\n", ":14:21: search.max_evals: expected an integer >= 1; got 0"},
      {"search: {time_limit_s: -1}\n",
       ":14:24: search.time_limit_s: expected a number of seconds > 0; got -1"},
      {"search: {budget: 3}\n", "search.budget: unknown key; expected one of strategy"},
  };
  for (const auto& [section, expected] : cases) {
    const std::string spec = write_text(dir.path(), "bad.yaml", spec_head + section);
    const CliResult r = run_cli(dir.path() / "cache", {"tune", spec});
    SCOPED_TRACE(section);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr(expected));
  }
}

}  // namespace
}  // namespace ktune::test

// search: parsed into SearchOptions with positioned errors for each field.
#include <gtest/gtest.h>

#include <string>

#include "spec_test_util.h"

namespace ktune {
namespace {

using spec_test::parse_inline;
using spec_test::specs_dir;

const std::string kHead = std::string(spec_test::kAddHead) + spec_test::kOneProblem;

TEST(SpecSearch, EveryFieldIsRead) {
  auto spec = parse_inline(kHead + std::string("search:\n  strategy: exhaustive\n  max_evals: 40\n"
                                               "  time_limit_s: 2.5\n  seed: 9\n"));
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->search.strategy, "exhaustive");
  EXPECT_EQ(spec->search.max_evals, 40u);
  EXPECT_EQ(spec->search.time_limit_s, 2.5);
  EXPECT_EQ(spec->search.seed, 9u);
}

TEST(SpecSearch, WithoutTheSectionAutoAndNoBudget) {
  auto spec = parse_inline(kHead);
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->search.strategy, "auto");
  EXPECT_FALSE(spec->search.max_evals);
  EXPECT_FALSE(spec->search.time_limit_s);
}

struct BadSearch {
  const char* label;
  std::string search;
  std::string message;  // after "<specs dir>/inline.yaml:"
};

void PrintTo(const BadSearch& c, std::ostream* os) { *os << c.label; }

class BadSearches : public testing::TestWithParam<BadSearch> {};

TEST_P(BadSearches, ReportsWhereAndWhat) {
  const BadSearch& c = GetParam();
  auto spec = parse_inline(kHead + std::string("search:\n") + c.search);
  ASSERT_FALSE(spec) << "accepted:\n" << c.search;
  EXPECT_EQ(spec.error().message, (specs_dir() / "inline.yaml").string() + ":" + c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Schema, BadSearches,
    testing::Values(
        BadSearch{"unknown_strategy", "  strategy: greedy\n",
                  "10:13: search.strategy: unknown strategy 'greedy'; expected one of auto, "
                  "exhaustive, random, hill_climbing, annealing, genetic, model"},
        BadSearch{"zero_budget", "  max_evals: 0\n",
                  "10:14: search.max_evals: expected an integer >= 1; got 0"},
        BadSearch{"negative_budget", "  max_evals: -4\n",
                  "10:14: search.max_evals: expected an integer >= 1; got -4"},
        BadSearch{"zero_time", "  time_limit_s: 0\n",
                  "10:17: search.time_limit_s: expected a number of seconds > 0; got 0"},
        BadSearch{"negative_seed", "  seed: -1\n",
                  "10:9: search.seed: expected an integer >= 0; got -1"},
        BadSearch{"unknown_key", "  budget: 3\n",
                  "10:3: search.budget: unknown key; expected one of strategy, max_evals, "
                  "time_limit_s, seed"},
        BadSearch{"not_a_map", "  - random\n", "10:3: search: expected a mapping; got a list"}),
    [](const testing::TestParamInfo<BadSearch>& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace ktune

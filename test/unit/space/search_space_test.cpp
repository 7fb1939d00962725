// SearchSpace: enumeration order, restriction filtering and statistics, and every create() error.
#include "ktune/space/search_space.h"

#include <gtest/gtest.h>

#include "support/all_choices.h"

namespace ktune {

using test::all_configs;
using test::space_stats;
namespace {

using Values = std::vector<ParamValue>;

std::vector<std::string> strs(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const Config& c : configs) out.push_back(c.str());
  return out;
}

std::string create_error(std::vector<Param> params, std::vector<std::string> restrictions) {
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  if (space) return "<created>";
  EXPECT_EQ(space.error().code, ErrorCode::kInvalidArgument);
  return space.error().message;
}

TEST(SearchSpace, EnumeratesLastParameterFastest) {
  auto space = SearchSpace::create({{"A", Values{1, 2}}, {"B", Values{"x", "y", "z"}}}, {});
  ASSERT_TRUE(space) << space.error().message;
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=1 B=x", "A=1 B=y", "A=1 B=z",
                                                                 "A=2 B=x", "A=2 B=y", "A=2 B=z"}));
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.total, 6u);
  EXPECT_EQ(stats.valid, 6u);
  EXPECT_TRUE(stats.restrictions.empty());
}

TEST(SearchSpace, KeepsValueListOrderNotSortedOrder) {
  auto space = SearchSpace::create({{"A", Values{8, 2, 4}}}, {});
  ASSERT_TRUE(space);
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=8", "A=2", "A=4"}));
}

TEST(SearchSpace, RestrictionsFilterAndCreditTheFirstFailing) {
  // 4 x 4 = 16 points. "M * N <= 32" removes (4,16) and (8,16); "M != 2" then removes all four
  // with M=2 ((2,16) = 32 passed the first); "N >= 2" removes N=1 for M in {1,4,8}.
  auto space = SearchSpace::create({{"M", Values{1, 2, 4, 8}}, {"N", Values{1, 2, 4, 16}}},
                                   {"M * N <= 32", "M != 2", "N >= 2"});
  ASSERT_TRUE(space) << space.error().message;
  const std::vector<std::string> valid = strs(all_configs(*space));
  EXPECT_EQ(valid, (std::vector<std::string>{"M=1 N=2", "M=1 N=4", "M=1 N=16", "M=4 N=2", "M=4 N=4",
                                             "M=8 N=2", "M=8 N=4"}));
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.total, 16u);
  ASSERT_EQ(stats.restrictions.size(), 3u);
  EXPECT_EQ(stats.restrictions[0].expression, "M * N <= 32");
  EXPECT_EQ(stats.restrictions[0].removed, 2u);
  EXPECT_EQ(stats.restrictions[1].removed, 4u);
  EXPECT_EQ(stats.restrictions[2].removed, 3u);
  EXPECT_EQ(stats.valid, 7u);
}

TEST(SearchSpace, LogicalOperatorsNotAndModulo) {
  auto space = SearchSpace::create({{"A", Values{1, 2, 3, 4, 5, 6}}},
                                   {"!(A == 3) && (A % 2 == 0 || A >= 5)"});
  ASSERT_TRUE(space) << space.error().message;
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=2", "A=4", "A=5", "A=6"}));
}

TEST(SearchSpace, StringParamsNotInRestrictionsAreFine) {
  auto space =
      SearchSpace::create({{"LAYOUT", Values{"nn", "nt"}}, {"K", Values{1, 2, 3}}}, {"K != 2"});
  ASSERT_TRUE(space) << space.error().message;
  const std::vector<Config> configs = all_configs(*space);
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[3].str(), "LAYOUT=nt K=3");
  const ParamValue* layout = configs[3].find("LAYOUT");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(param_value_str(*layout), "nt");
  EXPECT_EQ(configs[3].find("MISSING"), nullptr);
}

TEST(SearchSpace, AllRemovedLeavesNoConfigs) {
  auto space = SearchSpace::create({{"A", Values{1, 2}}}, {"A > 5"});
  ASSERT_TRUE(space);
  EXPECT_TRUE(all_configs(*space).empty());
  EXPECT_EQ(space_stats(*space).restrictions[0].removed, 2u);
}

TEST(SearchSpace, NoParamsIsOneEmptyConfig) {
  auto space = SearchSpace::create({}, {});
  ASSERT_TRUE(space);
  const std::vector<Config> configs = all_configs(*space);
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].str(), "");
}

TEST(SearchSpace, SurvivesMoves) {
  auto created = SearchSpace::create({{"A", Values{1, 2, 3}}, {"B", Values{1, 2}}}, {"A + B != 4"});
  ASSERT_TRUE(created);
  SearchSpace moved = std::move(*created);
  SearchSpace assigned;
  assigned = std::move(moved);
  EXPECT_EQ(strs(all_configs(assigned)),
            (std::vector<std::string>{"A=1 B=1", "A=1 B=2", "A=2 B=1", "A=3 B=2"}));
  EXPECT_EQ(assigned.params().size(), 2u);
  EXPECT_EQ(assigned.restrictions(), (std::vector<std::string>{"A + B != 4"}));
}

TEST(SearchSpace, MillionPointsEnumerate) {
  Values v;
  for (std::int64_t i = 0; i < 100; ++i) v.push_back(i);
  auto space = SearchSpace::create({{"A", v}, {"B", v}, {"C", v}},
                                   {"A * B <= 2500", "(A + B + C) % 7 == 0"});
  ASSERT_TRUE(space);
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.total, 1000000u);
  EXPECT_EQ(stats.valid, all_configs(*space).size());
  EXPECT_EQ(stats.valid + stats.restrictions[0].removed + stats.restrictions[1].removed, 1000000u);
}

TEST(SearchSpace, ParamValueStr) {
  EXPECT_EQ(param_value_str(ParamValue{std::int64_t{-12}}), "-12");
  EXPECT_EQ(param_value_str(ParamValue{std::string("row")}), "row");
}

TEST(SearchSpaceErrors, UnknownNameListsKnownParams) {
  EXPECT_EQ(create_error({{"TILE_M", Values{1}}, {"TILE_N", Values{2}}}, {"TILE_X <= 4"}),
            "restriction 'TILE_X <= 4': unknown name 'TILE_X'; expected a parameter (TILE_M, "
            "TILE_N)");
}

TEST(SearchSpaceErrors, UnknownNameInLaterRestriction) {
  EXPECT_EQ(create_error({{"A", Values{1}}}, {"A > 0", "A + b > 1"}),
            "restriction 'A + b > 1': unknown name 'b'; expected a parameter (A)");
  EXPECT_EQ(create_error({}, {"b > 1"}),
            "restriction 'b > 1': unknown name 'b'; expected a parameter (none)");
}

TEST(SearchSpaceErrors, StringParamComparedWithANumber) {
  EXPECT_EQ(create_error({{"LAYOUT", Values{"nn", "nt"}}}, {"LAYOUT == 1"}),
            "restriction 'LAYOUT == 1': LAYOUT is a string parameter; compare it with a string "
            "literal (LAYOUT == \"value\" or LAYOUT != \"value\")");
}

TEST(SearchSpaceErrors, RestrictionDoesNotParse) {
  const std::string message = create_error({{"A", Values{1}}}, {"A <="});
  EXPECT_EQ(message.rfind("restriction 'A <=': does not parse; muparser: ", 0), 0u) << message;
  const std::string empty = create_error({{"A", Values{1}}}, {""});
  EXPECT_EQ(empty.rfind("restriction '': does not parse; muparser: ", 0), 0u) << empty;
}

TEST(SearchSpaceErrors, AssignmentIsRejected) {
  // muparser would assign 3 to A and keep every config.
  EXPECT_EQ(create_error({{"A", Values{1, 2}}}, {"A = 3"}),
            "restriction 'A = 3': assignment '=' is not allowed; expected a comparison such as "
            "'=='");
  EXPECT_EQ(create_error({{"A", Values{1, 2}}}, {"A == 1 || A <= 3 && A >= 0 && A != 2"}),
            "<created>");
}

TEST(SearchSpaceErrors, SeveralExpressionsAreRejected) {
  EXPECT_EQ(create_error({{"A", Values{1, 2}}}, {"A > 1, 0"}),
            "restriction 'A > 1, 0': does not evaluate to one value; expected one expression, "
            "got 2 separated by ','");
}

TEST(SearchSpaceErrors, EmptyName) {
  EXPECT_EQ(create_error({{"A", Values{1}}, {"", Values{1}}}, {}),
            "parameter 1: empty name; expected a C identifier");
}

TEST(SearchSpaceErrors, NotACIdentifier) {
  for (const char* name : {"1TILE", "TILE-M", "TILE M", "tile.m"}) {
    EXPECT_EQ(create_error({{name, Values{1}}}, {}),
              std::string("parameter '") + name +
                  "': not a C identifier; expected letters, digits and '_', not starting with a "
                  "digit");
  }
  EXPECT_EQ(create_error({{"_tile_2", Values{1}}}, {}), "<created>");
}

TEST(SearchSpaceErrors, DuplicateName) {
  EXPECT_EQ(create_error({{"A", Values{1}}, {"B", Values{1}}, {"A", Values{2}}}, {}),
            "parameter 'A': duplicate name; expected each name once");
}

TEST(SearchSpaceErrors, EmptyValueList) {
  EXPECT_EQ(create_error({{"A", Values{}}}, {}),
            "parameter 'A': empty value list; expected at least one value");
}

TEST(SearchSpaceErrors, DuplicateValue) {
  EXPECT_EQ(create_error({{"A", Values{1, 2, 1}}}, {}),
            "parameter 'A': duplicate value '1'; expected each value once");
  EXPECT_EQ(create_error({{"S", Values{"x", "x"}}}, {}),
            "parameter 'S': duplicate value 'x'; expected each value once");
  // An integer and a string that print alike are different values.
  EXPECT_EQ(create_error({{"S", Values{1, "1"}}}, {}), "<created>");
}

}  // namespace
}  // namespace ktune

namespace {

std::vector<ktune::ParamValue> range_values(std::int64_t n) {
  std::vector<ktune::ParamValue> v;
  for (std::int64_t i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

}  // namespace

TEST(SearchSpaceScale, ProductOf50To8WithTightRestrictionsEnumeratesByPruning) {
  // 50^8 = 3.9e13 configs; the restrictions bind early parameters, so the walk prunes near the
  // root and visits a few thousand nodes instead of the product.
  std::vector<ktune::Param> params;
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H"}) {
    params.push_back({name, range_values(50)});
  }
  auto space = ktune::SearchSpace::create(
      params, {"A <= 2", "B == A", "C <= 3", "D == 1", "E == 2", "F <= 2", "G == F", "H <= 5"});
  ASSERT_TRUE(space) << space.error().message;
  auto stats = space->stats();
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->total, 39062500000000ull);
  EXPECT_EQ(stats->valid, 2u * 3u * 2u * 5u);
  EXPECT_LT(stats->evaluations, 5000u);  // 50 per surviving prefix, about 2350
  std::uint64_t removed = 0;
  for (const auto& r : stats->restrictions) removed += r.removed;
  EXPECT_EQ(stats->valid + removed, stats->total);
  auto configs = space->enumerate();
  ASSERT_TRUE(configs) << configs.error().message;
  ASSERT_EQ(configs->size(), 60u);
  EXPECT_EQ(configs->front().str(), "A=1 B=1 C=1 D=1 E=2 F=1 G=1 H=1");
  EXPECT_EQ(configs->back().str(), "A=2 B=2 C=3 D=1 E=2 F=2 G=2 H=5");
}

TEST(SearchSpaceScale, UnrestrictedTailIsCountedNotVisited) {
  // 1000^4 = 1e12 configs, one restriction on the first parameter: counting multiplies the
  // free tail instead of walking it.
  auto space = ktune::SearchSpace::create({{"A", range_values(1000)},
                                           {"B", range_values(1000)},
                                           {"C", range_values(1000)},
                                           {"D", range_values(1000)}},
                                          {"A % 10 == 0"});
  ASSERT_TRUE(space);
  auto stats = space->stats();
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->total, 1000000000000ull);
  EXPECT_EQ(stats->valid, 100000000000ull);
  EXPECT_EQ(stats->restrictions[0].removed, 900000000000ull);
  EXPECT_EQ(stats->evaluations, 1000u);
}

TEST(SearchSpaceScale, TooManyValidConfigsIsRefusedNotAllocated) {
  auto space = ktune::SearchSpace::create(
      {{"A", range_values(1000)}, {"B", range_values(1000)}, {"C", range_values(1000)}}, {});
  ASSERT_TRUE(space);
  auto configs = space->enumerate();
  ASSERT_FALSE(configs);
  EXPECT_EQ(configs.error().code, ktune::ErrorCode::kInvalidArgument);
  EXPECT_NE(configs.error().message.find("more than 200000 valid configs"), std::string::npos)
      << configs.error().message;
  auto stats = space->stats();  // counting needs no walk at all
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->valid, 1000000000u);
}

TEST(SearchSpaceScale, AWalkOverTheEvaluationBudgetIsRefused) {
  // The restriction names the last parameter: nothing prunes, every config is evaluated.
  auto space = ktune::SearchSpace::create(
      {{"A", range_values(100)}, {"B", range_values(100)}, {"C", range_values(100)}},
      {"C % 2 == 0"});
  ASSERT_TRUE(space);
  ktune::SearchSpace::Limits limits;
  limits.max_evaluations = 10000;
  auto stats = space->stats(limits);
  ASSERT_FALSE(stats);
  EXPECT_NE(stats.error().message.find("more than 10000 restriction evaluations"),
            std::string::npos)
      << stats.error().message;
  limits.max_evaluations = 1000000;
  stats = space->stats(limits);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->valid, 500000u);
}

TEST(SearchSpaceScale, ARestrictionOfNoParameterDecidesTheWholeSpace) {
  auto no = ktune::SearchSpace::create({{"A", range_values(3)}}, {"1 > 2"});
  ASSERT_TRUE(no) << no.error().message;
  auto stats = no->stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->valid, 0u);
  EXPECT_EQ(stats->restrictions[0].removed, 3u);
  auto yes = ktune::SearchSpace::create({{"A", range_values(3)}}, {"2 > 1"});
  ASSERT_TRUE(yes);
  EXPECT_EQ(ktune::test::all_configs(*yes).size(), 3u);
}

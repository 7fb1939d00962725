// SearchSpace with string parameters in restrictions: == and != with string literals, and every
// other use of a string refused at create().
#include <gtest/gtest.h>

#include "ktune/space/search_space.h"
#include "support/all_choices.h"

namespace ktune {
namespace {

using test::all_configs;
using test::space_stats;
using Values = std::vector<ParamValue>;

std::vector<std::string> strs(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const Config& c : configs) out.push_back(c.str());
  return out;
}

std::string create_error(std::vector<Param> params, std::vector<std::string> restrictions) {
  auto space = SearchSpace::create(std::move(params), std::move(restrictions));
  if (space) return "<created>";
  EXPECT_EQ(space.error().code, ErrorCode::kInvalidArgument);
  return space.error().message;
}

std::vector<std::string> valid(std::vector<Param> params, std::vector<std::string> restrictions) {
  auto space = SearchSpace::create(std::move(params), std::move(restrictions));
  EXPECT_TRUE(space) << space.error().message;
  if (!space) return {};
  const std::vector<std::string> configs = strs(all_configs(*space));
  EXPECT_EQ(configs.size(), space_stats(*space).valid);
  return configs;
}

const Param kSched{"SCHED", Values{"static", "dynamic", "guided"}};
const Param kChunk{"CHUNK", Values{1, 4}};

TEST(SpaceStrings, EqualsAndNotEquals) {
  EXPECT_EQ(valid({kSched, kChunk}, {"SCHED == \"dynamic\""}),
            (std::vector<std::string>{"SCHED=dynamic CHUNK=1", "SCHED=dynamic CHUNK=4"}));
  EXPECT_EQ(valid({kSched}, {"SCHED != 'static'"}),
            (std::vector<std::string>{"SCHED=dynamic", "SCHED=guided"}));
  EXPECT_EQ(valid({kSched}, {"\"guided\" == SCHED"}), (std::vector<std::string>{"SCHED=guided"}));
}

TEST(SpaceStrings, MixedWithIntegersAndLogic) {
  // A static schedule takes no chunk; the others want a chunk above 1.
  EXPECT_EQ(valid({kSched, kChunk},
                  {"(SCHED == \"static\" && CHUNK == 1) || (SCHED != \"static\" && CHUNK > 1)",
                   "!(SCHED == 'guided')"}),
            (std::vector<std::string>{"SCHED=static CHUNK=1", "SCHED=dynamic CHUNK=4"}));
  EXPECT_EQ(valid({kSched, kChunk}, {"SCHED == \"guided\" ? CHUNK == 4 : CHUNK == 1"}),
            (std::vector<std::string>{"SCHED=static CHUNK=1", "SCHED=dynamic CHUNK=1",
                                      "SCHED=guided CHUNK=4"}));
}

TEST(SpaceStrings, ALiteralThatIsNoValueMatchesNothing) {
  EXPECT_TRUE(valid({kSched}, {"SCHED == \"auto\""}).empty());
  EXPECT_EQ(valid({kSched}, {"SCHED != \"auto\""}).size(), 3u);
}

TEST(SpaceStrings, TwoStringParametersCompareByValue) {
  EXPECT_EQ(valid({{"A", Values{"x", "y"}}, {"B", Values{"y", "z"}}}, {"A == B"}),
            (std::vector<std::string>{"A=y B=y"}));
}

TEST(SpaceStrings, LiteralsMayHoldOperatorsAndSpaces) {
  EXPECT_EQ(valid({{"OP", Values{"a=b", "x || y", "it's"}}}, {"OP == \"a=b\" || OP == 'x || y'"}),
            (std::vector<std::string>{"OP=a=b", "OP=x || y"}));
  EXPECT_EQ(valid({{"OP", Values{"a=b", "x || y", "it's"}}}, {"OP == \"it's\""}),
            (std::vector<std::string>{"OP=it's"}));
}

TEST(SpaceStrings, AnIntegerOfAStringParameterIsNotItsText) {
  // "1" (a quoted number in the spec) is a string; the integer 1 in the same list is not "1".
  EXPECT_EQ(valid({{"P", Values{1, "1", "x"}}}, {"P == \"1\""}), (std::vector<std::string>{"P=1"}));
  auto space = SearchSpace::create({{"P", Values{1, "1", "x"}}}, {"P == \"1\""});
  ASSERT_TRUE(space);
  const std::vector<Config> configs = all_configs(*space);
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<std::string>(configs[0].values[0]));
}

TEST(SpaceStrings, StatsNameTheStringParameter) {
  auto space = SearchSpace::create({kChunk, kSched}, {"SCHED != \"guided\" || CHUNK == 4"});
  ASSERT_TRUE(space);
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.restrictions[0].names, (std::vector<std::string>{"CHUNK", "SCHED"}));
  EXPECT_EQ(stats.restrictions[0].removed, 1u);
  EXPECT_EQ(stats.valid, 5u);
}

TEST(SpaceStringsErrors, StringParameterOutsideEquality) {
  const std::string hint =
      "SCHED is a string parameter; compare it with a string literal (SCHED == \"value\" or "
      "SCHED != \"value\")";
  for (const char* bad : {"SCHED == 1", "1 != SCHED", "SCHED + 1 > 0", "SCHED < \"b\"",
                          "1 + SCHED == \"static\"", "SCHED * 2 == \"static\"", "!SCHED",
                          "min(SCHED, 1) > 0", "SCHED", "SCHED == CHUNK", "-SCHED == \"x\""}) {
    EXPECT_EQ(create_error({kSched, kChunk}, {bad}),
              std::string("restriction '") + bad + "': " + hint);
  }
  // The string must be the whole operand on the far side too.
  EXPECT_EQ(create_error({kSched}, {"SCHED == \"a\" + 1"}),
            "restriction 'SCHED == \"a\" + 1': " + hint);
}

TEST(SpaceStringsErrors, LiteralOutsideEquality) {
  EXPECT_EQ(create_error({kSched, kChunk}, {"CHUNK == \"x\""}),
            "restriction 'CHUNK == \"x\"': the string literal \"x\" is compared with 'CHUNK'; "
            "expected a string parameter on the other side");
  EXPECT_EQ(create_error({kSched}, {"'x' != 1"}),
            "restriction ''x' != 1': the string literal \"x\" is compared with '1'; expected a "
            "string parameter on the other side");
  EXPECT_EQ(create_error({kSched}, {"\"x\""}),
            "restriction '\"x\"': the string literal \"x\" is not compared with a string "
            "parameter; expected PARAM == \"x\" or PARAM != \"x\"");
  EXPECT_EQ(create_error({kSched}, {"\"a\" < SCHED"}),
            "restriction '\"a\" < SCHED': the string literal \"a\" is not compared with a string "
            "parameter; expected PARAM == \"a\" or PARAM != \"a\"");
}

TEST(SpaceStringsErrors, UnterminatedLiteral) {
  EXPECT_EQ(create_error({kSched}, {"SCHED == \"dyn"}),
            "restriction 'SCHED == \"dyn': unterminated string literal at 9; expected a closing "
            "\"");
  EXPECT_EQ(create_error({kSched}, {"SCHED == 'dyn"}),
            "restriction 'SCHED == 'dyn': unterminated string literal at 9; expected a closing '");
}

TEST(SpaceStringsErrors, AssignmentInsideALiteralIsNotAnAssignment) {
  EXPECT_EQ(create_error({kSched}, {"SCHED = \"a=b\""}),
            "restriction 'SCHED = \"a=b\"': SCHED is a string parameter; compare it with a "
            "string literal (SCHED == \"value\" or SCHED != \"value\")");
}

}  // namespace
}  // namespace ktune

// SearchSpace with named constants (problem sizes, device limits) in restrictions: filtering,
// where the walk evaluates them, the Stats names, and every constant-related create() error.
#include <gtest/gtest.h>

#include "ktune/space/search_space.h"
#include "support/all_choices.h"

namespace ktune {
namespace {

using test::all_configs;
using test::space_stats;
using Values = std::vector<ParamValue>;

Values range(std::int64_t from, std::int64_t to) {
  Values v;
  for (std::int64_t i = from; i <= to; ++i) v.push_back(i);
  return v;
}

std::vector<std::string> strs(const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const Config& c : configs) out.push_back(c.str());
  return out;
}

std::string create_error(std::vector<Param> params, std::vector<std::string> restrictions,
                         SpaceConstants constants) {
  auto space =
      SearchSpace::create(std::move(params), std::move(restrictions), std::move(constants));
  if (space) return "<created>";
  EXPECT_EQ(space.error().code, ErrorCode::kInvalidArgument);
  return space.error().message;
}

// enumerate(), stats() and empty_cause() describe the same space.
void expect_agree(const SearchSpace& space) {
  const SearchSpace::Stats stats = space_stats(space);
  EXPECT_EQ(all_configs(space).size(), stats.valid);
  std::uint64_t removed = 0;
  for (const auto& r : stats.restrictions) removed += r.removed;
  EXPECT_EQ(stats.valid + removed, stats.total);
  auto cause = space.empty_cause();
  ASSERT_TRUE(cause) << cause.error().message;
  EXPECT_EQ(cause->has_value(), stats.valid == 0);
}

TEST(SpaceConstants, RestrictionsSeeConstants) {
  auto space = SearchSpace::create({{"T", Values{16, 32, 64, 128}}, {"U", Values{1, 2}}},
                                   {"T <= n", "T * U <= max_threads_per_block", "U < 3"},
                                   {{"n", 100}, {"max_threads_per_block", 64}});
  ASSERT_TRUE(space) << space.error().message;
  EXPECT_EQ(strs(all_configs(*space)),
            (std::vector<std::string>{"T=16 U=1", "T=16 U=2", "T=32 U=1", "T=32 U=2", "T=64 U=1"}));
  const SearchSpace::Stats stats = space_stats(*space);
  ASSERT_EQ(stats.restrictions.size(), 3u);
  EXPECT_EQ(stats.restrictions[0].removed, 2u);  // T=128, both U
  EXPECT_EQ(stats.restrictions[1].removed, 1u);  // T=64 U=2
  EXPECT_EQ(stats.restrictions[0].names, (std::vector<std::string>{"T", "n"}));
  EXPECT_EQ(stats.restrictions[1].names,
            (std::vector<std::string>{"T", "U", "max_threads_per_block"}));
  EXPECT_EQ(stats.restrictions[2].names, (std::vector<std::string>{"U"}));
  EXPECT_TRUE(stats.restrictions[0].names_constant);
  EXPECT_TRUE(stats.restrictions[1].names_constant);
  EXPECT_FALSE(stats.restrictions[2].names_constant);
  EXPECT_EQ(space->constants().size(), 2u);
  expect_agree(*space);
}

TEST(SpaceConstants, ARestrictionOnAParameterAndAConstantIsEvaluatedWhenTheParameterIsBound) {
  // Bound at A (the first parameter): 10 evaluations, B and C counted by multiplication.
  auto space = SearchSpace::create({{"A", range(1, 10)}, {"B", range(1, 10)}, {"C", range(1, 10)}},
                                   {"A <= n"}, {{"n", 3}});
  ASSERT_TRUE(space);
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.evaluations, 10u);
  EXPECT_EQ(stats.valid, 300u);
  EXPECT_EQ(stats.restrictions[0].removed, 700u);
}

TEST(SpaceConstants, AFalseConstantRestrictionEmptiesAHugeSpaceAtTheRoot) {
  // 50^8 = 3.9e13 configs: the device cannot run 2048 threads, decided by one evaluation.
  std::vector<Param> params;
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H"}) {
    params.push_back({name, range(1, 50)});
  }
  auto space = SearchSpace::create(params, {"A * B <= 2500", "max_threads_per_block >= 2048"},
                                   {{"max_threads_per_block", 1024}, {"warp_size", 32}});
  ASSERT_TRUE(space) << space.error().message;
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.total, 39062500000000ull);
  EXPECT_EQ(stats.valid, 0u);
  EXPECT_EQ(stats.evaluations, 1u);
  EXPECT_EQ(stats.restrictions[0].removed, 0u);
  EXPECT_EQ(stats.restrictions[1].removed, stats.total);
  EXPECT_EQ(stats.restrictions[1].names, (std::vector<std::string>{"max_threads_per_block"}));
  EXPECT_TRUE(stats.restrictions[1].names_constant);
  EXPECT_TRUE(all_configs(*space).empty());
  auto cause = space->empty_cause();
  ASSERT_TRUE(cause) << cause.error().message;
  ASSERT_TRUE(cause->has_value());
  EXPECT_EQ((*cause)->restriction, 1u);
  // The first restriction left 2500 * 50^6 configs, all removed by the device limit.
  EXPECT_EQ((*cause)->removed, 2500ull * 15625000000ull);
}

TEST(SpaceConstants, ATrueConstantRestrictionKeepsEverything) {
  auto space =
      SearchSpace::create({{"A", range(1, 4)}}, {"warp_size == 32 && cc_major >= 9", "A % 2 == 0"},
                          {{"warp_size", 32}, {"cc_major", 9}});
  ASSERT_TRUE(space);
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=2", "A=4"}));
  const SearchSpace::Stats stats = space_stats(*space);
  EXPECT_EQ(stats.restrictions[0].removed, 0u);
  EXPECT_EQ(stats.restrictions[1].removed, 2u);
  expect_agree(*space);
}

TEST(SpaceConstants, ConstantsKeepFractions) {
  auto space = SearchSpace::create({{"A", range(1, 4)}}, {"A * scale <= 1"}, {{"scale", 0.5}});
  ASSERT_TRUE(space);
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=1", "A=2"}));
}

TEST(SpaceConstants, UnusedConstantsAreFineAndNotNamed) {
  auto space = SearchSpace::create({{"A", range(1, 3)}}, {"A > 1"}, {{"M", 8}, {"K", 4}});
  ASSERT_TRUE(space);
  EXPECT_EQ(space_stats(*space).restrictions[0].names, (std::vector<std::string>{"A"}));
  EXPECT_FALSE(space_stats(*space).restrictions[0].names_constant);
  EXPECT_EQ(all_configs(*space).size(), 2u);
}

TEST(SpaceConstantsErrors, UnknownNameListsParametersAndConstants) {
  EXPECT_EQ(create_error({{"A", Values{1}}, {"B", Values{2}}}, {"A <= n"},
                         {{"M", 1}, {"N", 2}, {"warp_size", 32}}),
            "restriction 'A <= n': unknown name 'n'; expected a parameter (A, B) or a constant "
            "(M, N, warp_size)");
  EXPECT_EQ(create_error({}, {"x > 0"}, {{"M", 1}}),
            "restriction 'x > 0': unknown name 'x'; expected a parameter (none) or a constant "
            "(M)");
}

TEST(SpaceConstantsErrors, AParameterAndAConstantOfOneName) {
  EXPECT_EQ(create_error({{"TILE", Values{1}}, {"N", Values{2}}}, {}, {{"M", 4}, {"N", 8}}),
            "'N' is both a parameter and a constant (= 8); expected distinct names (rename the "
            "parameter)");
}

TEST(SpaceConstantsErrors, BadConstants) {
  EXPECT_EQ(create_error({}, {}, {{"M", 1}, {"M", 2}}),
            "constant 'M': duplicate name; expected each name once");
  EXPECT_EQ(create_error({}, {}, {{"2M", 1}}),
            "constant '2M': not a C identifier; expected letters, digits and '_', not starting "
            "with a digit");
  EXPECT_EQ(create_error({}, {}, {{"M", std::numeric_limits<double>::infinity()}}),
            "constant 'M': value inf is not finite; expected a number");
  EXPECT_EQ(create_error({{"A", Values{1}}}, {"A <= M"}, {{"M", 1}}), "<created>");
}

TEST(SpaceCeilDiv, IntegerCeilingDivision) {
  // ceil_div(A, 4) == 2 for A in 5..8.
  auto space = SearchSpace::create({{"A", range(1, 12)}}, {"ceil_div(A, 4) == 2"});
  ASSERT_TRUE(space) << space.error().message;
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=5", "A=6", "A=7", "A=8"}));
  // Negative numerators round up (towards zero), non-integers as ceil(a / b); constants only.
  for (const char* exact :
       {"ceil_div(-7, 2) == -3", "ceil_div(-8, 2) == -4", "ceil_div(7.5, 2) == 4",
        "ceil_div(0, 5) == 0", "ceil_div(9007199254740991, 2) == 4503599627370496",
        "ceil_div(W, BX * 4) == 63"}) {
    auto one = SearchSpace::create({{"BX", Values{8}}}, {exact}, {{"W", 2000}});
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(space_stats(*one).valid, 1u) << exact;
  }
}

TEST(SpaceCeilDiv, ANonPositiveDivisorRejectsTheConfig) {
  auto space = SearchSpace::create({{"B", range(-1, 2)}}, {"ceil_div(10, B) >= 0"});
  ASSERT_TRUE(space) << space.error().message;
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"B=1", "B=2"}));
  EXPECT_EQ(space_stats(*space).restrictions[0].removed, 2u);
}

TEST(SpaceCeilDiv, FloorAndCeil) {
  auto space =
      SearchSpace::create({{"A", range(1, 12)}}, {"floor(A / 4) == 1", "ceil(A / 3) == 2"});
  ASSERT_TRUE(space) << space.error().message;
  // floor keeps 4..7, ceil keeps 4..6.
  EXPECT_EQ(strs(all_configs(*space)), (std::vector<std::string>{"A=4", "A=5", "A=6"}));
}

TEST(SpaceCeilDiv, WrongArity) {
  const std::string message = create_error({{"A", Values{1}}}, {"ceil_div(A) > 0"}, {});
  EXPECT_EQ(message.rfind("restriction 'ceil_div(A) > 0': does not parse; muparser: ", 0), 0u)
      << message;
}

}  // namespace
}  // namespace ktune

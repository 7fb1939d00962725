// Compiled restrictions (src/space/restriction_program.h) against muparser, their oracle: random
// expressions over integer, negative and string parameters, integer and fractional constants,
// evaluated both ways at every point of a small space, bit for bit (NaN and -0 included).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "space/restriction_set.h"
#include "unit/space/restriction_generator.h"

namespace ktune::space_detail {
namespace {

using Values = std::vector<ParamValue>;

const std::vector<Param> kParams = {{"A", Values{-3, -1, 0, 1, 2, 5, 7}},
                                    {"B", Values{0, 1, 2, 3, 4, 8}},
                                    {"C", Values{-2, 1, 3}},
                                    {"S", Values{"x", "y", 4}}};
const std::vector<std::pair<std::string, double>> kConstants = {{"K", 3}, {"F", 2.5}, {"Z", 0}};

// Same bits, or both NaN.
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

// Evaluates restriction 0 of both sets at every point; the number of points that differ.
int differences(RestrictionSet& compiled, RestrictionSet& oracle, const std::string& expr) {
  int bad = 0;
  const auto& values = oracle.values();
  for (double a : values[0])
    for (double b : values[1])
      for (double c : values[2])
        for (double s : values[3]) {
          for (RestrictionSet* set : {&compiled, &oracle}) {
            set->set(0, a);
            set->set(1, b);
            set->set(2, c);
            set->set(3, s);
          }
          const double want = oracle.value(0), got = compiled.value(0);
          if (!same(want, got) && ++bad <= 3) {
            ADD_FAILURE() << expr << " at A=" << a << " B=" << b << " C=" << c << " S=" << s
                          << ": muparser " << want << ", compiled " << got;
          }
        }
  return bad;
}

TEST(RestrictionProgram, RandomExpressionsEvaluateAsMuparserDoes) {
  test::RestrictionGenerator gen(19);
  int accepted = 0, compiled = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string expr = gen.expr(1 + i % 5);
    auto fast = RestrictionSet::create(kParams, {expr}, kConstants, /*compile=*/true);
    if (!fast) continue;  // muparser refuses it (!!x, a string outside ==): not a restriction
    auto slow = RestrictionSet::create(kParams, {expr}, kConstants, /*compile=*/false);
    ASSERT_TRUE(slow) << expr;
    ASSERT_FALSE((*slow)->compiled(0));
    ++accepted;
    if (!(*fast)->compiled(0)) continue;
    ++compiled;
    ASSERT_EQ(differences(**fast, **slow, expr), 0) << expr;
  }
  // The generator makes mostly valid restrictions, and the compiler takes most of them (it
  // declines ^ chains and a sign after ^).
  EXPECT_GT(accepted, 2000);
  EXPECT_GT(compiled, accepted * 9 / 10);
}

struct Case {
  const char* expr;
  bool compiled;
};

TEST(RestrictionProgram, EdgeCasesEvaluateAsMuparserDoes) {
  const Case cases[] = {
      {"A % B", true},            // % 0 is NaN, negative dividends keep their sign
      {"A % C", true},            // negative divisors
      {"-A % 2 == 0", true},      // -0 from the sign
      {"1 / (A % B) < 0", true},  // -0 and +0 tell apart through a division
      {"1 / -A > 0", true},
      {"A / B >= 1", true},            // division by zero: inf, NaN
      {"A % F", true},                 // fractional: fmod
      {"(A / 2) % 1 == 0.5", true},    // % on a quotient: fmod
      {"(2 * A + 1) / 3 == 1", true},  // muparser's (x * c + d) / e rewrite
      {"A * 1 / 3 == A / 3", true},    // muparser: A * (1 / 3), not A / 3, on the left
      {"A * 0.1 * 3 < 1", true},
      {"A ^ 2 + B ^ 3 + C ^ 4 + A ^ 0 + B ^ 1 + 2 ^ A", true},
      {"A * A == 4", true},
      {"abs(-A) == A", true},
      {"1 / abs(-Z * A) > 0", true},
      {"min(A, B, C) + max(A, 0 / Z)", true},
      {"ceil_div(A, B) == 2", true},  // b <= 0 gives NaN
      {"floor(A / 2) + ceil(A / 2) == A", true},
      {"A > 0 ? B : C", true},
      {"A ? B ? 1 : 2 : C", true},
      {"(A ? 1 : 2) + 3 * (B ? C : 4)", true},
      {"!A + 1", true},
      {"!A == B", true},
      {"-A ^ 2 == -4", true},
      {"-(-A) + +B", true},
      {"S == \"x\" || S != \"y\" && A < 2", true},
      {"K * A <= F * B", true},
      {"1 < 2 < 3", true},
      {"A && 0.5 || Z", true},
      {"0.5 && 0.5", false},  // muparser folds && through an int cast: left to it
      {"A ^ B ^ 2 > 1", false},
      {"2 ^ -A > 0", false},
      {"sin(A) > 0", false},
      {"A < _pi", false},
      {"sum(A, B) > 2", false},
  };
  for (const Case& c : cases) {
    auto fast = RestrictionSet::create(kParams, {c.expr}, kConstants, true);
    auto slow = RestrictionSet::create(kParams, {c.expr}, kConstants, false);
    ASSERT_TRUE(fast) << c.expr << ": " << fast.error().message;
    ASSERT_TRUE(slow) << c.expr;
    EXPECT_EQ((*fast)->compiled(0), c.compiled) << c.expr;
    EXPECT_EQ(differences(**fast, **slow, c.expr), 0) << c.expr;
  }
}

}  // namespace
}  // namespace ktune::space_detail

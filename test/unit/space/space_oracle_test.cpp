// SearchSpace against a brute-force oracle: random small spaces with random restrictions, every
// point of the product checked with muparser alone (RestrictionSet without compiling), against
// enumerate(), enumerate_indices() and stats() (valid count and which restriction removed what).
// The spaces mix tabulated levels (few values) with evaluated ones (a parameter of 70 values), and
// compiled restrictions with ones left to muparser.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ktune/space/search_space.h"
#include "space/restriction_set.h"
#include "unit/space/restriction_generator.h"

namespace ktune {
namespace {

using space_detail::RestrictionSet;
using Constants = std::vector<std::pair<std::string, double>>;

const Constants kConstants = {{"K", 3}, {"F", 2.5}, {"Z", 0}};

std::vector<ParamValue> random_values(std::mt19937& rng, std::size_t n) {
  std::vector<std::int64_t> pool;
  for (std::int64_t v = -4; v < static_cast<std::int64_t>(n) + 6; ++v) pool.push_back(v);
  std::shuffle(pool.begin(), pool.end(), rng);
  return {pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::vector<Param> random_params(std::mt19937& rng) {
  const auto size = [&](std::size_t most) {
    return std::uniform_int_distribution<std::size_t>(1, most)(rng);
  };
  std::vector<Param> params = {{"A", random_values(rng, rng() % 4 == 0 ? 70 : size(7))},
                               {"B", random_values(rng, size(6))},
                               {"C", random_values(rng, size(4))},
                               {"S", {"x", "y", 4}}};
  std::shuffle(params.begin(), params.end(), rng);  // any parameter at any depth
  return params;
}

struct Oracle {
  std::vector<std::string> valid;  // Config::str() of each, in enumeration order
  std::vector<std::uint64_t> removed;
};

// Every point of the product in lexicographic index order; a point is credited to the first
// restriction that rejects it in the walk's order (by the deepest parameter it names, those that
// name none first, then list order).
Oracle brute_force(const std::vector<Param>& params, const std::vector<std::string>& restrictions) {
  auto set = RestrictionSet::create(params, restrictions, kConstants, /*compile=*/false);
  EXPECT_TRUE(set);
  Oracle out;
  out.removed.assign(restrictions.size(), 0);
  std::vector<std::size_t> order(restrictions.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = r;
  const auto depth = [&](std::size_t r) {
    const auto& uses = (*set)->uses()[r];
    return uses.empty() ? -1 : static_cast<int>(uses.back());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return depth(a) < depth(b); });
  std::vector<std::size_t> index(params.size(), 0);
  for (;;) {
    Config c;
    for (std::size_t p = 0; p < params.size(); ++p) {
      (*set)->set(p, (*set)->values()[p][index[p]]);
      c.names.push_back(params[p].name);
      c.values.push_back(params[p].values[index[p]]);
    }
    const auto failing = std::find_if(order.begin(), order.end(),
                                      [&](std::size_t r) { return !(*set)->accepts(r); });
    if (failing == order.end()) {
      out.valid.push_back(c.str());
    } else {
      ++out.removed[*failing];
    }
    std::size_t p = params.size();
    for (; p > 0; --p) {
      if (++index[p - 1] < params[p - 1].values.size()) break;
      index[p - 1] = 0;
    }
    if (p == 0) break;
  }
  return out;
}

TEST(SpaceOracle, RandomSpacesMatchBruteForce) {
  std::mt19937 rng(1919);
  test::RestrictionGenerator gen(7);
  int checked = 0;
  for (int i = 0; i < 400; ++i) {
    const std::vector<Param> params = random_params(rng);
    std::vector<std::string> restrictions;
    for (std::size_t r = 0, n = 1 + rng() % 3; r < n; ++r) restrictions.push_back(gen.expr(3));
    auto space = SearchSpace::create(params, restrictions, kConstants);
    if (!space) continue;  // muparser refuses one of them
    ++checked;
    const Oracle want = brute_force(params, restrictions);
    std::string what = "restrictions:";
    for (const std::string& r : restrictions) what += " [" + r + "]";

    auto configs = space->enumerate();
    ASSERT_TRUE(configs) << configs.error().message;
    std::vector<std::string> got;
    for (const Config& c : *configs) got.push_back(c.str());
    ASSERT_EQ(got, want.valid) << what;

    auto indices = space->enumerate_indices();
    ASSERT_TRUE(indices) << indices.error().message;
    ASSERT_EQ(indices->size(), want.valid.size()) << what;
    EXPECT_EQ(indices->bytes, 1u);
    for (std::size_t row = 0; row < indices->size(); ++row) {
      ASSERT_EQ(space->config(*indices, row).str(), want.valid[row]) << what;
    }

    auto stats = space->stats();
    ASSERT_TRUE(stats) << stats.error().message;
    EXPECT_EQ(stats->valid, want.valid.size()) << what;
    for (std::size_t r = 0; r < restrictions.size(); ++r) {
      EXPECT_EQ(stats->restrictions[r].removed, want.removed[r]) << what << " restriction " << r;
    }
  }
  EXPECT_GT(checked, 250);
}

TEST(SpaceCompact, IndicesAreAsWideAsTheLongestValueList) {
  std::vector<ParamValue> many;
  for (std::int64_t v = 0; v < 300; ++v) many.push_back(v);
  auto space = SearchSpace::create({{"A", {1, 2}}, {"B", many}}, {"B % 100 == A"});
  ASSERT_TRUE(space) << space.error().message;
  auto indices = space->enumerate_indices();
  ASSERT_TRUE(indices) << indices.error().message;
  EXPECT_EQ(indices->bytes, 2u);
  ASSERT_EQ(indices->size(), 6u);  // B in {1, 101, 201} and {2, 102, 202}
  EXPECT_EQ(indices->at(2, 1), 201u);
  EXPECT_EQ(space->config(*indices, 5).str(), "A=2 B=202");
}

TEST(SpaceCompact, NoParametersIsOneEmptyRow) {
  auto space = SearchSpace::create({}, {});
  ASSERT_TRUE(space);
  auto indices = space->enumerate_indices();
  ASSERT_TRUE(indices);
  EXPECT_EQ(indices->size(), 1u);
  EXPECT_EQ(space->config(*indices, 0).str(), "");
}

TEST(SpaceCompact, LimitsHoldWhereTheWalkSkipsRejectedValues) {
  // C is tabulated (10 values, no other parameter named): enumerate_indices visits only its even
  // values but counts every one as an evaluation, as stats() does: 10 * 10 * 10.
  std::vector<ParamValue> ten;
  for (std::int64_t v = 1; v <= 10; ++v) ten.push_back(v);
  auto space = SearchSpace::create({{"A", ten}, {"B", ten}, {"C", ten}}, {"C % 2 == 0"});
  ASSERT_TRUE(space);
  SpaceLimits limits;
  limits.max_evaluations = 999;
  for (bool counting : {true, false}) {
    std::string error = "<none>";
    if (counting) {
      if (auto r = space->stats(limits); !r) error = r.error().message;
    } else {
      if (auto r = space->enumerate_indices(limits); !r) error = r.error().message;
    }
    EXPECT_NE(error.find("more than 999 restriction evaluations"), std::string::npos) << error;
  }
  limits.max_evaluations = 1000;
  auto stats = space->stats(limits);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->evaluations, 1000u);
  auto indices = space->enumerate_indices(limits);
  ASSERT_TRUE(indices);
  EXPECT_EQ(indices->size(), 500u);
  limits.max_configs = 499;
  auto too_many = space->enumerate_indices(limits);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("more than 499 valid configs"), std::string::npos);
}

}  // namespace
}  // namespace ktune

// The strategy registry, `auto`, option checks and the exhaustive strategy.
#include "ktune/search/strategy.h"

#include <gtest/gtest.h>

namespace ktune {
namespace {

CandidateSpace line(std::size_t n) {
  CandidateSpace s;
  s.names = {"X"};
  s.dims = {n};
  for (std::size_t i = 0; i < n; ++i) s.coords.push_back({static_cast<std::uint32_t>(i)});
  return s;
}

TEST(Strategy, ExhaustiveProposesEveryCandidateOnceInOrder) {
  const CandidateSpace space = line(7);
  auto s = make_strategy("exhaustive", space, 1);
  ASSERT_TRUE(s) << s.error().message;
  std::vector<std::size_t> all;
  for (;;) {
    std::vector<std::size_t> b = (*s)->propose(3);
    if (b.empty()) break;
    EXPECT_LE(b.size(), 3u);
    for (std::size_t i : b) (*s)->observe(i, 1.0);
    all.insert(all.end(), b.begin(), b.end());
  }
  EXPECT_EQ(all, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Strategy, UnknownNameNamesTheAcceptedOnes) {
  const CandidateSpace space = line(2);
  auto s = make_strategy("bogus", space, 0);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("exhaustive"), std::string::npos);
}

TEST(Strategy, OptionChecksNameTheFieldAndRange) {
  SearchOptions o;
  EXPECT_TRUE(check_search_options(o));
  o.max_evals = 0;
  auto s = check_search_options(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("max_evals"), std::string::npos);
  o.max_evals = 5;
  o.time_limit_s = -1;
  s = check_search_options(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("time_limit_s"), std::string::npos);
  o.time_limit_s.reset();
  o.strategy = "nope";
  EXPECT_FALSE(check_search_options(o));
}

TEST(Strategy, AutoIsExhaustiveForSmallSpaces) {
  SearchOptions o;
  const ResolvedStrategy r = resolve_strategy(o, 100);
  EXPECT_EQ(r.name, "exhaustive");
  EXPECT_FALSE(r.max_evals);
}

TEST(Strategy, AutoIsTheModelWithATenthAboveTheThreshold) {
  SearchOptions o;
  EXPECT_EQ(resolve_strategy(o, 500).name, "exhaustive");
  ResolvedStrategy r = resolve_strategy(o, 5000);
  EXPECT_EQ(r.name, "model");
  EXPECT_EQ(r.max_evals, 500u);
  o.max_evals = 77;  // the user's budget wins
  r = resolve_strategy(o, 5000);
  EXPECT_EQ(r.max_evals, 77u);
  EXPECT_EQ(resolve_strategy(o, 100).max_evals, 77u);
  o.strategy = "genetic";
  EXPECT_EQ(resolve_strategy(o, 5000).name, "genetic");
}

}  // namespace
}  // namespace ktune

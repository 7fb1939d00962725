// The candidate space of a selection from its candidates' parameters (select/candidate_space.h).
#include "select/candidate_space.h"

#include <gtest/gtest.h>

#include "unit/select/select_fakes.h"

namespace ktune::test {
namespace {

TEST(CandidateSpace, IntegerValuesAreSortedNumericallyOthersKeepFirstAppearance) {
  const CandidateSpace s = make_candidate_space({
      {{"TILE", "64"}, {"LAYOUT", "row"}},
      {{"TILE", "8"}, {"LAYOUT", "col"}},
      {{"TILE", "16"}, {"LAYOUT", "row"}},
  });
  EXPECT_EQ(s.names, (std::vector<std::string>{"TILE", "LAYOUT"}));
  EXPECT_EQ(s.dims, (std::vector<std::size_t>{3, 2}));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.coords[0], (std::vector<std::uint32_t>{2, 0}));
  EXPECT_EQ(s.coords[1], (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(s.coords[2], (std::vector<std::uint32_t>{1, 0}));
}

TEST(CandidateSpace, LibrariesHaveNoCoordinatesAndMissingParametersAreAbsent) {
  const CandidateSpace s = make_candidate_space({
      {{"A", "1"}},
      {},
      {{"A", "2"}, {"B", "x"}},
  });
  EXPECT_EQ(s.dims, (std::vector<std::size_t>{2, 2}));  // B: x, absent
  EXPECT_EQ(s.coords[0], (std::vector<std::uint32_t>{0, 1}));
  EXPECT_TRUE(s.coords[1].empty());
  EXPECT_EQ(s.coords[2], (std::vector<std::uint32_t>{1, 0}));
}

TEST(CandidateSpace, ParamsComeFromATemplatesConfigOnly) {
  FakeChoice plain({.name = "p"});  // info "info of p": not a config
  EXPECT_TRUE(candidate_params(plain).empty());
  FakeLibrary lib("blas", "M=1");
  EXPECT_TRUE(candidate_params(lib).empty());
  FakeChoice configured({.name = "t", .info = "BM=32 BN=x"});
  EXPECT_EQ(candidate_params(configured), (CandidateParams{{"BM", "32"}, {"BN", "x"}}));
}

}  // namespace
}  // namespace ktune::test

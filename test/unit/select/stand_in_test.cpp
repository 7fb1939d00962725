// No reference: the first candidate (in candidate order) that passes the checks that need none
// stands in for the reference, every later candidate is compared with it, and the record, the
// table and the summary say so. Driven through the fake runner (select_fakes.h), whose
// candidates compute the `output` they are told.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "select/select_stages.h"
#include "unit/select/select_fixture.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class StandInTest : public SelectFixture {};

TEST_F(StandInTest, TheFirstValidCandidateStandsInAndAWrongOneFails) {
  auto candidates =
      fake_candidates({{"broken", true, false}, {"crashes"}, {"a"}, {"wrong"}, {"b"}});
  runner_.fixed = {{"crashes", {Outcome::kCrashed, 100}},
                   {"a", {Outcome::kOk, 300}},
                   {"wrong", {Outcome::kOk, 50}},
                   {"b", {Outcome::kOk, 200}}};
  runner_.output = {{"wrong", 7}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  // The first two never pass, so `a` is the first valid candidate; `wrong` is the fastest but
  // differs from it.
  EXPECT_EQ(runner_.stand_ins, std::vector<std::string>{"a"});
  ASSERT_TRUE(sel->record.stand_in);
  EXPECT_EQ(*sel->record.stand_in, "a");
  EXPECT_EQ(record_of(*sel, "wrong").outcome, Outcome::kWrongResult);
  EXPECT_EQ(record_of(*sel, "b").outcome, Outcome::kOk);
  EXPECT_EQ(sel->record.winner, "b");
}

TEST_F(StandInTest, AWrongStandInMakesTheRightOnesFail) {
  // Why it is said loudly: the stand-in is trusted because it came first, not because it is right.
  auto candidates = fake_candidates({{"wrong"}, {"right1"}, {"right2"}});
  runner_.output = {{"wrong", 7}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(sel->record.winner, "wrong");
  EXPECT_EQ(record_of(*sel, "right1").outcome, Outcome::kWrongResult);
  EXPECT_EQ(record_of(*sel, "right2").outcome, Outcome::kWrongResult);
}

TEST_F(StandInTest, ACandidateThatCannotStandInFailsAndTheNextOneDoes) {
  auto candidates = fake_candidates({{"a"}, {"b"}, {"c"}});
  runner_.no_stand_in = {"a"};
  runner_.output = {{"c", 1}};
  auto sel = select(candidates);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_EQ(runner_.stand_ins, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(record_of(*sel, "a").outcome, Outcome::kUnsupported);
  EXPECT_THAT(record_of(*sel, "a").message, HasSubstr("cannot stand in for the missing reference"));
  ASSERT_TRUE(sel->record.stand_in);
  EXPECT_EQ(*sel->record.stand_in, "b");
  EXPECT_EQ(record_of(*sel, "c").outcome, Outcome::kWrongResult);
}

TEST_F(StandInTest, WithAReferenceNothingStandsIn) {
  auto candidates = fake_candidates({{"a"}, {"b"}});
  FakeChoice reference({"ref"});
  auto sel = select(candidates, &reference);
  ASSERT_TRUE(sel) << sel.error().message;
  EXPECT_TRUE(runner_.stand_ins.empty());
  EXPECT_FALSE(sel->record.stand_in);
}

TEST_F(StandInTest, TheTableTheSummaryAndACacheHitSaySo) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  ASSERT_NE(out, nullptr);
  options_.out = out;
  auto candidates = fake_candidates({{"a"}, {"b"}});
  runner_.fixed = {{"a", {Outcome::kOk, 300}}, {"b", {Outcome::kOk, 100}}};
  auto first = select(candidates);
  auto hit = select(candidates);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(hit) << hit.error().message;
  EXPECT_TRUE(hit->from_cache);
  ASSERT_TRUE(hit->record.stand_in);
  EXPECT_EQ(*hit->record.stand_in, "a");
  const std::string note =
      "no reference: candidates compared with each other (against the first valid candidate, a)";
  // The header line and the summary line, once on the tuning and once on the hit.
  const auto first_note = printed.find("  " + note + "\n");
  ASSERT_NE(first_note, std::string::npos) << printed;
  EXPECT_NE(printed.find("  " + note + "\n", first_note + 1), std::string::npos) << printed;
  EXPECT_NE(printed.find("benchmarking; " + note + "\n"), std::string::npos) << printed;
  EXPECT_THAT(printed, HasSubstr("info of a  [comparison basis: stands in for the missing "
                                 "reference]"));
  EXPECT_THAT(printed, Not(HasSubstr("info of b  [comparison basis")));
}

}  // namespace
}  // namespace ktune::test

// check_record and lookup_checked: what makes a stored pick servable, one broken field at a time,
// and the memory store's lookup refusing what check_record refuses, with a warning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using testing_cache::sample_key;
using testing_cache::sample_record;

std::string why(const TuningRecord& r, std::optional<std::size_t> count = std::nullopt,
                std::span<const CandidateId> ids = {}) {
  Status s = check_record(r, r.key, count, ids);
  return s ? std::string("ok") : s.error().message;
}

TEST(CheckRecord, SampleRecordIsServable) {
  const TuningRecord r = sample_record(1);
  EXPECT_EQ(why(r), "ok");
  EXPECT_EQ(why(r, 2), "ok");
  const std::vector<CandidateId> ids = {{"gemm_t256x256", "ck-bad-1"},
                                        {"gemm_t64x64_1", "ck-ok-1"}};  // any order
  EXPECT_EQ(why(r, 2, ids), "ok");
}

TEST(CheckRecord, WinnerThatCrashedInItsOwnRowIsRefused) {
  TuningRecord r = sample_record(1);
  r.candidates[0].outcome = Outcome::kCrashed;
  EXPECT_THAT(why(r), HasSubstr("has outcome crashed in its own row"));
}

TEST(CheckRecord, WinnerNotAmongTheRowsIsRefused) {
  TuningRecord r = sample_record(1);
  r.winner = "gemm_t256x256_typo";
  EXPECT_THAT(why(r), HasSubstr("is not among its 2 candidate rows"));
  r.candidates.clear();
  EXPECT_THAT(why(r), HasSubstr("is not among its 0 candidate rows"));
}

TEST(CheckRecord, StandInNotAmongTheRowsIsRefused) {
  TuningRecord r = sample_record(1);
  r.stand_in = r.candidates[1].name;  // any row, valid or not: it may fail re-verification
  EXPECT_EQ(why(r), "ok");
  r.stand_in = "gone";
  EXPECT_THAT(why(r), HasSubstr("the stand-in for the missing reference 'gone' is not among"));
}

TEST(CheckRecord, RowsFewerThanStoredCountAreRefused) {
  TuningRecord r = sample_record(1);
  r.candidates.pop_back();
  EXPECT_THAT(why(r, 2), HasSubstr("holds 1 candidate rows of the 2"));
}

TEST(CheckRecord, RowsThatAreNotTheCandidatesAskedForAreRefused) {
  TuningRecord r = sample_record(1);
  const std::vector<CandidateId> three = {
      {"gemm_t64x64_1", "ck-ok-1"}, {"gemm_t256x256", "ck-bad-1"}, {"new", "ck-new"}};
  EXPECT_THAT(why(r, std::nullopt, three), HasSubstr("not the 3 candidates tuned (1 missing)"));
  const std::vector<CandidateId> other = {{"gemm_t64x64_1", "ck-ok-1"}, {"other", "ck-other"}};
  EXPECT_THAT(why(r, std::nullopt, other), HasSubstr("(1 missing)"));
}

// Names and keys swapped between rows: the winner's name now carries another candidate's valid
// row. Both sets still match; the pairs do not.
TEST(CheckRecord, RowRenamedToAnotherCandidateIsRefused) {
  TuningRecord r = sample_record(1);
  std::swap(r.candidates[0].name, r.candidates[1].name);
  r.winner = r.candidates[0].name;  // "gemm_t256x256", whose own row said compile_error
  const std::vector<CandidateId> ids = {{"gemm_t64x64_1", "ck-ok-1"},
                                        {"gemm_t256x256", "ck-bad-1"}};
  EXPECT_EQ(why(r), "ok");  // consistent on its own
  EXPECT_THAT(why(r, std::nullopt, ids), HasSubstr("(2 missing)"));
}

TEST(CheckRecord, DuplicateRowsAreRefused) {
  TuningRecord r = sample_record(1);
  r.candidates.push_back(r.candidates[1]);
  EXPECT_THAT(why(r), HasSubstr("twice"));
}

TEST(CheckRecord, ImpossibleWinnerStatisticsAreRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (BenchStats s :
       {BenchStats{0, 0, 0, 0, 3}, BenchStats{-5, -5, -5, 0, 3}, BenchStats{nan, 1, 2, 0, 3},
        BenchStats{inf, 1, inf, 0, 3}, BenchStats{10, 20, 30, 0, 3}, BenchStats{10, 5, 8, 0, 3},
        BenchStats{10, 5, 20, 0, 0}}) {
    TuningRecord r = sample_record(1);
    r.candidates[0].stats = s;
    EXPECT_THAT(why(r), HasSubstr("impossible statistics")) << s.median_ns << " " << s.min_ns;
  }
}

TEST(CheckRecord, UnmeasuredWinnerOnlyWhenAlone) {
  TuningRecord r = sample_record(1);
  r.candidates[0].stats.reset();
  EXPECT_THAT(why(r), HasSubstr("has no measurement"));
  r.candidates.pop_back();  // a single candidate is not measured
  EXPECT_EQ(why(r), "ok");
}

TEST(CheckRecord, KeyOtherThanAskedIsRefused) {
  const TuningRecord r = sample_record(1);
  Status s = check_record(r, sample_key(2));
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message, HasSubstr("key is not the one asked for"));
}

TEST(LookupChecked, MemoryStoreMissesOnABadRecordAndWarnsWhy) {
  auto cache = make_memory_cache();
  std::vector<std::string> warnings;
  cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  TuningRecord r = sample_record(1);
  r.candidates[0].outcome = Outcome::kCrashed;
  ASSERT_TRUE(cache->store(r).has_value());
  auto found = cache->lookup(r.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("not served: the winner"));
  EXPECT_THAT(warnings[0], HasSubstr("tuning again"));

  // Stored whole and valid again: served.
  ASSERT_TRUE(cache->store(sample_record(1)).has_value());
  found = cache->lookup(r.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
}

TEST(LookupChecked, RowsOtherThanTheCallersCandidatesAreAMissWithAWarning) {
  auto cache = make_memory_cache();
  std::vector<std::string> warnings;
  cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(cache->store(sample_record(1)).has_value());
  const std::vector<CandidateId> same = {{"gemm_t64x64_1", "ck-ok-1"},
                                         {"gemm_t256x256", "ck-bad-1"}};
  auto hit = lookup_checked(*cache, sample_key(1), same);
  ASSERT_TRUE(hit.has_value() && hit->has_value());
  EXPECT_TRUE(warnings.empty());
  const std::vector<CandidateId> more = {
      {"gemm_t64x64_1", "ck-ok-1"}, {"gemm_t256x256", "ck-bad-1"}, {"third", "ck-third"}};
  hit = lookup_checked(*cache, sample_key(1), more);
  ASSERT_TRUE(hit.has_value());
  EXPECT_FALSE(hit->has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("1 missing"));
}

}  // namespace
}  // namespace ktune

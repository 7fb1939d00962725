// The TuningCache contract as type-parameterised suites, instantiated once per store (SQLite and
// memory in unit_cache_sqlite, Redis in unit_cache_redis) so that every store passes the same
// tests and code tested against the memory cache behaves the same against a real one.
//
// A store's factory: `std::unique_ptr<TuningCache> make()`, an empty cache on each call; it may
// skip the test (GTEST_SKIP) when the store cannot run here.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "unit/cache/cache_fixtures.h"

namespace ktune::testing_cache {

template <class Factory>
class TuningCacheContract : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = factory_.make();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NE(cache_, nullptr);
  }
  Factory factory_;
  std::unique_ptr<TuningCache> cache_;
};

TYPED_TEST_SUITE_P(TuningCacheContract);

TYPED_TEST_P(TuningCacheContract, LookupOfUnknownKeyIsEmpty) {
  auto found = this->cache_->lookup(sample_key(1));
  ASSERT_TRUE(found.has_value()) << found.error().message;
  EXPECT_FALSE(found->has_value());
}

TYPED_TEST_P(TuningCacheContract, StoreThenLookupKeepsEveryField) {
  const TuningRecord record = sample_record(1);
  ASSERT_FALSE(record.candidates[1].stats.has_value());  // the "absent stats" case is covered
  ASSERT_TRUE(this->cache_->store(record).has_value());
  auto found = this->cache_->lookup(record.key);
  ASSERT_TRUE(found.has_value()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_TRUE(same_record(**found, record));
}

// Kept and listed as stored, but never served: its winner is among no rows (check_record).
TYPED_TEST_P(TuningCacheContract, RecordWithoutCandidatesIsListedButNotServed) {
  TuningRecord record = sample_record(2);
  record.candidates.clear();
  std::vector<std::string> warnings;
  this->cache_->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(this->cache_->store(record).has_value());
  auto all = this->cache_->list();
  ASSERT_TRUE(all.has_value() && all->size() == 1u);
  EXPECT_TRUE(same_record(all->front(), record));
  auto found = this->cache_->lookup(record.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("is not among its 0 candidate rows"), std::string::npos)
      << warnings[0];
}

// A winner whose own row says it crashed is a miss, whatever store holds it.
TYPED_TEST_P(TuningCacheContract, CrashedWinnerIsNotServed) {
  TuningRecord record = sample_record(3);
  record.candidates[0].outcome = Outcome::kCrashed;
  record.candidates[0].message = "killed by SIGSEGV";
  this->cache_->set_warning_sink([](const std::string&) {});
  ASSERT_TRUE(this->cache_->store(record).has_value());
  auto found = this->cache_->lookup(record.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
}

TYPED_TEST_P(TuningCacheContract, StoreReplacesRecordWithSameKey) {
  ASSERT_TRUE(this->cache_->store(sample_record(1)).has_value());
  TuningRecord second = sample_record(1);
  second.winner = "other";
  second.candidates.resize(1);  // fewer candidates: none of the old ones may linger
  second.candidates[0].name = "other";
  second.candidates[0].stats.reset();  // a single candidate is not measured
  ASSERT_TRUE(this->cache_->store(second).has_value());

  auto found = this->cache_->lookup(second.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_TRUE(same_record(**found, second));
  auto all = this->cache_->list();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 1u);
}

TYPED_TEST_P(TuningCacheContract, LookupMissesWhenAnyKeyFieldDiffers) {
  ASSERT_TRUE(this->cache_->store(sample_record(1)).has_value());
  TuningKey key = sample_key(1);
  key.device = "cuda:H100";
  auto found = this->cache_->lookup(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
}

TYPED_TEST_P(TuningCacheContract, ListIsNewestFirstWithStoreOrderBreakingTies) {
  ASSERT_TRUE(this->cache_->store(sample_record(1, 100)).has_value());
  ASSERT_TRUE(this->cache_->store(sample_record(2, 300)).has_value());
  ASSERT_TRUE(this->cache_->store(sample_record(3, 200)).has_value());
  ASSERT_TRUE(this->cache_->store(sample_record(4, 200)).has_value());
  auto all = this->cache_->list();
  ASSERT_TRUE(all.has_value()) << all.error().message;
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].key.candidate_set, "cset-2");
  EXPECT_EQ((*all)[1].key.candidate_set, "cset-4");  // same time as 3, stored later
  EXPECT_EQ((*all)[2].key.candidate_set, "cset-3");
  EXPECT_EQ((*all)[3].key.candidate_set, "cset-1");
  EXPECT_TRUE(same_record((*all)[3], sample_record(1, 100)));
}

TYPED_TEST_P(TuningCacheContract, FindPrefixMatchesDigestStart) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(this->cache_->store(sample_record(i)).has_value());
  const std::string digest = sample_key(7).digest();

  auto full = this->cache_->find_prefix(digest);
  ASSERT_TRUE(full.has_value()) << full.error().message;
  ASSERT_EQ(full->size(), 1u);
  EXPECT_TRUE(same_record(full->front(), sample_record(7)));

  // Every record whose digest starts with the 4-digit prefix, and no other.
  const std::string prefix = digest.substr(0, 4);
  std::size_t expected = 0;
  for (int i = 0; i < 20; ++i) expected += sample_key(i).digest().starts_with(prefix) ? 1 : 0;
  auto short_match = this->cache_->find_prefix(prefix);
  ASSERT_TRUE(short_match.has_value());
  EXPECT_EQ(short_match->size(), expected);
  for (const TuningRecord& r : *short_match) EXPECT_TRUE(r.key.digest().starts_with(prefix));

  std::string upper = digest.substr(0, 8);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto upper_match = this->cache_->find_prefix(upper);
  ASSERT_TRUE(upper_match.has_value());
  EXPECT_GE(upper_match->size(), 1u);
}

TYPED_TEST_P(TuningCacheContract, FindPrefixWithNoMatchIsEmpty) {
  ASSERT_TRUE(this->cache_->store(sample_record(1)).has_value());
  const std::string digest = sample_key(1).digest();
  std::string other = digest.substr(0, 6);
  other[0] = other[0] == '0' ? '1' : '0';
  auto found = this->cache_->find_prefix(other);
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->empty());
}

TYPED_TEST_P(TuningCacheContract, FindPrefixRejectsShortOrNonHexPrefix) {
  ASSERT_TRUE(this->cache_->store(sample_record(1)).has_value());
  for (std::string_view bad : {"", "abc", "abcg", "ab%_", "12 34"}) {
    auto found = this->cache_->find_prefix(bad);
    ASSERT_FALSE(found.has_value()) << "prefix '" << bad << "'";
    EXPECT_EQ(found.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(found.error().message.find("digest prefix"), std::string::npos)
        << found.error().message;
  }
  auto found = this->cache_->find_prefix("abc");
  EXPECT_EQ(found.error().message,
            "digest prefix 'abc': too short; expected at least 4 hex digits, got 3");
}

TYPED_TEST_P(TuningCacheContract, ClearReturnsCountAndEmpties) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(this->cache_->store(sample_record(i)).has_value());
  auto removed = this->cache_->clear();
  ASSERT_TRUE(removed.has_value()) << removed.error().message;
  EXPECT_EQ(*removed, 3u);
  auto all = this->cache_->list();
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->empty());
  auto found = this->cache_->lookup(sample_key(1));
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
  auto again = this->cache_->clear();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, 0u);
  // Usable after a clear.
  ASSERT_TRUE(this->cache_->store(sample_record(5)).has_value());
  EXPECT_EQ(this->cache_->list()->size(), 1u);
}

TYPED_TEST_P(TuningCacheContract, RemoveTakesOneRecordAndItsPartials) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(this->cache_->store(sample_record(i)).has_value());
  const TuningRecord r = sample_record(1);
  ASSERT_TRUE(
      this->cache_->store_partial(r.key, MeasureSettings{}, r.candidates.front()).has_value());
  // Upper case is the same digest.
  std::string upper = r.key.digest();
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto removed = this->cache_->remove(upper);
  ASSERT_TRUE(removed.has_value()) << removed.error().message;
  EXPECT_TRUE(*removed);
  auto found = this->cache_->lookup(r.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->has_value());
  auto partials = this->cache_->partials(r.key, MeasureSettings{});
  ASSERT_TRUE(partials.has_value());
  EXPECT_TRUE(partials->empty());
  auto all = this->cache_->list();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  for (const TuningRecord& left : *all) EXPECT_NE(left.key.digest(), r.key.digest());
  // Again: nothing to remove, not an error.
  auto again = this->cache_->remove(r.key.digest());
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_FALSE(*again);
}

TYPED_TEST_P(TuningCacheContract, RemoveRefusesWhatIsNotADigest) {
  ASSERT_TRUE(this->cache_->store(sample_record(1)).has_value());
  const std::string digest = sample_record(1).key.digest();
  for (const std::string& bad : {digest.substr(0, 8), digest + "0", std::string("xyz"),
                                 std::string(""), "g" + digest.substr(1)}) {
    auto removed = this->cache_->remove(bad);
    ASSERT_FALSE(removed.has_value()) << bad;
    EXPECT_EQ(removed.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(this->cache_->list()->size(), 1u);  // a prefix removes nothing
}

REGISTER_TYPED_TEST_SUITE_P(TuningCacheContract, LookupOfUnknownKeyIsEmpty,
                            StoreThenLookupKeepsEveryField,
                            RecordWithoutCandidatesIsListedButNotServed, CrashedWinnerIsNotServed,
                            StoreReplacesRecordWithSameKey, LookupMissesWhenAnyKeyFieldDiffers,
                            ListIsNewestFirstWithStoreOrderBreakingTies,
                            FindPrefixMatchesDigestStart, FindPrefixWithNoMatchIsEmpty,
                            FindPrefixRejectsShortOrNonHexPrefix, ClearReturnsCountAndEmpties,
                            RemoveTakesOneRecordAndItsPartials, RemoveRefusesWhatIsNotADigest);

// The partial-record contract (store_partial, partials, clear_partials): rows come back whole in
// store order, are found only under their own key and settings, replace an earlier row of the
// same candidate, are never served as a pick, and go with clear_partials and clear.
template <class Factory>
class PartialsContract : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = factory_.make();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NE(cache_, nullptr);
  }
  std::vector<CandidateRecord> rows(const TuningKey& key, const MeasureSettings& s) {
    auto got = cache_->partials(key, s);
    EXPECT_TRUE(got.has_value()) << got.error().message;
    return got ? *got : std::vector<CandidateRecord>{};
  }
  Factory factory_;
  std::unique_ptr<TuningCache> cache_;
  MeasureSettings settings_{2.0, 3, 100, 1, true, 0, 15, 0.1};
};

TYPED_TEST_SUITE_P(PartialsContract);

TYPED_TEST_P(PartialsContract, RowsComeBackWholeInStoreOrder) {
  const TuningRecord r = sample_record(1);
  CandidateRecord with_metrics = r.candidates[0];
  with_metrics.metrics = {{"GFLOP/s", 12.5}};
  ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, r.candidates[1]));
  ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, with_metrics));
  const std::vector<CandidateRecord> got = this->rows(r.key, this->settings_);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name, r.candidates[1].name);
  EXPECT_EQ(got[0].outcome, Outcome::kCompileError);
  EXPECT_EQ(got[0].message, r.candidates[1].message);
  EXPECT_FALSE(got[0].stats.has_value());
  EXPECT_EQ(got[1].choice_key, with_metrics.choice_key);
  ASSERT_TRUE(got[1].stats.has_value());
  EXPECT_EQ(got[1].stats->median_ns, with_metrics.stats->median_ns);
  EXPECT_EQ(got[1].stats->runs, with_metrics.stats->runs);
  EXPECT_EQ(got[1].compile_s, with_metrics.compile_s);
  EXPECT_EQ(got[1].metrics, with_metrics.metrics);
}

TYPED_TEST_P(PartialsContract, ALaterRowOfTheSameCandidateReplacesTheEarlier) {
  const TuningRecord r = sample_record(1);
  CandidateRecord c = r.candidates[0];
  ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, c));
  c.outcome = Outcome::kUnsupported;
  c.message = "cannot stand in";
  ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, c));
  const std::vector<CandidateRecord> got = this->rows(r.key, this->settings_);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].outcome, Outcome::kUnsupported);
}

TYPED_TEST_P(PartialsContract, OtherKeysVersionsAndSettingsSeeNoRows) {
  const TuningRecord r = sample_record(1);
  ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, r.candidates[0]));
  EXPECT_TRUE(this->rows(sample_key(2), this->settings_).empty());
  TuningKey other_version = r.key;
  other_version.version = "0.0.9";
  EXPECT_TRUE(this->rows(other_version, this->settings_).empty());
  MeasureSettings longer = this->settings_;
  longer.budget_ms = 50;
  EXPECT_TRUE(this->rows(r.key, longer).empty());
  EXPECT_EQ(this->rows(r.key, this->settings_).size(), 1u);
}

TYPED_TEST_P(PartialsContract, PartialRowsAreNeverAPick) {
  const TuningRecord r = sample_record(1);
  for (const CandidateRecord& c : r.candidates) {
    ASSERT_TRUE(this->cache_->store_partial(r.key, this->settings_, c));
  }
  auto hit = this->cache_->lookup(r.key);
  ASSERT_TRUE(hit.has_value()) << hit.error().message;
  EXPECT_FALSE(hit->has_value());
  auto listed = this->cache_->list();
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->empty());
}

TYPED_TEST_P(PartialsContract, ClearPartialsDropsOnlyThatKeyAndClearDropsAll) {
  const TuningRecord a = sample_record(1);
  const TuningRecord b = sample_record(2);
  ASSERT_TRUE(this->cache_->store_partial(a.key, this->settings_, a.candidates[0]));
  ASSERT_TRUE(this->cache_->store_partial(b.key, this->settings_, b.candidates[0]));
  ASSERT_TRUE(this->cache_->clear_partials(a.key));
  EXPECT_TRUE(this->rows(a.key, this->settings_).empty());
  EXPECT_EQ(this->rows(b.key, this->settings_).size(), 1u);
  ASSERT_TRUE(this->cache_->clear().has_value());
  EXPECT_TRUE(this->rows(b.key, this->settings_).empty());
}

REGISTER_TYPED_TEST_SUITE_P(PartialsContract, RowsComeBackWholeInStoreOrder,
                            ALaterRowOfTheSameCandidateReplacesTheEarlier,
                            OtherKeysVersionsAndSettingsSeeNoRows, PartialRowsAreNeverAPick,
                            ClearPartialsDropsOnlyThatKeyAndClearDropsAll);

}  // namespace ktune::testing_cache

// The partial-record contract of TuningCache (store_partial, partials, clear_partials), over both
// implementations: rows come back whole in store order, are found only under their own key and
// settings, replace an earlier row of the same candidate, are never served as a pick, and go
// with clear_partials and clear.
#include <gtest/gtest.h>

#include <memory>

#include "ktune/cache_sqlite/sqlite_cache.h"
#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using testing_cache::sample_key;
using testing_cache::sample_record;
using testing_cache::TempDir;

struct SqliteStore {
  TempDir dir;
  std::unique_ptr<TuningCache> make() {
    auto cache = open_sqlite_cache(dir.path());
    EXPECT_TRUE(cache.has_value()) << cache.error().message;
    return cache ? std::move(*cache) : nullptr;
  }
};

struct MemoryStore {
  std::unique_ptr<TuningCache> make() { return make_memory_cache(); }
};

template <class Factory>
class PartialsContract : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = factory_.make();
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

using Stores = ::testing::Types<SqliteStore, MemoryStore>;
TYPED_TEST_SUITE(PartialsContract, Stores);

TYPED_TEST(PartialsContract, RowsComeBackWholeInStoreOrder) {
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

TYPED_TEST(PartialsContract, ALaterRowOfTheSameCandidateReplacesTheEarlier) {
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

TYPED_TEST(PartialsContract, OtherKeysVersionsAndSettingsSeeNoRows) {
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

TYPED_TEST(PartialsContract, PartialRowsAreNeverAPick) {
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

TYPED_TEST(PartialsContract, ClearPartialsDropsOnlyThatKeyAndClearDropsAll) {
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

}  // namespace
}  // namespace ktune

// make_fallback_cache's rules, with a primary that fails on demand (the real Redis behind it is
// tested in unit_cache_redis): which errors switch, that the switch is for good, one warning.
#include "ktune/cache/fallback_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using testing_cache::sample_key;
using testing_cache::sample_record;

// A memory cache whose operations fail with `fail_with` once it is set.
class FailingCache final : public TuningCache {
 public:
  explicit FailingCache(std::optional<ErrorCode>* fail_with) : fail_with_(fail_with) {}
  Result<std::optional<TuningRecord>> lookup(const TuningKey& key) override {
    if (*fail_with_) return err();
    return inner_->lookup(key);
  }
  Status store(const TuningRecord& r) override {
    if (*fail_with_) return err();
    return inner_->store(r);
  }
  Result<std::vector<TuningRecord>> list() override {
    if (*fail_with_) return err();
    return inner_->list();
  }
  Result<std::vector<TuningRecord>> find_prefix(std::string_view p) override {
    if (*fail_with_) return err();
    return inner_->find_prefix(p);
  }
  Result<std::size_t> clear() override {
    if (*fail_with_) return err();
    return inner_->clear();
  }
  Result<bool> remove(std::string_view digest) override {
    if (*fail_with_) return err();
    return inner_->remove(digest);
  }
  Status store_partial(const TuningKey& k, const MeasureSettings& s,
                       const CandidateRecord& c) override {
    if (*fail_with_) return err();
    return inner_->store_partial(k, s, c);
  }
  Result<std::vector<CandidateRecord>> partials(const TuningKey& k,
                                                const MeasureSettings& s) override {
    if (*fail_with_) return err();
    return inner_->partials(k, s);
  }
  Status clear_partials(const TuningKey& k) override {
    if (*fail_with_) return err();
    return inner_->clear_partials(k);
  }

 private:
  std::unexpected<Error> err() const { return make_error(**fail_with_, "GET: it broke"); }
  std::optional<ErrorCode>* fail_with_;
  std::unique_ptr<TuningCache> inner_ = make_memory_cache();
};

class FallbackCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = make_fallback_cache(std::unique_ptr<TuningCache>(new FailingCache(&fail_with_)),
                                 make_memory_cache(), "Redis at h:1", "the local cache");
    cache_->set_warning_sink([this](const std::string& w) { warnings_.push_back(w); });
  }
  std::optional<ErrorCode> fail_with_;
  std::unique_ptr<TuningCache> cache_;
  std::vector<std::string> warnings_;
};

TEST_F(FallbackCacheTest, ServesFromThePrimaryWhileItWorks) {
  ASSERT_TRUE(cache_->store(sample_record(1)).has_value());
  fail_with_.reset();
  auto hit = cache_->lookup(sample_key(1));
  ASSERT_TRUE(hit.has_value() && hit->has_value());
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(FallbackCacheTest, SwitchesForGoodOnTheFirstUnavailableWithOneWarning) {
  ASSERT_TRUE(cache_->store(sample_record(1)).has_value());
  fail_with_ = ErrorCode::kUnavailable;
  ASSERT_TRUE(cache_->store(sample_record(2)).has_value());  // retried on the secondary
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], "Redis at h:1 unreachable (GET: it broke); using the local cache");
  fail_with_.reset();  // the primary works again: not used any more
  EXPECT_FALSE(cache_->lookup(sample_key(1))->has_value());
  EXPECT_TRUE(cache_->lookup(sample_key(2))->has_value());
  EXPECT_EQ(cache_->list()->size(), 1u);
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(FallbackCacheTest, OtherErrorsAreTheCallersAndDoNotSwitch) {
  ASSERT_TRUE(cache_->store(sample_record(1)).has_value());
  fail_with_ = ErrorCode::kInvalidArgument;
  auto r = cache_->find_prefix("abcd");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  fail_with_.reset();
  EXPECT_TRUE(cache_->lookup(sample_key(1))->has_value());
  EXPECT_TRUE(warnings_.empty());
}

TEST(FallbackCache, APrimaryThatDidNotOpenWarnsOnFirstUseThenServesTheSecondary) {
  std::vector<std::string> warnings;
  auto cache = make_fallback_cache(make_error(ErrorCode::kUnavailable, "connect: refused"),
                                   make_memory_cache(), "Redis at h:1", "the local cache");
  cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(cache->store(sample_record(1)).has_value());
  EXPECT_TRUE(cache->lookup(sample_key(1))->has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("Redis at h:1 unreachable (connect: refused)"));
}

// The secondary's own warnings (a record not served) reach the fallback's sink.
TEST(FallbackCache, TheStoresWarningsGoToItsSink) {
  std::vector<std::string> warnings;
  auto cache = make_fallback_cache(make_memory_cache(), make_memory_cache(), "p", "s");
  cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  TuningRecord bad = sample_record(1);
  bad.candidates.clear();
  ASSERT_TRUE(cache->store(bad).has_value());
  EXPECT_FALSE(cache->lookup(bad.key)->has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("not served"));
}

}  // namespace
}  // namespace ktune

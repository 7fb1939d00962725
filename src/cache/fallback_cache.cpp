// make_fallback_cache (ktune/cache/fallback_cache.h).
#include "ktune/cache/fallback_cache.h"

#include <fmt/format.h>

#include <mutex>
#include <utility>

namespace ktune {
namespace {

class FallbackCache final : public TuningCache {
 public:
  FallbackCache(Result<std::unique_ptr<TuningCache>> primary,
                std::unique_ptr<TuningCache> secondary, std::string primary_name,
                std::string secondary_name)
      : secondary_(std::move(secondary)),
        primary_name_(std::move(primary_name)),
        secondary_name_(std::move(secondary_name)) {
    KTUNE_CHECK(secondary_ != nullptr);
    secondary_->set_warning_sink([this](const std::string& w) { warn(w); });
    if (primary) {
      KTUNE_CHECK(*primary != nullptr);
      primary_ = std::move(*primary);
      primary_->set_warning_sink([this](const std::string& w) { warn(w); });
    } else {
      pending_ = std::move(primary.error());
    }
  }

  Result<std::optional<TuningRecord>> lookup(const TuningKey& key) override {
    return call([&](TuningCache& c) { return c.lookup(key); });
  }
  Status store(const TuningRecord& record) override {
    return call([&](TuningCache& c) { return c.store(record); });
  }
  Result<std::vector<TuningRecord>> list() override {
    return call([&](TuningCache& c) { return c.list(); });
  }
  Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) override {
    return call([&](TuningCache& c) { return c.find_prefix(prefix); });
  }
  Result<bool> remove(std::string_view digest) override {
    return call([&](TuningCache& c) { return c.remove(digest); });
  }
  Result<std::size_t> clear() override {
    return call([&](TuningCache& c) { return c.clear(); });
  }
  Status store_partial(const TuningKey& key, const MeasureSettings& settings,
                       const CandidateRecord& record) override {
    return call([&](TuningCache& c) { return c.store_partial(key, settings, record); });
  }
  Result<std::vector<CandidateRecord>> partials(const TuningKey& key,
                                                const MeasureSettings& settings) override {
    return call([&](TuningCache& c) { return c.partials(key, settings); });
  }
  Status clear_partials(const TuningKey& key) override {
    return call([&](TuningCache& c) { return c.clear_partials(key); });
  }

 private:
  // The primary while it works; on its first kUnavailable, the switch (and the one warning),
  // then the same operation on the secondary. The lock is held through the primary's call, so
  // that threads sharing this cache switch together and the warning is said once.
  template <class Op>
  auto call(Op op) -> decltype(op(std::declval<TuningCache&>())) {
    std::unique_lock lock(mutex_);
    if (primary_ != nullptr) {
      auto r = op(*primary_);
      if (r || r.error().code != ErrorCode::kUnavailable) return r;
      pending_ = std::move(r.error());
    }
    if (pending_) {
      primary_.reset();
      const std::string why = std::move(pending_->message);
      pending_.reset();
      warn(fmt::format("{} unreachable ({}); using {}", primary_name_, why, secondary_name_));
    }
    lock.unlock();  // the secondary serialises its own calls
    return op(*secondary_);
  }

  std::mutex mutex_;
  std::unique_ptr<TuningCache> primary_;  // null once switched
  std::unique_ptr<TuningCache> secondary_;
  std::optional<Error> pending_;  // the failure not yet warned about
  std::string primary_name_;
  std::string secondary_name_;
};

}  // namespace

std::unique_ptr<TuningCache> make_fallback_cache(Result<std::unique_ptr<TuningCache>> primary,
                                                 std::unique_ptr<TuningCache> secondary,
                                                 std::string primary_name,
                                                 std::string secondary_name) {
  return std::make_unique<FallbackCache>(std::move(primary), std::move(secondary),
                                         std::move(primary_name), std::move(secondary_name));
}

}  // namespace ktune

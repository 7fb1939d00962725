// make_memory_cache: a TuningCache held in memory, for tests and --no-cache. It follows the
// SQLite store's rules exactly (ordering, prefix validation, replacement) so that tests written
// against one hold for the other.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cache/key_util.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

class MemoryCache final : public TuningCache {
 public:
  Result<std::optional<TuningRecord>> lookup(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key.digest());
    if (it == entries_.end() || !cache::same_key(it->second.record.key, key)) {
      return std::optional<TuningRecord>();
    }
    // Held in memory it cannot be edited, but a caller may have stored a record that is not
    // servable; the same rule as the files' keeps the two stores interchangeable in tests.
    if (Status s = check_record(it->second.record, key); !s) {
      warn(fmt::format("tuning cache: record {} ({}) not served: {}; tuning again",
                       key.digest().substr(0, 12), key.op, s.error().message));
      return std::optional<TuningRecord>();
    }
    return std::optional<TuningRecord>(it->second.record);
  }

  Status store(const TuningRecord& record) override {
    std::lock_guard lock(mutex_);
    // A replaced record counts as newly stored, as a re-inserted SQLite row gets a new rowid.
    entries_[record.key.digest()] = Entry{next_seq_++, record};
    return {};
  }

  Result<std::vector<TuningRecord>> list() override {
    std::lock_guard lock(mutex_);
    return sorted([](const std::string&) { return true; });
  }

  Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) override {
    auto normalized = cache::normalize_digest_prefix(prefix);
    if (!normalized) return std::unexpected(normalized.error());
    std::lock_guard lock(mutex_);
    return sorted([&](const std::string& digest) { return digest.starts_with(*normalized); });
  }

  Result<std::size_t> clear() override {
    std::lock_guard lock(mutex_);
    const std::size_t n = entries_.size();
    entries_.clear();
    partials_.clear();
    return n;
  }

  Result<bool> remove(std::string_view digest) override {
    auto checked = cache::normalize_full_digest(digest);
    if (!checked) return std::unexpected(checked.error());
    std::lock_guard lock(mutex_);
    partials_.erase(*checked);
    return entries_.erase(*checked) > 0;
  }

  Status store_partial(const TuningKey& key, const MeasureSettings& settings,
                       const CandidateRecord& record) override {
    std::lock_guard lock(mutex_);
    std::vector<PartialRow>& rows = partials_[key.digest()];
    // Replaced in place, so that the order stays the order of first measurement.
    const auto same = std::find_if(rows.begin(), rows.end(), [&](const PartialRow& r) {
      return r.candidate.choice_key == record.choice_key;
    });
    PartialRow row{key, settings, record};
    if (same == rows.end()) {
      rows.push_back(std::move(row));
    } else {
      *same = std::move(row);
    }
    return {};
  }

  Result<std::vector<CandidateRecord>> partials(const TuningKey& key,
                                                const MeasureSettings& settings) override {
    std::lock_guard lock(mutex_);
    std::vector<CandidateRecord> out;
    auto it = partials_.find(key.digest());
    if (it == partials_.end()) return out;
    for (const PartialRow& r : it->second) {
      if (cache::same_key(r.key, key) && r.settings == settings) out.push_back(r.candidate);
    }
    return out;
  }

  Status clear_partials(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    partials_.erase(key.digest());
    return {};
  }

 private:
  struct Entry {
    std::uint64_t seq = 0;  // store order, the tie-break among equal created_unix
    TuningRecord record;
  };

  // Newest first: created_unix descending, then the most recently stored.
  template <class Pred>
  std::vector<TuningRecord> sorted(Pred keep) const {
    std::vector<const Entry*> picked;
    for (const auto& [digest, entry] : entries_) {
      if (keep(digest)) picked.push_back(&entry);
    }
    std::sort(picked.begin(), picked.end(), [](const Entry* a, const Entry* b) {
      if (a->record.created_unix != b->record.created_unix) {
        return a->record.created_unix > b->record.created_unix;
      }
      return a->seq > b->seq;
    });
    std::vector<TuningRecord> out;
    out.reserve(picked.size());
    for (const Entry* e : picked) out.push_back(e->record);
    return out;
  }

  std::mutex mutex_;  // the interface may be shared by the threads of one selector
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::vector<PartialRow>> partials_;  // by key digest
  std::uint64_t next_seq_ = 0;
};

}  // namespace

std::unique_ptr<TuningCache> make_memory_cache() { return std::make_unique<MemoryCache>(); }

}  // namespace ktune

// check_record and lookup_checked: a stored pick is served only when its record is whole and its
// winner's own row says it is valid. The stores (SQLite, JSON, memory) and every reader of picks
// go through here, so that a record edited by hand, cut short or written by something else is a
// miss and is tuned again, never a crashed kernel handed to a program.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "cache/key_util.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {
namespace {

Status bad(std::string why) { return make_error(ErrorCode::kParse, std::move(why)); }

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

Status check_stats(const CandidateRecord& w, std::size_t rows) {
  if (!w.stats) {
    // A single candidate is not measured (the Selector's shortcut); any other winner was.
    if (rows == 1) return {};
    return bad(fmt::format("the winner '{}' has no measurement", w.name));
  }
  const BenchStats& s = *w.stats;
  if (!finite_positive(s.median_ns) || !finite_positive(s.min_ns) || !std::isfinite(s.max_ns) ||
      s.min_ns > s.median_ns || s.median_ns > s.max_ns || s.runs < 1) {
    return bad(
        fmt::format("the winner '{}' has impossible statistics (median {} ns, min {} ns, "
                    "max {} ns, {} runs)",
                    w.name, s.median_ns, s.min_ns, s.max_ns, s.runs));
  }
  return {};
}

}  // namespace

Status check_record(const TuningRecord& record, const TuningKey& asked,
                    std::optional<std::size_t> stored_count,
                    std::span<const CandidateId> candidates) {
  if (!cache::same_key(record.key, asked)) return bad("its key is not the one asked for");
  const auto& rows = record.candidates;
  if (stored_count && *stored_count != rows.size()) {
    return bad(fmt::format("it holds {} candidate rows of the {} it was stored with", rows.size(),
                           *stored_count));
  }
  std::set<std::string> names, keys;
  for (const CandidateRecord& c : rows) {
    if (!names.insert(c.name).second) return bad(fmt::format("candidate '{}' twice", c.name));
    if (!keys.insert(c.choice_key).second) {
      return bad(fmt::format("candidate key '{}' twice", c.choice_key));
    }
  }
  if (!candidates.empty()) {
    // Pairs, not two sets: a row renamed to another candidate's name must not lend it its outcome.
    std::set<std::pair<std::string, std::string>> asked_for, stored;
    for (const CandidateId& c : candidates) asked_for.emplace(c.name, c.key);
    for (const CandidateRecord& c : rows) stored.emplace(c.name, c.choice_key);
    if (asked_for != stored) {
      std::size_t missing = 0;
      for (const auto& c : asked_for) missing += stored.count(c) == 0 ? 1 : 0;
      return bad(fmt::format("its {} candidate rows are not the {} candidates tuned ({} missing)",
                             rows.size(), asked_for.size(), missing));
    }
  }
  // The stand-in is what "valid" meant without a reference: a record that names one not among
  // its rows cannot say what its candidates were compared with.
  if (record.stand_in && !names.contains(*record.stand_in)) {
    return bad(
        fmt::format("the stand-in for the missing reference '{}' is not among its {} "
                    "candidate rows",
                    *record.stand_in, rows.size()));
  }
  const auto w = std::find_if(rows.begin(), rows.end(),
                              [&](const CandidateRecord& c) { return c.name == record.winner; });
  if (w == rows.end()) {
    return bad(fmt::format("the winner '{}' is not among its {} candidate rows", record.winner,
                           rows.size()));
  }
  if (w->outcome != Outcome::kOk) {
    return bad(fmt::format("the winner '{}' has outcome {} in its own row", w->name,
                           outcome_name(w->outcome)));
  }
  return check_stats(*w, rows.size());
}

void TuningCache::warn(const std::string& message) const {
  if (warn_) {
    warn_(message);
    return;
  }
  std::fputs(("ktune: warning: " + message + "\n").c_str(), stderr);
  std::fflush(stderr);
}

Result<std::optional<TuningRecord>> lookup_checked(TuningCache& cache, const TuningKey& key,
                                                   std::span<const CandidateId> candidates) {
  auto hit = cache.lookup(key);
  if (!hit || !*hit) return hit;
  if (Status s = check_record(**hit, key, std::nullopt, candidates); !s) {
    cache.warn(fmt::format("tuning cache: record {} ({}) not served: {}; tuning again",
                           key.digest().substr(0, 12), key.op, s.error().message));
    return std::optional<TuningRecord>();
  }
  return hit;
}

}  // namespace ktune

// The `partial_candidates` table of the SQLite tuning cache: each candidate's outcome, stored as
// soon as it is measured (TuningCache::store_partial), so that a killed tuning resumes. Not part
// of the schema version (user_version): the table is created IF NOT EXISTS at every open, and a
// ktune that does not know it leaves it alone. One row per (key_digest, choice_key); the record
// is the JSON of partial_to_json (key, settings, candidate), checked again when read back.
#pragma once

#include <string>
#include <vector>

#include "cache_sqlite/sqlite_db.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune::cache {

inline constexpr std::string_view kPartialsTable = R"sql(
CREATE TABLE IF NOT EXISTS partial_candidates(
  key_digest TEXT NOT NULL, choice_key TEXT NOT NULL, name TEXT NOT NULL,
  record_json TEXT NOT NULL, written_unix INTEGER NOT NULL,
  PRIMARY KEY(key_digest, choice_key));
)sql";

// Each one transaction of its own; the caller holds the connection's mutex.
[[nodiscard]] Status store_partial_row(SqliteDb& db, const TuningKey& key,
                                       const MeasureSettings& settings,
                                       const CandidateRecord& record);
// Rows that do not parse, whose key is not `key` (a digest collision, an edited row) or whose
// settings differ are left out; the first two with a warning through `warn`.
[[nodiscard]] Result<std::vector<CandidateRecord>> read_partial_rows(
    SqliteDb& db, const TuningKey& key, const MeasureSettings& settings,
    const TuningCache& warn_to);
[[nodiscard]] Status clear_partial_rows(SqliteDb& db, const TuningKey& key);

}  // namespace ktune::cache

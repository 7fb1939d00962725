// The `stand_ins` and `metrics` tables of the SQLite tuning cache (schema v5), kept beside
// sqlite_cache.cpp's tables: which candidate stood in for a missing reference
// (TuningRecord::stand_in), and each measured candidate's metrics (CandidateRecord::metrics),
// by the candidate's row (ord) and the metric's place in the spec's order (pos).
#pragma once

#include <string>

#include "cache_sqlite/sqlite_db.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune::cache {

// Created by the v5 migration (sqlite_open.cpp).
inline constexpr std::string_view kSchemaV5Notes = R"sql(
CREATE TABLE IF NOT EXISTS stand_ins(
  digest TEXT PRIMARY KEY NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metrics(
  digest TEXT NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  ord INTEGER NOT NULL, pos INTEGER NOT NULL, name TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY(digest, ord, pos));
)sql";

inline constexpr std::string_view kSelectStandIn = "SELECT name FROM stand_ins WHERE digest = ?1";
inline constexpr std::string_view kSelectMetrics =
    "SELECT ord, name, value FROM metrics WHERE digest = ?1 ORDER BY ord, pos";

// Within the caller's write transaction, after its rows of `tunings` and `candidates` are in.
[[nodiscard]] Status insert_notes(SqliteDb& db, const std::string& digest,
                                  const TuningRecord& record);

// `stand_in` and `metrics` prepared from kSelectStandIn and kSelectMetrics; after the record's
// candidates are read. Records stored before v5 have no rows and read back without either.
[[nodiscard]] Status read_notes(SqliteStmt& stand_in, SqliteStmt& metrics,
                                const std::string& digest, TuningRecord& record);

}  // namespace ktune::cache

// The `settings` table of the SQLite tuning cache (schema v4): a tuning's MeasureSettings, one row
// per record that has them, kept beside sqlite_cache.cpp's tables.
#pragma once

#include <string>

#include "cache_sqlite/sqlite_db.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune::cache {

// Created by the v4 migration (sqlite_open.cpp).
inline constexpr std::string_view kSchemaV4Settings = R"sql(
CREATE TABLE IF NOT EXISTS settings(
  digest TEXT PRIMARY KEY NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  budget_ms REAL NOT NULL, min_runs INTEGER NOT NULL, max_runs INTEGER NOT NULL,
  warmup_runs INTEGER NOT NULL, flush_cache INTEGER NOT NULL, graph_calls INTEGER NOT NULL,
  decide_rounds INTEGER NOT NULL, close_call_band REAL NOT NULL);
)sql";

inline constexpr std::string_view kSelectSettings =
    "SELECT budget_ms, min_runs, max_runs, warmup_runs, flush_cache, graph_calls, decide_rounds, "
    "close_call_band FROM settings WHERE digest = ?1";

// Within the caller's write transaction, after its row of `tunings` is in.
[[nodiscard]] Status insert_settings(SqliteDb& db, const std::string& digest,
                                     const MeasureSettings& s);

// `stmt` prepared from kSelectSettings; sets record.settings when the record has a row (none in
// records stored before v4).
[[nodiscard]] Status read_settings(SqliteStmt& stmt, const std::string& digest,
                                   TuningRecord& record);

}  // namespace ktune::cache

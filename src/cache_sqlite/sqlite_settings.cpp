// insert_settings and read_settings (sqlite_settings.h).
#include "cache_sqlite/sqlite_settings.h"

namespace ktune::cache {

Status insert_settings(SqliteDb& db, const std::string& digest, const MeasureSettings& s) {
  auto stmt = db.prepare("INSERT INTO settings VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!stmt) return std::unexpected(stmt.error());
  const std::int64_t ints[] = {s.min_runs,    s.max_runs,     s.warmup_runs, s.flush_cache ? 1 : 0,
                               s.graph_calls, s.decide_rounds};
  Status bound = stmt->bind(1, digest);
  if (bound) bound = stmt->bind(2, s.budget_ms);
  for (int i = 0; i < 6 && bound; ++i) bound = stmt->bind(3 + i, ints[i]);
  if (bound) bound = stmt->bind(9, s.close_call_band);
  if (!bound) return bound;
  return stmt->run();
}

Status read_settings(SqliteStmt& stmt, const std::string& digest, TuningRecord& record) {
  stmt.reset();
  if (auto s = stmt.bind(1, digest); !s) return s;
  auto row = stmt.step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return {};  // stored before version 4, or without settings
  MeasureSettings s;
  s.budget_ms = stmt.column_double(0);
  s.min_runs = static_cast<int>(stmt.column_int(1));
  s.max_runs = static_cast<int>(stmt.column_int(2));
  s.warmup_runs = static_cast<int>(stmt.column_int(3));
  s.flush_cache = stmt.column_int(4) != 0;
  s.graph_calls = static_cast<int>(stmt.column_int(5));
  s.decide_rounds = static_cast<int>(stmt.column_int(6));
  s.close_call_band = stmt.column_double(7);
  record.settings = s;
  stmt.reset();  // one row per digest: done
  return {};
}

}  // namespace ktune::cache

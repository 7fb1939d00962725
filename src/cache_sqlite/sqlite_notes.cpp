// insert_notes and read_notes (sqlite_notes.h).
#include "cache_sqlite/sqlite_notes.h"

#include <fmt/format.h>

namespace ktune::cache {

Status insert_notes(SqliteDb& db, const std::string& digest, const TuningRecord& record) {
  if (record.stand_in) {
    auto stmt = db.prepare("INSERT INTO stand_ins VALUES(?1, ?2)");
    if (!stmt) return std::unexpected(stmt.error());
    Status bound = stmt->bind(1, digest);
    if (bound) bound = stmt->bind(2, *record.stand_in);
    if (!bound) return bound;
    if (auto s = stmt->run(); !s) return s;
  }
  auto stmt = db.prepare("INSERT INTO metrics VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!stmt) return std::unexpected(stmt.error());
  for (std::size_t ord = 0; ord < record.candidates.size(); ++ord) {
    const std::vector<MetricValue>& metrics = record.candidates[ord].metrics;
    for (std::size_t pos = 0; pos < metrics.size(); ++pos) {
      stmt->reset();
      Status bound = stmt->bind(1, digest);
      if (bound) bound = stmt->bind(2, static_cast<std::int64_t>(ord));
      if (bound) bound = stmt->bind(3, static_cast<std::int64_t>(pos));
      if (bound) bound = stmt->bind(4, metrics[pos].name);
      if (bound) bound = stmt->bind(5, metrics[pos].value);
      if (!bound) return bound;
      if (auto s = stmt->run(); !s) return s;
    }
  }
  return {};
}

Status read_notes(SqliteStmt& stand_in, SqliteStmt& metrics, const std::string& digest,
                  TuningRecord& record) {
  stand_in.reset();
  if (auto s = stand_in.bind(1, digest); !s) return s;
  auto row = stand_in.step();
  if (!row) return std::unexpected(row.error());
  if (*row) record.stand_in = stand_in.column_text(0);
  stand_in.reset();

  metrics.reset();
  if (auto s = metrics.bind(1, digest); !s) return s;
  for (;;) {
    auto m = metrics.step();
    if (!m) return std::unexpected(m.error());
    if (!*m) break;
    const std::int64_t ord = metrics.column_int(0);
    if (ord < 0 || static_cast<std::size_t>(ord) >= record.candidates.size()) {
      return make_error(ErrorCode::kParse,
                        fmt::format("record {}: a metric of candidate row {}, which does not "
                                    "exist ({} rows)",
                                    digest, ord, record.candidates.size()));
    }
    record.candidates[static_cast<std::size_t>(ord)].metrics.push_back(
        {metrics.column_text(1), metrics.column_double(2)});
  }
  metrics.reset();
  return {};
}

}  // namespace ktune::cache

// store_partial_row, read_partial_rows, clear_partial_rows (sqlite_partials.h).
#include "cache_sqlite/sqlite_partials.h"

#include <fmt/format.h>

#include <ctime>

#include "cache/key_util.h"

namespace ktune::cache {

Status store_partial_row(SqliteDb& db, const TuningKey& key, const MeasureSettings& settings,
                         const CandidateRecord& record) {
  // One write transaction per row: a kill mid-write leaves the rows as they were before it.
  auto txn = SqliteTransaction::begin(db, SqliteTransaction::Kind::kWrite);
  if (!txn) return std::unexpected(txn.error());
  auto stmt = db.prepare(
      "INSERT OR REPLACE INTO partial_candidates(key_digest, choice_key, name, record_json, "
      "written_unix) VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!stmt) return std::unexpected(stmt.error());
  const std::string json = partial_to_json(PartialRow{key, settings, record});
  Status bound = stmt->bind(1, key.digest());
  if (bound) bound = stmt->bind(2, record.choice_key);
  if (bound) bound = stmt->bind(3, record.name);
  if (bound) bound = stmt->bind(4, json);
  if (bound) bound = stmt->bind(5, static_cast<std::int64_t>(std::time(nullptr)));
  if (!bound) return bound;
  if (auto s = stmt->run(); !s) return s;
  return txn->commit();
}

Result<std::vector<CandidateRecord>> read_partial_rows(SqliteDb& db, const TuningKey& key,
                                                       const MeasureSettings& settings,
                                                       const TuningCache& warn_to) {
  auto txn = SqliteTransaction::begin(db, SqliteTransaction::Kind::kRead);
  if (!txn) return std::unexpected(txn.error());
  auto stmt = db.prepare(
      "SELECT choice_key, record_json FROM partial_candidates WHERE key_digest = ?1 "
      "ORDER BY written_unix, rowid");
  if (!stmt) return std::unexpected(stmt.error());
  if (auto s = stmt->bind(1, key.digest()); !s) return std::unexpected(s.error());
  std::vector<CandidateRecord> out;
  for (;;) {
    auto row = stmt->step();
    if (!row) return std::unexpected(row.error());
    if (!*row) break;
    const std::string choice_key = stmt->column_text(0);
    auto parsed = partial_from_json(stmt->column_text(1));
    // The file is anyone's with this user's rights to edit: a row is used only when it is
    // whole and says the same as its columns.
    if (!parsed || !same_key(parsed->key, key) || parsed->candidate.choice_key != choice_key) {
      warn_to.warn(
          fmt::format("tuning cache {}: partial row of {} ({}) ignored: {}", db.path(),
                      key.digest().substr(0, 12), choice_key,
                      parsed ? "its key is not the one asked for" : parsed.error().message));
      continue;
    }
    if (parsed->settings != settings) continue;  // measured otherwise: measured again
    out.push_back(std::move(parsed->candidate));
  }
  if (auto s = txn->commit(); !s) return std::unexpected(s.error());
  return out;
}

Status clear_partial_rows(SqliteDb& db, const TuningKey& key) {
  auto txn = SqliteTransaction::begin(db, SqliteTransaction::Kind::kWrite);
  if (!txn) return std::unexpected(txn.error());
  auto stmt = db.prepare("DELETE FROM partial_candidates WHERE key_digest = ?1");
  if (!stmt) return std::unexpected(stmt.error());
  if (auto s = stmt->bind(1, key.digest()); !s) return s;
  if (auto s = stmt->run(); !s) return s;
  return txn->commit();
}

}  // namespace ktune::cache

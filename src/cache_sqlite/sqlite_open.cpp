// open_sqlite_cache: the folder and file checks, the schema and its migrations, WAL; the store
// itself is sqlite_cache.cpp's.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

#include "cache_sqlite/sqlite_db.h"
#include "cache_sqlite/sqlite_notes.h"
#include "cache_sqlite/sqlite_params.h"
#include "cache_sqlite/sqlite_partials.h"
#include "cache_sqlite/sqlite_settings.h"
#include "core/file_util.h"
#include "ktune/cache_sqlite/sqlite_cache.h"

namespace ktune {
namespace {

using cache::SqliteDb;
using cache::SqliteTransaction;

constexpr int kBusyTimeoutMs = 5000;
// PRAGMA user_version of the layout below. 0 is a fresh file. A new version adds a migration
// step in migrate() and never changes what an older step does.
constexpr std::int64_t kSchemaVersion = 7;

constexpr std::string_view kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS tunings(
  digest TEXT PRIMARY KEY NOT NULL,
  op TEXT NOT NULL, problem TEXT NOT NULL, candidate_set TEXT NOT NULL, device TEXT NOT NULL,
  toolchain TEXT NOT NULL, version TEXT NOT NULL, winner TEXT NOT NULL,
  created_unix INTEGER NOT NULL, compile_s REAL NOT NULL, bench_s REAL NOT NULL);
CREATE INDEX IF NOT EXISTS tunings_by_created ON tunings(created_unix);
CREATE TABLE IF NOT EXISTS candidates(
  digest TEXT NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  ord INTEGER NOT NULL, choice_key TEXT NOT NULL, name TEXT NOT NULL, info TEXT NOT NULL,
  outcome TEXT NOT NULL, message TEXT NOT NULL,
  median_ns REAL NULL, min_ns REAL NULL, max_ns REAL NULL, mad_ns REAL NULL, runs INTEGER NULL,
  compile_s REAL NOT NULL,
  PRIMARY KEY(digest, ord));
)sql";

// v2: how many candidate rows a tuning was stored with, so that a record whose rows were cut
// (deleted, or lost with part of a file) is told apart from a whole one. NULL in rows of v1.
constexpr std::string_view kSchemaV2 =
    "ALTER TABLE tunings ADD COLUMN candidate_count INTEGER NULL;";

// v3: the pick's confidence (TuningRecord::confidence), one row per tuning that has one;
// records stored before have none and read back without it.
constexpr std::string_view kSchemaV3 = R"sql(
CREATE TABLE IF NOT EXISTS confidences(
  digest TEXT PRIMARY KEY NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  runner_up TEXT NOT NULL, runner_up_ratio REAL NOT NULL, ratio_low REAL NOT NULL,
  ratio_high REAL NOT NULL, ratio_rounds INTEGER NOT NULL, spread REAL NOT NULL,
  others_load REAL NOT NULL, cores INTEGER NOT NULL, reverified INTEGER NOT NULL,
  trusted INTEGER NOT NULL);
)sql";

// v7: the labels of a record (TuningRecord::spec, problem_name) and each candidate's code cache
// key (CandidateRecord::artifact); NULL in rows stored before. Each column is added only when
// missing: a file whose user_version was set back by hand may have it already.
constexpr std::pair<std::string_view, std::string_view> kSchemaV7Columns[] = {
    {"tunings", "spec"}, {"tunings", "problem_name"}, {"candidates", "artifact"}};

Status add_column_if_missing(SqliteDb& db, std::string_view table, std::string_view column) {
  auto has = db.query_int(
      fmt::format("SELECT count(*) FROM pragma_table_info('{}') WHERE name = '{}'", table, column));
  if (!has) return std::unexpected(has.error());
  if (*has != 0) return {};
  return db.exec(fmt::format("ALTER TABLE {} ADD COLUMN {} TEXT NULL;", table, column));
}

// Brings a fresh or older file to kSchemaVersion; refuses one written by a newer ktune.
Status migrate(SqliteDb& db) {
  auto txn = SqliteTransaction::begin(db, SqliteTransaction::Kind::kWrite);
  if (!txn) return std::unexpected(txn.error());
  auto version = db.query_int("PRAGMA user_version");
  if (!version) return std::unexpected(version.error());
  if (*version > kSchemaVersion) {
    return make_error(ErrorCode::kIo,
                      fmt::format("tuning cache {}: schema version {} is newer than this ktune "
                                  "understands; expected at most {} (upgrade ktune or use "
                                  "another --cache-dir)",
                                  db.path(), *version, kSchemaVersion));
  }
  if (*version < 1) {
    if (auto s = db.exec(kSchemaV1); !s) return s;
  }
  if (*version < 2) {
    if (auto s = db.exec(kSchemaV2); !s) return s;
  }
  if (*version < 3) {
    if (auto s = db.exec(kSchemaV3); !s) return s;
  }
  // v4: the measurement settings of each tuning (TuningRecord::settings), sqlite_settings.h.
  if (*version < 4) {
    if (auto s = db.exec(cache::kSchemaV4Settings); !s) return s;
  }
  // v5: the stand-in for a missing reference and the candidates' metrics, sqlite_notes.h.
  if (*version < 5) {
    if (auto s = db.exec(cache::kSchemaV5Notes); !s) return s;
  }
  // v6: the candidates' parameters (sqlite_params.h); older rows read back without.
  // A file whose user_version was set back by hand may have the column already: ALTER would fail.
  if (*version < 6) {
    auto has =
        db.query_int("SELECT count(*) FROM pragma_table_info('candidates') WHERE name = 'params'");
    if (!has) return std::unexpected(has.error());
    if (*has == 0) {
      if (auto s = db.exec(cache::kSchemaV6Params); !s) return s;
    }
  }
  if (*version < 7) {
    for (const auto& [table, column] : kSchemaV7Columns) {
      if (auto s = add_column_if_missing(db, table, column); !s) return s;
    }
  }
  if (*version != kSchemaVersion) {
    if (auto s = db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion)); !s) return s;
  }
  return txn->commit();
}

// WAL lets readers proceed while one process writes. Where the file system cannot do WAL
// (network mounts), SQLite keeps its rollback journal, which is slower but still correct.
Status enable_wal(SqliteDb& db) {
  // Switching the journal mode needs an exclusive lock and SQLite answers SQLITE_BUSY at once,
  // without the busy handler, when another connection is opening the same fresh file. So wait
  // here, for as long as the busy timeout would.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    auto mode = db.query_text("PRAGMA journal_mode = WAL");
    if (mode) return {};
    if (!db.last_error_was_busy() || std::chrono::steady_clock::now() >= deadline) {
      return std::unexpected(mode.error());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::filesystem::path sqlite_cache_file(const std::filesystem::path& dir) {
  return dir / "tuning.sqlite3";
}

Result<std::unique_ptr<TuningCache>> open_sqlite_cache(const std::filesystem::path& dir,
                                                       bool allow_shared_dir) {
  if (Status s = create_private_dirs(dir); !s) {
    return make_error(ErrorCode::kIo, fmt::format("tuning cache {}: create folder: {}",
                                                  dir.string(), s.error().message));
  }
  // Whoever can write the folder or the file can choose the picks served; so can the owner of
  // a file planted there before this user's first tuning.
  const std::filesystem::path file = sqlite_cache_file(dir);
  for (const std::filesystem::path& p :
       {dir, file, dir / "tuning.sqlite3-wal", dir / "tuning.sqlite3-shm"}) {
    Status s = check_not_shared(p);
    if (s) continue;
    if (!allow_shared_dir) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("tuning cache: {}: others could change the picks ktune "
                                    "serves; make it yours alone (chown, chmod go-w), choose "
                                    "another --cache-dir, or pass --allow-shared-cache-dir",
                                    s.error().message));
    }
    std::fputs(
        fmt::format("ktune: warning: tuning cache: {} (allowed)\n", s.error().message).c_str(),
        stderr);
  }
  auto db = SqliteDb::open(file, kBusyTimeoutMs);
  if (!db) return std::unexpected(db.error());
  if (auto s = enable_wal(*db); !s) return std::unexpected(s.error());
  // NORMAL is safe from corruption in WAL mode; a power cut may lose the last store, which only
  // costs a re-tune.
  if (auto s = db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;"); !s) {
    return std::unexpected(s.error());
  }
  if (auto s = migrate(*db); !s) return std::unexpected(s.error());
  // Outside the versioned schema: an older ktune opens the file as before (sqlite_partials.h).
  if (auto s = db->exec(cache::kPartialsTable); !s) return std::unexpected(s.error());
  return cache::make_sqlite_cache(std::move(*db));
}

}  // namespace ktune

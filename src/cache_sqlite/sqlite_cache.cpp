// open_sqlite_cache: the default TuningCache, one SQLite file (WAL) per cache folder. Several
// processes may tune at once: writes take the lock up front (BEGIN IMMEDIATE) and wait through a
// busy timeout instead of failing.
#include "ktune/cache_sqlite/sqlite_cache.h"

#include <fmt/format.h>

#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "cache/key_util.h"
#include "cache_sqlite/sqlite_db.h"

namespace ktune {
namespace {

using cache::SqliteDb;
using cache::SqliteStmt;
using cache::SqliteTransaction;

constexpr int kBusyTimeoutMs = 5000;
// PRAGMA user_version of the layout below. 0 is a fresh file. A new version adds a migration
// step in migrate() and never changes what an older step does.
constexpr std::int64_t kSchemaVersion = 2;

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

// Version 2: the pick's confidence (TuningRecord::confidence), one row per tuning that has one;
// records stored by version 1 have none and read back without it.
constexpr std::string_view kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS confidences(
  digest TEXT PRIMARY KEY NOT NULL REFERENCES tunings(digest) ON DELETE CASCADE,
  runner_up TEXT NOT NULL, runner_up_ratio REAL NOT NULL, ratio_low REAL NOT NULL,
  ratio_high REAL NOT NULL, ratio_rounds INTEGER NOT NULL, spread REAL NOT NULL,
  others_load REAL NOT NULL, cores INTEGER NOT NULL, reverified INTEGER NOT NULL,
  trusted INTEGER NOT NULL);
)sql";

constexpr std::string_view kSelectTunings =
    "SELECT digest, op, problem, candidate_set, device, toolchain, version, winner, created_unix, "
    "compile_s, bench_s FROM tunings ";
// rowid breaks ties in created_unix: a re-stored record gets a new rowid, so it sorts as newest.
constexpr std::string_view kNewestFirst = " ORDER BY created_unix DESC, rowid DESC";
constexpr std::string_view kSelectCandidates =
    "SELECT choice_key, name, info, outcome, message, median_ns, min_ns, max_ns, mad_ns, runs, "
    "compile_s FROM candidates WHERE digest = ?1 ORDER BY ord";
constexpr std::string_view kSelectConfidence =
    "SELECT runner_up, runner_up_ratio, ratio_low, ratio_high, ratio_rounds, spread, others_load, "
    "cores, reverified, trusted FROM confidences WHERE digest = ?1";

// Binds each value to the next parameter; stops at the first failure.
class Binder {
 public:
  explicit Binder(SqliteStmt& stmt) : stmt_(stmt) {}
  template <class T>
  Binder& operator()(const T& value) {
    if (status_) status_ = stmt_.bind(++index_, value);
    return *this;
  }
  Binder& null() {
    if (status_) status_ = stmt_.bind_null(++index_);
    return *this;
  }
  [[nodiscard]] Status status() const { return status_; }

 private:
  SqliteStmt& stmt_;
  int index_ = 0;
  Status status_;
};

class SqliteCache final : public TuningCache {
 public:
  explicit SqliteCache(SqliteDb db) : db_(std::move(db)) {}

  Result<std::optional<TuningRecord>> lookup(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    auto records = load("WHERE digest = ?1", key.digest());
    if (!records) return std::unexpected(records.error());
    if (records->empty() || !cache::same_key(records->front().key, key)) {
      return std::optional<TuningRecord>();
    }
    return std::optional<TuningRecord>(std::move(records->front()));
  }

  Status store(const TuningRecord& record) override {
    std::lock_guard lock(mutex_);
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kWrite);
    if (!txn) return std::unexpected(txn.error());
    const std::string digest = record.key.digest();
    for (std::string_view sql :
         {"DELETE FROM candidates WHERE digest = ?1", "DELETE FROM confidences WHERE digest = ?1",
          "DELETE FROM tunings WHERE digest = ?1"}) {
      auto stmt = db_.prepare(sql);
      if (!stmt) return std::unexpected(stmt.error());
      if (auto s = Binder(*stmt)(digest).status(); !s) return s;
      if (auto s = stmt->run(); !s) return s;
    }
    if (auto s = insert_tuning(digest, record); !s) return s;
    if (auto s = insert_candidates(digest, record.candidates); !s) return s;
    if (record.confidence) {
      if (auto s = insert_confidence(digest, *record.confidence); !s) return s;
    }
    return txn->commit();
  }

  Result<std::vector<TuningRecord>> list() override {
    std::lock_guard lock(mutex_);
    return load("", std::nullopt);
  }

  Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) override {
    auto normalized = cache::normalize_digest_prefix(prefix);
    if (!normalized) return std::unexpected(normalized.error());
    std::lock_guard lock(mutex_);
    // Safe as a LIKE pattern: the prefix holds only hex digits, no wildcards.
    return load("WHERE digest LIKE ?1", *normalized + "%");
  }

  Result<std::size_t> clear() override {
    std::lock_guard lock(mutex_);
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kWrite);
    if (!txn) return std::unexpected(txn.error());
    auto count = db_.query_int("SELECT count(*) FROM tunings");
    if (!count) return std::unexpected(count.error());
    if (auto s = db_.exec("DELETE FROM candidates; DELETE FROM confidences; DELETE FROM tunings;");
        !s) {
      return std::unexpected(s.error());
    }
    if (auto s = txn->commit(); !s) return std::unexpected(s.error());
    return static_cast<std::size_t>(*count);
  }

 private:
  Status insert_tuning(const std::string& digest, const TuningRecord& r) {
    auto stmt =
        db_.prepare("INSERT INTO tunings VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    if (!stmt) return std::unexpected(stmt.error());
    const TuningKey& k = r.key;
    auto s = Binder(*stmt)(digest)(k.op)(k.problem)(k.candidate_set)(k.device)(k.toolchain)(
                 k.version)(r.winner)(r.created_unix)(r.compile_s)(r.bench_s)
                 .status();
    if (!s) return s;
    return stmt->run();
  }

  Status insert_confidence(const std::string& digest, const PickConfidence& c) {
    auto stmt =
        db_.prepare("INSERT INTO confidences VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    if (!stmt) return std::unexpected(stmt.error());
    auto s = Binder(*stmt)(digest)(c.runner_up)(c.runner_up_ratio)(c.ratio_low)(c.ratio_high)(
                 static_cast<std::int64_t>(c.ratio_rounds))(c.spread)(c.others_load)(
                 static_cast<std::int64_t>(c.cores))(static_cast<std::int64_t>(c.reverified))(
                 static_cast<std::int64_t>(c.trusted ? 1 : 0))
                 .status();
    if (!s) return s;
    return stmt->run();
  }

  Status insert_candidates(const std::string& digest, const std::vector<CandidateRecord>& cs) {
    auto stmt = db_.prepare(
        "INSERT INTO candidates VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    if (!stmt) return std::unexpected(stmt.error());
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const CandidateRecord& c = cs[i];
      Binder binder(*stmt);
      binder(digest)(static_cast<std::int64_t>(i))(c.choice_key)(c.name)(c.info)(
          outcome_name(c.outcome))(c.message);
      if (c.stats) {
        binder(c.stats->median_ns)(c.stats->min_ns)(c.stats->max_ns)(c.stats->mad_ns)(
            static_cast<std::int64_t>(c.stats->runs));
      } else {
        binder.null().null().null().null().null();
      }
      binder(c.compile_s);
      if (auto s = binder.status(); !s) return s;
      if (auto s = stmt->run(); !s) return s;
      stmt->reset();
    }
    return {};
  }

  // Records matching `where` (with ?1 bound to `param` when given), newest first, read in one
  // transaction so that a concurrent store is seen whole or not at all.
  Result<std::vector<TuningRecord>> load(std::string_view where, std::optional<std::string> param) {
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kRead);
    if (!txn) return std::unexpected(txn.error());
    auto tunings = db_.prepare(fmt::format("{}{}{}", kSelectTunings, where, kNewestFirst));
    if (!tunings) return std::unexpected(tunings.error());
    if (param) {
      if (auto s = tunings->bind(1, *param); !s) return std::unexpected(s.error());
    }
    std::vector<TuningRecord> records;
    std::vector<std::string> digests;
    for (;;) {
      auto row = tunings->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      digests.push_back(tunings->column_text(0));
      records.push_back(read_tuning(*tunings));
    }
    auto candidates = db_.prepare(kSelectCandidates);
    if (!candidates) return std::unexpected(candidates.error());
    auto confidence = db_.prepare(kSelectConfidence);
    if (!confidence) return std::unexpected(confidence.error());
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (auto s = read_candidates(*candidates, digests[i], records[i]); !s) {
        return std::unexpected(s.error());
      }
      if (auto s = read_confidence(*confidence, digests[i], records[i]); !s) {
        return std::unexpected(s.error());
      }
    }
    if (auto s = txn->commit(); !s) return std::unexpected(s.error());
    return records;
  }

  static TuningRecord read_tuning(const SqliteStmt& row) {
    TuningRecord r;
    r.key = TuningKey{row.column_text(1), row.column_text(2), row.column_text(3),
                      row.column_text(4), row.column_text(5), row.column_text(6)};
    r.winner = row.column_text(7);
    r.created_unix = row.column_int(8);
    r.compile_s = row.column_double(9);
    r.bench_s = row.column_double(10);
    return r;
  }

  static Status read_confidence(SqliteStmt& stmt, const std::string& digest, TuningRecord& record) {
    stmt.reset();
    if (auto s = stmt.bind(1, digest); !s) return s;
    auto row = stmt.step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};  // stored before version 2, or without a confidence
    PickConfidence c;
    c.runner_up = stmt.column_text(0);
    c.runner_up_ratio = stmt.column_double(1);
    c.ratio_low = stmt.column_double(2);
    c.ratio_high = stmt.column_double(3);
    c.ratio_rounds = static_cast<int>(stmt.column_int(4));
    c.spread = stmt.column_double(5);
    c.others_load = stmt.column_double(6);
    c.cores = static_cast<int>(stmt.column_int(7));
    c.reverified = static_cast<int>(stmt.column_int(8));
    c.trusted = stmt.column_int(9) != 0;
    record.confidence = c;
    stmt.reset();  // one row per digest: done
    return {};
  }

  Status read_candidates(SqliteStmt& stmt, const std::string& digest, TuningRecord& record) {
    stmt.reset();
    if (auto s = stmt.bind(1, digest); !s) return s;
    for (;;) {
      auto row = stmt.step();
      if (!row) return std::unexpected(row.error());
      if (!*row) return {};
      CandidateRecord c;
      c.choice_key = stmt.column_text(0);
      c.name = stmt.column_text(1);
      c.info = stmt.column_text(2);
      const std::string outcome = stmt.column_text(3);
      auto parsed = parse_outcome(outcome);
      if (!parsed) {
        return make_error(ErrorCode::kParse,
                          fmt::format("tuning cache {}: record {} candidate {}: unknown outcome "
                                      "'{}'",
                                      db_.path(), digest, record.candidates.size(), outcome));
      }
      c.outcome = *parsed;
      c.message = stmt.column_text(4);
      if (!stmt.column_is_null(5)) {
        c.stats = BenchStats{stmt.column_double(5), stmt.column_double(6), stmt.column_double(7),
                             stmt.column_double(8), static_cast<int>(stmt.column_int(9))};
      }
      c.compile_s = stmt.column_double(10);
      record.candidates.push_back(std::move(c));
    }
  }

  std::mutex mutex_;  // one connection; its transactions must not interleave across threads
  SqliteDb db_;
};

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

Result<std::unique_ptr<TuningCache>> open_sqlite_cache(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, fmt::format("tuning cache {}: create folder: {}",
                                                  dir.string(), ec.message()));
  }
  auto db = SqliteDb::open(dir / "tuning.sqlite3", kBusyTimeoutMs);
  if (!db) return std::unexpected(db.error());
  if (auto s = enable_wal(*db); !s) return std::unexpected(s.error());
  // NORMAL is safe from corruption in WAL mode; a power cut may lose the last store, which only
  // costs a re-tune.
  if (auto s = db->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;"); !s) {
    return std::unexpected(s.error());
  }
  if (auto s = migrate(*db); !s) return std::unexpected(s.error());
  return std::unique_ptr<TuningCache>(std::make_unique<SqliteCache>(std::move(*db)));
}

}  // namespace ktune

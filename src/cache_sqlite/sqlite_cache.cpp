// The default TuningCache, one SQLite file (WAL) per cache folder (opened by sqlite_open.cpp).
// Several processes may tune at once: writes take the lock up front (BEGIN IMMEDIATE) and wait
// through a busy timeout instead of failing. A record read back is served only when
// check_record() passes: the file is anyone's with this user's rights to edit.
#include <fmt/format.h>

#include <limits>
#include <mutex>

#include "cache/key_util.h"
#include "cache_sqlite/sqlite_db.h"
#include "cache_sqlite/sqlite_notes.h"
#include "cache_sqlite/sqlite_params.h"
#include "cache_sqlite/sqlite_partials.h"
#include "cache_sqlite/sqlite_settings.h"

namespace ktune {
namespace {

using cache::SqliteDb;
using cache::SqliteStmt;
using cache::SqliteTransaction;

constexpr std::string_view kSelectTunings =
    "SELECT digest, op, problem, candidate_set, device, toolchain, version, winner, created_unix, "
    "compile_s, bench_s, candidate_count, spec, problem_name FROM tunings ";
// rowid breaks ties in created_unix: a re-stored record gets a new rowid, so it sorts as newest.
constexpr std::string_view kNewestFirst = " ORDER BY created_unix DESC, rowid DESC";
constexpr std::string_view kSelectCandidates =
    "SELECT choice_key, name, info, outcome, message, median_ns, min_ns, max_ns, mad_ns, runs, "
    "compile_s, params, artifact FROM candidates WHERE digest = ?1 ORDER BY ord";
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
    auto rows = load("WHERE digest = ?1", key.digest());
    if (!rows) return std::unexpected(rows.error());
    if (rows->empty() || !cache::same_key(rows->front().record.key, key)) {
      return std::optional<TuningRecord>();
    }
    Loaded& hit = rows->front();
    // The file is anyone's to edit (sqlite3, another program, a half-copied file): the record
    // is served only whole and with a valid winner.
    if (Status s = check_record(hit.record, key, hit.count); !s) {
      warn(fmt::format("tuning cache {}: record {} ({}) not served: {}; tuning again", db_.path(),
                       key.digest().substr(0, 12), key.op, s.error().message));
      return std::optional<TuningRecord>();
    }
    return std::optional<TuningRecord>(std::move(hit.record));
  }

  Status store(const TuningRecord& record) override {
    std::lock_guard lock(mutex_);
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kWrite);
    if (!txn) return std::unexpected(txn.error());
    const std::string digest = record.key.digest();
    for (std::string_view sql :
         {"DELETE FROM candidates WHERE digest = ?1", "DELETE FROM confidences WHERE digest = ?1",
          "DELETE FROM settings WHERE digest = ?1", "DELETE FROM stand_ins WHERE digest = ?1",
          "DELETE FROM metrics WHERE digest = ?1", "DELETE FROM tunings WHERE digest = ?1"}) {
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
    if (record.settings) {
      if (auto s = cache::insert_settings(db_, digest, *record.settings); !s) return s;
    }
    if (auto s = cache::insert_notes(db_, digest, record); !s) return s;
    return txn->commit();
  }

  Result<std::vector<TuningRecord>> list() override {
    std::lock_guard lock(mutex_);
    return records_of(load("", std::nullopt));
  }

  Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) override {
    auto normalized = cache::normalize_digest_prefix(prefix);
    if (!normalized) return std::unexpected(normalized.error());
    std::lock_guard lock(mutex_);
    // Safe as a LIKE pattern: the prefix holds only hex digits, no wildcards.
    return records_of(load("WHERE digest LIKE ?1", *normalized + "%"));
  }

  Result<std::size_t> clear() override {
    std::lock_guard lock(mutex_);
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kWrite);
    if (!txn) return std::unexpected(txn.error());
    auto count = db_.query_int("SELECT count(*) FROM tunings");
    if (!count) return std::unexpected(count.error());
    if (auto s = db_.exec("DELETE FROM candidates; DELETE FROM confidences; DELETE FROM settings; "
                          "DELETE FROM stand_ins; DELETE FROM metrics; DELETE FROM tunings; "
                          "DELETE FROM partial_candidates;");
        !s) {
      return std::unexpected(s.error());
    }
    if (auto s = txn->commit(); !s) return std::unexpected(s.error());
    return static_cast<std::size_t>(*count);
  }

  Result<bool> remove(std::string_view digest) override {
    auto checked = cache::normalize_full_digest(digest);
    if (!checked) return std::unexpected(checked.error());
    std::lock_guard lock(mutex_);
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kWrite);
    if (!txn) return std::unexpected(txn.error());
    auto count = db_.prepare("SELECT count(*) FROM tunings WHERE digest = ?1");
    if (!count) return std::unexpected(count.error());
    if (auto s = count->bind(1, *checked); !s) return std::unexpected(s.error());
    auto row = count->step();
    if (!row) return std::unexpected(row.error());
    const bool found = *row && count->column_int(0) > 0;
    count->reset();
    // Every table's rows by hand, as store() replaces them: foreign keys may be off in a file
    // that another program opened.
    for (std::string_view sql :
         {"DELETE FROM candidates WHERE digest = ?1", "DELETE FROM confidences WHERE digest = ?1",
          "DELETE FROM settings WHERE digest = ?1", "DELETE FROM stand_ins WHERE digest = ?1",
          "DELETE FROM metrics WHERE digest = ?1", "DELETE FROM tunings WHERE digest = ?1",
          "DELETE FROM partial_candidates WHERE key_digest = ?1"}) {
      auto stmt = db_.prepare(sql);
      if (!stmt) return std::unexpected(stmt.error());
      if (auto s = Binder(*stmt)(*checked).status(); !s) return std::unexpected(s.error());
      if (auto s = stmt->run(); !s) return std::unexpected(s.error());
    }
    if (auto s = txn->commit(); !s) return std::unexpected(s.error());
    return found;
  }

  Status store_partial(const TuningKey& key, const MeasureSettings& settings,
                       const CandidateRecord& record) override {
    std::lock_guard lock(mutex_);
    return cache::store_partial_row(db_, key, settings, record);
  }

  Result<std::vector<CandidateRecord>> partials(const TuningKey& key,
                                                const MeasureSettings& settings) override {
    std::lock_guard lock(mutex_);
    return cache::read_partial_rows(db_, key, settings, *this);
  }

  Status clear_partials(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    return cache::clear_partial_rows(db_, key);
  }

 private:
  // A tunings row and its candidate rows, as read back; count is NULL in rows of schema v1.
  struct Loaded {
    TuningRecord record;
    std::optional<std::size_t> count;
  };

  static Result<std::vector<TuningRecord>> records_of(Result<std::vector<Loaded>> rows) {
    if (!rows) return std::unexpected(rows.error());
    std::vector<TuningRecord> out;
    out.reserve(rows->size());
    for (Loaded& l : *rows) out.push_back(std::move(l.record));
    return out;
  }

  Status insert_tuning(const std::string& digest, const TuningRecord& r) {
    auto stmt = db_.prepare(
        "INSERT INTO tunings(digest, op, problem, candidate_set, device, toolchain, version, "
        "winner, created_unix, compile_s, bench_s, candidate_count, spec, problem_name) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    if (!stmt) return std::unexpected(stmt.error());
    const TuningKey& k = r.key;
    Binder binder(*stmt);
    binder(digest)(k.op)(k.problem)(k.candidate_set)(k.device)(k.toolchain)(k.version)(r.winner)(
        r.created_unix)(r.compile_s)(r.bench_s)(static_cast<std::int64_t>(r.candidates.size()));
    // NULL when unknown, as in rows stored before v7.
    for (const std::string* label : {&r.spec, &r.problem_name}) {
      if (label->empty()) {
        binder.null();
      } else {
        binder(*label);
      }
    }
    auto s = binder.status();
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
        "INSERT INTO candidates(digest, ord, choice_key, name, info, outcome, message, median_ns, "
        "min_ns, max_ns, mad_ns, runs, compile_s, params, artifact) VALUES(?1, ?2, ?3, ?4, ?5, ?6, "
        "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
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
      if (auto params = cache::params_to_text(c.params)) {
        binder(*params);
      } else {
        binder.null();
      }
      if (c.artifact.empty()) {
        binder.null();
      } else {
        binder(c.artifact);
      }
      if (auto s = binder.status(); !s) return s;
      if (auto s = stmt->run(); !s) return s;
      stmt->reset();
    }
    return {};
  }

  // Records matching `where` (with ?1 bound to `param` when given), newest first, read in one
  // transaction so that a concurrent store is seen whole or not at all.
  Result<std::vector<Loaded>> load(std::string_view where, std::optional<std::string> param) {
    auto txn = SqliteTransaction::begin(db_, SqliteTransaction::Kind::kRead);
    if (!txn) return std::unexpected(txn.error());
    auto tunings = db_.prepare(fmt::format("{}{}{}", kSelectTunings, where, kNewestFirst));
    if (!tunings) return std::unexpected(tunings.error());
    if (param) {
      if (auto s = tunings->bind(1, *param); !s) return std::unexpected(s.error());
    }
    std::vector<Loaded> records;
    std::vector<std::string> digests;
    for (;;) {
      auto row = tunings->step();
      if (!row) return std::unexpected(row.error());
      if (!*row) break;
      digests.push_back(tunings->column_text(0));
      Loaded l{read_tuning(*tunings), std::nullopt};
      // A negative count is as foreign as a missing row: it can match no record.
      if (!tunings->column_is_null(11)) {
        const std::int64_t n = tunings->column_int(11);
        l.count = n < 0 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(n);
      }
      records.push_back(std::move(l));
    }
    auto candidates = db_.prepare(kSelectCandidates);
    if (!candidates) return std::unexpected(candidates.error());
    auto confidence = db_.prepare(kSelectConfidence);
    if (!confidence) return std::unexpected(confidence.error());
    auto settings = db_.prepare(cache::kSelectSettings);
    if (!settings) return std::unexpected(settings.error());
    auto stand_in = db_.prepare(cache::kSelectStandIn);
    if (!stand_in) return std::unexpected(stand_in.error());
    auto metrics = db_.prepare(cache::kSelectMetrics);
    if (!metrics) return std::unexpected(metrics.error());
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (auto s = read_candidates(*candidates, digests[i], records[i].record); !s) {
        return std::unexpected(s.error());
      }
      if (auto s = read_confidence(*confidence, digests[i], records[i].record); !s) {
        return std::unexpected(s.error());
      }
      if (auto s = cache::read_settings(*settings, digests[i], records[i].record); !s) {
        return std::unexpected(s.error());
      }
      if (auto s = cache::read_notes(*stand_in, *metrics, digests[i], records[i].record); !s) {
        return make_error(s.error().code,
                          fmt::format("tuning cache {}: {}", db_.path(), s.error().message));
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
    if (!row.column_is_null(12)) r.spec = row.column_text(12);
    if (!row.column_is_null(13)) r.problem_name = row.column_text(13);
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
      if (!stmt.column_is_null(11)) {
        auto params = cache::params_from_text(
            stmt.column_text(11), fmt::format("tuning cache {}: record {} candidate {}", db_.path(),
                                              digest, record.candidates.size()));
        if (!params) return std::unexpected(params.error());
        c.params = std::move(*params);
      }
      if (!stmt.column_is_null(12)) c.artifact = stmt.column_text(12);
      record.candidates.push_back(std::move(c));
    }
  }

  std::mutex mutex_;  // one connection; its transactions must not interleave across threads
  SqliteDb db_;
};
}  // namespace

namespace cache {

std::unique_ptr<TuningCache> make_sqlite_cache(SqliteDb db) {
  return std::make_unique<SqliteCache>(std::move(db));
}

}  // namespace cache
}  // namespace ktune

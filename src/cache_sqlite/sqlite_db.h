// SqliteDb and SqliteStmt: move-only owners of a sqlite3 connection and a prepared statement.
// Every SQLite failure becomes Error{kIo} naming the database file and sqlite3_errmsg().
// Private to the cache module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ktune::cache {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db, std::string path)
      : stmt_(stmt), db_(db), path_(std::move(path)) {}
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&& other) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  ~SqliteStmt();

  // Parameters are 1-based, as in sqlite3_bind_*. Text is copied (SQLITE_TRANSIENT).
  [[nodiscard]] Status bind(int index, std::string_view text);
  [[nodiscard]] Status bind(int index, double value);
  [[nodiscard]] Status bind(int index, std::int64_t value);
  [[nodiscard]] Status bind_null(int index);
  // True when a row is ready, false when the statement is done.
  [[nodiscard]] Result<bool> step();
  // Runs to completion, ignoring any rows.
  [[nodiscard]] Status run();
  // Ready to step again with new bindings.
  void reset();

  // Columns are 0-based. NULL text reads as "", NULL numbers as 0.
  [[nodiscard]] std::string column_text(int index) const;
  [[nodiscard]] double column_double(int index) const;
  [[nodiscard]] std::int64_t column_int(int index) const;
  [[nodiscard]] bool column_is_null(int index) const;

 private:
  [[nodiscard]] std::unexpected<Error> fail(std::string_view what) const;

  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;  // not owned
  std::string path_;
};

class SqliteDb {
 public:
  // Opens (creating when missing) the database file; sets the busy timeout.
  [[nodiscard]] static Result<SqliteDb> open(const std::filesystem::path& file,
                                             int busy_timeout_ms);

  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  // One or more statements without parameters or results.
  [[nodiscard]] Status exec(std::string_view sql);
  [[nodiscard]] Result<SqliteStmt> prepare(std::string_view sql);
  // A single-row, single-column query (PRAGMA user_version, SELECT count(*)).
  [[nodiscard]] Result<std::int64_t> query_int(std::string_view sql);
  [[nodiscard]] Result<std::string> query_text(std::string_view sql);
  // Whether the last failure on this connection was SQLITE_BUSY or SQLITE_LOCKED (any variant).
  [[nodiscard]] bool last_error_was_busy() const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  [[nodiscard]] std::int64_t changes() const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_ = nullptr;
  std::string path_;
};

// Rolls back on destruction unless commit() succeeded, so an early return never leaves a
// transaction open on the connection.
class SqliteTransaction {
 public:
  enum class Kind { kRead, kWrite };
  [[nodiscard]] static Result<SqliteTransaction> begin(SqliteDb& db, Kind kind);

  SqliteTransaction(SqliteTransaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  ~SqliteTransaction();

  [[nodiscard]] Status commit();

 private:
  explicit SqliteTransaction(SqliteDb* db) : db_(db) {}
  SqliteDb* db_ = nullptr;  // null once committed or moved from
};

// The TuningCache over an open, migrated connection (sqlite_cache.cpp); open_sqlite_cache
// (sqlite_open.cpp) is what makes one.
[[nodiscard]] std::unique_ptr<TuningCache> make_sqlite_cache(SqliteDb db);

}  // namespace ktune::cache

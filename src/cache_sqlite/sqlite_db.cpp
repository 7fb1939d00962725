// SqliteDb, SqliteStmt, SqliteTransaction: thin RAII over the SQLite C API. Errors carry the
// database path and sqlite3_errmsg() so that a user can tell which file is locked or corrupt.
#include "cache_sqlite/sqlite_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <utility>

namespace ktune::cache {
namespace {

std::unexpected<Error> io_error(sqlite3* db, const std::string& path, std::string_view what) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  return make_error(ErrorCode::kIo, fmt::format("tuning cache {}: {}: {}", path, what, detail));
}

}  // namespace

// --- SqliteStmt -----------------------------------------------------------------------------

SqliteStmt::SqliteStmt(SqliteStmt&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)),
      db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)) {}

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

std::unexpected<Error> SqliteStmt::fail(std::string_view what) const {
  const char* sql = stmt_ != nullptr ? sqlite3_sql(stmt_) : nullptr;
  return io_error(db_, path_, fmt::format("{} ({})", what, sql != nullptr ? sql : "?"));
}

Status SqliteStmt::bind(int index, std::string_view text) {
  if (sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) !=
      SQLITE_OK) {
    return fail("bind");
  }
  return {};
}

Status SqliteStmt::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) return fail("bind");
  return {};
}

Status SqliteStmt::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) return fail("bind");
  return {};
}

Status SqliteStmt::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) return fail("bind");
  return {};
}

Result<bool> SqliteStmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return fail("step");
}

Status SqliteStmt::run() {
  for (;;) {
    auto row = step();
    if (!row) return std::unexpected(row.error());
    if (!*row) return {};
  }
}

void SqliteStmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStmt::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  const int bytes = sqlite3_column_bytes(stmt_, index);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(bytes));
}

double SqliteStmt::column_double(int index) const { return sqlite3_column_double(stmt_, index); }

std::int64_t SqliteStmt::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }

bool SqliteStmt::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

// --- SqliteDb -------------------------------------------------------------------------------

Result<SqliteDb> SqliteDb::open(const std::filesystem::path& file, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // sqlite3_open_v2 hands back a handle even on failure; the owner closes it either way.
  SqliteDb db(raw, file.string());
  if (rc != SQLITE_OK) return io_error(raw, db.path_, "open");
  sqlite3_extended_result_codes(raw, 1);
  if (sqlite3_busy_timeout(raw, busy_timeout_ms) != SQLITE_OK) {
    return io_error(raw, db.path_, "set busy timeout");
  }
  return db;
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

// close_v2 defers the close until every statement is finalized, so order of destruction among
// statements and the connection does not matter.
SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Status SqliteDb::exec(std::string_view sql) {
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return io_error(db_, path_, fmt::format("exec ({})", text));
  }
  return {};
}

Result<SqliteStmt> SqliteDb::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(stmt);
    return io_error(db_, path_, fmt::format("prepare ({})", sql));
  }
  return SqliteStmt(stmt, db_, path_);
}

Result<std::int64_t> SqliteDb::query_int(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  auto row = stmt->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return io_error(db_, path_, fmt::format("no row from ({})", sql));
  return stmt->column_int(0);
}

Result<std::string> SqliteDb::query_text(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return std::unexpected(stmt.error());
  auto row = stmt->step();
  if (!row) return std::unexpected(row.error());
  if (!*row) return io_error(db_, path_, fmt::format("no row from ({})", sql));
  return stmt->column_text(0);
}

bool SqliteDb::last_error_was_busy() const {
  const int primary = sqlite3_extended_errcode(db_) & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

std::int64_t SqliteDb::changes() const { return sqlite3_changes64(db_); }

// --- SqliteTransaction ----------------------------------------------------------------------

Result<SqliteTransaction> SqliteTransaction::begin(SqliteDb& db, Kind kind) {
  // IMMEDIATE takes the write lock up front (waiting through the busy timeout). A deferred
  // transaction that later upgrades to write can fail with SQLITE_BUSY at once in WAL mode.
  auto status = db.exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!status) return std::unexpected(status.error());
  return SqliteTransaction(&db);
}

SqliteTransaction::~SqliteTransaction() {
  if (db_ != nullptr) (void)db_->exec("ROLLBACK");
}

Status SqliteTransaction::commit() {
  SqliteDb* db = std::exchange(db_, nullptr);
  auto status = db->exec("COMMIT");
  if (!status) (void)db->exec("ROLLBACK");
  return status;
}

}  // namespace ktune::cache

// The SQLite side of partial records: the table lives beside the versioned schema (user_version
// is unchanged), and a row edited outside ktune is not taken back.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "ktune/cache_sqlite/sqlite_cache.h"
#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using testing_cache::sample_record;
using testing_cache::TempDir;

std::string raw_sql(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  const int rc = sqlite3_step(stmt);
  EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
  if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

const MeasureSettings kSettings{2.0, 3, 100, 1, true, 0, 15, 0.1};

TEST(SqlitePartials, TableIsOutsideTheSchemaVersion) {
  TempDir tmp;
  {
    auto cache = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(cache.has_value()) << cache.error().message;
    const TuningRecord r = sample_record(1);
    ASSERT_TRUE((*cache)->store_partial(r.key, kSettings, r.candidates[0]));
  }
  const auto file = tmp.path() / "tuning.sqlite3";
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM partial_candidates"), "1");
  EXPECT_EQ(raw_sql(file, "SELECT name FROM partial_candidates"), "gemm_t64x64_1");
  // Not a migration step: a file of the current schema version without the table (written by
  // a ktune that did not know it) gets it at the next open.
  const std::string version = raw_sql(file, "PRAGMA user_version");
  raw_sql(file, "DROP TABLE partial_candidates");
  {
    auto again = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(again.has_value()) << again.error().message;
    auto none = (*again)->partials(sample_record(1).key, kSettings);
    ASSERT_TRUE(none.has_value()) << none.error().message;
    EXPECT_TRUE(none->empty());
    const TuningRecord r = sample_record(1);
    ASSERT_TRUE((*again)->store_partial(r.key, kSettings, r.candidates[0]));
  }
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), version);
  auto reopened = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(reopened.has_value()) << reopened.error().message;
  auto rows = (*reopened)->partials(sample_record(1).key, kSettings);
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(rows->size(), 1u);
}

TEST(SqlitePartials, EditedRowsAreIgnoredWithAWarning) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  std::vector<std::string> warnings;
  (*cache)->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  const TuningRecord r = sample_record(1);
  ASSERT_TRUE((*cache)->store_partial(r.key, kSettings, r.candidates[0]));
  ASSERT_TRUE((*cache)->store_partial(r.key, kSettings, r.candidates[1]));
  const auto file = tmp.path() / "tuning.sqlite3";
  // One row cut short, the other moved to another candidate's choice_key.
  raw_sql(file,
          "UPDATE partial_candidates SET record_json = substr(record_json, 1, 20) "
          "WHERE name = 'gemm_t64x64_1'");
  raw_sql(file,
          "UPDATE partial_candidates SET choice_key = 'ck-other' "
          "WHERE name = 'gemm_t256x256'");
  auto rows = (*cache)->partials(r.key, kSettings);
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  EXPECT_TRUE(rows->empty());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("partial row"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace ktune

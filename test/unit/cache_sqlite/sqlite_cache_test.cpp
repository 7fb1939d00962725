// The SQLite store beyond the shared contract: the file on disk, WAL, schema versions, several
// writers at once, and what a damaged file gives.
#include "ktune/cache_sqlite/sqlite_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using testing_cache::same_record;
using testing_cache::sample_key;
using testing_cache::sample_record;
using testing_cache::TempDir;

// Runs one statement on the file directly, outside ktune; returns the first column of the first
// row as text ("" when none).
std::string raw_sql(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

TEST(TuningKeyDigest, StableAndHex) {
  const std::string d = sample_key(1).digest();
  EXPECT_EQ(d, sample_key(1).digest());
  EXPECT_EQ(d.size(), 32u);
  EXPECT_EQ(d.find_first_not_of("0123456789abcdef"), std::string::npos) << d;
}

TEST(TuningKeyDigest, EveryFieldChangesIt) {
  const TuningKey base = sample_key(1);
  std::set<std::string> digests{base.digest()};
  for (std::string TuningKey::*field :
       {&TuningKey::op, &TuningKey::problem, &TuningKey::candidate_set, &TuningKey::device,
        &TuningKey::toolchain, &TuningKey::version}) {
    TuningKey changed = base;
    changed.*field += "x";
    EXPECT_TRUE(digests.insert(changed.digest()).second) << "field value " << changed.*field;
  }
  // Moving text between fields changes it too (fields are length-prefixed).
  TuningKey shifted = base;
  shifted.op = base.op + base.problem.substr(0, 1);
  shifted.problem = base.problem.substr(1);
  EXPECT_NE(shifted.digest(), base.digest());
}

TEST(SqliteCache, CreatesFolderAndFile) {
  TempDir tmp;
  const auto dir = tmp.path() / "a" / "b";
  auto cache = open_sqlite_cache(dir);
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  EXPECT_TRUE(std::filesystem::exists(dir / "tuning.sqlite3"));
}

TEST(SqliteCache, PersistsAcrossReopen) {
  TempDir tmp;
  {
    auto cache = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(cache.has_value()) << cache.error().message;
    ASSERT_TRUE((*cache)->store(sample_record(1, 10)).has_value());
    ASSERT_TRUE((*cache)->store(sample_record(2, 20)).has_value());
  }
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  auto found = (*cache)->lookup(sample_key(1));
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_TRUE(same_record(**found, sample_record(1, 10)));
  auto all = (*cache)->list();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->front().key.candidate_set, "cset-2");
}

TEST(SqliteCache, UsesWalAndSchemaVersionSeven) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  const auto file = tmp.path() / "tuning.sqlite3";
  EXPECT_EQ(raw_sql(file, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "7");
}

// The pick's confidence (schema 3) is stored and read back field by field, replaced with its
// record and cleared with it.
TEST(SqliteCache, StoresThePicksConfidence) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  TuningRecord r = sample_record(1);
  r.confidence =
      PickConfidence{"gemm_t256x256", 1.0625, 0.9921875, 1.125, 15, 0.0425, 1.5, 2, 5, false};
  ASSERT_TRUE((*cache)->store(r).has_value());
  ASSERT_TRUE((*cache)->store(r).has_value());  // replaced, not duplicated
  const auto file = tmp.path() / "tuning.sqlite3";
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM confidences"), "1");
  auto found = (*cache)->lookup(r.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
  ASSERT_TRUE((*found)->confidence);
  const PickConfidence& c = *(*found)->confidence;
  EXPECT_EQ(c.runner_up, "gemm_t256x256");
  EXPECT_EQ(c.runner_up_ratio, 1.0625);
  EXPECT_EQ(c.ratio_low, 0.9921875);
  EXPECT_EQ(c.ratio_high, 1.125);
  EXPECT_EQ(c.ratio_rounds, 15);
  EXPECT_EQ(c.spread, 0.0425);
  EXPECT_EQ(c.others_load, 1.5);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.reverified, 5);
  EXPECT_FALSE(c.trusted);
  ASSERT_TRUE((*cache)->store(sample_record(2)).has_value());
  auto plain = (*cache)->lookup(sample_key(2));
  ASSERT_TRUE(plain.has_value() && plain->has_value());
  EXPECT_FALSE((*plain)->confidence) << "a record without one reads without one";
  ASSERT_TRUE((*cache)->clear().has_value());
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM confidences"), "0");
}

// The measurement settings (schema 4) are stored and read back field by field, replaced with
// their record and cleared with it; a record without them reads without them.
TEST(SqliteCache, StoresTheMeasureSettings) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  TuningRecord r = sample_record(1);
  r.settings = MeasureSettings{12.5, 4, 77, 3, false, 10, 9, 0.25};
  ASSERT_TRUE((*cache)->store(r).has_value());
  ASSERT_TRUE((*cache)->store(r).has_value());  // replaced, not duplicated
  const auto file = tmp.path() / "tuning.sqlite3";
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM settings"), "1");
  auto found = (*cache)->lookup(r.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
  ASSERT_TRUE((*found)->settings);
  EXPECT_EQ(*(*found)->settings, *r.settings);
  ASSERT_TRUE((*cache)->store(sample_record(2)).has_value());
  auto plain = (*cache)->lookup(sample_key(2));
  ASSERT_TRUE(plain.has_value() && plain->has_value());
  EXPECT_FALSE((*plain)->settings);
  ASSERT_TRUE((*cache)->clear().has_value());
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM settings"), "0");
}

// The stand-in for a missing reference and the candidates' metrics (schema 5) are stored and
// read back in order, replaced with their record and cleared with it; a file of schema 4 is
// migrated and its records read back without them.
TEST(SqliteCache, StoresTheStandInAndTheMetrics) {
  TempDir tmp;
  const auto file = tmp.path() / "tuning.sqlite3";
  {
    auto v4 = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(v4.has_value()) << v4.error().message;
    ASSERT_TRUE((*v4)->store(sample_record(2)).has_value());
  }
  raw_sql(file, "DROP TABLE stand_ins");
  raw_sql(file, "DROP TABLE metrics");
  raw_sql(file, "PRAGMA user_version = 4");
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "7");
  auto old = (*cache)->lookup(sample_key(2));
  ASSERT_TRUE(old.has_value() && old->has_value());
  EXPECT_FALSE((*old)->stand_in);

  TuningRecord r = sample_record(1);
  r.stand_in = r.candidates.front().name;
  r.candidates.front().metrics = {{"GFLOP/s", 1234.5}, {"GB/s", 0.25}};
  ASSERT_TRUE((*cache)->store(r).has_value());
  ASSERT_TRUE((*cache)->store(r).has_value());  // replaced, not duplicated
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM metrics"), "2");
  auto found = (*cache)->lookup(r.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
  ASSERT_TRUE((*found)->stand_in);
  EXPECT_EQ(*(*found)->stand_in, r.candidates.front().name);
  EXPECT_EQ((*found)->candidates.front().metrics, r.candidates.front().metrics);
  EXPECT_TRUE((*found)->candidates.back().metrics.empty());
  ASSERT_TRUE((*cache)->clear().has_value());
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM metrics"), "0");
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM stand_ins"), "0");
}

// The candidates' parameters (schema 6) are stored in order and read back; a file of schema 5
// gets the column, and its rows read back without parameters.
TEST(SqliteCache, StoresTheCandidatesParams) {
  TempDir tmp;
  const auto file = tmp.path() / "tuning.sqlite3";
  {
    auto v5 = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(v5.has_value()) << v5.error().message;
    ASSERT_TRUE((*v5)->store(sample_record(2)).has_value());
  }
  raw_sql(file, "ALTER TABLE candidates DROP COLUMN artifact");
  raw_sql(file, "ALTER TABLE candidates DROP COLUMN params");
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN spec");
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN problem_name");
  raw_sql(file, "PRAGMA user_version = 5");
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "7");
  auto old = (*cache)->lookup(sample_key(2));
  ASSERT_TRUE(old.has_value() && old->has_value());
  EXPECT_TRUE((*old)->candidates.front().params.empty());

  TuningRecord r = sample_record(1);
  r.candidates.front().params = {{"TILE", "64"}, {"UNROLL", "true"}, {"A", "x\"y"}};
  ASSERT_TRUE((*cache)->store(r).has_value());
  auto found = (*cache)->lookup(r.key);
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ((*found)->candidates.front().params, r.candidates.front().params);
  EXPECT_TRUE((*found)->candidates.back().params.empty());
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM candidates WHERE params IS NULL"),
            std::to_string(r.candidates.size() - 1 + sample_record(2).candidates.size()));
}

// A file of schema v1 (no candidate_count) is migrated in place; its records are still served,
// their rows checked against the candidates asked for instead of a stored count.
TEST(SqliteCache, SchemaOneFileIsMigratedAndStillServed) {
  TempDir tmp;
  const auto file = tmp.path() / "tuning.sqlite3";
  {
    auto cache = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(cache.has_value());
    ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());
  }
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN candidate_count");
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN spec");
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN problem_name");
  raw_sql(file, "ALTER TABLE candidates DROP COLUMN artifact");
  raw_sql(file, "DROP TABLE confidences");
  raw_sql(file, "DROP TABLE settings");
  raw_sql(file, "DROP TABLE stand_ins");
  raw_sql(file, "DROP TABLE metrics");
  raw_sql(file, "PRAGMA user_version = 1");
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "7");
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM tunings WHERE candidate_count IS NULL"), "1");
  auto found = (*cache)->lookup(sample_key(1));
  ASSERT_TRUE(found.has_value() && found->has_value());
  // Stored before v7: without its labels and artifact keys, the rest as it was.
  TuningRecord want = sample_record(1);
  want.spec.clear();
  want.problem_name.clear();
  for (CandidateRecord& c : want.candidates) c.artifact.clear();
  EXPECT_TRUE(same_record(**found, want));
  EXPECT_FALSE((*found)->confidence);
}

// A file of schema v6, as the ktune before the labels wrote it (its tables made by that schema's
// statements), opens: it is migrated to v7 in place, its record is served and listed without
// labels, and new records keep theirs.
TEST(SqliteCache, SchemaSixFileIsMigratedAndStillServed) {
  TempDir tmp;
  const auto file = tmp.path() / "tuning.sqlite3";
  {
    auto cache = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(cache.has_value());
    ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());
  }
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN spec");
  raw_sql(file, "ALTER TABLE tunings DROP COLUMN problem_name");
  raw_sql(file, "ALTER TABLE candidates DROP COLUMN artifact");
  raw_sql(file, "PRAGMA user_version = 6");
  ASSERT_EQ(raw_sql(file, "SELECT count(*) FROM pragma_table_info('tunings') WHERE name = 'spec'"),
            "0");
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value()) << cache.error().message;
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "7");
  auto found = (*cache)->lookup(sample_key(1));
  ASSERT_TRUE(found.has_value() && found->has_value()) << (found ? "" : found.error().message);
  EXPECT_TRUE((*found)->spec.empty());
  EXPECT_TRUE((*found)->problem_name.empty());
  EXPECT_TRUE((*found)->candidates.front().artifact.empty());
  EXPECT_EQ((*found)->winner, sample_record(1).winner);
  ASSERT_TRUE((*cache)->store(sample_record(2)).has_value());
  auto all = (*cache)->list();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_TRUE(same_record(all->front(), sample_record(2)));
  // Opened again (the columns are there now): nothing to migrate, nothing lost.
  cache->reset();
  auto again = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ((*again)->list()->size(), 2u);
}

// remove() takes the record's rows from every table, and its partial rows.
TEST(SqliteCache, RemoveLeavesNoRowsBehind) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value());
  TuningRecord r = sample_record(1);
  r.confidence = PickConfidence{};
  r.settings = MeasureSettings{};
  r.stand_in = r.winner;
  r.candidates.front().metrics = {{"GFLOP/s", 2.0}};
  ASSERT_TRUE((*cache)->store(r).has_value());
  ASSERT_TRUE((*cache)->store(sample_record(2)).has_value());
  ASSERT_TRUE((*cache)->store_partial(r.key, MeasureSettings{}, r.candidates.front()).has_value());
  auto removed = (*cache)->remove(r.key.digest());
  ASSERT_TRUE(removed.has_value()) << removed.error().message;
  EXPECT_TRUE(*removed);
  const auto file = tmp.path() / "tuning.sqlite3";
  const std::string digest = r.key.digest();
  for (const char* table :
       {"tunings", "candidates", "confidences", "settings", "stand_ins", "metrics"}) {
    EXPECT_EQ(
        raw_sql(file, fmt::format("SELECT count(*) FROM {} WHERE digest = '{}'", table, digest)),
        "0")
        << table;
  }
  EXPECT_EQ(raw_sql(file, fmt::format("SELECT count(*) FROM partial_candidates WHERE key_digest "
                                      "= '{}'",
                                      digest)),
            "0");
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM tunings"), "1");
}

// The file edited behind ktune's back, one way per case: each is a miss with a warning that
// says why, and the next store (a re-tune) makes the key served again.
TEST(SqliteCache, EditedRecordsAreMissesThatSayWhy) {
  const std::pair<const char*, const char*> edits[] = {
      {"DELETE FROM candidates WHERE ord = 1", "holds 1 candidate rows of the 2"},
      {"UPDATE candidates SET outcome = 'crashed' WHERE ord = 0", "outcome crashed"},
      {"UPDATE tunings SET winner = 'gemm_t256x256'", "outcome compile_error"},
      {"UPDATE tunings SET winner = 'nobody'", "'nobody' is not among"},
      {"UPDATE candidates SET median_ns = -1 WHERE ord = 0", "impossible statistics"},
      {"UPDATE tunings SET candidate_count = 5", "of the 5 it was stored with"},
  };
  for (const auto& [sql, why] : edits) {
    TempDir tmp;
    auto cache = open_sqlite_cache(tmp.path());
    ASSERT_TRUE(cache.has_value());
    std::vector<std::string> warnings;
    (*cache)->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
    ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());
    raw_sql(tmp.path() / "tuning.sqlite3", sql);
    auto found = (*cache)->lookup(sample_key(1));
    ASSERT_TRUE(found.has_value()) << found.error().message;
    EXPECT_FALSE(found->has_value()) << sql;
    ASSERT_EQ(warnings.size(), 1u) << sql;
    EXPECT_NE(warnings[0].find(why), std::string::npos) << sql << ": " << warnings[0];
    ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());
    found = (*cache)->lookup(sample_key(1));
    ASSERT_TRUE(found.has_value() && found->has_value()) << sql;
  }
}

TEST(SqliteCache, StoresOneRowPerCandidateAndNullStats) {
  TempDir tmp;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value());
  ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());
  ASSERT_TRUE((*cache)->store(sample_record(1)).has_value());  // replaced, not duplicated
  const auto file = tmp.path() / "tuning.sqlite3";
  EXPECT_EQ(raw_sql(file, "SELECT count(*) FROM candidates"), "2");
  EXPECT_EQ(raw_sql(file,
                    "SELECT count(*) FROM candidates WHERE median_ns IS NULL AND runs IS "
                    "NULL AND outcome = 'compile_error'"),
            "1");
}

TEST(SqliteCache, NewerSchemaVersionIsRefused) {
  TempDir tmp;
  ASSERT_TRUE(open_sqlite_cache(tmp.path()).has_value());
  const auto file = tmp.path() / "tuning.sqlite3";
  raw_sql(file, "PRAGMA user_version = 8");
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code, ErrorCode::kIo);
  EXPECT_NE(cache.error().message.find("schema version 8 is newer"), std::string::npos)
      << cache.error().message;
  EXPECT_NE(cache.error().message.find(file.string()), std::string::npos);
  EXPECT_EQ(raw_sql(file, "PRAGMA user_version"), "8");  // left as it was
}

TEST(SqliteCache, FileThatIsNotADatabaseIsAnIoErrorNamingIt) {
  TempDir tmp;
  const auto file = tmp.path() / "tuning.sqlite3";
  std::ofstream(file) << "this is not an SQLite database, just some text long enough to matter";
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code, ErrorCode::kIo);
  EXPECT_NE(cache.error().message.find(file.string()), std::string::npos) << cache.error().message;
  EXPECT_NE(cache.error().message.find("not a database"), std::string::npos)
      << cache.error().message;
}

TEST(SqliteCache, FolderThatCannotBeCreatedIsAnIoError) {
  TempDir tmp;
  std::ofstream(tmp.path() / "plain_file") << "x";
  auto cache = open_sqlite_cache(tmp.path() / "plain_file" / "sub");
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code, ErrorCode::kIo);
  EXPECT_NE(cache.error().message.find("plain_file"), std::string::npos) << cache.error().message;
}

constexpr int kStoresPerWriter = 40;

// Opens its own connection and stores records [first, first + kStoresPerWriter); true when all
// succeeded.
bool write_many(const std::filesystem::path& dir, int first, std::string* error) {
  auto cache = open_sqlite_cache(dir);
  if (!cache) {
    *error = cache.error().message;
    return false;
  }
  for (int i = first; i < first + kStoresPerWriter; ++i) {
    if (auto s = (*cache)->store(sample_record(i, i)); !s) {
      *error = s.error().message;
      return false;
    }
    // Reads interleave with the other writer's transactions.
    if (auto l = (*cache)->lookup(sample_key(i)); !l || !l->has_value()) {
      *error = l ? "stored record not found" : l.error().message;
      return false;
    }
  }
  return true;
}

TEST(SqliteCache, TwoConnectionsWritingAtOnceBothSucceed) {
  TempDir tmp;
  std::latch start(2);
  std::string errors[2];
  bool ok[2] = {false, false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();  // open and create the schema at the same time too
      ok[t] = write_many(tmp.path(), t * 1000, &errors[t]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(ok[0]) << errors[0];
  EXPECT_TRUE(ok[1]) << errors[1];
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value());
  EXPECT_EQ((*cache)->list()->size(), 2u * kStoresPerWriter);
}

TEST(SqliteCache, TwoProcessesWritingAtOnceBothSucceed) {
  TempDir tmp;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(go[1]);
    char byte = 0;
    const bool started = read(go[0], &byte, 1) == 1;
    std::string error;
    const bool ok = started && write_many(tmp.path(), 5000, &error);
    if (!ok) std::fprintf(stderr, "child: %s\n", error.c_str());
    _exit(ok ? 0 : 1);
  }
  close(go[0]);
  ASSERT_EQ(write(go[1], "g", 1), 1);
  close(go[1]);
  std::string error;
  EXPECT_TRUE(write_many(tmp.path(), 0, &error)) << error;
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  auto cache = open_sqlite_cache(tmp.path());
  ASSERT_TRUE(cache.has_value());
  EXPECT_EQ((*cache)->list()->size(), 2u * kStoresPerWriter);
}

}  // namespace
}  // namespace ktune

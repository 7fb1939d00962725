// Issue 16, class 9 (files turned against ktune), through the real CLI with isolation on: a tuning
// cache edited behind ktune's back (a winner whose own row says it crashed, candidate rows cut
// out), a shared object swapped into the code cache, cache folders that others can write.
// Class 8's temporaries are files_temp_faults_test.cpp's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "faults/fault_support.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

void sql(const fs::path& cache, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((cache / "tuning.sqlite3").c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << statement << ": " << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// FAULT 0 (correct) beside FAULT 10 (segfaults): tuned once, the correct one stored as winner.
struct Tuned {
  ScratchDir dir{"files-fault"};
  fs::path cache = dir.path() / "cache";
  std::string spec = write_fault_spec(dir, {0, 10});
  CliResult tune(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = fault_tune_args(spec);
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(cache, args);
  }
};

void expect_retuned(const CliResult& r, const std::string& why) {
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("not served: ")) << r.output;
  EXPECT_THAT(r.output, HasSubstr(why)) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Selected add_FAULT0 (")) << r.output;  // tuned, not served
}

// Each edit of the stored record: the pick is not served, the warning says why, the key is tuned
// again, and the record written by that tuning is served on the next run.
TEST(FilesFaults, EditedTuningRecordIsTunedAgainNotServed) {
  const std::pair<const char*, const char*> edits[] = {
      // The winner pointed at the candidate whose own row says it crashed.
      {"UPDATE tunings SET winner = 'add_FAULT10'", "the winner 'add_FAULT10' has outcome crashed"},
      // The winner's own row says crashed.
      {"UPDATE candidates SET outcome = 'crashed' WHERE name = 'add_FAULT0'",
       "the winner 'add_FAULT0' has outcome crashed"},
      // A candidate row cut out.
      {"DELETE FROM candidates WHERE name = 'add_FAULT10'", "it holds 1 candidate rows of the 2"},
      // Cut out with the count made to agree: the rows are still not the candidates tuned.
      {"DELETE FROM candidates WHERE name = 'add_FAULT10'; UPDATE tunings SET candidate_count = 1",
       "its 1 candidate rows are not the 2 candidates tuned (1 missing)"},
      // The rows' names swapped, the winner named after the crashing candidate: its name now
      // sits on the valid row. Served, it would emit add_FAULT10.
      {"UPDATE candidates SET name = CASE name WHEN 'add_FAULT0' THEN 'add_FAULT10' ELSE "
       "'add_FAULT0' END; UPDATE tunings SET winner = 'add_FAULT10'",
       "its 2 candidate rows are not the 2 candidates tuned (2 missing)"},
      // A winner time that cannot have been measured.
      {"UPDATE candidates SET median_ns = 0, min_ns = 0 WHERE name = 'add_FAULT0'",
       "impossible statistics"},
  };
  Tuned t;
  CliResult first = t.tune();
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_THAT(first.output, HasSubstr("Selected add_FAULT0 ("));
  for (const auto& [edit, why] : edits) {
    SCOPED_TRACE(edit);
    sql(t.cache, edit);
    expect_retuned(t.tune(), why);
    CliResult served = t.tune();
    ASSERT_EQ(served.exit_code, 0) << served.output;
    EXPECT_THAT(served.output, HasSubstr("Selected add_FAULT0 from the tuning cache"));
    EXPECT_THAT(served.output, Not(HasSubstr("not served")));
  }
}

// `ktune compile` reads its picks through the same check: a stored gemm pick whose own row says
// it crashed is tuned again, never emitted into the program.
TEST(FilesFaults, CompileDoesNotEmitAStoredPickThatCrashed) {
  ScratchDir cache("files-compile-cache"), out("files-compile-out");
  const std::string graph = data_path("../../examples/mlp_block/graph.yaml");
  const std::string spec = data_path("codegen/matmul_small.yaml");
  const std::vector<std::string> args = {
      "compile",     graph,      "-o",          (out.path() / "mlp").string(),
      "--gemm-spec", spec,       "--budget-ms", "5",
      "-q",          "--no-fuse"};
  CliResult first = run_cli(cache.path(), args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  sql(cache.path(),
      "UPDATE candidates SET outcome = 'crashed', message = 'killed by SIGSEGV' WHERE "
      "EXISTS (SELECT 1 FROM tunings t WHERE t.digest = candidates.digest AND t.winner = "
      "candidates.name)");
  CliResult second = run_cli(cache.path(), args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("has outcome crashed in its own row"));
  EXPECT_THAT(second.output, HasSubstr("(0 from the tuning cache)"));
  CliResult third = run_cli(cache.path(), args);
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_THAT(third.output, HasSubstr("(2 from the tuning cache)"));
}

// `ktune cache import` stores no record that a lookup would refuse, and says which.
TEST(FilesFaults, ImportSkipsRecordsWhoseWinnerCrashed) {
  Tuned t;
  ASSERT_EQ(t.tune().exit_code, 0);
  const fs::path exported = t.dir.path() / "export.json";
  ASSERT_EQ(run_cli(t.cache, {"cache", "export", exported.string()}).exit_code, 0);
  std::string text;
  {
    std::ifstream in(exported);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "\"winner\": \"add_FAULT0\"";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"winner\": \"add_FAULT10\"");
  std::ofstream(exported) << text;
  ASSERT_EQ(run_cli(t.cache, {"cache", "clear"}).exit_code, 0);
  CliResult imported = run_cli(t.cache, {"cache", "import", exported.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_THAT(imported.output, HasSubstr("not imported: the winner 'add_FAULT10' has outcome"));
  EXPECT_THAT(imported.output, HasSubstr("imported 0 record(s)"));
}

// The .cpp beside each .so says which candidate it is.
fs::path artifact_of(const fs::path& cache, const std::string& define) {
  for (const auto& e : fs::recursive_directory_iterator(cache / "code")) {
    if (e.path().extension() != ".cpp" || e.path().filename().string().starts_with(".")) continue;
    std::ifstream in(e.path());
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (text.find(define + "\n") != std::string::npos) {
      return fs::path(e.path()).replace_extension(".so");
    }
  }
  return {};
}

// A shared object swapped into the code cache is never loaded: the digest recorded when the real
// one was compiled does not match, so the candidate is compiled again and runs as it should.
TEST(FilesFaults, SwappedSharedObjectIsNeverLoaded) {
  Tuned t;
  ASSERT_EQ(t.tune().exit_code, 0);
  const fs::path so = artifact_of(t.cache, "#define FAULT 0");
  ASSERT_FALSE(so.empty());
  const fs::path mark = t.dir.path() / "payload-was-loaded";
  const fs::path payload = t.dir.path() / "payload.so";
  auto built = run_process(
      {"c++", "-shared", "-fPIC", "-O1", fmt::format("-DMARK_PATH=\"{}\"", mark.string()), "-o",
       payload.string(), data_path("faults/files_faults.cpp")},
      ProcessOptions{});
  ASSERT_TRUE(built && built->ok()) << (built ? built->output : built.error().message);
  fs::copy_file(payload, so, fs::copy_options::overwrite_existing);
  ASSERT_EQ(run_cli(t.cache, {"cache", "clear"}).exit_code, 0);

  CliResult r = t.tune();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("does not match the SHA-256 recorded when it was compiled"));
  EXPECT_THAT(r.output, HasSubstr("Selected add_FAULT0 ("));
  EXPECT_FALSE(fs::exists(mark)) << "the swapped shared object was loaded";
  // Compiled again: the file in place is the real one, served without a word next time.
  ASSERT_EQ(run_cli(t.cache, {"cache", "clear"}).exit_code, 0);
  CliResult again = t.tune();
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, Not(HasSubstr("code cache:")));
  EXPECT_FALSE(fs::exists(mark));
}

// Root only: a digest record (or tuning cache file) owned by another user is not trusted even
// when its content would match.
TEST(FilesFaults, FilesOwnedByAnotherUserAreNotTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
  Tuned t;
  ASSERT_EQ(t.tune().exit_code, 0);
  const fs::path so = artifact_of(t.cache, "#define FAULT 0");
  ASSERT_EQ(::chown((so.string() + ".sha256").c_str(), 65534, 65534), 0);
  ASSERT_EQ(run_cli(t.cache, {"cache", "clear"}).exit_code, 0);
  CliResult r = t.tune();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("owned by user 65534, not by this user"));

  ASSERT_EQ(::chown((t.cache / "tuning.sqlite3").c_str(), 65534, 65534), 0);
  CliResult refused = t.tune();
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("tuning.sqlite3 is owned by user 65534"));
}

// A cache folder that others can write is refused unless allowed; a sticky one (like /tmp) is
// fine, since others cannot replace what is ours in it.
TEST(FilesFaults, CacheFolderOthersCanWriteIsRefused) {
  Tuned t;
  ASSERT_EQ(t.tune().exit_code, 0);
  ASSERT_EQ(::chmod(t.cache.c_str(), 0777), 0);
  CliResult refused = t.tune();
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("is writable by everyone (mode 777) without the sticky"));
  EXPECT_THAT(refused.output, HasSubstr("--allow-shared-cache-dir"));
  CliResult listed = run_cli(t.cache, {"cache", "list"});
  EXPECT_EQ(listed.exit_code, 1) << listed.output;

  CliResult allowed = t.tune({"--allow-shared-cache-dir"});
  // A global flag: given after the subcommand, CLI11 passes it through (fallthrough).
  ASSERT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_THAT(allowed.output, HasSubstr("warning: tuning cache"));

  ASSERT_EQ(::chmod(t.cache.c_str(), 01777), 0);
  ASSERT_EQ(::chmod((t.cache / "code").c_str(), 0770), 0);
  CliResult code_shared = t.tune();
  EXPECT_EQ(code_shared.exit_code, 1) << code_shared.output;
  EXPECT_THAT(code_shared.output, HasSubstr("writable by its group"));
  ASSERT_EQ(::chmod((t.cache / "code").c_str(), 0700), 0);
  CliResult sticky = t.tune();
  ASSERT_EQ(sticky.exit_code, 0) << sticky.output;
  EXPECT_THAT(sticky.output, Not(HasSubstr("--allow-shared-cache-dir")));
}

}  // namespace
}  // namespace ktune::test

// Resume end to end through the real CLI: `ktune tune` on a 20-config CPU space is killed half-way
// (SIGKILL, then Ctrl-C's SIGINT) once some candidates' partial rows are in the tuning cache; the
// same command then measures only the candidates that are missing and stores a record of all 20.
// And one tuner per device: a second `ktune tune` of the same problem waits for the first and is
// answered from the cache.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/cli_run.h"
#include "support/cores.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Slow enough per candidate (100 timed runs of a 2M-element kernel) to stop it half-way.
std::vector<std::string> tune_args() {
  return {"tune",
          data_path("resume/scale.yaml"),
          "--budget-ms",
          "10000",
          "--min-runs",
          "100",
          "--max-runs",
          "100",
          "--decide-rounds",
          "0",
          "--no-flush"};
}

// `ktune --cache-dir <cache> args...` started in the background, its output into `log`.
pid_t spawn_cli(const std::filesystem::path& cache, const std::vector<std::string>& args,
                const std::filesystem::path& log) {
  std::vector<std::string> argv = {KTUNE_CLI, "--cache-dir", cache.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  return pid;
}

// Rows of the partial_candidates table; -1 while the file or table is not there yet.
int partial_rows(const std::filesystem::path& cache) {
  const std::string file = (cache / "tuning.sqlite3").string();
  if (!std::filesystem::exists(file)) return -1;
  sqlite3* db = nullptr;
  int n = -1;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM partial_candidates", -1, &stmt, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      n = sqlite3_column_int(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return n;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Starts the tuning, waits for `rows` partial rows, sends `sig`; the exit status as waitpid
// gives it, and the rows kept.
struct Stopped {
  int status = 0;
  int rows = 0;
  std::string output;
};
Stopped stop_half_way(const std::filesystem::path& cache, int sig, int rows,
                      const std::vector<std::string>& args = tune_args()) {
  const auto log = cache.parent_path() / (cache.filename().string() + ".log");
  const pid_t pid = spawn_cli(cache, args, log);
  EXPECT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  int status = 0;
  bool exited = false;
  while (partial_rows(cache) < rows && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(exited) << "ended before it could be stopped: " << read_all(log);
  if (!exited) {
    ::kill(pid, sig);
    ::waitpid(pid, &status, 0);
  }
  return {status, partial_rows(cache), read_all(log)};
}

// The rerun: only the missing candidates measured (without a reference the first kept valid
// candidate runs again, to stand in for the reference again), then a record of all 20.
void expect_resumes(const std::filesystem::path& cache, int rows,
                    const std::vector<std::string>& args = tune_args()) {
  CliResult again = run_cli(cache, args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  const int resumed = rows - 1;
  EXPECT_THAT(again.output,
              HasSubstr(fmt::format("resuming: {} of 20 candidates already measured", resumed)));
  EXPECT_THAT(again.output, HasSubstr(fmt::format("compiling {} candidates", 20 - resumed)));
  EXPECT_THAT(again.output,
              HasSubstr(fmt::format("verifying and measuring {} candidates", 20 - resumed)));
  EXPECT_THAT(again.output, HasSubstr("20 candidates (20 valid, 0 failed)"));
  EXPECT_EQ(partial_rows(cache), 0);  // cleared once the record is stored

  CliResult exported = run_cli(cache, {"cache", "export", "-"});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_THAT(exported.output, HasSubstr("\"candidate_count\": 20"));
  CliResult hit = run_cli(cache, args);
  EXPECT_THAT(hit.output, HasSubstr("compiled nothing, measured nothing"));
}

TEST(ResumeCli, AfterSigkillOnlyTheMissingCandidatesAreMeasured) {
  ScratchDir dir("resume-kill");
  const auto cache = dir.path() / "cache";
  const Stopped s = stop_half_way(cache, SIGKILL, 5);
  ASSERT_TRUE(WIFSIGNALED(s.status)) << s.output;
  ASSERT_GE(s.rows, 5);
  ASSERT_LT(s.rows, 20);
  expect_resumes(cache, s.rows);
}

// Killed while two devices measured at once (--devices: each device's rows kept as they
// finish, one at a time): the rerun on the same devices measures only what is missing.
TEST(ResumeCli, AKilledRunOnTwoDevicesResumesOnlyTheMissing) {
  KTUNE_REQUIRE_TWO_CORES(cores);
  std::vector<std::string> args = tune_args();
  args.insert(args.end(), {"--devices", cores});
  ScratchDir dir("resume-kill-devices");
  const auto cache = dir.path() / "cache";
  const Stopped s = stop_half_way(cache, SIGKILL, 5, args);
  ASSERT_TRUE(WIFSIGNALED(s.status)) << s.output;
  ASSERT_GE(s.rows, 5);
  ASSERT_LT(s.rows, 20);
  expect_resumes(cache, s.rows, args);
}

TEST(ResumeCli, CtrlCKeepsWhatWasMeasuredCleansUpAndExits130) {
  ScratchDir dir("resume-int");
  const auto cache = dir.path() / "cache";
  const Stopped s = stop_half_way(cache, SIGINT, 4);
  ASSERT_TRUE(WIFEXITED(s.status)) << s.output;
  EXPECT_EQ(WEXITSTATUS(s.status), 130) << s.output;
  ASSERT_GE(s.rows, 4);
  ASSERT_LT(s.rows, 20);
  EXPECT_THAT(s.output, HasSubstr(fmt::format("interrupted: {} candidates measured are kept; "
                                              "rerun the same command to resume",
                                              s.rows)));
  EXPECT_THAT(s.output, HasSubstr("ktune: interrupted; removed"));
  // No temporary of the interrupted process is left in the code cache.
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache / "code")) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".ktune-tmp.")) << e.path();
  }
  expect_resumes(cache, s.rows);
}

// A budgeted search killed after k evaluations: the rerun (same seed, same budget) counts the
// kept candidates against max_evals, so the search evaluates 10 in all, not 10 more.
TEST(ResumeCli, AKilledBudgetedSearchSpendsOnlyWhatIsLeftOfItsBudget) {
  ScratchDir dir("resume-budget");
  const auto cache = dir.path() / "cache";
  std::vector<std::string> args = tune_args();
  args.insert(args.end(), {"--strategy", "random", "--max-evals", "10", "--seed", "3"});
  const Stopped s = stop_half_way(cache, SIGKILL, 4, args);
  ASSERT_TRUE(WIFSIGNALED(s.status)) << s.output;
  ASSERT_GE(s.rows, 4);
  ASSERT_LT(s.rows, 10);
  CliResult again = run_cli(cache, args);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  // Without a reference, the first kept valid candidate runs again (it stands in again).
  EXPECT_THAT(again.output,
              HasSubstr(fmt::format("resuming: {} of 20 candidates already measured", s.rows - 1)));
  EXPECT_THAT(again.output, HasSubstr("20 candidates (10 valid, 0 failed, 10 not measured, "
                                      "outside the search budget (strategy random, 10 of 20 "
                                      "evaluated))"));
}

TEST(DeviceLockCli, ASecondTunerWaitsThenIsServedFromTheCache) {
  ScratchDir dir("device-lock");
  const auto cache = dir.path() / "cache";
  const auto log = dir.path() / "first.log";
  const pid_t first = spawn_cli(cache, tune_args(), log);
  ASSERT_GT(first, 0);
  // Measuring (a row kept) means the first holds the lock.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (partial_rows(cache) < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GE(partial_rows(cache), 1) << read_all(log);
  CliResult second = run_cli(cache, tune_args());
  int status = 0;
  ::waitpid(first, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_all(log);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output,
              HasSubstr(fmt::format("waiting for another ktune measuring on cpu (pid {})", first)));
  EXPECT_THAT(second.output, HasSubstr("compiled nothing, measured nothing"));
  EXPECT_THAT(second.output, Not(HasSubstr("verifying and measuring")));
  const auto lock = cache / "locks" / "cpu.lock";
  ASSERT_TRUE(std::filesystem::exists(lock));
  EXPECT_EQ(std::filesystem::status(lock).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace ktune::test

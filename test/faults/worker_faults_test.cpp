// Planted faults against the worker process (test/data/faults/worker_faults.cpp), tuned through
// the real CLI with isolation on: forged answers (class 4), state left behind (5), children
// beyond the memory limit (6) and orphans of a killed ktune (8).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "faults/fault_support.h"

extern char** environ;

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The AUTOTUNE table's row of add_FAULT<value>.
std::string row_of(const std::string& output, int value) {
  const std::string name = fmt::format("add_FAULT{} ", value);
  const auto at = output.find(name);
  if (at == std::string::npos) return {};
  return output.substr(at, output.find('\n', at) - at);
}

// $KTUNE_FAULT_DIR for the processes a fault starts, for the lifetime of the guard.
class FaultDir {
 public:
  explicit FaultDir(const ScratchDir& dir) : path_(dir.path() / "pids") {
    std::filesystem::create_directories(path_);
    ::setenv("KTUNE_FAULT_DIR", path_.c_str(), 1);
  }
  ~FaultDir() { ::unsetenv("KTUNE_FAULT_DIR"); }
  FaultDir(const FaultDir&) = delete;
  FaultDir& operator=(const FaultDir&) = delete;

  std::vector<pid_t> pids() const {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      out.push_back(static_cast<pid_t>(std::atoi(e.path().filename().c_str())));
    }
    return out;
  }

 private:
  std::filesystem::path path_;
};

// Gone, or a zombie nobody reaped yet (it runs nothing).
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return true;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

bool all_gone_within(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool gone = true;
    for (pid_t p : pids) gone = gone && process_gone(p);
    if (gone) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(20ms);
  }
}

struct Case {
  int value;
  const char* name;
  const char* outcome;
  const char* detail;
};

class WorkerFault : public ::testing::TestWithParam<Case> {};

// The fault costs its own candidate only: the correct kernel after it, run by the next worker,
// is valid and picked, and whatever the fault started is gone when ktune returns.
TEST_P(WorkerFault, CostsOnlyItsCandidate) {
  const Case& c = GetParam();
  ScratchDir dir(std::string("worker-fault-") + c.name);
  FaultDir pids(dir);
  const std::string spec = write_fault_spec_from(dir, "worker_faults.cpp", {c.value, 0});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Selected add_FAULT0 "));
  EXPECT_THAT(r.output, HasSubstr("2 candidates (1 valid, 1 failed)"));
  const std::string row = row_of(r.output, c.value);
  EXPECT_THAT(row, HasSubstr(c.outcome)) << r.output;
  EXPECT_THAT(row, HasSubstr(c.detail)) << r.output;
  EXPECT_TRUE(all_gone_within(pids.pids(), 2s)) << "a process the fault started survived";
}

INSTANTIATE_TEST_SUITE_P(
    Faults, WorkerFault,
    ::testing::Values(
        Case{40, "forges_on_fd4_and_exits", "crashed", "exited with status 0"},
        Case{41, "forges_on_every_pipe", "crashed", "forged worker answer"},
        Case{42, "forges_on_every_pipe_and_exits", "crashed", "forged worker answer"},
        Case{46, "thread_keeps_writing", "crashed", "thread(s) running after the call returned"},
        Case{47, "thread_sleeps_then_writes", "crashed",
             "thread(s) running after the call returned"},
        Case{48, "child_left_spinning", "crashed", "process(es) running after the call returned"},
        Case{49, "grandchild_in_own_session", "crashed",
             "process(es) running after the call returned"},
        Case{50, "child_allocates_1GiB", "resource_exhausted", "limit 256 MiB"}),
    [](const auto& info) { return std::string(info.param.name); });

// The worker forks inside the candidate and exits; its copy carries on, verifies, measures and
// answers with the nonce it inherited. The answer is not believed: its worker is gone (or the
// copy is a process left running, when the parent looks before the worker is).
TEST(WorkerFaults, AnAnswerFromAForkedCopyOfTheWorkerIsForged) {
  ScratchDir dir("worker-fault-forked-copy");
  const std::string spec = write_fault_spec_from(dir, "worker_faults.cpp", {53, 0});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("Selected add_FAULT0 "));
  const std::string row = row_of(r.output, 53);
  EXPECT_THAT(row, HasSubstr("crashed")) << r.output;
  EXPECT_THAT(row, ::testing::AnyOf(HasSubstr("a forked copy of it answered"),
                                    HasSubstr("process(es) running")))
      << r.output;
}

// A candidate that leaves the rounding mode, FTZ/DAZ, the working directory or the umask
// changed is itself fine, but the innocent candidate after it, in the same worker, must see the
// state the worker started with (FAULT 45 is right only then).
TEST(WorkerFaults, StateLeftBehindIsResetBeforeTheNextCandidate) {
  for (int polluter : {43, 44}) {
    SCOPED_TRACE(polluter);
    ScratchDir dir(fmt::format("worker-fault-state-{}", polluter));
    const std::string spec = write_fault_spec_from(dir, "worker_faults.cpp", {polluter, 45});
    CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("2 candidates (2 valid, 0 failed)")) << r.output;
  }
}

// An idle thread a candidate keeps for its next call (a pool, as OpenMP's) is not a fault.
TEST(WorkerFaults, AParkedPoolThreadIsNotAFault) {
  ScratchDir dir("worker-fault-pool");
  const std::string spec = write_fault_spec_from(dir, "worker_faults.cpp", {52, 0, 1});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("3 candidates (3 valid, 0 failed)")) << r.output;
}

// kill -9 of ktune while a candidate spins, with a child of it spinning in its own session:
// the worker and the child die within seconds.
TEST(WorkerFaults, KillingKtuneKillsTheWorkerAndItsDescendants) {
  ScratchDir dir("worker-fault-orphans");
  FaultDir pids(dir);
  const std::string spec = write_fault_spec_from(dir, "worker_faults.cpp", {51});
  const std::string cli = std::getenv("KTUNE_TEST_CLI") && *std::getenv("KTUNE_TEST_CLI")
                              ? std::getenv("KTUNE_TEST_CLI")
                              : KTUNE_CLI;
  const std::string cache = (dir.path() / "cache").string();
  std::vector<std::string> args = {cli,  "--cache-dir",      cache,   "tune",
                                   spec, "--run-timeout-ms", "120000"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t ktune = -1;
  ASSERT_EQ(::posix_spawn(&ktune, cli.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // The candidate notes the worker's pid and its child's.
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (pids.pids().size() < 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
  }
  const std::vector<pid_t> started = pids.pids();
  ::kill(ktune, SIGKILL);
  ::waitpid(ktune, nullptr, 0);
  ASSERT_EQ(started.size(), 2u) << "the spinning candidate never started";
  EXPECT_TRUE(all_gone_within(started, 5s)) << "the worker or its child outlived ktune";
  for (pid_t p : started) ::kill(p, SIGKILL);  // do not leave them spinning if they did
}

}  // namespace
}  // namespace ktune::test

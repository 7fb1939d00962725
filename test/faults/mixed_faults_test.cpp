// Three correct kernels among every planted fault in one tuning run (on one device, and on two at
// once); and a worker killed by hand in the middle of a run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "faults/fault_support.h"
#include "support/cores.h"

namespace ktune::test {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// Each planted fault's outcome appears in the table.
void expect_every_fault_named(const std::string& output) {
  for (const char* o : {"crashed", "timed_out", "redzone_violation", "input_modified",
                        "unwritten_output", "nan_output", "wrong_result", "resource_exhausted"}) {
    EXPECT_THAT(output, HasSubstr(o));
  }
}

TEST(MixedFaults, FastestCorrectWinsAndEveryFailureIsNamed) {
  ScratchDir dir("fault-mixed");
  const std::string spec =
      write_fault_spec(dir, {0, 1, 2, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23, 24});
  CliResult r = run_cli(dir.path() / "cache", fault_tune_args(spec));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              AnyOf(HasSubstr("Selected add_FAULT0 "), HasSubstr("Selected add_FAULT1 ")));
  EXPECT_THAT(r.output, HasSubstr("16 candidates (3 valid, 13 failed)"));
  expect_every_fault_named(r.output);
}

// The same on two devices at once (--devices: two workers, each pinned to a core of its own, the
// candidates going to whichever is idle): every fault costs its candidate alone, on whichever
// device it ran, and a correct kernel still wins. Under the tsan-ci build this runs the spreading
// code (threads, one worker pool per device) against real workers.
TEST(MixedFaults, OnTwoDevicesAtOnceEveryFailureIsNamedAndACorrectKernelWins) {
  KTUNE_REQUIRE_TWO_CORES(cores);
  ScratchDir dir("fault-mixed-devices");
  const std::string spec =
      write_fault_spec(dir, {0, 1, 2, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 23, 24});
  std::vector<std::string> args = fault_tune_args(spec);
  args.insert(args.end(), {"--devices", cores});
  CliResult r = run_cli(dir.path() / "cache", args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("on 2 devices at once"));
  EXPECT_THAT(r.output,
              AnyOf(HasSubstr("Selected add_FAULT0 "), HasSubstr("Selected add_FAULT1 ")));
  EXPECT_THAT(r.output, HasSubstr("16 candidates (3 valid, 13 failed)"));
  expect_every_fault_named(r.output);
}

// The pids of the running children of `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) kids.push_back(std::stoi(name));
  }
  return kids;
}

TEST(MixedFaults, WorkerKilledByHandLosesOnlyItsCandidate) {
  ScratchDir dir("fault-sigkill");
  // FAULT 25 is correct but takes 0.4 s a call; it is measured after FAULT 0.
  const std::string spec = write_fault_spec(dir, {0, 25});
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t ktune = ::fork();
  ASSERT_GE(ktune, 0);
  if (ktune == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    std::vector<std::string> args = {KTUNE_CLI, "--cache-dir", (dir.path() / "cache").string()};
    for (const std::string& a : fault_tune_args(spec)) args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(KTUNE_CLI, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string output;
  char buf[4096];
  bool killed = false;
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) {
    output.append(buf, static_cast<std::size_t>(n));
    // After the first candidate is measured, the worker holds the slow one.
    if (!killed && output.find("measured 1/2") != std::string::npos) {
      ::usleep(100 * 1000);
      for (pid_t child : children_of(ktune)) {
        ::kill(child, SIGKILL);
        killed = true;
      }
    }
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(ktune, &status, 0);
  ASSERT_TRUE(killed) << output;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_THAT(output, HasSubstr("Selected add_FAULT0 "));
  EXPECT_THAT(output, HasSubstr("crashed"));
  EXPECT_THAT(output, HasSubstr("SIGKILL"));
}

}  // namespace
}  // namespace ktune::test

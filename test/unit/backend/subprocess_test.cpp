// run_process: exit codes, interleaved output and its tail, deadlines that kill the whole
// process group (even one ignoring SIGTERM), missing programs, working folder, fd hygiene.
#include "core/subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "core/unique_fd.h"
#include "support/temp_dir.h"

namespace ktune {
namespace {

using namespace std::chrono_literals;

TEST(RunProcess, CapturesExitCodeAndBothStreams) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->term_signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->output.find("out\n"), std::string::npos);
  EXPECT_NE(r->output.find("err\n"), std::string::npos);
}

TEST(RunProcess, SuccessIsOk) {
  auto r = run_process({"true"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(r->output.empty());
}

TEST(RunProcess, KeepsTheTailOfLongOutput) {
  ProcessOptions opts;
  opts.max_output_bytes = 100;
  auto r = run_process({"sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done"},
                       opts);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->output.size(), 100u);
  EXPECT_TRUE(r->output.ends_with("line2998\nline2999\n")) << r->output;
}

TEST(RunProcess, TimeoutTerminatesTheChild) {
  ProcessOptions opts;
  opts.timeout = 200ms;
  auto r = run_process({"sleep", "10"}, opts);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->term_signal, SIGTERM);
  EXPECT_LT(r->wall_s, 5.0);  // far below the 10 s the child wanted
}

TEST(RunProcess, TimeoutKillsTheWholeGroupEvenWhenTermIsIgnored) {
  ProcessOptions opts;
  opts.timeout = 200ms;
  // The shell and its background child both ignore SIGTERM and both hold the output pipe.
  auto r = run_process({"sh", "-c", "trap '' TERM; sleep 10 & sleep 10"}, opts);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_LT(r->wall_s, 5.0);
}

TEST(RunProcess, MissingProgramIsNotFound) {
  auto r = run_process({"ktune-no-such-program-4711", "--version"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find("ktune-no-such-program-4711"), std::string::npos)
      << r.error().message;
}

TEST(RunProcess, EmptyArgvIsInvalid) {
  auto r = run_process({});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
}

TEST(RunProcess, RunsInTheWorkingDir) {
  test::TempDir dir;
  ProcessOptions opts;
  opts.working_dir = dir.path().string();
  auto r = run_process({"pwd", "-P"}, opts);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->output, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(RunProcess, ChildSeesNoOtherDescriptors) {
  UniqueFd leak(::open("/dev/null", O_RDONLY));  // deliberately without O_CLOEXEC
  ASSERT_TRUE(leak.valid());
  std::string fd = std::to_string(leak.get());
  auto r =
      run_process({"sh", "-c", "test -e /proc/self/fd/" + fd + " && echo open || echo closed"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->output, "closed\n");
}

TEST(UniqueFd, ClosesAndMoves) {
  int raw = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(raw, 0);
  {
    UniqueFd a(raw);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), raw);
  }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed by b's destructor
}

}  // namespace
}  // namespace ktune

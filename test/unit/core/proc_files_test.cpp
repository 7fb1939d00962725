// A process's /proc files (core/proc_files.h): /proc/<pid>/stat past a command name with spaces
// and parentheses, kibibyte fields and memory, children, CPU time that grows, and a process that
// is gone.
#include "core/proc_files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace ktune::test {
namespace {

TEST(ProcFiles, StatOfThisProcess) {
  const std::optional<ProcStat> s = read_proc_stat(::getpid());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ppid, ::getppid());
  EXPECT_EQ(s->state, 'R');  // reading its own stat, it runs
  EXPECT_GT(s->start_time, 0u);
  // Busy for 200 ms: utime + stime grow by at least a few 10 ms ticks.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  volatile unsigned long spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  const std::optional<ProcStat> later = read_proc_stat(::getpid());
  ASSERT_TRUE(later);
  EXPECT_GT(later->utime + later->stime, s->utime + s->stime);
  EXPECT_EQ(later->start_time, s->start_time);
}

TEST(ProcFiles, KibibyteFieldsInBytes) {
  const std::optional<std::size_t> rss = proc_kib_field(::getpid(), "status", "VmRSS:");
  ASSERT_TRUE(rss);
  EXPECT_GT(*rss, 1u << 20);
  EXPECT_EQ(*rss % 1024, 0u);
  EXPECT_FALSE(proc_kib_field(::getpid(), "status", "NoSuchField:"));
  EXPECT_EQ(proc_kib_field("Name:\tx\nVmSize:\t  12 kB\n", "VmSize:"), 12u * 1024);
  const std::optional<ProcMemory> memory = read_proc_memory(::getpid());
  ASSERT_TRUE(memory);
  EXPECT_GT(memory->resident_bytes, 1u << 20);
  EXPECT_GE(memory->virtual_bytes, memory->resident_bytes);
}

// A child named with spaces and parentheses is still parsed (the name ends at the last ')'); it
// is among this process's children while it lives, and its files are gone once it is reaped.
TEST(ProcFiles, ChildWithATrickyNameThenGone) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_NAME, "a) (b c)", 0, 0, 0);
    const char one = 1;
    (void)!::write(ready[1], &one, 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  const std::optional<ProcStat> s = read_proc_stat(child);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->ppid, ::getpid());
  EXPECT_NE(std::string("RSD").find(s->state), std::string::npos) << s->state;
  if (proc_children_files()) {
    const std::vector<pid_t> children = proc_children(::getpid());
    EXPECT_NE(std::find(children.begin(), children.end(), child), children.end());
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(read_proc_stat(child));
  EXPECT_FALSE(proc_kib_field(child, "status", "VmRSS:"));
  EXPECT_FALSE(read_proc_memory(child));
  EXPECT_FALSE(read_proc_file(child, "status"));
}

}  // namespace
}  // namespace ktune::test

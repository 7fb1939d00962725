// Issue 16, class 8's temporaries, through the real CLI: what a `kill -9` of ktune leaves in the
// cache folder is removed at the next start, and only that.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "faults/fault_support.h"

namespace ktune::test {
namespace {

namespace fs = std::filesystem;

pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

void age(const fs::path& p, std::chrono::seconds by) {
  fs::last_write_time(p, fs::file_time_type::clock::now() - by);
}

// What a killed ktune leaves is swept at the next start, and only that: ktune's names whose
// process is gone and that have not changed for a minute.
TEST(FilesFaults, StaleTemporariesAreSweptAtStart) {
  ScratchDir dir("files-sweep");
  const fs::path cache = dir.path() / "cache";
  ASSERT_EQ(run_cli(cache, fault_tune_args(write_fault_spec(dir, {0}))).exit_code, 0);
  fs::path shard;
  for (const auto& e : fs::directory_iterator(cache / "code")) shard = e.path();
  ASSERT_FALSE(shard.empty());
  const pid_t gone = dead_pid();
  auto plant = [&](const std::string& name, std::chrono::seconds old) {
    const fs::path p = shard / name;
    std::ofstream(p) << "partial";
    age(p, old);
    return p;
  };
  const fs::path stale =
      plant(fmt::format(".ktune-tmp.{}.00ff.abc.so", gone), std::chrono::minutes(5));
  const fs::path stale_root = cache / fmt::format(".ktune-tmp.{}.00ff.x.json", gone);
  std::ofstream(stale_root) << "{";
  age(stale_root, std::chrono::minutes(5));
  const fs::path fresh =
      plant(fmt::format(".ktune-tmp.{}.00ff.abc.cpp", gone), std::chrono::seconds(0));
  const fs::path alive =
      plant(fmt::format(".ktune-tmp.{}.00ff.abc.so", ::getpid()), std::chrono::minutes(5));
  const fs::path foreign = plant(".tmp-not-ktunes.so", std::chrono::minutes(5));

  ASSERT_EQ(run_cli(cache, {"cache", "list"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_root));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(foreign));
}

std::vector<fs::path> temporaries(const fs::path& cache) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(cache, ec)) {
    if (e.path().filename().string().starts_with(".ktune-tmp.")) out.push_back(e.path());
  }
  return out;
}

// `kill -9` of ktune (and its compiler) in the middle of compiling: the temporaries it was
// filling stay behind, and the next ktune removes them once they are a minute old.
TEST(FilesFaults, KillNineDuringCompileLeavesNothingBehindForLong) {
  ScratchDir dir("files-kill");
  const fs::path cache = dir.path() / "cache";
  const std::string spec = write_fault_spec(dir, {0});
  // A compiler that takes its time, so that the kill lands while temporaries are open.
  const fs::path slow = dir.path() / "slow-cxx";
  std::ofstream(slow) << "#!/bin/sh\ncase \"$*\" in *--version*) exec c++ \"$@\";; esac\n"
                         "sleep 30\nexec c++ \"$@\"\n";
  fs::permissions(slow, fs::perms::owner_all);
  const pid_t ktune = ::fork();
  if (ktune == 0) {
    ::setpgid(0, 0);
    ::setenv("CXX", slow.c_str(), 1);
    const char* moved = std::getenv("KTUNE_TEST_CLI");
    const std::string cli = moved && *moved ? moved : KTUNE_CLI;
    ::execl(cli.c_str(), cli.c_str(), "--cache-dir", cache.c_str(), "tune", spec.c_str(), "-q",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (temporaries(cache).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-ktune, SIGKILL);
  ::waitpid(ktune, nullptr, 0);
  const std::vector<fs::path> left = temporaries(cache);
  ASSERT_FALSE(left.empty()) << "no temporary appeared while compiling";

  ASSERT_EQ(run_cli(cache, {"cache", "list"}).exit_code, 0);
  EXPECT_EQ(temporaries(cache).size(), left.size()) << "swept before they were a minute old";
  for (const fs::path& p : left) age(p, std::chrono::minutes(2));
  ASSERT_EQ(run_cli(cache, {"cache", "list"}).exit_code, 0);
  EXPECT_TRUE(temporaries(cache).empty());
}

}  // namespace
}  // namespace ktune::test

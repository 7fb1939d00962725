// DeviceLock (select/device_lock.h): a second holder waits, says so with the first's pid, and
// knows it waited; the file is the user's alone; a planted link is not followed.
#include "select/device_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "support/temp_dir.h"
#include "unit/select/select_fakes.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  return out;
}

TEST(DeviceLock, NamesTheCpuPlainly) { EXPECT_EQ(device_lock_name(FakeBackend{}), "cpu"); }

TEST(DeviceLock, ASecondHolderWaitsForTheFirstAndSaysWho) {
  TempDir dir;
  const auto locks = dir.path() / "locks";
  auto first = DeviceLock::acquire(locks, "cpu", nullptr);
  ASSERT_TRUE(first && first->held());
  EXPECT_FALSE(first->waited());
  EXPECT_EQ(
      (std::filesystem::status(locks / "cpu.lock").permissions() & std::filesystem::perms::all),
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  std::FILE* said = std::tmpfile();
  ASSERT_NE(said, nullptr);
  std::optional<Result<DeviceLock>> second;
  std::thread waiter([&] { second.emplace(DeviceLock::acquire(locks, "cpu", said)); });
  // flock is per open file: the second open waits even within one process.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  *first = DeviceLock();  // released
  waiter.join();
  ASSERT_TRUE(second && *second && (*second)->held());
  EXPECT_TRUE((*second)->waited());
  EXPECT_THAT(contents(said), HasSubstr("waiting for another ktune measuring on cpu (pid " +
                                        std::to_string(::getpid()) + ")"));
  std::fclose(said);
}

TEST(DeviceLock, APlantedLinkIsNotFollowedAndNothingIsHeld) {
  TempDir dir;
  const auto locks = dir.path() / "locks";
  std::filesystem::create_directories(locks);
  std::filesystem::permissions(locks, std::filesystem::perms::owner_all);
  const auto target = dir.path() / "victim";
  std::ofstream(target) << "keep me";
  std::filesystem::create_symlink(target, locks / "cpu.lock");
  std::FILE* said = std::tmpfile();
  ASSERT_NE(said, nullptr);
  auto lock = DeviceLock::acquire(locks, "cpu", said);
  ASSERT_TRUE(lock);
  EXPECT_FALSE(lock->held());
  EXPECT_THAT(contents(said), HasSubstr("measuring without it"));
  std::ifstream in(target);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "keep me");
  std::fclose(said);
}

TEST(DeviceLock, NoFolderNoLock) {
  auto lock = DeviceLock::acquire({}, "cpu", nullptr);
  ASSERT_TRUE(lock);
  EXPECT_FALSE(lock->held());
}

}  // namespace
}  // namespace ktune::test

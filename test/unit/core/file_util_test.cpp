// ktune's own files: exclusive creation that never follows a planted link, atomic writes, private
// folders, the check of folders others can write, and the sweep of a killed writer's temporaries.
#include "core/file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "support/temp_dir.h"

namespace ktune {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(CreateExclusive, NeverOpensAPlantedFileOrFollowsALink) {
  test::TempDir dir;
  const fs::path victim = dir.path() / "victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir.path() / "link");
  EXPECT_FALSE(create_exclusive(dir.path() / "link").has_value());
  EXPECT_FALSE(create_exclusive(victim).has_value());
  EXPECT_EQ(slurp(victim), "precious");

  auto fd = create_exclusive(dir.path() / "fresh");
  ASSERT_TRUE(fd.has_value()) << fd.error().message;
  EXPECT_EQ(mode_of(dir.path() / "fresh") & 0077, 0u);
}

TEST(WriteFileAtomic, ReplacesTheFileAndLeavesNoTemporary) {
  test::TempDir dir;
  const fs::path f = dir.path() / "out.json";
  ASSERT_TRUE(write_file_atomic(f, "one").has_value());
  ASSERT_TRUE(write_file_atomic(f, "two").has_value());
  EXPECT_EQ(slurp(f), "two");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
}

TEST(PrivateDirs, CreatedOwnerOnly) {
  test::TempDir dir;
  const fs::path nested = dir.path() / "a" / "b";
  ASSERT_TRUE(create_private_dirs(nested).has_value());
  EXPECT_EQ(mode_of(dir.path() / "a"), 0700u);
  EXPECT_EQ(mode_of(nested), 0700u);
  EXPECT_TRUE(check_not_shared(nested).has_value());
  EXPECT_TRUE(check_not_shared(dir.path() / "absent").has_value());
}

TEST(CheckNotShared, WritableByOthersWithoutStickyIsRefused) {
  test::TempDir dir;
  const fs::path d = dir.path() / "d";
  ASSERT_TRUE(create_private_dirs(d).has_value());
  ASSERT_EQ(::chmod(d.c_str(), 0777), 0);
  Status s = check_not_shared(d);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("writable by everyone"), std::string::npos);
  ASSERT_EQ(::chmod(d.c_str(), 0775), 0);
  s = check_not_shared(d);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("writable by its group"), std::string::npos);
  ASSERT_EQ(::chmod(d.c_str(), 01777), 0);  // like /tmp
  EXPECT_TRUE(check_not_shared(d).has_value());
  const fs::path f = d / "f";
  std::ofstream(f) << "x";
  ASSERT_EQ(::chmod(f.c_str(), 0666), 0);
  EXPECT_FALSE(check_not_shared(f).has_value());  // the sticky bit is a folder's only
  // A link of ours is judged by what it names.
  fs::create_symlink(dir.path(), dir.path() / "to-private");
  EXPECT_TRUE(check_not_shared(dir.path() / "to-private").has_value());
}

TEST(CheckNotShared, OwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  test::TempDir dir;
  ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
  Status s = check_not_shared(dir.path());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("owned by user 65534"), std::string::npos);
}

TEST(SweepStaleTemps, RemovesOnlyOldTemporariesOfGoneProcesses) {
  test::TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // gone
  auto plant = [&](const std::string& name, std::chrono::seconds old) {
    const fs::path p = dir.path() / name;
    std::ofstream(p) << "x";
    fs::last_write_time(p, fs::file_time_type::clock::now() - old);
    return p;
  };
  const auto old = std::chrono::minutes(3);
  const fs::path stale = plant(".ktune-tmp." + std::to_string(child) + ".ab.k.so", old);
  const fs::path recent =
      plant(".ktune-tmp." + std::to_string(child) + ".cd.k.so", std::chrono::seconds(0));
  const fs::path mine = plant(temp_file_name("k.so"), old);  // this process is alive
  const fs::path other = plant("k.so", old);
  const fs::path malformed = plant(".ktune-tmp.x12.ab.k.so", old);
  EXPECT_EQ(sweep_stale_temps(dir.path(), std::chrono::seconds(60)), 1u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(recent));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(malformed));
}

}  // namespace
}  // namespace ktune

// CodeCache: layout, temporary names, commit by rename, lookups.
#include "ktune/backend/code_cache.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "support/temp_dir.h"

namespace ktune {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CodeCache, PathLayoutIsShardedByKeyPrefix) {
  CodeCache cache("/some/dir");
  EXPECT_EQ(cache.path_for("abcdef", "so"), std::filesystem::path("/some/dir/code/ab/abcdef.so"));
  EXPECT_EQ(cache.dir(), std::filesystem::path("/some/dir"));
}

TEST(CodeCache, CommitMakesTheEntryFindable) {
  test::TempDir dir;
  CodeCache cache(dir.path() / "nested" / "cache");  // folders are created on demand
  EXPECT_FALSE(cache.find("0123abcd", "so").has_value());

  auto tmp = cache.temp_path_for("0123abcd", "so");
  ASSERT_TRUE(tmp.has_value()) << tmp.error().message;
  EXPECT_EQ(tmp->parent_path(), cache.path_for("0123abcd", "so").parent_path());
  std::ofstream(*tmp) << "payload";
  EXPECT_FALSE(cache.find("0123abcd", "so").has_value());  // not visible before commit

  auto final_path = cache.commit(*tmp, "0123abcd", "so");
  ASSERT_TRUE(final_path.has_value()) << final_path.error().message;
  EXPECT_EQ(*final_path, cache.path_for("0123abcd", "so"));
  EXPECT_FALSE(std::filesystem::exists(*tmp));
  auto found = cache.find("0123abcd", "so");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(slurp(*found), "payload");
  EXPECT_FALSE(cache.find("0123abcd", "cpp").has_value());  // the extension is part of the name
}

TEST(CodeCache, TempPathsAreUnique) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  auto a = cache.temp_path_for("ffee", "so");
  auto b = cache.temp_path_for("ffee", "so");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(a->filename().string().ends_with(".so"));
}

TEST(CodeCache, CommitOverwritesAnEqualEntry) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  for (int i = 0; i < 2; ++i) {
    auto tmp = cache.temp_path_for("aa11", "cpp");
    ASSERT_TRUE(tmp.has_value());
    std::ofstream(*tmp) << "same";
    ASSERT_TRUE(cache.commit(*tmp, "aa11", "cpp").has_value());
  }
  EXPECT_EQ(slurp(cache.path_for("aa11", "cpp")), "same");
}

TEST(CodeCache, CommitOfAMissingFileIsAnIoError) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  auto r = cache.commit(dir.path() / "does-not-exist", "bb22", "so");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_NE(r.error().message.find("does-not-exist"), std::string::npos) << r.error().message;
  EXPECT_FALSE(cache.find("bb22", "so").has_value());
}

}  // namespace
}  // namespace ktune

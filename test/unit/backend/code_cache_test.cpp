// CodeCache: layout, temporary names, commit by rename, lookups, and the digest check that keeps
// a file swapped in after compiling from being served or loaded.
#include "ktune/backend/code_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include "backend/artifact_digest.h"
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

// Commits "payload" under key/ext and returns the final path.
std::filesystem::path committed(const CodeCache& cache, std::string_view key, std::string_view ext,
                                const std::string& payload) {
  auto tmp = cache.temp_path_for(key, ext);
  EXPECT_TRUE(tmp.has_value());
  std::ofstream(*tmp) << payload;
  auto final_path = cache.commit(*tmp, key, ext);
  EXPECT_TRUE(final_path.has_value()) << final_path.error().message;
  return *final_path;
}

TEST(CodeCache, CommitRecordsTheSha256OfTheBytes) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  const auto p = committed(cache, "cc33", "so", "abc");
  // The FIPS 180-2 test vector of "abc".
  EXPECT_EQ(slurp(digest_path(p)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto bytes = read_verified_artifact(p);
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message;
  EXPECT_EQ(*bytes, "abc");
}

TEST(CodeCache, SwappedFileIsAMissAndIsNeverReadAsVerified) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  const auto p = committed(cache, "dd44", "so", "compiled");
  std::ofstream(p, std::ios::trunc) << "swapped";
  EXPECT_FALSE(cache.find("dd44", "so").has_value());
  auto bytes = read_verified_artifact(p);
  ASSERT_FALSE(bytes.has_value());
  EXPECT_NE(bytes.error().message.find("does not match the SHA-256"), std::string::npos)
      << bytes.error().message;
  // Compiled again: served again.
  committed(cache, "dd44", "so", "compiled");
  EXPECT_TRUE(cache.find("dd44", "so").has_value());
}

TEST(CodeCache, FileWithoutADigestRecordOrWritableByOthersIsRefused) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  const auto planted = cache.path_for("ee55", "so");
  std::filesystem::create_directories(planted.parent_path());
  std::ofstream(planted) << "planted";
  EXPECT_FALSE(cache.find("ee55", "so").has_value());
  EXPECT_NE(read_verified_artifact(planted).error().message.find("no digest recorded"),
            std::string::npos);

  const auto p = committed(cache, "ff66", "so", "compiled");
  ASSERT_EQ(::chmod(p.c_str(), 0666), 0);
  auto bytes = read_verified_artifact(p);
  ASSERT_FALSE(bytes.has_value());
  EXPECT_NE(bytes.error().message.find("writable by others"), std::string::npos);
  // A link in place of the file is not followed.
  ASSERT_EQ(::chmod(p.c_str(), 0644), 0);
  std::filesystem::rename(p, dir.path() / "elsewhere.so");
  std::filesystem::create_symlink(dir.path() / "elsewhere.so", p);
  EXPECT_FALSE(read_verified_artifact(p).has_value());
}

TEST(CodeCache, TemporariesAreCreatedPrivateAndSweptWhenStale) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  auto tmp = cache.temp_path_for("aa77", "cpp");
  ASSERT_TRUE(tmp.has_value());
  struct stat st {};
  ASSERT_EQ(::stat(tmp->c_str(), &st), 0);  // reserved by creating it
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(tmp->parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // This process is alive: its temporary stays, however old.
  std::filesystem::last_write_time(
      *tmp, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(cache.sweep_temporaries(std::chrono::seconds(60)), 0u);
  EXPECT_TRUE(std::filesystem::exists(*tmp));
}

// entries() lists what CodeCache named: each key's artifacts and digest records, grouped; never a
// temporary, a foreign file, a link (to a file or a folder) or a file in a wrong shard. remove()
// takes only those files.
TEST(CodeCache, EntriesAreOnlyTheFilesItNamesAndRemoveTakesThem) {
  test::TempDir dir;
  CodeCache cache(dir.path());
  const std::string a = "aa0123456789abcdef0123456789abcd";
  const std::string b = "bb0123456789abcdef0123456789abcd";
  for (const auto& [key, ext] : {std::pair{a, "so"}, std::pair{a, "cpp"}, std::pair{b, "cubin"}}) {
    auto tmp = cache.temp_path_for(key, ext);
    ASSERT_TRUE(tmp.has_value()) << tmp.error().message;
    std::ofstream(*tmp) << "bytes of " << key << ext;
    ASSERT_TRUE(cache.commit(*tmp, key, ext).has_value());
  }
  const std::filesystem::path shard = dir.path() / "code" / "aa";
  // Not the cache's: a temporary being written, other names, a link, a file in the wrong shard,
  // and a link to a folder full of what would look like artifacts.
  auto writing = cache.temp_path_for(a, "so");
  ASSERT_TRUE(writing.has_value());
  std::ofstream(shard / "notes.txt") << "mine";
  std::ofstream(shard / (a + ".exe")) << "mine";
  std::ofstream(dir.path() / "outside.so") << "outside";
  std::filesystem::create_symlink(dir.path() / "outside.so",
                                  shard / "aa999999999999999999999999999999.so");
  std::ofstream(shard / "cc0123456789abcdef0123456789abcd.so") << "wrong shard";
  std::filesystem::create_directories(dir.path() / "elsewhere");
  std::ofstream(dir.path() / "elsewhere" / ("dd" + a.substr(2) + ".so")) << "elsewhere";
  std::filesystem::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "code" / "dd");

  const std::vector<CodeCacheEntry> entries = cache.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, a);
  EXPECT_EQ(entries[0].files.size(), 4u);  // .cpp, .so and their .sha256
  EXPECT_EQ(entries[1].key, b);
  EXPECT_EQ(entries[1].files.size(), 2u);
  EXPECT_GT(entries[0].bytes, 0u);
  EXPECT_GT(entries[0].last_used_unix, 0);

  auto freed = cache.remove(entries[0]);
  ASSERT_TRUE(freed.has_value()) << freed.error().message;
  EXPECT_EQ(*freed, entries[0].bytes);
  EXPECT_FALSE(cache.find(a, "so").has_value());
  EXPECT_TRUE(cache.find(b, "cubin").has_value());
  // Everything that was not the cache's is still there.
  for (const std::filesystem::path& p :
       {*writing, shard / "notes.txt", shard / (a + ".exe"), dir.path() / "outside.so",
        shard / "cc0123456789abcdef0123456789abcd.so",
        dir.path() / "elsewhere" / ("dd" + a.substr(2) + ".so")}) {
    EXPECT_TRUE(std::filesystem::exists(p)) << p;
  }
  EXPECT_TRUE(std::filesystem::is_symlink(shard / "aa999999999999999999999999999999.so"));
  ASSERT_EQ(cache.entries().size(), 1u);
  // Removing it again frees nothing and is not an error.
  auto again = cache.remove(entries[0]);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, 0u);
}

TEST(CodeCache, EntriesOfAMissingFolderAreNone) {
  test::TempDir dir;
  EXPECT_TRUE(CodeCache(dir.path() / "absent").entries().empty());
}

}  // namespace
}  // namespace ktune

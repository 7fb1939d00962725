// parse_cache_url: the URLs of `ktune --cache` and $KTUNE_CACHE_URL.
#include "ktune/cache/cache_url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ktune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CacheUrl, ParsesHostPortAndDatabase) {
  auto u = parse_cache_url("redis://cache.example.org:6380/3");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->host, "cache.example.org");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->db, 3);
  EXPECT_TRUE(u->password.empty());
  EXPECT_EQ(u->display(), "redis://cache.example.org:6380/3");
  EXPECT_EQ(u->host_port(), "cache.example.org:6380");
}

TEST(CacheUrl, PortAndDatabaseHaveDefaults) {
  for (const char* text : {"redis://h", "redis://h/", "REDIS://h:6379/0"}) {
    auto u = parse_cache_url(text);
    ASSERT_TRUE(u.has_value()) << text << ": " << u.error().message;
    EXPECT_EQ(u->port, 6379) << text;
    EXPECT_EQ(u->db, 0) << text;
  }
}

TEST(CacheUrl, CredentialsAreDecodedAndNeverShown) {
  auto u = parse_cache_url("redis://:p%40ss:word@127.0.0.1:7000/1");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->user, "");
  EXPECT_EQ(u->password, "p@ss:word");
  EXPECT_EQ(u->display(), "redis://127.0.0.1:7000/1");
  auto acl = parse_cache_url("redis://alice:pw@h:1/0");
  ASSERT_TRUE(acl.has_value());
  EXPECT_EQ(acl->user, "alice");
  EXPECT_EQ(acl->password, "pw");
  // A malformed URL's message masks the password.
  auto bad = parse_cache_url("redis://:topsecret@h:99999/0");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message, Not(HasSubstr("topsecret")));
  EXPECT_THAT(bad.error().message, HasSubstr("redis://:***@h:99999/0"));
}

TEST(CacheUrl, Ipv6HostInBrackets) {
  auto u = parse_cache_url("redis://[::1]:6390/2");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 6390);
  EXPECT_EQ(u->host_port(), "[::1]:6390");
}

TEST(CacheUrl, MalformedUrlsSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://", "no host"},
      {"redis:///0", "no host"},
      {"redis://:6379/0", "no host"},
      {"redis://h:/0", "port '' is not a number in 1-65535"},
      {"redis://h:abc/0", "port 'abc' is not a number in 1-65535"},
      {"redis://h:99999/0", "port '99999' is not a number in 1-65535"},
      {"redis://h:0/0", "port '0' is not a number in 1-65535"},
      {"redis://h:-1/0", "port '-1'"},
      {"redis://h:6379/x", "database 'x' is not a non-negative number"},
      {"redis://h:6379/-1", "database '-1'"},
      {"redis://h:6379/0/1", "database '0/1'"},
      {"redis://h:6379/0?timeout=1", "no query or fragment"},
      {"foo://h:1/0", "unsupported scheme 'foo'; expected redis://HOST:PORT/DB"},
      {"rediss://h:1/0", "unsupported scheme 'rediss'"},
      {"h:6379", "no scheme"},
      {"", "no scheme"},
      {"redis://user@h/0", "credentials must be"},
      {"redis://:@h/0", "empty password"},
      {"redis://:%zz@h/0", "%-escape"},
      {"redis://h h/0", "is not a host name"},
      {"redis://[::1/0", "unclosed '['"},
  };
  for (const auto& [text, why] : cases) {
    auto u = parse_cache_url(text);
    ASSERT_FALSE(u.has_value()) << "'" << text << "' parsed";
    EXPECT_EQ(u.error().code, ErrorCode::kInvalidArgument) << text;
    EXPECT_THAT(u.error().message, HasSubstr(why)) << text;
    EXPECT_THAT(u.error().message, HasSubstr("cache URL '")) << text;
  }
}

}  // namespace
}  // namespace ktune

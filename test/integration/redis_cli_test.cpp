// `ktune --cache redis://...` through the real CLI: a malformed URL is a usage error before any
// work; an unreachable Redis costs one warning and the tuning goes on in the local SQLite cache;
// with a real redis-server, a tuning stored there answers a run with an empty cache folder (as
// another machine would), and --cache wins over $KTUNE_CACHE_URL.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "support/cli_run.h"
#include "support/redis_server.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Sets an environment variable for one scope (the CLI runs as a child and inherits it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

int lines_with(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(what) != std::string::npos ? 1 : 0;
  return n;
}

std::vector<std::string> tune_small() {
  return {"tune", data_path("cli/mm.yaml"), "--problem", "small", "--budget-ms", "2"};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(RedisCli, AMalformedCacheUrlIsAUsageErrorBeforeAnyWork) {
  ScratchDir cache("redis-bad-url");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://", "no host"},
      {"redis://h:99999/0", "port '99999' is not a number in 1-65535"},
      {"redis://h:x/0", "port 'x'"},
      {"foo://h:1/0", "unsupported scheme 'foo'"},
      {"redis://127.0.0.1:6379/db", "database 'db' is not a non-negative number"},
      {"127.0.0.1:6379", "no scheme"}};
  for (const auto& [url, why] : cases) {
    CliResult r = run_cli(cache.path(), {"--cache", url, "tune", data_path("cli/mm.yaml")});
    EXPECT_EQ(r.exit_code, 2) << url << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr("cache URL '")) << url;
    EXPECT_THAT(r.output, HasSubstr(why)) << url << "\n" << r.output;
  }
  // After the subcommand too (the global options fall through), and from the environment.
  CliResult after = run_cli(cache.path(), {"cache", "list", "--cache", "redis://h:0/0"});
  EXPECT_EQ(after.exit_code, 2) << after.output;
  {
    ScopedEnv env("KTUNE_CACHE_URL", "redis://h:70000/0");
    CliResult r = run_cli(cache.path(), {"cache", "list"});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("port '70000'"));
  }
  // Nothing was compiled or stored.
  EXPECT_EQ(count_artifacts(cache.path()), 0);
  EXPECT_FALSE(std::filesystem::exists(cache.path() / "tuning.sqlite3"));
}

#if KTUNE_HAVE_REDIS

// Nothing listens on the port: ktune says so once and tunes into the local SQLite cache.
TEST(RedisCli, AnUnreachableRedisFallsBackToTheLocalCacheWithOneWarning) {
  ScratchDir cache("redis-fallback");
  const int port = free_loopback_port();
  const std::string url = "redis://127.0.0.1:" + std::to_string(port) + "/0";
  std::vector<std::string> args = {"--cache", url};
  for (const std::string& a : tune_small()) args.push_back(a);
  CliResult r = run_cli(cache.path(), args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_with(r.output, "unreachable"), 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("ktune: warning: Redis at 127.0.0.1:" + std::to_string(port) +
                                  " unreachable (connect: Connection refused); using the local "
                                  "SQLite cache in " +
                                  cache.path().string() + "\n"));
  EXPECT_THAT(r.output, HasSubstr("AUTOTUNE mm(small)"));
  // The record is in the local SQLite cache.
  CliResult local = run_cli(cache.path(), {"cache", "list"});
  ASSERT_EQ(local.exit_code, 0) << local.output;
  EXPECT_EQ(lines_with(local.output, " mm "), 1) << local.output;

  // Reading the cache costs no more than the refusal.
  const auto t0 = std::chrono::steady_clock::now();
  CliResult list = run_cli(cache.path(), {"--cache", url, "cache", "list"});
  EXPECT_LT(seconds_since(t0), 5.0);
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(lines_with(list.output, "unreachable"), 1) << list.output;
  EXPECT_EQ(lines_with(list.output, " mm "), 1) << list.output;
}

// Something accepts the connection but never answers: one command timeout (2 s), then the
// local cache; never a hang.
TEST(RedisCli, ASilentRedisCostsOneTimeoutThenTheLocalCache) {
  ScratchDir cache("redis-silent");
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string url = "redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/0";
  const auto t0 = std::chrono::steady_clock::now();
  CliResult r = run_cli(cache.path(), {"--cache", url, "cache", "list"});
  const double took = seconds_since(t0);
  ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(lines_with(r.output, "unreachable (PING: no reply within 2000 ms)"), 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no tuning records in " + cache.path().string()));
  EXPECT_LT(took, 6.0);
}

// Two machines sharing one Redis: the second, with an empty cache folder, is answered from
// Redis without compiling; $KTUNE_CACHE_URL works as --cache does, and --cache wins over it.
TEST(RedisCli, ATuningStoredInRedisAnswersAnotherCacheFolder) {
  RedisServer& server = shared_redis_server();
  require_redis(server);
  if (!server.started()) return;
  ScratchDir first("redis-first");
  std::vector<std::string> args = {"--cache", server.url(3)};
  for (const std::string& a : tune_small()) args.push_back(a);
  CliResult tuned = run_cli(first.path(), args);
  ASSERT_EQ(tuned.exit_code, 0) << tuned.output;
  EXPECT_THAT(tuned.output, Not(HasSubstr("warning")));
  EXPECT_THAT(tuned.output, HasSubstr("cache: " + server.url(3)));
  // Stored in Redis, not in the local file.
  CliResult local = run_cli(first.path(), {"cache", "list"});
  EXPECT_THAT(local.output, HasSubstr("no tuning records in " + first.path().string()));

  ScratchDir second("redis-second");
  {
    // A bad --cache would fail; an unreachable $KTUNE_CACHE_URL is ignored when --cache is given.
    ScopedEnv env("KTUNE_CACHE_URL",
                  "redis://127.0.0.1:" + std::to_string(free_loopback_port()) + "/3");
    CliResult hit = run_cli(second.path(), args);
    ASSERT_EQ(hit.exit_code, 0) << hit.output;
    EXPECT_THAT(hit.output, HasSubstr("[tuning cache]"));
    EXPECT_THAT(hit.output, HasSubstr("compiled nothing, measured nothing"));
    EXPECT_THAT(hit.output, Not(HasSubstr("unreachable")));
  }
  EXPECT_EQ(count_artifacts(second.path()), 0);
  {
    ScopedEnv env("KTUNE_CACHE_URL", server.url(3));
    CliResult listed = run_cli(second.path(), {"cache", "list"});
    ASSERT_EQ(listed.exit_code, 0) << listed.output;
    EXPECT_EQ(lines_with(listed.output, " mm "), 1) << listed.output;
    // Another database of the same server holds nothing.
    CliResult other = run_cli(second.path(), {"--cache", server.url(4), "cache", "list"});
    EXPECT_THAT(other.output, HasSubstr("no tuning records in " + server.url(4)));
    CliResult cleared = run_cli(second.path(), {"cache", "clear"});
    EXPECT_THAT(cleared.output, HasSubstr("removed 1 record(s) from " + server.url(3)));
  }
}

#else

TEST(RedisCli, ABuildWithoutRedisSaysSo) {
  ScratchDir cache("redis-not-built");
  CliResult r = run_cli(cache.path(), {"--cache", "redis://127.0.0.1:6379/0", "cache", "list"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("this ktune build has no Redis support"));
  EXPECT_THAT(r.output, HasSubstr("-DKTUNE_REDIS=ON"));
}

#endif

}  // namespace
}  // namespace ktune::test

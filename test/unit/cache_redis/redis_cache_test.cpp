// The Redis store beyond the shared contract, against real redis-servers on loopback: tuners
// writing at once lose nothing, a reader never sees half a record, what others wrote into the
// server is checked before it is served, an unreachable or silent server costs at most the
// timeout, and the fallback to a local store switches once with one warning.
#include "ktune/cache_redis/redis_cache.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cache_redis/redis_conn.h"
#include "ktune/cache/cache_url.h"
#include "ktune/cache/fallback_cache.h"
#include "ktune/cache/record_json.h"
#include "support/redis_server.h"
#include "unit/cache/cache_fixtures.h"

namespace ktune {
namespace {

using ::testing::HasSubstr;
using testing_cache::same_record;
using testing_cache::sample_key;
using testing_cache::sample_record;
using Clock = std::chrono::steady_clock;

RedisUrl url_of(const std::string& text) {
  auto url = parse_cache_url(text);
  EXPECT_TRUE(url.has_value()) << url.error().message;
  return url ? *url : RedisUrl{};
}

std::unique_ptr<TuningCache> open_or_fail(const std::string& url) {
  auto cache = open_redis_cache(url_of(url));
  EXPECT_TRUE(cache.has_value()) << cache.error().message;
  return cache ? std::move(*cache) : nullptr;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class RedisCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::RedisServer& server = test::shared_redis_server();
    test::require_redis(server);
    if (!server.started()) return;
    url_ = server.url();
    cache_ = open_or_fail(url_);
    ASSERT_NE(cache_, nullptr);
    ASSERT_TRUE(cache_->clear().has_value());
    cache_->set_warning_sink([this](const std::string& w) { warnings_.push_back(w); });
  }

  // Writes `value` under `key` as another client of the server would.
  void raw_set(const std::string& key, const std::string& value) {
    auto conn = cache::RedisConn::connect(url_of(url_), {});
    ASSERT_TRUE(conn.has_value()) << conn.error().message;
    auto r = conn->command({"SET", key, value});
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }

  std::string url_;
  std::unique_ptr<TuningCache> cache_;
  std::vector<std::string> warnings_;
};

// 8 tuners, each with its own connection, store different problems at once, each as a tuning
// does it (partial rows as candidates finish, the record, then the partials cleared): every
// record is there afterwards, whole.
TEST_F(RedisCacheTest, EightConcurrentTunersOnDifferentProblemsLoseNothing) {
  constexpr int kTuners = 8;
  constexpr int kProblems = 20;
  const MeasureSettings settings{2.0, 3, 100, 1, true, 0, 15, 0.1};
  std::atomic<int> failures{0};
  std::vector<std::thread> tuners;
  for (int t = 0; t < kTuners; ++t) {
    tuners.emplace_back([&, t] {
      auto mine = open_redis_cache(url_of(url_));
      if (!mine) {
        ++failures;
        return;
      }
      for (int p = 0; p < kProblems; ++p) {
        const TuningRecord r = sample_record(t * 1000 + p);
        bool ok = true;
        for (const CandidateRecord& c : r.candidates) {
          ok = ok && (*mine)->store_partial(r.key, settings, c).has_value();
        }
        ok = ok && (*mine)->store(r).has_value() && (*mine)->clear_partials(r.key).has_value();
        if (!ok) ++failures;
      }
    });
  }
  for (std::thread& t : tuners) t.join();
  ASSERT_EQ(failures.load(), 0);

  auto all = cache_->list();
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(all->size(), static_cast<std::size_t>(kTuners * kProblems));
  for (int t = 0; t < kTuners; ++t) {
    for (int p = 0; p < kProblems; ++p) {
      const TuningRecord expected = sample_record(t * 1000 + p);
      auto hit = cache_->lookup(expected.key);
      ASSERT_TRUE(hit.has_value()) << hit.error().message;
      ASSERT_TRUE(hit->has_value()) << "tuner " << t << " problem " << p << " lost";
      EXPECT_TRUE(same_record(**hit, expected));
      auto rows = cache_->partials(expected.key, settings);
      ASSERT_TRUE(rows.has_value());
      EXPECT_TRUE(rows->empty());
    }
  }
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

// A record of `rows` candidates (about 150 bytes of JSON each), all failed but the winner.
TuningRecord big_record(int i, int rows, const std::string& winner) {
  TuningRecord r = sample_record(i);
  r.winner = winner;
  r.candidates[0].name = winner;
  r.candidates.resize(1);
  for (int k = 1; k < rows; ++k) {
    CandidateRecord c;
    c.choice_key = "ck-" + std::to_string(k);
    c.name = "candidate_" + std::to_string(k);
    c.outcome = Outcome::kCompileError;
    c.message = std::string(100, static_cast<char>('a' + k % 26));
    r.candidates.push_back(std::move(c));
  }
  return r;
}

// Writers replace two large records (hundreds of kilobytes, many TCP segments) with one of two
// versions over and over; a reader polling lookup() and list() meanwhile only ever gets one
// version or the other whole: never a record that fails to parse or to check.
TEST_F(RedisCacheTest, AReaderPollingWhileWritersWriteNeverSeesAPartialRecord) {
  const std::vector<TuningRecord> versions[2] = {
      {big_record(1, 3000, "small_w"), big_record(1, 1500, "other_w")},
      {big_record(2, 2500, "small_w"), big_record(2, 400, "other_w")}};
  for (const auto& v : versions) ASSERT_TRUE(cache_->store(v[0]).has_value());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      auto mine = open_redis_cache(url_of(url_));
      if (!mine) {
        ++failures;
        return;
      }
      for (int n = 0; !stop.load(); ++n) {
        if (!(*mine)->store(versions[w][n % 2])) ++failures;
      }
    });
  }
  int reads = 0;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < 2.0) {
    for (const auto& v : versions) {
      auto hit = cache_->lookup(v[0].key);
      ASSERT_TRUE(hit.has_value()) << hit.error().message;
      ASSERT_TRUE(hit->has_value()) << "a record was missing or not served";
      EXPECT_TRUE(same_record(**hit, v[0]) || same_record(**hit, v[1]));
      ++reads;
    }
    auto all = cache_->list();
    ASSERT_TRUE(all.has_value()) << all.error().message;
    ASSERT_EQ(all->size(), 2u);
  }
  stop = true;
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads, 10);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

// Anyone who reaches the server can write under the layout's keys: garbage, a record of another
// key, a record with rows cut out. Each is a miss with a warning, never an error or a crash, and
// the next store replaces it.
TEST_F(RedisCacheTest, ACorruptedRecordIsAMissWithAWarning) {
  const TuningRecord r = sample_record(1);
  const std::string key = redis_record_key(r.key.digest());
  std::string cut = record_to_json_text(r);
  cut = cut.replace(cut.find("\"candidate_count\":2"), 19, "\"candidate_count\":3");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"garbage{", "not served"},
      {record_to_json_text(sample_record(2)), "holds another key"},
      {cut, "2 candidate rows"},
      {std::string(4096, '['), "not served"},
      {"", "not served"}};
  for (const auto& [value, why] : cases) {
    ASSERT_TRUE(cache_->store(r).has_value());
    warnings_.clear();
    raw_set(key, value);
    auto hit = cache_->lookup(r.key);
    ASSERT_TRUE(hit.has_value()) << hit.error().message;
    EXPECT_FALSE(hit->has_value()) << value.substr(0, 40);
    ASSERT_EQ(warnings_.size(), 1u) << value.substr(0, 40);
    EXPECT_THAT(warnings_[0], HasSubstr(why));
    EXPECT_THAT(warnings_[0], HasSubstr(url_of(url_).display()));
  }
  // Listed records that do not parse, or sit under another key's digest, are left out.
  warnings_.clear();
  auto all = cache_->list();
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_TRUE(all->empty());
  EXPECT_EQ(warnings_.size(), 1u);
  ASSERT_TRUE(cache_->store(r).has_value());
  auto hit = cache_->lookup(r.key);
  ASSERT_TRUE(hit.has_value() && hit->has_value());
  EXPECT_TRUE(same_record(**hit, r));
}

TEST_F(RedisCacheTest, ACorruptedPartialRowIsIgnoredWithAWarning) {
  const TuningRecord r = sample_record(1);
  const MeasureSettings settings{2.0, 3, 100, 1, true, 0, 15, 0.1};
  ASSERT_TRUE(cache_->store_partial(r.key, settings, r.candidates[0]).has_value());
  ASSERT_TRUE(cache_->store_partial(r.key, settings, r.candidates[1]).has_value());
  auto conn = cache::RedisConn::connect(url_of(url_), {});
  ASSERT_TRUE(conn.has_value());
  ASSERT_TRUE(conn->command(
      {"HSET", "ktune:v1:partial:" + r.key.digest(), r.candidates[0].choice_key, "{\"key\": 1}"}));
  auto rows = cache_->partials(r.key, settings);
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().choice_key, r.candidates[1].choice_key);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("partial row"));
}

TEST_F(RedisCacheTest, DatabasesOfOneServerAreApart) {
  auto other = open_or_fail(url_.substr(0, url_.rfind('/')) + "/1");
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->clear().has_value());
  ASSERT_TRUE(other->store(sample_record(1)).has_value());
  auto here = cache_->list();
  ASSERT_TRUE(here.has_value());
  EXPECT_TRUE(here->empty());
  EXPECT_EQ(other->list()->size(), 1u);
  // A database the server does not have is refused at open.
  auto missing = open_redis_cache(url_of(url_.substr(0, url_.rfind('/')) + "/4000"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(missing.error().message, HasSubstr("SELECT"));
}

// Nothing listens: refused at once.
TEST(RedisUnreachable, AClosedPortIsUnavailableAtOnce) {
  const int port = test::free_loopback_port();
  const auto t0 = Clock::now();
  auto cache = open_redis_cache(url_of("redis://127.0.0.1:" + std::to_string(port) + "/0"));
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(cache.error().message, HasSubstr("connect: Connection refused"));
  EXPECT_LT(seconds_since(t0), 1.0);
}

// Something accepts connections but never answers (a hung server): the command timeout ends the
// wait, not a hang.
TEST(RedisUnreachable, ASilentServerCostsOneCommandTimeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);  // the kernel completes the handshake; nobody reads
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  RedisCacheOptions options;
  options.command_timeout = std::chrono::milliseconds(300);
  const auto t0 = Clock::now();
  auto cache = open_redis_cache(
      url_of("redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/0"), options);
  const double took = seconds_since(t0);
  ::close(fd);
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(cache.error().message, HasSubstr("PING: no reply within 300 ms"));
  EXPECT_GE(took, 0.25);
  EXPECT_LT(took, 1.5);
}

// The server goes away while a cache is open: every operation is kUnavailable (a write to the
// closed socket raises no SIGPIPE that would end the process), and after the first failure the
// others fail at once.
TEST(RedisUnreachable, AServerGoneMidSessionIsUnavailableNotACrash) {
  test::RedisServer server;
  test::require_redis(server);
  if (!server.started()) return;
  auto cache = open_or_fail(server.url());
  ASSERT_NE(cache, nullptr);
  ASSERT_TRUE(cache->store(sample_record(1)).has_value());
  server.stop();
  const auto t0 = Clock::now();
  for (int i = 0; i < 3; ++i) {
    auto stored = cache->store(sample_record(2 + i));
    ASSERT_FALSE(stored.has_value());
    EXPECT_EQ(stored.error().code, ErrorCode::kUnavailable);
    auto found = cache->lookup(sample_key(1));
    ASSERT_FALSE(found.has_value());
    EXPECT_EQ(found.error().code, ErrorCode::kUnavailable);
  }
  EXPECT_LT(seconds_since(t0), 1.0);
}

// What the CLI builds: Redis first, a local store behind it. When the server goes, the next
// operation and all later ones go to the local store, with exactly one warning.
TEST(RedisFallback, SwitchesOnceWithOneWarningWhenTheServerGoes) {
  test::RedisServer server;
  test::require_redis(server);
  if (!server.started()) return;
  std::vector<std::string> warnings;
  auto cache = make_fallback_cache(open_redis_cache(url_of(server.url())), make_memory_cache(),
                                   "Redis at 127.0.0.1:" + std::to_string(server.port()),
                                   "the memory cache");
  cache->set_warning_sink([&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(cache->store(sample_record(1)).has_value());
  ASSERT_TRUE(cache->lookup(sample_key(1))->has_value());
  EXPECT_TRUE(warnings.empty());
  server.stop();
  ASSERT_TRUE(cache->store(sample_record(2)).has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0],
              HasSubstr("Redis at 127.0.0.1:" + std::to_string(server.port()) + " unreachable ("));
  EXPECT_THAT(warnings[0], HasSubstr("); using the memory cache"));
  auto hit = cache->lookup(sample_key(2));
  ASSERT_TRUE(hit.has_value() && hit->has_value());
  EXPECT_FALSE(cache->lookup(sample_key(1))->has_value());  // it was in Redis only
  EXPECT_EQ(cache->list()->size(), 1u);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(RedisAuth, APasswordIsSentAndAWrongOrMissingOneRefused) {
  test::RedisServer server({"--requirepass", "s3cret:/@"});
  test::require_redis(server);
  if (!server.started()) return;
  const std::string at = "127.0.0.1:" + std::to_string(server.port()) + "/0";
  auto none = open_redis_cache(url_of("redis://" + at));
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(none.error().message, HasSubstr("NOAUTH"));
  auto wrong = open_redis_cache(url_of("redis://:nope@" + at));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_THAT(wrong.error().message, HasSubstr("AUTH"));
  auto right = open_or_fail("redis://:s3cret%3A%2F%40@" + at);
  ASSERT_NE(right, nullptr);
  EXPECT_TRUE(right->store(sample_record(1)).has_value());
  auto as_default = open_or_fail("redis://default:s3cret%3A%2F%40@" + at);
  ASSERT_NE(as_default, nullptr);
  EXPECT_EQ(as_default->list()->size(), 1u);
}

}  // namespace
}  // namespace ktune

// The Redis TuningCache (ktune/cache_redis/redis_cache.h): the layout is in the header. Records
// go through the JSON codec of the export (record_json.h) and, read back, through the same
// check_record as SQLite's rows. list() and find_prefix() read the index, then every record in
// one MGET; newest first is sorted here (created_unix, then the store sequence).
#include "ktune/cache_redis/redis_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "cache/key_util.h"
#include "cache_redis/redis_conn.h"
#include "ktune/cache/record_json.h"

namespace ktune {
namespace {

using cache::RedisConn;
using cache::Reply;

constexpr std::string_view kPrefix = "ktune:v1:";

std::string key_of(std::string_view kind, std::string_view digest = {}) {
  return fmt::format("{}{}{}", kPrefix, kind, digest);
}

// Deletes every key of the layout (SCAN inside the script, so that the whole clear is one
// atomic step) and returns how many records the index held.
constexpr std::string_view kClearScript = R"(
local n = redis.call('ZCARD', KEYS[1])
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do redis.call('DEL', k) end
until cursor == '0'
return n)";

class RedisCache final : public TuningCache {
 public:
  RedisCache(RedisConn conn, std::string name) : conn_(std::move(conn)), name_(std::move(name)) {}

  Result<std::optional<TuningRecord>> lookup(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    const std::string digest = key.digest();
    auto reply = conn_.command({"GET", key_of("rec:", digest)});
    if (!reply) return std::unexpected(reply.error());
    if ((*reply)->type == REDIS_REPLY_NIL) return std::optional<TuningRecord>();
    if ((*reply)->type != REDIS_REPLY_STRING) {
      return std::unexpected(RedisConn::unexpected_reply("GET", reply->get()));
    }
    auto stored = record_from_json_text(std::string_view((*reply)->str, (*reply)->len));
    if (!stored) {
      warn(fmt::format("tuning cache {}: record {} ({}) not served: {}; tuning again", name_,
                       digest.substr(0, 12), key.op, stored.error().message));
      return std::optional<TuningRecord>();
    }
    if (!cache::same_key(stored->record.key, key)) {
      warn(
          fmt::format("tuning cache {}: record {} ({}) not served: it holds another key; "
                      "tuning again",
                      name_, digest.substr(0, 12), key.op));
      return std::optional<TuningRecord>();
    }
    if (Status s = check_record(stored->record, key, stored->stored_count); !s) {
      warn(fmt::format("tuning cache {}: record {} ({}) not served: {}; tuning again", name_,
                       digest.substr(0, 12), key.op, s.error().message));
      return std::optional<TuningRecord>();
    }
    return std::optional<TuningRecord>(std::move(stored->record));
  }

  Status store(const TuningRecord& record) override {
    std::lock_guard lock(mutex_);
    const std::string digest = record.key.digest();
    auto seq = next_seq();
    if (!seq) return std::unexpected(seq.error());
    auto done = conn_.transaction({{"SET", key_of("rec:", digest), record_to_json_text(record)},
                                   {"ZADD", key_of("index"), *seq, digest}});
    if (!done) return std::unexpected(done.error());
    return {};
  }

  Result<std::vector<TuningRecord>> list() override {
    std::lock_guard lock(mutex_);
    return load([](const std::string&) { return true; });
  }

  Result<std::vector<TuningRecord>> find_prefix(std::string_view prefix) override {
    auto normalized = cache::normalize_digest_prefix(prefix);
    if (!normalized) return std::unexpected(normalized.error());
    std::lock_guard lock(mutex_);
    return load([&](const std::string& digest) { return digest.starts_with(*normalized); });
  }

  Result<std::size_t> clear() override {
    std::lock_guard lock(mutex_);
    auto reply = conn_.command(
        {"EVAL", std::string(kClearScript), "1", key_of("index"), fmt::format("{}*", kPrefix)});
    if (!reply) return std::unexpected(reply.error());
    if ((*reply)->type != REDIS_REPLY_INTEGER || (*reply)->integer < 0) {
      return std::unexpected(RedisConn::unexpected_reply("EVAL", reply->get()));
    }
    return static_cast<std::size_t>((*reply)->integer);
  }

  Result<bool> remove(std::string_view digest) override {
    auto checked = cache::normalize_full_digest(digest);
    if (!checked) return std::unexpected(checked.error());
    std::lock_guard lock(mutex_);
    const std::string& d = *checked;
    // One MULTI/EXEC: the record, its place in the index and its partial rows go together.
    auto done = conn_.transaction({{"DEL", key_of("rec:", d)},
                                   {"ZREM", key_of("index"), d},
                                   {"DEL", key_of("partial:", d), key_of("partial-order:", d)}});
    if (!done) return std::unexpected(done.error());
    const redisReply* removed = (*done)->element[0];
    if (removed->type != REDIS_REPLY_INTEGER) {
      return std::unexpected(RedisConn::unexpected_reply("DEL", removed));
    }
    return removed->integer > 0;
  }

  Status store_partial(const TuningKey& key, const MeasureSettings& settings,
                       const CandidateRecord& record) override {
    std::lock_guard lock(mutex_);
    const std::string digest = key.digest();
    auto seq = next_seq();
    if (!seq) return std::unexpected(seq.error());
    auto done =
        conn_.transaction({{"HSET", key_of("partial:", digest), record.choice_key,
                            partial_to_json(PartialRow{key, settings, record})},
                           {"ZADD", key_of("partial-order:", digest), *seq, record.choice_key}});
    if (!done) return std::unexpected(done.error());
    return {};
  }

  Result<std::vector<CandidateRecord>> partials(const TuningKey& key,
                                                const MeasureSettings& settings) override {
    std::lock_guard lock(mutex_);
    const std::string digest = key.digest();
    // One snapshot of the rows and their order.
    auto got = conn_.transaction({{"HGETALL", key_of("partial:", digest)},
                                  {"ZRANGE", key_of("partial-order:", digest), "0", "-1"}});
    if (!got) return std::unexpected(got.error());
    const redisReply* rows = (*got)->element[0];
    const redisReply* order = (*got)->element[1];
    if (rows->type != REDIS_REPLY_ARRAY || rows->elements % 2 != 0 || !all_strings(rows)) {
      return std::unexpected(RedisConn::unexpected_reply("HGETALL", rows));
    }
    if (order->type != REDIS_REPLY_ARRAY || !all_strings(order)) {
      return std::unexpected(RedisConn::unexpected_reply("ZRANGE", order));
    }
    std::map<std::string, std::string> by_choice;
    for (std::size_t i = 0; i + 1 < rows->elements; i += 2) {
      by_choice.emplace(text(rows->element[i]), text(rows->element[i + 1]));
    }
    // In store order; a row that the order lacks (written by another program) comes last.
    std::vector<std::pair<std::string, std::string>> ordered;
    for (std::size_t i = 0; i < order->elements; ++i) {
      auto it = by_choice.find(text(order->element[i]));
      if (it == by_choice.end()) continue;
      ordered.emplace_back(it->first, std::move(it->second));
      by_choice.erase(it);
    }
    for (auto& [choice, json] : by_choice) ordered.emplace_back(choice, std::move(json));

    std::vector<CandidateRecord> out;
    for (auto& [choice_key, json] : ordered) {
      auto parsed = partial_from_json(json);
      // Anyone who reaches the server can write these: a row is used only when it is whole
      // and says the same as the field it is stored under.
      if (!parsed || !cache::same_key(parsed->key, key) ||
          parsed->candidate.choice_key != choice_key) {
        warn(fmt::format("tuning cache {}: partial row of {} ({}) ignored: {}", name_,
                         digest.substr(0, 12), choice_key,
                         parsed ? "its key is not the one asked for" : parsed.error().message));
        continue;
      }
      if (parsed->settings != settings) continue;  // measured otherwise: measured again
      out.push_back(std::move(parsed->candidate));
    }
    return out;
  }

  Status clear_partials(const TuningKey& key) override {
    std::lock_guard lock(mutex_);
    const std::string digest = key.digest();
    auto done =
        conn_.command({"DEL", key_of("partial:", digest), key_of("partial-order:", digest)});
    if (!done) return std::unexpected(done.error());
    return {};
  }

 private:
  static std::string text(const redisReply* r) { return std::string(r->str, r->len); }
  static bool all_strings(const redisReply* array) {
    for (std::size_t i = 0; i < array->elements; ++i) {
      if (array->element[i]->type != REDIS_REPLY_STRING) return false;
    }
    return true;
  }

  Result<std::string> next_seq() {
    auto reply = conn_.command({"INCR", key_of("seq")});
    if (!reply) return std::unexpected(reply.error());
    if ((*reply)->type != REDIS_REPLY_INTEGER) {
      return std::unexpected(RedisConn::unexpected_reply("INCR", reply->get()));
    }
    return std::to_string((*reply)->integer);
  }

  // The records of the index whose digest `keep` accepts, newest first. A record that does not
  // parse or is stored under another key's digest is left out with a warning; one removed since
  // the index was read is left out silently.
  template <class Pred>
  Result<std::vector<TuningRecord>> load(Pred keep) {
    auto index = conn_.command({"ZRANGE", key_of("index"), "0", "-1"});
    if (!index) return std::unexpected(index.error());
    if ((*index)->type != REDIS_REPLY_ARRAY || !all_strings(index->get())) {
      return std::unexpected(RedisConn::unexpected_reply("ZRANGE", index->get()));
    }
    std::vector<std::string> digests;  // oldest stored first
    for (std::size_t i = 0; i < (*index)->elements; ++i) {
      std::string d = text((*index)->element[i]);
      if (keep(d)) digests.push_back(std::move(d));
    }
    std::vector<TuningRecord> out;
    if (digests.empty()) return out;
    std::vector<std::string> mget = {"MGET"};
    for (const std::string& d : digests) mget.push_back(key_of("rec:", d));
    auto values = conn_.command(mget);
    if (!values) return std::unexpected(values.error());
    if ((*values)->type != REDIS_REPLY_ARRAY || (*values)->elements != digests.size()) {
      return std::unexpected(RedisConn::unexpected_reply("MGET", values->get()));
    }
    for (std::size_t i = digests.size(); i-- > 0;) {  // newest stored first
      const redisReply* v = (*values)->element[i];
      if (v->type == REDIS_REPLY_NIL) continue;
      auto stored = v->type == REDIS_REPLY_STRING
                        ? record_from_json_text(std::string_view(v->str, v->len))
                        : Result<StoredRecord>(make_error(ErrorCode::kParse, "not a string"));
      if (stored && stored->record.key.digest() != digests[i]) {
        stored = make_error(ErrorCode::kParse, "it holds another key");
      }
      if (!stored) {
        warn(fmt::format("tuning cache {}: record {} not listed: {}", name_,
                         digests[i].substr(0, 12), stored.error().message));
        continue;
      }
      out.push_back(std::move(stored->record));
    }
    std::stable_sort(out.begin(), out.end(), [](const TuningRecord& a, const TuningRecord& b) {
      return a.created_unix > b.created_unix;
    });
    return out;
  }

  std::mutex mutex_;  // one connection: its exchanges must not interleave across threads
  RedisConn conn_;
  std::string name_;  // redis://HOST:PORT/DB, for messages
};

}  // namespace

std::string redis_record_key(std::string_view digest) { return key_of("rec:", digest); }

Result<std::unique_ptr<TuningCache>> open_redis_cache(const RedisUrl& url,
                                                      const RedisCacheOptions& options) {
  auto conn = RedisConn::connect(url, {options.connect_timeout, options.command_timeout});
  if (!conn) return std::unexpected(conn.error());
  return std::unique_ptr<TuningCache>(
      std::make_unique<RedisCache>(std::move(*conn), url.display()));
}

}  // namespace ktune

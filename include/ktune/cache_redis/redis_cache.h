// A TuningCache shared by every machine and process that reaches one Redis server, through
// hiredis. Its own module (ktune::cache_redis), built when hiredis is found (KTUNE_REDIS).
//
// Layout, every key under "ktune:v1:" (v1: this layout; a later one uses another prefix):
//   ktune:v1:rec:<digest>            a record: one string, the JSON of record_json.h, written
//                                    with one SET (a reader gets the whole record or none)
//   ktune:v1:index                   sorted set: member <digest>, score its store sequence
//   ktune:v1:seq                     the store sequence (INCR)
//   ktune:v1:partial:<digest>        hash: field choice key, value partial_to_json
//   ktune:v1:partial-order:<digest>  sorted set: member choice key, score its store sequence
// A record and its index entry, or a partial row and its order, are written in one MULTI/EXEC.
// Nothing read back is trusted: a record must parse, be stored under its own key's digest and
// pass check_record before it is served; anything else is a miss with a warning.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "ktune/cache/cache_url.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

struct RedisCacheOptions {
  std::chrono::milliseconds connect_timeout{1000};
  // The longest a command waits for its reply; a server that stops answering costs this once.
  std::chrono::milliseconds command_timeout{2000};
};

// Connects to the server and database of `url` (AUTH when it has a password, SELECT, PING).
// kUnavailable with why ("connect: Connection refused", "no reply within 2000 ms") when it
// cannot; every later operation that fails on the server or the connection is kUnavailable
// too, and the connection is not retried (make_fallback_cache switches to the local store).
// One connection per cache, its operations serialised: open one cache per process or thread
// that should write in parallel.
[[nodiscard]] Result<std::unique_ptr<TuningCache>> open_redis_cache(
    const RedisUrl& url, const RedisCacheOptions& options = {});

// The key of the record with this digest (tests, tools).
[[nodiscard]] std::string redis_record_key(std::string_view digest);

}  // namespace ktune

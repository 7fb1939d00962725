// Where a shared tuning cache lives: the URL of `ktune --cache` and $KTUNE_CACHE_URL. Only
// Redis for now: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (port 6379 and database 0 when left
// out; an IPv6 host in brackets; %XX escapes in the user and password). Parsing needs no Redis
// client, so that a build without one still tells a malformed URL from a missing feature.
#pragma once

#include <string>
#include <string_view>

#include "ktune/core/status.h"

namespace ktune {

struct RedisUrl {
  std::string host;  // without the brackets of an IPv6 address
  int port = 6379;
  int db = 0;
  std::string user;      // an ACL user (AUTH USER PASSWORD); empty: the default user
  std::string password;  // empty: no AUTH
  // HOST:PORT ([HOST]:PORT for IPv6), what messages name.
  [[nodiscard]] std::string host_port() const;
  // redis://HOST:PORT/DB, never with the credentials.
  [[nodiscard]] std::string display() const;
};

// kInvalidArgument naming the URL (its password masked) and what is wrong with it: no scheme or
// one other than redis, no host, a port that is not a number in 1-65535, a database that is not
// a non-negative number, a query or fragment, a malformed %-escape.
[[nodiscard]] Result<RedisUrl> parse_cache_url(std::string_view url);

}  // namespace ktune

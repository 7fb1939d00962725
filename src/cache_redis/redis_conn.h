// RedisConn: one hiredis connection with short timeouts, its replies owned, its failures as
// Errors. Internal to cache_redis (and its tests).
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/cache/cache_url.h"
#include "ktune/core/status.h"

namespace ktune::cache {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

struct RedisConnOptions {
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds command_timeout{2000};
};

class RedisConn {
 public:
  // Connects, then AUTH (when the URL has a password), SELECT and PING. kUnavailable with why
  // ("connect: Connection refused", "AUTH: WRONGPASS ...") when any of these fails.
  [[nodiscard]] static Result<RedisConn> connect(const RedisUrl& url,
                                                 const RedisConnOptions& options);

  // One command. kUnavailable, naming the command, when the connection fails (lost, no reply
  // within the command timeout) or the server answers with an error; after a connection
  // failure every later call fails at once with the same reason (no reconnection).
  [[nodiscard]] Result<Reply> command(const std::vector<std::string>& args);
  // MULTI, the commands, EXEC, sent at once: the server runs them as one, and no other client's
  // command runs between them. The EXEC reply (one element per command), checked to hold no
  // error; kUnavailable as command().
  [[nodiscard]] Result<Reply> transaction(const std::vector<std::vector<std::string>>& commands);

  // An unexpected reply of `what`, as the kUnavailable error a caller returns.
  [[nodiscard]] static Error unexpected_reply(std::string_view what, const redisReply* r);

 private:
  struct ContextFree {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  explicit RedisConn(redisContext* c) : ctx_(c) {}
  Error connection_error(std::string_view what);
  Status send(const std::vector<std::string>& args);
  Result<Reply> receive(std::string_view what);

  std::unique_ptr<redisContext, ContextFree> ctx_;
  std::chrono::milliseconds command_timeout_{0};
  std::string broken_;  // why the connection failed; empty while it works
};

}  // namespace ktune::cache

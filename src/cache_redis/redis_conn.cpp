// RedisConn (redis_conn.h) over hiredis 0.14's blocking API: redisConnectWithTimeout, then
// redisSetTimeout so that a server that stops answering costs one command timeout, not a hang.
// hiredis writes to its socket with write(): a server gone away would raise SIGPIPE, so every
// exchange runs with SIGPIPE blocked in the calling thread (core/sigpipe_block.h).
#include "cache_redis/redis_conn.h"

#include <fmt/format.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/sigpipe_block.h"

namespace ktune::cache {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

const char* type_name(int type) {
  switch (type) {
    case REDIS_REPLY_STRING:
      return "string";
    case REDIS_REPLY_ARRAY:
      return "array";
    case REDIS_REPLY_INTEGER:
      return "integer";
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STATUS:
      return "status";
    case REDIS_REPLY_ERROR:
      return "error";
    default:
      return "unknown";
  }
}

// At most this much of a server's text goes into a message.
std::string clip(const char* s, std::size_t n) {
  constexpr std::size_t kMax = 200;
  return n <= kMax ? std::string(s, n) : std::string(s, kMax) + "...";
}

}  // namespace

Error RedisConn::unexpected_reply(std::string_view what, const redisReply* r) {
  if (r != nullptr && r->type == REDIS_REPLY_ERROR) {
    return Error{ErrorCode::kUnavailable, fmt::format("{}: {}", what, clip(r->str, r->len))};
  }
  return Error{ErrorCode::kUnavailable,
               fmt::format("{}: unexpected {} reply", what, r ? type_name(r->type) : "no")};
}

Error RedisConn::connection_error(std::string_view what) {
  std::string why = ctx_ && ctx_->errstr[0] != '\0' ? ctx_->errstr : "connection failed";
  // A read past redisSetTimeout's limit fails with EAGAIN's text.
  if (ctx_ && ctx_->err == REDIS_ERR_IO && why == std::strerror(EAGAIN)) {
    why = fmt::format("no reply within {} ms", command_timeout_.count());
  }
  broken_ = fmt::format("{}: {}", what, why);
  return Error{ErrorCode::kUnavailable, broken_};
}

Result<RedisConn> RedisConn::connect(const RedisUrl& url, const RedisConnOptions& options) {
  SigpipeBlock block;
  redisContext* raw =
      redisConnectWithTimeout(url.host.c_str(), url.port, to_timeval(options.connect_timeout));
  if (raw == nullptr) return make_error(ErrorCode::kUnavailable, "connect: out of memory");
  RedisConn conn(raw);
  conn.command_timeout_ = options.command_timeout;
  if (raw->err != 0) {
    std::string why = raw->errstr;
    if (why == std::strerror(EAGAIN) || why == std::strerror(EINPROGRESS)) {
      why = fmt::format("no connection within {} ms", options.connect_timeout.count());
    }
    return make_error(ErrorCode::kUnavailable, fmt::format("connect: {}", why));
  }
  if (redisSetTimeout(raw, to_timeval(options.command_timeout)) != REDIS_OK) {
    return std::unexpected(conn.connection_error("set timeout"));
  }
  if (!url.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!url.user.empty()) auth.push_back(url.user);
    auth.push_back(url.password);
    if (auto r = conn.command(auth); !r) return std::unexpected(r.error());
  }
  if (url.db != 0) {
    if (auto r = conn.command({"SELECT", std::to_string(url.db)}); !r) {
      return std::unexpected(r.error());
    }
  }
  auto pong = conn.command({"PING"});
  if (!pong) return std::unexpected(pong.error());
  if ((*pong)->type != REDIS_REPLY_STATUS)
    return std::unexpected(unexpected_reply("PING", pong->get()));
  return conn;
}

Status RedisConn::send(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data()) !=
      REDIS_OK) {
    return std::unexpected(connection_error(args.front()));
  }
  return {};
}

Result<Reply> RedisConn::receive(std::string_view what) {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) {
    return std::unexpected(connection_error(what));
  }
  return Reply(static_cast<redisReply*>(raw));
}

Result<Reply> RedisConn::command(const std::vector<std::string>& args) {
  if (!broken_.empty()) return make_error(ErrorCode::kUnavailable, broken_);
  SigpipeBlock block;
  if (auto s = send(args); !s) {
    block.consume();
    return std::unexpected(s.error());
  }
  auto reply = receive(args.front());
  if (!reply) {
    block.consume();
    return reply;
  }
  if ((*reply)->type == REDIS_REPLY_ERROR) {
    return std::unexpected(unexpected_reply(args.front(), reply->get()));
  }
  return reply;
}

Result<Reply> RedisConn::transaction(const std::vector<std::vector<std::string>>& commands) {
  if (!broken_.empty()) return make_error(ErrorCode::kUnavailable, broken_);
  SigpipeBlock block;
  // Everything is sent before any reply is read: one round trip.
  Status sent = send({"MULTI"});
  for (std::size_t i = 0; sent && i < commands.size(); ++i) sent = send(commands[i]);
  if (sent) sent = send({"EXEC"});
  if (!sent) {
    block.consume();
    return std::unexpected(sent.error());
  }
  // Every reply is read, so that the connection stays in step; the first problem is returned.
  std::optional<Error> failed;
  for (std::size_t i = 0; i <= commands.size(); ++i) {
    const std::string& what = i == 0 ? std::string("MULTI") : commands[i - 1].front();
    auto r = receive(what);
    if (!r) {
      block.consume();
      return std::unexpected(r.error());
    }
    const bool queued = (*r)->type == REDIS_REPLY_STATUS;  // OK, QUEUED
    if (!queued && !failed) failed = unexpected_reply(what, r->get());
  }
  auto exec = receive("EXEC");
  if (!exec) {
    block.consume();
    return exec;
  }
  if (failed) return std::unexpected(*failed);
  if ((*exec)->type != REDIS_REPLY_ARRAY || (*exec)->elements != commands.size()) {
    return std::unexpected(unexpected_reply("EXEC", exec->get()));
  }
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if ((*exec)->element[i]->type == REDIS_REPLY_ERROR) {
      return std::unexpected(unexpected_reply(commands[i].front(), (*exec)->element[i]));
    }
  }
  return exec;
}

}  // namespace ktune::cache

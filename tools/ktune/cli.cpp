// What the subcommands share (cli.h).
#include "cli.h"

#include <fmt/format.h>

#include <cstdio>

#include "ktune/cache/cache_url.h"
#include "ktune/cache/fallback_cache.h"
#include "ktune/tuning/tune_spec.h"
#if KTUNE_HAVE_REDIS
#include "ktune/cache_redis/redis_cache.h"
#endif

namespace ktune::cli {

bool prepare_cache_dir(const CliContext& ctx) {
  Status s = ktune::prepare_cache_dir(ctx.cache_dir, ctx.allow_shared_cache_dir,
                                      [](const std::string& why) {
                                        fmt::print(stderr,
                                                   "ktune: warning: code cache: {} (allowed by "
                                                   "--allow-shared-cache-dir)\n",
                                                   why);
                                      });
  if (!s) {
    fmt::print(stderr,
               "error: code cache: {}: others could replace the kernels ktune runs; make it "
               "yours alone (chown, chmod go-w), choose another --cache-dir, or pass "
               "--allow-shared-cache-dir\n",
               s.error().message);
    return false;
  }
  return true;
}

std::unique_ptr<TuningCache> open_sqlite_in(const CliContext& ctx) {
  if (!prepare_cache_dir(ctx)) return nullptr;
  auto opened = open_sqlite_cache(ctx.cache_dir, ctx.allow_shared_cache_dir);
  if (!opened) {
    fmt::print(stderr, "error: {}\n", opened.error().message);
    return nullptr;
  }
  return std::move(*opened);
}

std::unique_ptr<TuningCache> open_cache_in(const CliContext& ctx) {
  if (ctx.cache_url.empty()) return open_sqlite_in(ctx);
  auto url =
      parse_cache_url(ctx.cache_url);  // checked when parsed; again for a context made otherwise
  if (!url) {
    fmt::print(stderr, "error: {}\n", url.error().message);
    return nullptr;
  }
#if KTUNE_HAVE_REDIS
  // The local cache is opened first: it is where tuning goes on if Redis cannot be reached.
  auto local = open_sqlite_in(ctx);
  if (!local) return nullptr;
  auto redis = open_redis_cache(*url);
  ctx.cache_in_use = redis ? url->display() : ctx.cache_dir.string();
  return make_fallback_cache(std::move(redis), std::move(local),
                             fmt::format("Redis at {}", url->host_port()),
                             fmt::format("the local SQLite cache in {}", ctx.cache_dir.string()));
#else
  fmt::print(stderr,
             "error: {}: this ktune build has no Redis support (it was configured without "
             "hiredis); install libhiredis-dev (make deps) and rebuild with -DKTUNE_REDIS=ON\n",
             url->display());
  return nullptr;
#endif
}

std::string cache_location(const CliContext& ctx) {
  if (!ctx.cache_in_use.empty()) return ctx.cache_in_use;
  if (ctx.cache_url.empty()) return ctx.cache_dir.string();
  auto url = parse_cache_url(ctx.cache_url);
  return url ? url->display() : ctx.cache_url;
}

std::string check_cache_url(const std::string& url) {
  auto parsed = parse_cache_url(url);
  return parsed ? std::string() : parsed.error().message;
}

std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx) {
  if (!no_cache) return open_cache_in(ctx);
  // The code cache is used all the same.
  if (!prepare_cache_dir(ctx)) return nullptr;
  return make_memory_cache();
}

}  // namespace ktune::cli

// open_cache_at (ktune/tuning/open_cache.h).
#include "ktune/tuning/open_cache.h"

#include <fmt/format.h>

#include <cstdlib>

#include "ktune/cache/cache_url.h"
#include "ktune/cache/fallback_cache.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#if KTUNE_HAVE_REDIS
#include "ktune/cache_redis/redis_cache.h"
#endif

namespace ktune {

Result<OpenedCache> open_cache_at(const CacheLocation& where) {
  if (where.url.empty()) {
    auto local = open_sqlite_cache(where.dir, where.allow_shared_dir);
    if (!local) return std::unexpected(local.error());
    return OpenedCache{std::move(*local), where.dir.string()};
  }
  auto url = parse_cache_url(where.url);
  if (!url) return std::unexpected(url.error());
#if KTUNE_HAVE_REDIS
  // The local cache is opened first: it is where tuning goes on if Redis cannot be reached.
  auto local = open_sqlite_cache(where.dir, where.allow_shared_dir);
  if (!local) return std::unexpected(local.error());
  auto redis = open_redis_cache(*url);
  std::string location = redis ? url->display() : where.dir.string();
  return OpenedCache{
      make_fallback_cache(std::move(redis), std::move(*local),
                          fmt::format("Redis at {}", url->host_port()),
                          fmt::format("the local SQLite cache in {}", where.dir.string())),
      std::move(location)};
#else
  return make_error(ErrorCode::kUnavailable,
                    fmt::format("{}: this ktune build has no Redis support (it was configured "
                                "without hiredis); install libhiredis-dev (make deps) and "
                                "rebuild with -DKTUNE_REDIS=ON",
                                url->display()));
#endif
}

std::string cache_url_from_env() {
  const char* env = std::getenv("KTUNE_CACHE_URL");
  return env ? std::string(env) : std::string();
}

}  // namespace ktune

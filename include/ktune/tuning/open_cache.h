// Opening the tuning cache that a command or a Python call names: the SQLite file in a cache
// folder, or a shared Redis server (`redis://HOST:PORT/DB`) with that folder's SQLite file as the
// fallback when the server cannot be reached (make_fallback_cache: warned once). The one place
// the CLI (--cache, $KTUNE_CACHE_URL) and the Python package (cache=..., $KTUNE_CACHE_URL) open
// it from.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

struct CacheLocation {
  std::filesystem::path dir;  // the cache folder (code cache, locks, local SQLite)
  std::string url;            // empty: the SQLite file in `dir`; else a redis:// URL
  bool allow_shared_dir = false;
};

struct OpenedCache {
  std::unique_ptr<TuningCache> cache;
  // Where the records go: the URL as shown (password masked), or the folder when Redis could
  // not be opened and the local cache stands in.
  std::string location;
};

// The folder's checks are the caller's (prepare_cache_dir). Errors: a malformed URL
// (kInvalidArgument), a build without Redis support (kUnavailable, saying how to rebuild), the
// local SQLite file that cannot be opened. An unreachable Redis is not an error: the local cache
// answers, and the first failure is reported once through the cache's warning sink.
[[nodiscard]] Result<OpenedCache> open_cache_at(const CacheLocation& where);

// $KTUNE_CACHE_URL, or empty when it is unset.
[[nodiscard]] std::string cache_url_from_env();

}  // namespace ktune

// A shared tuning cache with a local one behind it: ktune goes on tuning when the shared store
// (Redis) is unreachable, and says so once.
#pragma once

#include <memory>
#include <string>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

// Serves every operation from `primary` until one fails with kUnavailable (the store cannot be
// reached, timed out or refused the command), or from the start when `primary` is an error
// (it could not be opened); then warns once, "<primary_name> unreachable (<why>); using
// <secondary_name>", and serves that operation and every later one from `secondary`, for good.
// Other errors (a malformed digest prefix) are the caller's and are returned as they are. The
// two stores' own warnings (records not served) go to this cache's warning sink.
[[nodiscard]] std::unique_ptr<TuningCache> make_fallback_cache(
    Result<std::unique_ptr<TuningCache>> primary, std::unique_ptr<TuningCache> secondary,
    std::string primary_name, std::string secondary_name);

}  // namespace ktune

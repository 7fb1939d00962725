// Helpers shared by the TuningCache implementations (SQLite and in-memory). Private.
#pragma once

#include <string>
#include <string_view>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune::cache {

// Digest prefixes must hold at least this many hex digits: shorter ones match too much to be a
// deliberate choice.
inline constexpr std::size_t kMinDigestPrefix = 4;

// The prefix in lowercase, or kInvalidArgument when it is too short or not hex.
[[nodiscard]] Result<std::string> normalize_digest_prefix(std::string_view prefix);

// A whole digest (TuningKey::digest(): 32 hex digits) in lowercase, or kInvalidArgument.
[[nodiscard]] Result<std::string> normalize_full_digest(std::string_view digest);

// All six fields equal: guards a lookup against a digest collision.
[[nodiscard]] bool same_key(const TuningKey& a, const TuningKey& b);

}  // namespace ktune::cache

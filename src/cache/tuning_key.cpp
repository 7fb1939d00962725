// TuningKey::digest and the digest-prefix rules shared by every TuningCache implementation.
#include <fmt/format.h>

#include <cctype>

#include "cache/key_util.h"
#include "core/hash.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {

std::string TuningKey::digest() const {
  // The tag versions the key layout: a change to the fields must not reuse old digests.
  Hasher hasher;
  hasher.add(std::string_view("ktune.tuning_key.v1"))
      .add(op)
      .add(problem)
      .add(candidate_set)
      .add(device)
      .add(toolchain)
      .add(version);
  return hasher.hex();
}

namespace cache {

Result<std::string> normalize_digest_prefix(std::string_view prefix) {
  std::string lower;
  lower.reserve(prefix.size());
  for (char c : prefix) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("digest prefix '{}': not hexadecimal", prefix));
    }
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (lower.size() < kMinDigestPrefix) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("digest prefix '{}': too short; expected at least {} hex "
                                  "digits, got {}",
                                  prefix, kMinDigestPrefix, lower.size()));
  }
  return lower;
}

bool same_key(const TuningKey& a, const TuningKey& b) {
  return a.op == b.op && a.problem == b.problem && a.candidate_set == b.candidate_set &&
         a.device == b.device && a.toolchain == b.toolchain && a.version == b.version;
}

}  // namespace cache
}  // namespace ktune

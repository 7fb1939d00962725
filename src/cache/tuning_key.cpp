// make_tuning_key, TuningKey::digest and the digest-prefix rules shared by every TuningCache
// implementation.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cache/key_util.h"
#include "core/hash.h"
#include "ktune/cache/tuning_cache.h"

namespace ktune {

TuningKey make_tuning_key(const KeyInputs& inputs) {
  // The layout of candidate_set is the one stored caches were written with (Selector::key_for,
  // MultiKernel's key): sorted identities, then for checked tunings the reference, the tolerance
  // when given and the seed. Changing it makes every stored record miss once.
  std::vector<std::string> sorted = inputs.candidates;
  std::sort(sorted.begin(), sorted.end());
  Hasher h;
  for (const std::string& k : sorted) h.add(k);
  if (const auto& v = inputs.verification) {
    h.add(v->reference ? "reference:" + *v->reference : std::string("no reference"));
    if (v->tolerance) {
      // rms_atol only where set: the keys of tolerances without it are what they were.
      h.add(fmt::format("tolerance {} {} {}{}", v->tolerance->rtol, v->tolerance->atol,
                        v->tolerance->max_rel_l2,
                        v->tolerance->rms_atol != 0 ? fmt::format(" rms {}", v->tolerance->rms_atol)
                                                    : std::string()));
    }
    h.add(static_cast<std::int64_t>(v->seed));
  }
  return TuningKey{inputs.op,     inputs.problem,   h.hex(),
                   inputs.device, inputs.toolchain, KTUNE_VERSION};
}

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

Result<std::string> normalize_full_digest(std::string_view digest) {
  constexpr std::size_t kDigestDigits = 32;
  auto lower = normalize_digest_prefix(digest);
  if (lower && lower->size() == kDigestDigits) return lower;
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("digest '{}': expected {} hex digits", digest, kDigestDigits));
}

bool same_key(const TuningKey& a, const TuningKey& b) {
  return a.op == b.op && a.problem == b.problem && a.candidate_set == b.candidate_set &&
         a.device == b.device && a.toolchain == b.toolchain && a.version == b.version;
}

}  // namespace cache
}  // namespace ktune

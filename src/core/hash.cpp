// Hasher: two FNV-1a lanes with different offsets, 128 bits in all.
#include "core/hash.h"

#include <fmt/format.h>

namespace ktune {

void Hasher::mix(const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    a_ = (a_ ^ p[i]) * 0x100000001b3ULL;
    b_ = (b_ ^ p[i]) * 0x100000001b3ULL;
    b_ ^= b_ >> 29;  // decorrelates the second lane from the first
  }
}

Hasher& Hasher::add(std::string_view bytes) {
  const std::uint64_t n = bytes.size();
  mix(&n, sizeof n);
  mix(bytes.data(), bytes.size());
  return *this;
}

Hasher& Hasher::add(std::int64_t value) {
  const std::uint64_t tag = 8;
  mix(&tag, sizeof tag);
  mix(&value, sizeof value);
  return *this;
}

std::string Hasher::hex() const { return fmt::format("{:016x}{:016x}", a_, b_); }

std::string hash_hex(std::string_view bytes) { return Hasher().add(bytes).hex(); }

}  // namespace ktune

// Hasher: a stable 128-bit content hash (two FNV-1a lanes) for cache keys and code-cache names.
// Not cryptographic; stable across runs, machines and ktune builds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ktune {

class Hasher {
 public:
  // Each add() is length-prefixed, so ("ab","c") and ("a","bc") differ.
  Hasher& add(std::string_view bytes);
  Hasher& add(std::int64_t value);
  // 32 lowercase hex digits.
  [[nodiscard]] std::string hex() const;

 private:
  void mix(const void* data, std::size_t n);
  std::uint64_t a_ = 0xcbf29ce484222325ULL;
  std::uint64_t b_ = 0x84222325cbf29ce4ULL;
};

[[nodiscard]] std::string hash_hex(std::string_view bytes);

}  // namespace ktune

// Cutting text that may hold UTF-8 (compiler messages name files and quote with ‘ ’): a prefix
// of at most n bytes that ends on a character boundary, so that a cut message never ends in
// half a character (a terminal shows garbage, grep calls the output binary).
//
// Internal header (src/).
#pragma once

#include <cstddef>
#include <string_view>

namespace ktune {

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence (continuation bytes 10xxxxxx are never the first byte left out). Bytes that are not
// UTF-8 are cut like single characters.
[[nodiscard]] inline std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace ktune

// Test helpers: .npy files written byte by byte (no NumPy on the test machines), well-formed or
// broken on purpose.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ktune::test {

// The header dict NumPy writes, for `descr` and `shape` ("(3, 4)", "(3,)", "()").
inline std::string npy_dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

// A whole file: magic, version `major`, the header padded with spaces to a multiple of 64 bytes
// and ended by a newline (as NumPy does), then `data`.
inline std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const auto n = static_cast<std::uint32_t>(header.size());
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

template <class T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

inline std::filesystem::path write_bytes(const std::filesystem::path& path,
                                         const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace ktune::test

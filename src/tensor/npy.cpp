// The .npy reader (npy.h): the magic, a bounded header length, the header's Python dict literal
// parsed by hand (descr, fortran_order, shape and nothing else), then the data's exact size.
#include "tensor/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

#include "core/file_util.h"
#include "core/hash.h"

namespace ktune {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// A cursor over the header's dict literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }. Any other content is an error, never guessed at.
struct HeaderParser {
  std::string_view text;
  std::size_t at = 0;

  void skip_space() {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  }
  bool eat(char c) {
    skip_space();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  std::optional<std::string> quoted() {
    skip_space();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"')) return std::nullopt;
    const char q = text[at++];
    const std::size_t end = text.find(q, at);
    if (end == std::string_view::npos) return std::nullopt;
    std::string s(text.substr(at, end - at));
    at = end + 1;
    return s;
  }
  std::optional<bool> boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string_view w = word;
      if (text.substr(at, w.size()) == w) {
        at += w.size();
        return value;
      }
    }
    return std::nullopt;
  }
  // (3, 4), (3,) or (): non-negative integers, each at most int64's largest.
  std::optional<std::vector<std::int64_t>> tuple() {
    if (!eat('(')) return std::nullopt;
    std::vector<std::int64_t> dims;
    while (!eat(')')) {
      skip_space();
      std::int64_t v = 0;
      std::size_t digits = 0;
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
        const int d = text[at++] - '0';
        if (v > (std::numeric_limits<std::int64_t>::max() - d) / 10) return std::nullopt;
        v = v * 10 + d;
        ++digits;
      }
      if (digits == 0 || dims.size() >= 64) return std::nullopt;
      dims.push_back(v);
      if (!eat(',')) {
        if (!eat(')')) return std::nullopt;
        break;
      }
    }
    return dims;
  }
};

std::size_t descr_size(std::string_view descr) {
  for (DType d : kAllDTypes) {
    if (npy_descr(d) == descr) return dtype_size(d);
  }
  return 0;
}

}  // namespace

std::string_view npy_descr(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return "<f2";
    case DType::kBF16:
      return "<u2";
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    case DType::kI8:
      return "|i1";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
  }
  return "?";
}

Result<NpyArray> parse_npy(std::string_view bytes, std::string_view what) {
  auto fail = [&](std::string_view why) {
    return make_error(ErrorCode::kParse, fmt::format("{}: not a usable .npy file: {}", what, why));
  };
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return fail("no \\x93NUMPY magic at the start");
  }
  const auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(std::uint8_t(bytes[i]));
  };
  const std::uint32_t major = byte(6);
  std::uint32_t header_len = 0;
  std::size_t header_at = 0;
  if (major == 1) {
    header_len = byte(8) | byte(9) << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated header length");
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_at = 12;
  } else {
    return fail(fmt::format("format version {}; expected 1, 2 or 3", major));
  }
  if (header_len > kMaxNpyHeaderBytes) {
    return fail(
        fmt::format("header of {} bytes; expected at most {}", header_len, kMaxNpyHeaderBytes));
  }
  if (bytes.size() - header_at < header_len) {
    return fail(fmt::format("header of {} bytes, file ends after {}", header_len,
                            bytes.size() - header_at));
  }
  HeaderParser p{bytes.substr(header_at, header_len)};
  NpyArray out;
  std::optional<bool> fortran;
  bool has_shape = false;
  if (!p.eat('{')) return fail("header is not a dict");
  while (!p.eat('}')) {
    auto key = p.quoted();
    if (!key || !p.eat(':')) return fail("header is not a dict of quoted keys");
    if (*key == "descr") {
      auto d = p.quoted();
      if (!d) return fail("descr is not a string (structured dtypes are not supported)");
      out.descr = *d;
    } else if (*key == "fortran_order") {
      fortran = p.boolean();
      if (!fortran) return fail("fortran_order is not True or False");
    } else if (*key == "shape") {
      auto shape = p.tuple();
      if (!shape) return fail("shape is not a tuple of non-negative integers");
      out.shape = std::move(*shape);
      has_shape = true;
    } else {
      return fail(fmt::format("unknown header key '{}'", *key));
    }
    if (!p.eat(',')) {
      if (!p.eat('}')) return fail("header dict is not closed");
      break;
    }
  }
  if (out.descr.empty() || !fortran || !has_shape) {
    return fail("header lacks descr, fortran_order or shape");
  }
  if (*fortran) return fail("fortran_order is True; expected a C-order array");
  const std::size_t size = descr_size(out.descr);
  if (size == 0) {
    return fail(
        fmt::format("dtype '{}'; expected one of <f2, <u2 (bf16 bits), <f4, <f8, |i1, "
                    "<i4, <i8 (little-endian)",
                    out.descr));
  }
  // The product of the dimensions, and the bytes, without overflow.
  std::uint64_t bytes_needed = size;
  for (std::int64_t d : out.shape) {
    const auto u = static_cast<std::uint64_t>(d);
    if (u != 0 && bytes_needed > kMaxNpyBytes / u) {
      return fail(fmt::format("shape ({}) is larger than {} bytes", fmt::join(out.shape, ", "),
                              kMaxNpyBytes));
    }
    bytes_needed *= u;
  }
  const std::size_t data_at = header_at + header_len;
  if (bytes.size() - data_at != bytes_needed) {
    return fail(fmt::format("{} bytes of data for shape ({}) of '{}'; expected {}",
                            bytes.size() - data_at, fmt::join(out.shape, ", "), out.descr,
                            bytes_needed));
  }
  out.data = bytes.substr(data_at);
  return out;
}

namespace {

Result<std::string> read_bounded(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    return make_error(ErrorCode::kNotFound, fmt::format("{}: cannot read the .npy file; {}",
                                                        path.string(), ec.message()));
  }
  if (size > kMaxNpyBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: {} bytes; expected a .npy file of at most {}", path.string(),
                                  size, kMaxNpyBytes));
  }
  return read_file(path);
}

}  // namespace

// The file against the buffer it fills: same dtype, same shape.
Status npy_fits(const NpyArray& a, const std::filesystem::path& path, DType dtype,
                const std::vector<std::int64_t>& shape) {
  if (a.descr != npy_descr(dtype)) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: dtype '{}'; expected '{}' for a {} argument", path.string(),
                                  a.descr, npy_descr(dtype), dtype_name(dtype)));
  }
  if (a.shape != shape) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: shape ({}); expected the argument's shape ({})",
                                  path.string(), fmt::join(a.shape, ", "), fmt::join(shape, ", ")));
  }
  return {};
}

Result<std::string> npy_digest(const std::filesystem::path& path, DType dtype,
                               const std::vector<std::int64_t>& shape) {
  auto bytes = read_bounded(path);
  if (!bytes) return std::unexpected(bytes.error());
  auto array = parse_npy(*bytes, path.string());
  if (!array) return std::unexpected(array.error());
  if (Status s = npy_fits(*array, path, dtype, shape); !s) return std::unexpected(s.error());
  return hash_hex(*bytes);
}

Status fill_from_npy(HostBuffer& buffer, const TensorSpec& spec, const DataInit& init) {
  const std::filesystem::path path = init.path;
  auto bytes = read_bounded(path);
  if (!bytes) return std::unexpected(bytes.error());
  if (hash_hex(*bytes) != init.digest) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: the .npy file changed since the problem was made (digest "
                                  "{}, expected {}); expected it unchanged while tuning",
                                  path.string(), hash_hex(*bytes), init.digest));
  }
  auto array = parse_npy(*bytes, path.string());
  if (!array) return std::unexpected(array.error());
  if (Status s = npy_fits(*array, path, spec.dtype, spec.sizes); !s) return s;
  if (buffer.bytes() < spec.storage_bytes()) {
    return make_error(ErrorCode::kInternal, "fill_from_npy: buffer smaller than the view");
  }
  // Element i of the file (C order) is element i of the view, wherever the view puts it.
  const std::size_t size = dtype_size(spec.dtype);
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    std::memcpy(buffer.data() + static_cast<std::size_t>(spec.storage_index(i)) * size,
                array->data.data() + static_cast<std::size_t>(i) * size, size);
  }
  return {};
}

}  // namespace ktune

// NumPy .npy files (format versions 1, 2 and 3): the input data of a spec's `init: {npy: ...}`.
// The file is the user's, possibly hostile: the header length, the shape's product and the file
// size are all checked before anything is sized from them, and only little-endian C-order arrays
// of ktune's dtypes are accepted (bf16, which NumPy lacks, as its raw bits: '<u2').
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/problem.h"
#include "ktune/core/status.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {

// Largest .npy file read (a header longer than kMaxNpyHeaderBytes is refused as well).
inline constexpr std::uint64_t kMaxNpyBytes = std::uint64_t{1} << 36;
inline constexpr std::uint32_t kMaxNpyHeaderBytes = 1u << 16;

struct NpyArray {
  std::string descr;                // "<f4"
  std::vector<std::int64_t> shape;  // () for a 0-d array
  std::string_view data;            // the elements, C order, in the bytes given to parse_npy
};

// Parses a whole .npy file held in `bytes`; `what` names it in errors. The data must be exactly
// the shape's product times the element size.
[[nodiscard]] Result<NpyArray> parse_npy(std::string_view bytes, std::string_view what);

// The descr that stands for `dtype`: "<f4", "<f8", "<f2", "<u2" (bf16), "|i1", "<i4", "<i8".
[[nodiscard]] std::string_view npy_descr(DType dtype);

// Whether a parsed file fits a buffer of `dtype` and `shape`: kInvalidArgument naming both dtypes
// or both shapes (and `path`) when it does not.
[[nodiscard]] Status npy_fits(const NpyArray& array, const std::filesystem::path& path, DType dtype,
                              const std::vector<std::int64_t>& shape);

// Reads `path` and checks it against a buffer of `dtype` and `shape` (errors name both dtypes or
// both shapes); returns the digest of its contents (DataInit::digest).
[[nodiscard]] Result<std::string> npy_digest(const std::filesystem::path& path, DType dtype,
                                             const std::vector<std::int64_t>& shape);

// Fills the elements `spec` addresses from init.path (InitKind::kNpy), after checking that the
// file still has init.digest and fits spec's dtype and sizes. Storage the view does not address
// is left as it was.
[[nodiscard]] Status fill_from_npy(HostBuffer& buffer, const TensorSpec& spec,
                                   const DataInit& init);

}  // namespace ktune

// TensorSpec: everything about a buffer except its data (Inductor's TensorMeta).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ktune/core/device.h"
#include "ktune/core/dtype.h"

namespace ktune {

struct TensorSpec {
  DType dtype = DType::kF32;
  Device device;
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;  // in elements
  std::int64_t offset = 0;            // in elements, from the start of storage

  // Row-major strides for `sizes`, offset 0.
  [[nodiscard]] static TensorSpec contiguous(DType dtype, std::vector<std::int64_t> sizes,
                                             Device device = {});

  [[nodiscard]] std::int64_t numel() const;
  // Elements of storage the view can touch: offset + largest reachable index + 1 (0 if empty).
  [[nodiscard]] std::int64_t storage_elements() const;
  [[nodiscard]] std::size_t storage_bytes() const;
  // Storage index (in elements) of the element at linear row-major position `linear`.
  [[nodiscard]] std::int64_t storage_index(std::int64_t linear) const;
  // A stable text key, e.g. "f32[32,4096]{4096,1}+0@cpu".
  [[nodiscard]] std::string key() const;

  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

}  // namespace ktune

// TensorSpec: sizes, strides and storage arithmetic, and its stable key.
#include "ktune/core/tensor_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ktune {

TensorSpec TensorSpec::contiguous(DType dtype, std::vector<std::int64_t> sizes, Device device) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.device = device;
  spec.strides.assign(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) {
    spec.strides[i - 1] = spec.strides[i] * std::max<std::int64_t>(sizes[i], 1);
  }
  spec.sizes = std::move(sizes);
  return spec;
}

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) n *= s;
  return n;
}

std::int64_t TensorSpec::storage_elements() const {
  if (numel() == 0) return 0;
  std::int64_t last = offset;
  for (std::size_t i = 0; i < sizes.size(); ++i) last += (sizes[i] - 1) * strides[i];
  return last + 1;
}

std::size_t TensorSpec::storage_bytes() const {
  return static_cast<std::size_t>(storage_elements()) * dtype_size(dtype);
}

std::int64_t TensorSpec::storage_index(std::int64_t linear) const {
  std::int64_t index = offset;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    const std::int64_t size = sizes[i];
    index += (linear % size) * strides[i];
    linear /= size;
  }
  return index;
}

std::string TensorSpec::key() const {
  return fmt::format("{}[{}]{{{}}}+{}@{}", dtype_name(dtype), fmt::join(sizes, ","),
                     fmt::join(strides, ","), offset, device.str());
}

}  // namespace ktune

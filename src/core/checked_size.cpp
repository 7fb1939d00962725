#include "core/checked_size.h"

namespace ktune {

std::optional<std::int64_t> checked_numel(std::span<const std::int64_t> sizes) {
  std::int64_t n = 1;
  for (std::int64_t s : sizes) {
    if (s < 0 || __builtin_mul_overflow(n, s, &n)) return std::nullopt;
  }
  return n;
}

std::optional<std::int64_t> checked_storage_bytes(const TensorSpec& spec) {
  if (spec.strides.size() != spec.sizes.size() || spec.offset < 0) return std::nullopt;
  const std::optional<std::int64_t> numel = checked_numel(spec.sizes);
  if (!numel) return std::nullopt;
  for (std::int64_t st : spec.strides) {
    if (st < 0) return std::nullopt;
  }
  if (*numel == 0) return 0;  // as storage_elements(): an empty tensor has no storage
  // The last element's index plus one, as storage_elements() computes it.
  std::int64_t last = spec.offset;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    std::int64_t step = 0;
    if (__builtin_mul_overflow(spec.sizes[i] - 1, spec.strides[i], &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return std::nullopt;
    }
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<std::int64_t>(dtype_size(spec.dtype)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace ktune

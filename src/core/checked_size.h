// Tensor sizes read from outside (spec and graph files, worker requests), checked before anything
// is built, indexed or allocated from them: TensorSpec's own arithmetic (contiguous strides,
// numel, storage_bytes) is unchecked int64, and sizes near 2^53 each multiply past it. The fuzz
// targets (fuzz/, docs/architecture.md "Fuzzing") check that no reader lets such a tensor through.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "ktune/core/tensor_spec.h"

namespace ktune {

// The product of `sizes` (1 when empty), or nullopt when a size is negative or the product
// passes int64. When it fits, so do TensorSpec::contiguous's strides for these sizes.
[[nodiscard]] std::optional<std::int64_t> checked_numel(std::span<const std::int64_t> sizes);

// spec.storage_bytes(), or nullopt when a size, stride or the offset is negative, the strides do
// not match the sizes, or a step of the computation passes int64.
[[nodiscard]] std::optional<std::int64_t> checked_storage_bytes(const TensorSpec& spec);

}  // namespace ktune

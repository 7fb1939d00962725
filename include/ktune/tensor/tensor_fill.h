// Seeded random fill of the elements a TensorSpec addresses; the same seed gives the same data.
#pragma once

#include <cstdint>

#include "ktune/core/tensor_spec.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {

// Floats: uniform in [-1, 1) (then rounded to the dtype). Integers: uniform in [-8, 8].
// Storage the view does not address is left as it was. `buffer.bytes()` must be at least
// spec.storage_bytes().
void fill_random(HostBuffer& buffer, const TensorSpec& spec, std::uint64_t seed);

}  // namespace ktune

// Seeded random fill of the elements a TensorSpec addresses; the same seed gives the same data.
#pragma once

#include <cstdint>

#include "ktune/core/problem.h"
#include "ktune/core/tensor_spec.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {

// Which data a problem is verified on. Every candidate is verified on both (when there is a
// reference): kernels that are right only for small values of one sign (an int8 or fp16
// accumulator that overflows, a clamp to [-1, 1], a stray fabs) pass on the first and fail on
// the second. A per-argument fill chosen by the user (a spec's `init:`) is meant to become a
// third kind here.
enum class DataSet {
  // Floats: uniform in [-1, 1) (then rounded to the dtype). Integers: uniform in [-8, 8].
  kUniform,
  // Another scale and sign pattern, per dtype: floats (1 + u) * 2^e with e uniform in [-6, 5]
  // (f32, f64) or [-3, 2] (f16, bf16), negative three times in four, so that magnitudes span
  // several binades up to 64 (8) and sums of products do not cancel; integers uniform over
  // [-128, 127] (i8), [-1024, 1024] (i32) or [-2^20, 2^20] (i64), negative three times in four.
  // Bounded so that the sums of a GEMM over thousands of terms stay finite in the dtype and
  // inside i32 and i64: a reference must still compute it soundly.
  kStress,
};

// "uniform", "stress": for messages.
[[nodiscard]] const char* data_set_name(DataSet set);

// The seed of argument `arg`'s stream in a problem seeded with `seed` (ProblemBuffers): each
// argument gets its own stream, so A and B differ, and the stress set's streams are others again.
[[nodiscard]] std::uint64_t argument_seed(std::uint64_t seed, std::size_t arg, DataSet set);

// True when `spec` is a dense row-major view: fill_random's element i (the i-th draw of the
// stream, in logical order) is then storage element spec.offset + i. A device that fills such a
// view itself (the CUDA worker) writes the same values from the same draws.
[[nodiscard]] bool view_is_row_major_dense(const TensorSpec& spec);

// Fills the elements `spec` addresses with `set`'s values from `seed`. Storage the view does not
// address is left as it was. `buffer.bytes()` must be at least spec.storage_bytes().
void fill_random(HostBuffer& buffer, const TensorSpec& spec, std::uint64_t seed,
                 DataSet set = DataSet::kUniform);

// With the user's init: uniform in [a, b), normal(a, b), integers in [a, b], zeros, ones, or
// arange (0, 1, 2, ... in the view's storage order). The data set only picks the seed's stream:
// the stress set of a random init is another draw from the same distribution (the kernel's
// domain is the user's, e.g. x > 0 for log(x), so ktune's stress scales would be wrong there),
// and that of zeros, ones or arange is the same data (verified twice on it).
// InitKind::kRandom is the overload above; InitKind::kNpy is not for here (tensor/npy.h).
void fill_random(HostBuffer& buffer, const TensorSpec& spec, std::uint64_t seed, DataSet set,
                 const DataInit& init);

}  // namespace ktune

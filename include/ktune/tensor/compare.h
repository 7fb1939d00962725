// Comparing a candidate's output against the reference, by dtype. NaN never passes, unless
// the output allows it (Tolerance::nan_ok) and the reference has NaN at the same element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ktune/core/outcome.h"
#include "ktune/core/problem.h"
#include "ktune/core/tensor_spec.h"
#include "ktune/core/tolerance.h"
#include "ktune/tensor/host_buffer.h"

namespace ktune {

// The tolerance an output is checked with: its own (a spec's args[i].tolerance), else
// `fallback` (the spec-level tolerance), else default_tolerance() of its dtype; with nan_ok when
// the output has it.
[[nodiscard]] Tolerance output_tolerance(const ProblemArg& arg,
                                         const std::optional<Tolerance>& fallback);

// Defaults: f64 1e-9/1e-12/1e-9, f32 1e-4/1e-5/1e-4, f16 and bf16 2e-2/1e-2/1e-2, integers exact.
[[nodiscard]] Tolerance default_tolerance(DType dtype);
// For an output whose elements are sums of `terms` products (a GEMM's K): the dtype's default
// with atol grown by terms / 64 past 64 terms, for f32 and f64. Two correct GEMMs that sum in
// different orders (split-K, other tilings) differ by round-off that grows with the square root
// of the length times the elements' magnitude, which itself grows with the square root of the
// length for inputs of unit scale (ktune's fills: uniform in [-1, 1)); and elements near zero by
// cancellation have no relative headroom. Seen on an H100, cuBLASLt's f32 algorithms against
// cuBLAS: up to 1.8e-5 at K=1024 and 1.0e-4 at K=4096, with a relative L2 error of 6e-7 to
// 1.2e-6; a wrong element is off by the elements' scale (sqrt(K)/3). Half types keep their
// default rtol and atol and add rms_atol, 8 units in the last place at the output's RMS (bf16
// 2^-5, f16 2^-8): cuBLAS and cuBLASLt may add split-K partial sums in the output's type (as
// PyTorch allows by default), so that an element near zero errs by a few units of the partial
// sums' scale. On an H200, library GEMMs on 11 of 48 random shapes (bench/gpu/shape_sweep.sh)
// were off by up to 9 units in the last place of such elements, within 0.2-0.6% of the output's
// RMS and a relative L2 error of 0.2-0.3%, and failed the per-element check.
[[nodiscard]] Tolerance reduction_tolerance(DType dtype, std::int64_t terms);

struct Comparison {
  Outcome outcome = Outcome::kOk;  // kOk, kWrongResult, kNanOutput or kUnwrittenOutput
  double rel_l2 = 0;
  std::int64_t mismatches = 0;  // elements outside tolerance (NaN and unwritten included)
  std::int64_t first_bad = -1;  // linear index of the first bad element, -1 if none
  double actual_at_first_bad = 0;
  double expected_at_first_bad = 0;
  // e.g. "312 of 4096 elements differ; first at [3,17]: 0.25 vs 0.5; rel L2 0.021 > 1e-4".
  std::string message;
};

// Compares the elements `spec` addresses. An element still holding the poison pattern makes the
// outcome kUnwrittenOutput (checked first), a NaN or Inf where the reference is finite makes it
// kNanOutput, anything else out of tolerance kWrongResult (with tolerance.nan_ok, NaN where the
// reference has NaN passes). Integer poison is a legal value, so an
// integer element equal to the reference passes even when it matches the poison pattern.
[[nodiscard]] Comparison compare(const TensorSpec& spec, const std::byte* actual,
                                 const std::byte* expected, const Tolerance& tolerance);

// Root mean square of the finite elements `spec` addresses in `storage`; 0 when none.
[[nodiscard]] double view_rms(const TensorSpec& spec, const std::byte* storage);

// True when the view addresses every element of its storage exactly once (offset 0, the strides
// a permutation of a dense layout's): no gaps, no prefix, nothing to check outside it.
[[nodiscard]] bool view_is_dense(const TensorSpec& spec);
// The first storage element (in elements, from the storage start) that the view does not
// address and that no longer holds the dtype's poison pattern; -1 when none. `storage` is the
// start of spec.storage_bytes() bytes, poisoned before the run (ProblemBuffers does so around
// every view). Costs one pass over the storage, none for a dense view.
[[nodiscard]] std::int64_t first_write_outside_view(const TensorSpec& spec,
                                                    const std::byte* storage);

}  // namespace ktune

// Tolerance: how far a candidate's output may be from the reference's (compare.h applies it). In
// core because a Problem carries an output's own tolerance (ProblemArg::tolerance).
#pragma once

namespace ktune {

// An element passes when |actual - expected| <= atol + rms_atol * rms + rtol * |expected|, rms
// being the reference output's root mean square over its finite elements, and the output passes
// when every element passes and ||actual - expected||_2 / ||expected||_2 <= max_rel_l2.
// rms_atol scales the absolute allowance with the output's magnitude: where the elements are
// sums whose terms are much larger than some results (a GEMM's K products that cancel), a
// correct kernel's round-off is a fraction of the terms' scale, not of the element's.
// nan_ok: NaN is a legal output where the reference has NaN at the same element (log(x) of a
// negative x); NaN against a number, or a number against NaN, still fails. An output with it may
// also hold infinities without a reference to compare with (check_output_alone).
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  double max_rel_l2 = 1e-4;
  double rms_atol = 0;
  bool nan_ok = false;
};

// `t` for a reference output of root mean square `rms`: rms_atol folded into atol (and 0).
[[nodiscard]] inline Tolerance scaled_to_rms(Tolerance t, double rms) {
  if (t.rms_atol > 0 && rms > 0) t.atol += t.rms_atol * rms;
  t.rms_atol = 0;
  return t;
}

}  // namespace ktune

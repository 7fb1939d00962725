// Tolerance: how far a candidate's output may be from the reference's (compare.h applies it). In
// core because a Problem carries an output's own tolerance (ProblemArg::tolerance).
#pragma once

namespace ktune {

// An element passes when |actual - expected| <= atol + rtol * |expected|, and the output passes
// when every element passes and ||actual - expected||_2 / ||expected||_2 <= max_rel_l2.
// nan_ok: NaN is a legal output where the reference has NaN at the same element (log(x) of a
// negative x); NaN against a number, or a number against NaN, still fails. An output with it may
// also hold infinities without a reference to compare with (check_output_alone).
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
  double max_rel_l2 = 1e-4;
  bool nan_ok = false;
};

}  // namespace ktune

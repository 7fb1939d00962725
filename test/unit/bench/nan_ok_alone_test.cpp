// check_output_alone with nan_ok: without a reference, NaN (and Inf) in an output is accepted
// only when the output allows it.
#include <gtest/gtest.h>

#include <limits>

#include "bench/candidate_check.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Y = X copied by a "kernel" that writes NaN and -inf too. Without a reference, they are
// accepted only when Y has nan_ok (log(x) writes both).
CheckResult run_alone(bool nan_ok) {
  Problem p{"copy", "n=4", {}};
  ProblemArg y{{"Y", ArgRole::kOut, DType::kF32}, TensorSpec::contiguous(DType::kF32, {4}), {}};
  y.nan_ok = nan_ok;
  ProblemArg x{{"X", ArgRole::kIn, DType::kF32}, TensorSpec::contiguous(DType::kF32, {4}), {}};
  x.init = DataInit{InitKind::kOnes, 0, 0};
  p.args = {y, x};
  ProblemBuffers b = ProblemBuffers::create(p, 1);
  KernelFn fn = [](void* const* args) -> Status {
    auto* out = static_cast<float*>(args[0]);
    const auto* in = static_cast<const float*>(args[1]);
    for (int i = 0; i < 4; ++i) out[i] = i == 2 ? kNan : i == 3 ? -kInf : in[i];
    return {};
  };
  return check_candidate(fn, b, nullptr);
}

TEST(NanOk, WithoutAReferenceNanIsAcceptedWhenAllowed) {
  EXPECT_EQ(run_alone(true).outcome, Outcome::kOk) << run_alone(true).message;
  EXPECT_EQ(run_alone(false).outcome, Outcome::kNanOutput);
}

}  // namespace
}  // namespace ktune

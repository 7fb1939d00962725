// Per-output checks: nan_ok in compare(), output_tolerance()'s
// precedence, scratch buffers poisoned before every run, and index arrays in range for i32/i64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ktune/tensor/compare.h"
#include "ktune/tensor/problem_buffers.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Comparison compare_f32(const std::vector<float>& actual, const std::vector<float>& expected,
                       bool nan_ok) {
  const TensorSpec t = TensorSpec::contiguous(DType::kF32, {std::int64_t(actual.size())});
  Tolerance tol = default_tolerance(DType::kF32);
  tol.nan_ok = nan_ok;
  return compare(t, reinterpret_cast<const std::byte*>(actual.data()),
                 reinterpret_cast<const std::byte*>(expected.data()), tol);
}

TEST(NanOk, NanPassesOnlyWhereTheReferenceHasNan) {
  EXPECT_EQ(compare_f32({1, kNan, 3}, {1, kNan, 3}, true).outcome, Outcome::kOk);
  EXPECT_EQ(compare_f32({1, kInf, -kInf}, {1, kInf, -kInf}, true).outcome, Outcome::kOk);
  // Without nan_ok, today's behaviour: NaN never passes.
  EXPECT_EQ(compare_f32({1, kNan, 3}, {1, kNan, 3}, false).outcome, Outcome::kWrongResult);
  // NaN against a number, a number against NaN, Inf against NaN: still failures.
  EXPECT_EQ(compare_f32({1, kNan, 3}, {1, 2, 3}, true).outcome, Outcome::kNanOutput);
  EXPECT_EQ(compare_f32({1, 2, 3}, {1, kNan, 3}, true).outcome, Outcome::kWrongResult);
  EXPECT_EQ(compare_f32({1, kInf, 3}, {1, kNan, 3}, true).outcome, Outcome::kWrongResult);
  // The finite elements are still held to the tolerance, and the norm covers only them.
  const Comparison off = compare_f32({1.5f, kNan, 3}, {1, kNan, 3}, true);
  EXPECT_EQ(off.outcome, Outcome::kWrongResult);
  EXPECT_EQ(off.first_bad, 0);
}

TEST(NanOk, OutputToleranceTakesTheArgsOwnFirst) {
  ProblemArg y{{"Y", ArgRole::kOut, DType::kF32}, {}, {}};
  const Tolerance spec_level{1e-2, 1e-3, 1e-2};
  EXPECT_EQ(output_tolerance(y, std::nullopt).rtol, default_tolerance(DType::kF32).rtol);
  EXPECT_EQ(output_tolerance(y, spec_level).rtol, 1e-2);
  EXPECT_FALSE(output_tolerance(y, spec_level).nan_ok);
  y.tolerance = Tolerance{0.5, 0.25, 0.125};
  y.nan_ok = true;
  const Tolerance t = output_tolerance(y, spec_level);
  EXPECT_EQ(t.rtol, 0.5);
  EXPECT_EQ(t.atol, 0.25);
  EXPECT_EQ(t.max_rel_l2, 0.125);
  EXPECT_TRUE(t.nan_ok);
}

// A scratch buffer is poisoned by reset() and reset_outputs(), whatever the last run left.
TEST(Scratch, PoisonedBeforeEveryRunAndNeverAnInput) {
  Problem p{"s", "n=8", {}};
  p.args = {
      ProblemArg{{"Y", ArgRole::kOut, DType::kF32}, TensorSpec::contiguous(DType::kF32, {8}), {}},
      ProblemArg{
          {"P", ArgRole::kScratch, DType::kF32}, TensorSpec::contiguous(DType::kF32, {8}), {}}};
  ProblemBuffers b = ProblemBuffers::create(p, 3);
  auto* scratch = static_cast<float*>(b.args()[1]);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(is_poison(DType::kF32, b.buffer(1).data() + 4 * i));
  for (int i = 0; i < 8; ++i) scratch[i] = 0;
  EXPECT_EQ(b.modified_input(), std::nullopt);  // written freely: not an input
  EXPECT_TRUE(b.redzone_violations().empty());
  b.reset_outputs();
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(is_poison(DType::kF32, b.buffer(1).data() + 4 * i));
  for (int i = 0; i < 8; ++i) scratch[i] = 1;
  b.reset();
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(is_poison(DType::kF32, b.buffer(1).data() + 4 * i));
}

// init: {int: [0, N-1]} on index arrays: every value in range, both ends reached, on i32 and i64.
TEST(IndexInit, IntsInRangeForI32AndI64) {
  for (DType dtype : {DType::kI32, DType::kI64}) {
    const TensorSpec t = TensorSpec::contiguous(dtype, {20000});
    HostBuffer b = HostBuffer::allocate(t.storage_bytes());
    fill_random(b, t, 5, DataSet::kStress, DataInit{InitKind::kInt, 0, 999});
    std::int64_t lo = 1000, hi = -1;
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const double v = load_element(dtype, b.data() + i * dtype_size(dtype));
      lo = std::min(lo, static_cast<std::int64_t>(v));
      hi = std::max(hi, static_cast<std::int64_t>(v));
      ASSERT_EQ(v, std::floor(v));
    }
    EXPECT_EQ(lo, 0) << dtype_name(dtype);
    EXPECT_EQ(hi, 999) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace ktune

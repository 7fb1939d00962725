// compare: each outcome, the outcome priority, tolerances by dtype, rel L2, and the message.
#include "ktune/tensor/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ktune/tensor/tensor_fill.h"

namespace ktune {
namespace {

// A reference and an actual buffer for `spec`, both filled from the same seed.
struct Pair {
  TensorSpec spec;
  HostBuffer expected;
  HostBuffer actual;

  explicit Pair(TensorSpec s) : spec(std::move(s)) {
    expected = HostBuffer::allocate(spec.storage_bytes());
    fill_random(expected, spec, 11);
    actual = expected.clone();
  }
  std::byte* at(std::int64_t linear) {
    return actual.data() +
           spec.storage_index(linear) * static_cast<std::int64_t>(dtype_size(spec.dtype));
  }
  double expected_at(std::int64_t linear) const {
    return load_element(spec.dtype,
                        expected.data() + spec.storage_index(linear) *
                                              static_cast<std::int64_t>(dtype_size(spec.dtype)));
  }
  Comparison run() const { return run(default_tolerance(spec.dtype)); }
  Comparison run(const Tolerance& tol) const {
    return compare(spec, actual.data(), expected.data(), tol);
  }
};

TEST(Compare, IdenticalIsOk) {
  Pair p(TensorSpec::contiguous(DType::kF32, {8, 32}));
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kOk);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_EQ(c.first_bad, -1);
  EXPECT_EQ(c.rel_l2, 0);
}

TEST(Compare, WrongElementReportsIndexValuesAndMessage) {
  Pair p(TensorSpec::contiguous(DType::kF32, {8, 32}));
  store_element(DType::kF32, p.at(3 * 32 + 17), 0.25);
  store_element(DType::kF32, p.expected.data() + (3 * 32 + 17) * 4, 0.5);
  store_element(DType::kF32, p.at(5 * 32), p.expected_at(5 * 32) + 1.0);
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.first_bad, 3 * 32 + 17);
  EXPECT_EQ(c.actual_at_first_bad, 0.25);
  EXPECT_EQ(c.expected_at_first_bad, 0.5);
  EXPECT_GT(c.rel_l2, 1e-4);
  EXPECT_EQ(c.message.rfind("2 of 256 elements differ; first at [3,17]: 0.25 vs 0.5; rel L2 ", 0),
            0u)
      << c.message;
  EXPECT_NE(c.message.find(" > 0.0001"), std::string::npos) << c.message;
}

TEST(Compare, SmallErrorWithinToleranceIsOk) {
  Pair p(TensorSpec::contiguous(DType::kF32, {64}));
  store_element(DType::kF32, p.at(10), p.expected_at(10) * (1 + 2e-5));
  EXPECT_EQ(p.run().outcome, Outcome::kOk);
}

// A GEMM's element near zero by cancellation, off by round-off of another summation order (the
// case of cuBLASLt against cuBLAS, f32, K=1024): wrong under the flat default, fine under the
// tolerance of a 1024-term sum; a real error (1e-3) still fails it.
TEST(Compare, ReductionToleranceGrowsWithTheLength) {
  Pair p(TensorSpec::contiguous(DType::kF32, {64, 64}));
  store_element(DType::kF32, p.expected.data(), 0.0218932);
  store_element(DType::kF32, p.at(0), 0.0219116);
  EXPECT_EQ(p.run().outcome, Outcome::kWrongResult);
  EXPECT_EQ(p.run(reduction_tolerance(DType::kF32, 1024)).outcome, Outcome::kOk);
  store_element(DType::kF32, p.at(0), 0.0229);
  EXPECT_EQ(p.run(reduction_tolerance(DType::kF32, 1024)).outcome, Outcome::kWrongResult);

  EXPECT_EQ(reduction_tolerance(DType::kF32, 64).atol, default_tolerance(DType::kF32).atol);
  EXPECT_DOUBLE_EQ(reduction_tolerance(DType::kF32, 4096).atol, 6.4e-4);
  EXPECT_EQ(reduction_tolerance(DType::kBF16, 4096).atol, default_tolerance(DType::kBF16).atol);
}

// A bf16 GEMM output of RMS ~16 (K = 2519 products of unit-scale inputs) whose element near 0.48
// is off by 9 units in its last place, as cuBLAS's split-K with partial sums in bf16 leaves it
// (seen on an H200): wrong under the dtype's per-element default, fine with rms_atol (8 units in
// the last place at the output's scale); an element off by an eighth of the RMS still fails.
TEST(Compare, RmsAtolScalesTheAllowanceWithTheOutput) {
  Pair p(TensorSpec::contiguous(DType::kBF16, {64, 64}));
  for (std::int64_t i = 0; i < 64 * 64; ++i) {
    const double v = 16.0 * p.expected_at(i) * std::sqrt(3.0);  // uniform in +-1: RMS 1/sqrt(3)
    store_element(DType::kBF16, p.expected.data() + 2 * i, v);
    store_element(DType::kBF16, p.at(i), v);
  }
  store_element(DType::kBF16, p.expected.data() + 2 * 37, 0.476562);
  store_element(DType::kBF16, p.at(37), 0.511719);
  const Tolerance gemm = reduction_tolerance(DType::kBF16, 2519);
  EXPECT_EQ(p.run().outcome, Outcome::kWrongResult);
  EXPECT_EQ(p.run(gemm).outcome, Outcome::kOk) << p.run(gemm).message;
  store_element(DType::kBF16, p.at(37), 0.476562 + 2.0);
  EXPECT_EQ(p.run(gemm).outcome, Outcome::kWrongResult);

  // Folded into atol for a given RMS, once: what the worker hands its device's screen.
  const Tolerance folded = scaled_to_rms(gemm, 16.0);
  EXPECT_DOUBLE_EQ(folded.atol, gemm.atol + 0.5);
  EXPECT_EQ(folded.rms_atol, 0);
  EXPECT_EQ(p.run(folded).outcome, Outcome::kWrongResult);

  EXPECT_EQ(reduction_tolerance(DType::kBF16, 4096).rms_atol, 0x1p-5);
  EXPECT_EQ(reduction_tolerance(DType::kF16, 4096).rms_atol, 0x1p-8);
  EXPECT_EQ(reduction_tolerance(DType::kF32, 4096).rms_atol, 0);
  EXPECT_EQ(default_tolerance(DType::kBF16).rms_atol, 0);
}

TEST(Compare, UnwrittenElementIsDetectedFirst) {
  Pair p(TensorSpec::contiguous(DType::kF32, {4, 4}));
  HostBuffer poisoned = HostBuffer::allocate(4);
  poisoned.poison(DType::kF32);
  std::memcpy(p.at(9), poisoned.data(), 4);
  store_element(DType::kF32, p.at(2), std::numeric_limits<double>::quiet_NaN());
  store_element(DType::kF32, p.at(1), 100.0);
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kUnwrittenOutput);
  EXPECT_EQ(c.mismatches, 3);
  EXPECT_EQ(c.first_bad, 1);
  EXPECT_NE(c.message.find("3 of 16 elements differ (1 unwritten, 1 NaN/Inf)"), std::string::npos)
      << c.message;
}

TEST(Compare, FullyPoisonedOutputIsUnwritten) {
  Pair p(TensorSpec::contiguous(DType::kBF16, {3, 5}));
  p.actual.poison(DType::kBF16);
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kUnwrittenOutput);
  EXPECT_EQ(c.mismatches, 15);
  EXPECT_NE(c.message.find("first at [0,0]: unwritten vs"), std::string::npos) << c.message;
}

TEST(Compare, NanOrInfWhereReferenceFiniteIsNanOutput) {
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    Pair p(TensorSpec::contiguous(DType::kF32, {32}));
    store_element(DType::kF32, p.at(4), bad);
    store_element(DType::kF32, p.at(6), 42.0);  // also wrong, but NaN/Inf wins
    const Comparison c = p.run();
    EXPECT_EQ(c.outcome, Outcome::kNanOutput) << bad;
    EXPECT_EQ(c.mismatches, 2);
    EXPECT_EQ(c.first_bad, 4);
  }
}

TEST(Compare, NanNeverPassesEvenAgainstNan) {
  Pair p(TensorSpec::contiguous(DType::kF64, {4}));
  store_element(DType::kF64, p.expected.data() + 8, std::nan(""));
  store_element(DType::kF64, p.at(1), std::nan(""));
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_bad, 1);
}

TEST(Compare, EqualInfinitiesPass) {
  Pair p(TensorSpec::contiguous(DType::kF32, {4}));
  const double inf = std::numeric_limits<double>::infinity();
  store_element(DType::kF32, p.expected.data(), inf);
  store_element(DType::kF32, p.at(0), inf);
  EXPECT_EQ(p.run().outcome, Outcome::kOk);
  store_element(DType::kF32, p.at(0), -inf);
  EXPECT_EQ(p.run().outcome, Outcome::kWrongResult);
}

TEST(Compare, HalfPrecisionTolerance) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    Pair p(TensorSpec::contiguous(dtype, {256}));
    // One element 1% off passes the 2e-2/1e-2 defaults; the rounding of a half already costs that.
    for (std::int64_t i = 0; i < 256; i += 64)
      store_element(dtype, p.at(i), p.expected_at(i) * 1.01);
    EXPECT_EQ(p.run().outcome, Outcome::kOk) << p.run().message;
    // Off by 0.5 does not.
    store_element(dtype, p.at(100), p.expected_at(100) + 0.5);
    const Comparison c = p.run();
    EXPECT_EQ(c.outcome, Outcome::kWrongResult);
    EXPECT_EQ(c.first_bad, 100);
  }
  // An error the half tolerance forgives fails at f32 tolerance.
  Pair f32(TensorSpec::contiguous(DType::kF32, {256}));
  store_element(DType::kF32, f32.at(0), f32.expected_at(0) + 0.005);
  EXPECT_EQ(f32.run().outcome, Outcome::kWrongResult);
}

TEST(Compare, IntegersAreExact) {
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Pair p(TensorSpec::contiguous(dtype, {100}));
    EXPECT_EQ(p.run().outcome, Outcome::kOk);
    store_element(dtype, p.at(50), p.expected_at(50) + 1);
    const Comparison c = p.run();
    EXPECT_EQ(c.outcome, Outcome::kWrongResult);
    EXPECT_EQ(c.mismatches, 1);
    EXPECT_EQ(c.first_bad, 50);
  }
}

TEST(Compare, LargeInt64DifferenceBelowDoublePrecisionIsCaught) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kI64, {1});
  std::int64_t expected = (std::int64_t{1} << 60);
  std::int64_t actual = expected + 1;  // same double value
  const Comparison c =
      compare(spec, reinterpret_cast<const std::byte*>(&actual),
              reinterpret_cast<const std::byte*>(&expected), default_tolerance(DType::kI64));
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
}

TEST(Compare, IntegerPoisonIsUnwrittenUnlessItIsTheRightValue) {
  Pair p(TensorSpec::contiguous(DType::kI8, {4}));
  p.actual.poison(DType::kI8);
  EXPECT_EQ(p.run().outcome, Outcome::kUnwrittenOutput);
  // -91 (0xA5) is a legitimate int8 result; equal to the reference it passes.
  p.expected.poison(DType::kI8);
  EXPECT_EQ(p.run().outcome, Outcome::kOk);
}

TEST(Compare, RelL2FailsWhilePerElementPasses) {
  Pair p(TensorSpec::contiguous(DType::kF32, {1000}));
  for (std::int64_t i = 0; i < 1000; ++i)
    store_element(DType::kF32, p.at(i), p.expected_at(i) * 1.005);
  const Tolerance tol{.rtol = 1e-2, .atol = 0, .max_rel_l2 = 1e-3};
  const Comparison c = p.run(tol);
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_EQ(c.first_bad, -1);
  EXPECT_NEAR(c.rel_l2, 5e-3, 1e-4);
  EXPECT_EQ(c.message.rfind("0 of 1000 elements differ; rel L2 0.005 > 0.001", 0), 0u) << c.message;
  const Comparison loose = p.run({.rtol = 1e-2, .atol = 0, .max_rel_l2 = 1e-2});
  EXPECT_EQ(loose.outcome, Outcome::kOk);
}

TEST(Compare, ZeroReferenceUsesAbsoluteL2) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kF32, {4});
  const float expected[4] = {0, 0, 0, 0};
  const float actual[4] = {0, 3e-6f, 0, 4e-6f};
  const Comparison c =
      compare(spec, reinterpret_cast<const std::byte*>(actual),
              reinterpret_cast<const std::byte*>(expected), default_tolerance(DType::kF32));
  EXPECT_NEAR(c.rel_l2, 5e-6, 1e-9);
  EXPECT_EQ(c.outcome, Outcome::kOk);
}

TEST(Compare, StridedViewIgnoresGaps) {
  TensorSpec spec;
  spec.dtype = DType::kF32;
  spec.sizes = {2, 3};
  spec.strides = {4, 1};
  spec.offset = 1;
  Pair p(spec);
  // Storage element 0 and 4 are outside the view: garbage there does not matter.
  store_element(DType::kF32, p.actual.data(), 1e9);
  store_element(DType::kF32, p.actual.data() + 4 * 4, std::nan(""));
  EXPECT_EQ(p.run().outcome, Outcome::kOk);
  store_element(DType::kF32, p.at(4), 7.0);
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
  EXPECT_NE(c.message.find("first at [1,1]: 7 vs"), std::string::npos) << c.message;
}

TEST(Compare, DefaultTolerances) {
  EXPECT_EQ(default_tolerance(DType::kF64).rtol, 1e-9);
  EXPECT_EQ(default_tolerance(DType::kF64).atol, 1e-12);
  EXPECT_EQ(default_tolerance(DType::kF32).max_rel_l2, 1e-4);
  EXPECT_EQ(default_tolerance(DType::kF16).rtol, 2e-2);
  EXPECT_EQ(default_tolerance(DType::kBF16).atol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::kI32).rtol, 0);
  EXPECT_EQ(default_tolerance(DType::kI8).max_rel_l2, 0);
}

TEST(ViewRms, OverTheViewsFiniteElementsOnly) {
  TensorSpec t = TensorSpec::contiguous(DType::kF32, {3});
  t.strides = {2};  // elements 0 2 4; 1 and 3 are gaps, never read
  HostBuffer b = HostBuffer::allocate(t.storage_bytes());
  const double values[5] = {3, 1000, 4, 1000, std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 5; ++i) store_element(DType::kF32, b.data() + i * 4, values[i]);
  EXPECT_DOUBLE_EQ(view_rms(t, b.data()), std::sqrt(12.5));
}

TEST(ViewIsDense, PermutedDenseLayoutsYesGapsOffsetsAndOverlapsNo) {
  TensorSpec t = TensorSpec::contiguous(DType::kF32, {4, 3});
  EXPECT_TRUE(view_is_dense(t));
  t.strides = {1, 4};  // column-major: still every element once
  EXPECT_TRUE(view_is_dense(t));
  t.strides = {6, 2};  // gaps
  EXPECT_FALSE(view_is_dense(t));
  t = TensorSpec::contiguous(DType::kF32, {2, 2});
  t.strides = {3, 0};  // storage of 4 elements, as many as the view, but 1 and 2 are gaps
  EXPECT_EQ(t.storage_elements(), t.numel());
  EXPECT_FALSE(view_is_dense(t));
  t = TensorSpec::contiguous(DType::kF32, {4});
  t.offset = 1;
  EXPECT_FALSE(view_is_dense(t));
}

TEST(FirstWriteOutsideView, FindsTheFirstGapOrPrefixElementThatLostItsPoison) {
  TensorSpec t = TensorSpec::contiguous(DType::kF32, {3});
  t.strides = {2};
  t.offset = 1;  // storage: prefix 0, elements 1 3 5, gaps 2 4
  HostBuffer b = HostBuffer::allocate(t.storage_bytes());
  b.poison(DType::kF32);
  for (std::int64_t i = 0; i < 3; ++i) store_element(DType::kF32, b.data() + (1 + 2 * i) * 4, 1.0);
  EXPECT_EQ(first_write_outside_view(t, b.data()), -1);
  store_element(DType::kF32, b.data() + 4 * 4, 0.0);
  EXPECT_EQ(first_write_outside_view(t, b.data()), 4);
  store_element(DType::kF32, b.data(), 0.0);
  EXPECT_EQ(first_write_outside_view(t, b.data()), 0);
  // A dense view has nothing outside it, whatever its bytes.
  EXPECT_EQ(first_write_outside_view(TensorSpec::contiguous(DType::kF32, {3}), b.data()), -1);
}

// Large flat outputs take the fast path on several threads (parallel_for): an element that
// fails in any chunk, of any float dtype, still makes the element loop name it, and the sums
// of the chunks give the same rel L2 as one loop would.
TEST(Compare, LargeFlatOutputsFindTheBadElementInAnyChunk) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    const std::int64_t n = (std::int64_t{1} << 22) + 7;  // several chunks and a ragged end
    for (std::int64_t bad : {std::int64_t{0}, n / 2 + 3, n - 1}) {
      Pair p(TensorSpec::contiguous(dtype, {n}));
      store_element(dtype, p.at(bad), p.expected_at(bad) + 4.0);
      const Comparison c = p.run();
      EXPECT_EQ(c.outcome, Outcome::kWrongResult) << dtype_name(dtype) << " at " << bad;
      EXPECT_EQ(c.first_bad, bad) << dtype_name(dtype);
      EXPECT_EQ(c.mismatches, 1) << dtype_name(dtype);
    }
    Pair ok(TensorSpec::contiguous(dtype, {n}));
    const Comparison c = ok.run();
    EXPECT_EQ(c.outcome, Outcome::kOk) << dtype_name(dtype) << ": " << c.message;
    EXPECT_EQ(c.rel_l2, 0) << dtype_name(dtype);
  }
}

TEST(Compare, LargeFlatOutputsSumRelL2OverAllChunks) {
  const std::int64_t n = std::int64_t{1} << 22;
  Pair p(TensorSpec::contiguous(DType::kF64, {n}));
  double diff_sq = 0;
  double expected_sq = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = p.expected_at(i);
    const double a = e * (1 + 1e-13);  // within rtol 1e-12: every element passes
    store_element(DType::kF64, p.at(i), a);
    diff_sq += (a - e) * (a - e);
    expected_sq += e * e;
  }
  const Comparison c = p.run();
  EXPECT_EQ(c.outcome, Outcome::kOk) << c.message;
  EXPECT_NEAR(c.rel_l2, std::sqrt(diff_sq / expected_sq), 1e-3 * std::sqrt(diff_sq / expected_sq));
}

TEST(Compare, LargeFlatOutputsReportUnwrittenAndNanAsTheElementLoopDoes) {
  const std::int64_t n = std::int64_t{1} << 21;
  Pair unwritten(TensorSpec::contiguous(DType::kF32, {n}));
  HostBuffer poison = HostBuffer::allocate(4);
  poison.poison(DType::kF32);
  std::memcpy(unwritten.at(n - 2), poison.data(), 4);
  EXPECT_EQ(unwritten.run().outcome, Outcome::kUnwrittenOutput);
  Pair nan(TensorSpec::contiguous(DType::kF32, {n}));
  store_element(DType::kF32, nan.at(12345), std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(nan.run().outcome, Outcome::kNanOutput);
  Pair ints(TensorSpec::contiguous(DType::kI32, {n}));
  store_element(DType::kI32, ints.at(n - 1), ints.expected_at(n - 1) + 1);
  const Comparison c = ints.run();
  EXPECT_EQ(c.outcome, Outcome::kWrongResult);
  EXPECT_EQ(c.first_bad, n - 1);
}

}  // namespace
}  // namespace ktune

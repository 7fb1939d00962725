// fill_random with a user's init (a spec's args[i].init): ranges, determinism, arange's storage
// order, and that the stress data set stays in the init's domain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "ktune/tensor/problem_buffers.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {
namespace {

double element(const HostBuffer& b, DType dtype, std::int64_t storage_index) {
  return load_element(dtype,
                      b.data() + static_cast<std::size_t>(storage_index) * dtype_size(dtype));
}

std::vector<double> filled(const TensorSpec& spec, const DataInit& init, std::uint64_t seed,
                           DataSet set = DataSet::kUniform) {
  HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
  fill_random(b, spec, seed, set, init);
  std::vector<double> out;
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    out.push_back(element(b, spec.dtype, spec.storage_index(i)));
  }
  return out;
}

TEST(FillInit, UniformStaysInItsRangeAndFollowsTheSeed) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kF32, {4096});
  const DataInit init{InitKind::kUniform, 0.5, 2.0};
  const std::vector<double> v = filled(spec, init, 7);
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.5);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 2.0);
  // Spread over the range, not a constant: both ends' quarters are reached.
  EXPECT_LT(*std::min_element(v.begin(), v.end()), 0.6);
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 1.9);
  EXPECT_EQ(filled(spec, init, 7), v);
  EXPECT_NE(filled(spec, init, 8), v);
}

TEST(FillInit, NormalHasItsMeanAndStd) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kF64, {20000});
  const std::vector<double> v = filled(spec, {InitKind::kNormal, 3.0, 0.5}, 1);
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  const double std = std::sqrt(sq / static_cast<double>(v.size()));
  EXPECT_NEAR(mean, 3.0, 0.02);
  EXPECT_NEAR(std, 0.5, 0.02);
}

// Integers in [low, high] inclusive, every one of them drawn, in float and integer dtypes.
TEST(FillInit, IntGivesEveryIntegerOfTheClosedRange) {
  for (DType dtype : {DType::kF32, DType::kI32, DType::kI8, DType::kF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::vector<double> v =
        filled(TensorSpec::contiguous(dtype, {2000}), {InitKind::kInt, 3, 9}, 5);
    std::set<double> seen(v.begin(), v.end());
    EXPECT_EQ(seen, (std::set<double>{3, 4, 5, 6, 7, 8, 9}));
  }
}

TEST(FillInit, ZerosAndOnes) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kBF16, {3, 5});
  for (double x : filled(spec, {InitKind::kZeros, 0, 0}, 1)) EXPECT_EQ(x, 0.0);
  for (double x : filled(spec, {InitKind::kOnes, 0, 0}, 1)) EXPECT_EQ(x, 1.0);
}

// A transposed view with a padded leading dimension: arange counts in memory order, and the
// gaps of the view keep what they held.
TEST(FillInit, ArangeFollowsStorageOrderOfAStridedView) {
  TensorSpec spec;
  spec.dtype = DType::kI32;
  spec.sizes = {2, 3};
  spec.strides = {1, 4};  // column-major, each column padded to 4
  spec.offset = 1;
  HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
  b.poison(spec.dtype);
  fill_random(b, spec, 1, DataSet::kUniform, {InitKind::kArange, 0, 0});
  // Storage: [gap, (0,0), (1,0), gap, gap, (0,1), (1,1), gap, gap, (0,2), (1,2)].
  const std::int64_t addressed[] = {1, 2, 5, 6, 9, 10};
  for (std::size_t k = 0; k < std::size(addressed); ++k) {
    EXPECT_EQ(element(b, spec.dtype, addressed[k]), static_cast<double>(k)) << k;
  }
  for (std::int64_t gap : {0, 3, 4, 7, 8}) {
    EXPECT_TRUE(is_poison(spec.dtype, b.data() + gap * 4)) << gap;
  }
  // Logical (row-major) order reads the transpose: 0, 2, 4 / 1, 3, 5.
  EXPECT_EQ(filled(spec, {InitKind::kArange, 0, 0}, 1), (std::vector<double>{0, 2, 4, 1, 3, 5}));
}

Problem problem_with(const DataInit& init) {
  Problem p;
  p.op = "logx";
  p.name = "n=512";
  p.args.push_back(
      {{"Y", ArgRole::kOut, DType::kF32}, TensorSpec::contiguous(DType::kF32, {512}), {}});
  p.args.push_back(
      {{"X", ArgRole::kIn, DType::kF32}, TensorSpec::contiguous(DType::kF32, {512}), {}});
  p.args[1].init = init;
  return p;
}

std::vector<double> input_of(const ProblemBuffers& pb) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < 512; ++i) v.push_back(element(pb.buffer(1), DType::kF32, i));
  return v;
}

// The stress set of a drawn init is another draw from the same range (log(x) stays defined);
// that of a fixed init is the same data.
TEST(FillInit, StressSetStaysInTheInitsDomain) {
  const Problem drawn = problem_with({InitKind::kUniform, 0.5, 2.0});
  const std::vector<double> uniform = input_of(ProblemBuffers::create(drawn, 3, DataSet::kUniform));
  const std::vector<double> stress = input_of(ProblemBuffers::create(drawn, 3, DataSet::kStress));
  EXPECT_NE(uniform, stress);
  for (double x : stress) {
    EXPECT_GE(x, 0.5);
    EXPECT_LE(x, 2.0);
  }
  const Problem fixed = problem_with({InitKind::kArange, 0, 0});
  EXPECT_EQ(input_of(ProblemBuffers::create(fixed, 3, DataSet::kUniform)),
            input_of(ProblemBuffers::create(fixed, 3, DataSet::kStress)));
  // Without an init, the stress set has negative values: what log(x) cannot take.
  const std::vector<double> own =
      input_of(ProblemBuffers::create(problem_with({}), 3, DataSet::kStress));
  EXPECT_LT(*std::min_element(own.begin(), own.end()), 0.0);
}

// The init is part of the key (other data, other tuning), and a problem without one keeps the
// key it had before inits existed.
TEST(FillInit, InitIsPartOfTheProblemKey) {
  EXPECT_EQ(problem_with({}).key(), "logx(out Y f32[512]{1}+0@cpu, in X f32[512]{1}+0@cpu)");
  EXPECT_EQ(problem_with({InitKind::kUniform, 0.5, 2.0}).key(),
            "logx(out Y f32[512]{1}+0@cpu, in X f32[512]{1}+0@cpu init=uniform(0.5,2))");
  EXPECT_NE(problem_with({InitKind::kUniform, 0.5, 2.0}).key(),
            problem_with({InitKind::kUniform, 0.5, 3.0}).key());
  EXPECT_NE(problem_with({InitKind::kZeros, 0, 0}).key(),
            problem_with({InitKind::kOnes, 0, 0}).key());
}

}  // namespace
}  // namespace ktune

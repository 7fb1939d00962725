// fill_random: determinism, ranges per dtype, and that only the addressed elements are written.
#include "ktune/tensor/tensor_fill.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace ktune {
namespace {

std::vector<double> logical_values(const HostBuffer& b, const TensorSpec& spec) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < spec.numel(); ++i) {
    out.push_back(load_element(
        spec.dtype,
        b.data() + static_cast<std::size_t>(spec.storage_index(i)) * dtype_size(spec.dtype)));
  }
  return out;
}

TEST(FillRandom, SameSeedSameBytesOtherSeedOtherBytes) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kF32, {16, 16});
  HostBuffer a = HostBuffer::allocate(spec.storage_bytes());
  HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
  HostBuffer c = HostBuffer::allocate(spec.storage_bytes());
  fill_random(a, spec, 42);
  fill_random(b, spec, 42);
  fill_random(c, spec, 43);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.bytes()), 0);
}

TEST(FillRandom, KnownValuesForSeedZero) {
  // Pins the generator: a change here silently invalidates every recorded seed.
  const TensorSpec spec = TensorSpec::contiguous(DType::kF64, {2});
  HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
  fill_random(b, spec, 0);
  // splitmix64(0) first outputs: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4.
  EXPECT_DOUBLE_EQ(load_element(DType::kF64, b.data()),
                   2.0 * static_cast<double>(0xE220A8397B1DCDAFull >> 11) * 0x1.0p-53 - 1.0);
  EXPECT_DOUBLE_EQ(load_element(DType::kF64, b.data() + 8),
                   2.0 * static_cast<double>(0x6E789E6AA1B965F4ull >> 11) * 0x1.0p-53 - 1.0);
}

TEST(FillRandom, FloatsInHalfOpenUnitRangeAndVaried) {
  for (DType dtype : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const TensorSpec spec = TensorSpec::contiguous(dtype, {4096});
    HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
    fill_random(b, spec, 7);
    std::set<double> distinct;
    double min = 2, max = -2;
    for (double v : logical_values(b, spec)) {
      EXPECT_GE(v, -1.0);
      EXPECT_LT(v, 1.0);
      distinct.insert(v);
      min = std::min(min, v);
      max = std::max(max, v);
    }
    EXPECT_GT(distinct.size(), 200u);
    EXPECT_LT(min, -0.9);
    EXPECT_GT(max, 0.9);
  }
}

TEST(FillRandom, IntsCoverMinusEightToEight) {
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(dtype_name(dtype));
    const TensorSpec spec = TensorSpec::contiguous(dtype, {2000});
    HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
    fill_random(b, spec, 1);
    std::set<double> seen;
    for (double v : logical_values(b, spec)) {
      EXPECT_GE(v, -8);
      EXPECT_LE(v, 8);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 17u);
  }
}

TEST(FillRandom, StridedViewWritesOnlyItsElements) {
  // A 3x4 view with row stride 6 and offset 2 in storage of 2 + 2*6 + 3 + 1 = 18 floats.
  TensorSpec spec;
  spec.dtype = DType::kF32;
  spec.sizes = {3, 4};
  spec.strides = {6, 1};
  spec.offset = 2;
  ASSERT_EQ(spec.storage_elements(), 18);
  HostBuffer b = HostBuffer::allocate(spec.storage_bytes());
  b.poison(DType::kF32);
  fill_random(b, spec, 5);
  std::set<std::int64_t> addressed;
  for (std::int64_t i = 0; i < spec.numel(); ++i) addressed.insert(spec.storage_index(i));
  for (std::int64_t s = 0; s < 18; ++s) {
    const bool poisoned = is_poison(DType::kF32, b.data() + s * 4);
    EXPECT_EQ(poisoned, addressed.count(s) == 0) << "storage element " << s;
  }
  EXPECT_TRUE(b.redzones_intact());
}

TEST(FillRandom, LayoutDoesNotChangeTheLogicalTensor) {
  const TensorSpec row_major = TensorSpec::contiguous(DType::kF32, {5, 7});
  TensorSpec col_major = row_major;
  col_major.strides = {1, 5};
  HostBuffer a = HostBuffer::allocate(row_major.storage_bytes());
  HostBuffer b = HostBuffer::allocate(col_major.storage_bytes());
  fill_random(a, row_major, 9);
  fill_random(b, col_major, 9);
  EXPECT_EQ(logical_values(a, row_major), logical_values(b, col_major));
  EXPECT_NE(std::memcmp(a.data(), b.data(), a.bytes()), 0);
}

// A row-major tensor large enough to be filled in chunks on several threads holds the values of
// the one-pass fill that a column-major view of it gets: the split changes nothing.
TEST(FillRandom, ChunkedFillGivesTheOnePassValues) {
  for (DataSet set : {DataSet::kUniform, DataSet::kStress}) {
    const TensorSpec row_major = TensorSpec::contiguous(DType::kBF16, {1031, 1027});
    TensorSpec col_major = row_major;
    col_major.strides = {1, 1031};
    HostBuffer a = HostBuffer::allocate(row_major.storage_bytes());
    HostBuffer b = HostBuffer::allocate(col_major.storage_bytes());
    fill_random(a, row_major, 77, set);
    fill_random(b, col_major, 77, set);
    EXPECT_EQ(logical_values(a, row_major), logical_values(b, col_major)) << data_set_name(set);
  }
}

TEST(FillRandom, EmptyTensorWritesNothing) {
  const TensorSpec spec = TensorSpec::contiguous(DType::kF32, {0, 8});
  HostBuffer b = HostBuffer::allocate(16);
  b.poison(DType::kF32);
  fill_random(b, spec, 1);
  EXPECT_TRUE(is_poison(DType::kF32, b.data()));
  EXPECT_TRUE(b.redzones_intact());
}

// The stress set: other magnitudes (several binades, up to 64 for f32, 8 for f16, the dtype's
// range for i8), mostly negative, and other values than the uniform set from the same seed.
TEST(FillRandom, StressSetHasOtherScaleAndSignsPerDtype) {
  struct Case {
    DType dtype;
    double max;      // bound of |value|
    double reaches;  // some |value| at least this
  };
  for (const Case& c :
       {Case{DType::kF32, 64, 16}, Case{DType::kF64, 64, 16}, Case{DType::kF16, 8, 4},
        Case{DType::kBF16, 8, 4}, Case{DType::kI8, 128, 100}, Case{DType::kI32, 1024, 800},
        Case{DType::kI64, 1 << 20, 800'000}}) {
    SCOPED_TRACE(dtype_name(c.dtype));
    const TensorSpec spec = TensorSpec::contiguous(c.dtype, {4096});
    HostBuffer uniform = HostBuffer::allocate(spec.storage_bytes());
    HostBuffer stress = HostBuffer::allocate(spec.storage_bytes());
    fill_random(uniform, spec, 7, DataSet::kUniform);
    fill_random(stress, spec, 7, DataSet::kStress);
    int negative = 0;
    double largest = 0;
    double smallest = 1e30;
    for (double v : logical_values(stress, spec)) {
      EXPECT_LE(std::fabs(v), c.max);
      largest = std::max(largest, std::fabs(v));
      if (v != 0) smallest = std::min(smallest, std::fabs(v));
      negative += v < 0;
    }
    EXPECT_GE(largest, c.reaches);
    if (is_floating(c.dtype)) {
      EXPECT_LE(smallest, 0.25);  // mixed exponents, not only large values
    }
    EXPECT_GT(negative, 4096 * 0.7);
    EXPECT_LT(negative, 4096 * 0.8);
    EXPECT_NE(logical_values(uniform, spec), logical_values(stress, spec));
  }
}

}  // namespace
}  // namespace ktune

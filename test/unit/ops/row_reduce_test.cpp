// Row sum and row softmax: every variant against a double-precision loop over shapes with ragged
// columns and a single column; in-place softmax; the MultiKernels over them.
#include "ktune/ops/row_reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ktune {
namespace {

using RowFn = void (*)(float*, const float*, std::int64_t, std::int64_t);

struct Shape {
  std::int64_t rows;
  std::int64_t cols;
};

// Ragged columns (not multiples of 8, 16, 64 or 1024), one column, one row, exact multiples.
const std::vector<Shape> kShapes = {{1, 1},   {7, 1},    {3, 5},    {4, 17},   {2, 63},
                                    {5, 129}, {3, 1000}, {2, 1025}, {1, 4096}, {16, 256}};

std::vector<float> random_matrix(const Shape& s, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(s.rows * s.cols));
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_row_sum(RowFn fn, const std::string& name) {
  for (const Shape& s : kShapes) {
    const std::vector<float> in = random_matrix(s, 7, 1.0f);
    std::vector<float> out(static_cast<std::size_t>(s.rows), -1.0f);
    fn(out.data(), in.data(), s.rows, s.cols);
    for (std::int64_t r = 0; r < s.rows; ++r) {
      double want = 0, magnitude = 0;
      for (std::int64_t c = 0; c < s.cols; ++c) {
        want += in[r * s.cols + c];
        magnitude += std::abs(in[r * s.cols + c]);
      }
      EXPECT_NEAR(out[r], want, 1e-6 * magnitude + 1e-6)
          << name << " rows=" << s.rows << " cols=" << s.cols << " row " << r;
    }
  }
}

std::vector<double> softmax_reference(const std::vector<float>& in, const Shape& s) {
  std::vector<double> out(in.size());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const float* x = in.data() + r * s.cols;
    double m = -INFINITY, sum = 0;
    for (std::int64_t c = 0; c < s.cols; ++c) m = std::max(m, double{x[c]});
    for (std::int64_t c = 0; c < s.cols; ++c) sum += std::exp(x[c] - m);
    for (std::int64_t c = 0; c < s.cols; ++c) out[r * s.cols + c] = std::exp(x[c] - m) / sum;
  }
  return out;
}

void expect_softmax(const std::vector<float>& got, const std::vector<double>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 * want[i] + 1e-7) << what << " element " << i;
  }
}

void expect_row_softmax(RowFn fn, const std::string& name) {
  for (const Shape& s : kShapes) {
    // Scale 30: rows whose max is far from 0 and whose later chunks raise the running max.
    for (float scale : {1.0f, 30.0f}) {
      const std::vector<float> in = random_matrix(s, 11, scale);
      const std::vector<double> want = softmax_reference(in, s);
      const std::string what = name + " rows=" + std::to_string(s.rows) +
                               " cols=" + std::to_string(s.cols) +
                               " scale=" + std::to_string(scale);
      std::vector<float> out(in.size(), -1.0f);
      fn(out.data(), in.data(), s.rows, s.cols);
      expect_softmax(out, want, what);
      std::vector<float> inplace = in;
      fn(inplace.data(), inplace.data(), s.rows, s.cols);
      expect_softmax(inplace, want, what + " in place");
    }
  }
}

TEST(RowReduce, RowSumVariantsMatchADoubleLoop) {
  expect_row_sum(&row_sum_persistent, "row_sum_persistent");
  expect_row_sum(&row_sum_looped_r16, "row_sum_looped_r16");
  expect_row_sum(&row_sum_looped_r128, "row_sum_looped_r128");
}

TEST(RowReduce, RowSoftmaxVariantsMatchADoubleLoopAlsoInPlace) {
  expect_row_softmax(&row_softmax_persistent, "row_softmax_persistent");
  expect_row_softmax(&row_softmax_looped_r64, "row_softmax_looped_r64");
  expect_row_softmax(&row_softmax_looped_r1024, "row_softmax_looped_r1024");
}

TEST(RowReduce, OnlineSoftmaxRescalesWhenALaterChunkHoldsTheMax) {
  // Increasing values: every chunk of 64 raises the running max.
  const Shape s{1, 300};
  std::vector<float> in(300);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0.05f * static_cast<float>(i);
  std::vector<float> out(in.size());
  row_softmax_looped_r64(out.data(), in.data(), s.rows, s.cols);
  expect_softmax(out, softmax_reference(in, s), "increasing row");
}

TEST(RowReduce, EmptyShapesWriteNothing) {
  float out = -1;
  const float in = 3;
  row_sum_persistent(&out, &in, 0, 4);
  row_softmax_looped_r64(&out, &in, 0, 4);
  EXPECT_EQ(out, -1);
  row_sum_looped_r16(&out, &in, 1, 0);
  EXPECT_EQ(out, 0);  // the sum of nothing
}

TEST(RowReduce, BucketRoundsRowsAndColsUpToPowersOfTwo) {
  EXPECT_EQ(row_reduce_bucket(nullptr, nullptr, 5, 1000), (ShapeKey{8, 1024, 0, 0}));
  EXPECT_EQ(row_reduce_bucket(nullptr, nullptr, 1, 1), (ShapeKey{1, 1, 0, 0}));
  EXPECT_EQ(row_reduce_bucket(nullptr, nullptr, 0, -3), (ShapeKey{1, 1, 0, 0}));
}

TEST(RowReduce, RowSumMultiKernelPicksAndAnswers) {
  MultiKernelOptions o;
  o.bench.budget_ms = 2;
  auto mk = make_row_sum(o);
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  for (const Shape& s : kShapes) {
    const std::vector<float> in = random_matrix(s, 3, 1.0f);
    std::vector<float> out(static_cast<std::size_t>(s.rows), -1.0f);
    (*mk)(out.data(), in.data(), s.rows, s.cols);
    for (std::int64_t r = 0; r < s.rows; ++r) {
      double want = 0;
      for (std::int64_t c = 0; c < s.cols; ++c) want += in[r * s.cols + c];
      EXPECT_NEAR(out[r], want, 1e-4) << "rows=" << s.rows << " cols=" << s.cols;
    }
  }
  EXPECT_EQ(mk->picks().size(), mk->benchmarks_run());
  EXPECT_GE(mk->picks().size(), 8u);
  for (const MultiKernelPick& p : mk->picks()) EXPECT_EQ(p.variant.rfind("row_sum_", 0), 0u);
}

TEST(RowReduce, InPlaceSoftmaxThroughMultiKernelIsOneSoftmax) {
  // Benchmarking runs every variant many times on the (shared) clone of out == in; the caller's
  // buffer must see exactly one softmax, not a softmax of a softmax.
  MultiKernelOptions o;
  o.bench.budget_ms = 2;
  auto mk = make_row_softmax(o);
  ASSERT_TRUE(mk.has_value()) << mk.error().message;
  for (const Shape& s : {Shape{4, 17}, Shape{3, 1000}, Shape{2, 1025}, Shape{7, 1}}) {
    std::vector<float> x = random_matrix(s, 5, 4.0f);
    const std::vector<double> want = softmax_reference(x, s);
    (*mk)(x.data(), x.data(), s.rows, s.cols);
    expect_softmax(x, want, "in place, cols=" + std::to_string(s.cols));
    EXPECT_TRUE(mk->picked(row_reduce_bucket(nullptr, nullptr, s.rows, s.cols)).has_value());
  }
  EXPECT_EQ(mk->benchmarks_run(), 4u);
}

TEST(RowReduce, MultiKernelNameAndForcedPick) {
  MultiKernelOptions o;
  o.force_pick = "row_softmax_looped_r1024";
  auto mk = make_row_softmax(o);
  ASSERT_TRUE(mk.has_value());
  const Shape s{2, 40};
  std::vector<float> x = random_matrix(s, 1, 2.0f);
  std::vector<float> y(x.size());
  (*mk)(y.data(), x.data(), s.rows, s.cols);
  expect_softmax(y, softmax_reference(x, s), "forced");
  EXPECT_EQ(mk->picks()[0].variant, "row_softmax_looped_r1024");
  EXPECT_EQ(mk->benchmarks_run(), 0u);
  // The name is the operation's own when none is given: a forced pick of another op errors.
  MultiKernelOptions bad;
  bad.force_pick = "row_softmax_persistent";
  auto sum = make_row_sum(bad);
  ASSERT_FALSE(sum.has_value());
  EXPECT_NE(sum.error().message.find("MultiKernel 'row_sum'"), std::string::npos);
}

}  // namespace
}  // namespace ktune

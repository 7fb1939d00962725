// Row sum and row softmax, persistent and looped, and their MultiKernels.
#include "ktune/ops/row_reduce.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ktune {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::size_t count(std::int64_t n) { return n > 0 ? static_cast<std::size_t>(n) : 0; }

template <int kRBlock>
void row_sum_looped(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = count(cols);
  for (std::size_t r = 0; r < count(rows); ++r) {
    const float* x = in + r * n;
    float acc[kRBlock] = {};
    std::size_t i = 0;
    for (; i + kRBlock <= n; i += kRBlock) {
      for (int j = 0; j < kRBlock; ++j) acc[j] += x[i + j];
    }
    for (std::size_t j = 0; i + j < n; ++j) acc[j] += x[i + j];  // the ragged last chunk
    for (int width = kRBlock / 2; width > 0; width /= 2) {
      for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
    }
    out[r] = acc[0];
  }
}

// Chunks of kRBlock: a running max, and a running sum of exp(x - max) rescaled by
// exp(old max - new max) whenever the max grows (exp(-inf) = 0 covers the first chunk).
template <int kRBlock>
void row_softmax_looped(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = count(cols);
  for (std::size_t r = 0; r < count(rows); ++r) {
    const float* x = in + r * n;
    float* y = out + r * n;
    float m = kNegInf;
    float s = 0;
    for (std::size_t c0 = 0; c0 < n; c0 += kRBlock) {
      const std::size_t len = std::min<std::size_t>(kRBlock, n - c0);
      float chunk_max = kNegInf;
      for (std::size_t j = 0; j < len; ++j) chunk_max = std::max(chunk_max, x[c0 + j]);
      if (chunk_max > m) {
        s *= std::exp(m - chunk_max);
        m = chunk_max;
      }
      float chunk_sum = 0;
      for (std::size_t j = 0; j < len; ++j) chunk_sum += std::exp(x[c0 + j] - m);
      s += chunk_sum;
    }
    const float inv = 1.0f / s;
    // y[i] is written after x[i] is read: in place is safe.
    for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m) * inv;
  }
}

std::size_t sum_out_bytes(float* const&, const float* const&, const std::int64_t& rows,
                          const std::int64_t&) {
  return count(rows) * sizeof(float);
}

std::size_t softmax_out_bytes(float* const&, const float* const&, const std::int64_t& rows,
                              const std::int64_t& cols) {
  return count(rows) * count(cols) * sizeof(float);
}

}  // namespace

void row_sum_persistent(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = count(cols);
  for (std::size_t r = 0; r < count(rows); ++r) {
    const float* x = in + r * n;
    float s[8] = {};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) s[j] += x[i + j];
    }
    float tail = 0;
    for (; i < n; ++i) tail += x[i];
    out[r] = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
  }
}

void row_sum_looped_r16(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  row_sum_looped<16>(out, in, rows, cols);
}

void row_sum_looped_r128(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  row_sum_looped<128>(out, in, rows, cols);
}

void row_softmax_persistent(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  const std::size_t n = count(cols);
  std::vector<float> row(n);  // once per call, not per row
  for (std::size_t r = 0; r < count(rows); ++r) {
    std::copy(in + r * n, in + (r + 1) * n, row.begin());  // in place: the row is read first
    float m = kNegInf;
    for (float v : row) m = std::max(m, v);
    float s[4] = {};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      for (std::size_t j = 0; j < 4; ++j) {
        row[i + j] = std::exp(row[i + j] - m);
        s[j] += row[i + j];
      }
    }
    for (; i < n; ++i) {
      row[i] = std::exp(row[i] - m);
      s[0] += row[i];
    }
    const float inv = 1.0f / ((s[0] + s[1]) + (s[2] + s[3]));
    float* y = out + r * n;
    for (std::size_t j = 0; j < n; ++j) y[j] = row[j] * inv;
  }
}

void row_softmax_looped_r64(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  row_softmax_looped<64>(out, in, rows, cols);
}

void row_softmax_looped_r1024(float* out, const float* in, std::int64_t rows, std::int64_t cols) {
  row_softmax_looped<1024>(out, in, rows, cols);
}

ShapeKey row_reduce_bucket(float* const&, const float* const&, const std::int64_t& rows,
                           const std::int64_t& cols) {
  return {static_cast<std::int64_t>(std::bit_ceil(count(rows))),
          static_cast<std::int64_t>(std::bit_ceil(count(cols))), 0, 0};
}

Result<RowReduceKernel> make_row_sum(MultiKernelOptions options) {
  if (options.name.empty()) options.name = "row_sum";
  return RowReduceKernel::create(std::move(options),
                                 {{"row_sum_persistent", &row_sum_persistent},
                                  {"row_sum_looped_r16", &row_sum_looped_r16},
                                  {"row_sum_looped_r128", &row_sum_looped_r128}},
                                 &row_reduce_bucket, {{0, &sum_out_bytes, ArgUse::kOut}});
}

Result<RowReduceKernel> make_row_softmax(MultiKernelOptions options) {
  if (options.name.empty()) options.name = "row_softmax";
  return RowReduceKernel::create(std::move(options),
                                 {{"row_softmax_persistent", &row_softmax_persistent},
                                  {"row_softmax_looped_r64", &row_softmax_looped_r64},
                                  {"row_softmax_looped_r1024", &row_softmax_looped_r1024}},
                                 &row_reduce_bucket, {{0, &softmax_out_bytes, ArgUse::kOut}});
}

}  // namespace ktune

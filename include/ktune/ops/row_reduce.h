// Row reductions over a row-major float matrix [rows, cols], each in a persistent variant (the
// whole row at once) and looped variants (the row in chunks of RBLOCK), and the MultiKernel that
// picks among them per shape bucket: the case of Inductor's persistent-vs-looped MultiKernel.
#pragma once

#include <cstdint>

#include "ktune/runtime/multi_kernel.h"

namespace ktune {

// out, in, rows, cols. out[rows] for a sum, out[rows, cols] for softmax (out may equal in).
using RowReduceKernel = MultiKernel<float*, const float*, std::int64_t, std::int64_t>;

// out[r] = sum of in[r, :]. One pass over the row with eight independent accumulators.
void row_sum_persistent(float* out, const float* in, std::int64_t rows, std::int64_t cols);
// The row in chunks of RBLOCK added element-wise into RBLOCK partial sums, which are summed
// last (Triton's looped reduction: _tmp += x per chunk, then tl.sum(_tmp)).
void row_sum_looped_r16(float* out, const float* in, std::int64_t rows, std::int64_t cols);
void row_sum_looped_r128(float* out, const float* in, std::int64_t rows, std::int64_t cols);

// out[r, :] = softmax(in[r, :]). Reads the row once into a local buffer, then max, exp-sum and
// normalise over the buffer.
void row_softmax_persistent(float* out, const float* in, std::int64_t rows, std::int64_t cols);
// Online softmax: one pass over chunks of RBLOCK keeps a running max and a sum rescaled when the
// max grows; a second pass writes exp(x - max) / sum.
void row_softmax_looped_r64(float* out, const float* in, std::int64_t rows, std::int64_t cols);
void row_softmax_looped_r1024(float* out, const float* in, std::int64_t rows, std::int64_t cols);

// {bit_ceil(rows), bit_ceil(cols), 0, 0}; negative sizes count as 0.
[[nodiscard]] ShapeKey row_reduce_bucket(float* const& out, const float* const& in,
                                         const std::int64_t& rows, const std::int64_t& cols);

// MultiKernels over the variants above; options.name defaults to "row_sum" / "row_softmax".
[[nodiscard]] Result<RowReduceKernel> make_row_sum(MultiKernelOptions options = {});
[[nodiscard]] Result<RowReduceKernel> make_row_softmax(MultiKernelOptions options = {});

}  // namespace ktune

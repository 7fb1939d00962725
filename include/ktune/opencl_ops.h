// The built-in OpenCL problems, f32: a GEMM (row-major C[M,N] = A[M,K] * B[K,N]; the
// CLBlast-xgemm-like template kernels/opencl/gemm.cl) and a row sum (out[r] = sum_c X[r,c];
// kernels/opencl/row_reduce.cl). Each has a problem builder on opencl:<device>, a default search
// space, a template with launch and supports hooks, and a config-free naive reference kernel of
// the same signature.
// GEMM arguments: C (out), A (in), B (in), M, N, K (i32). Row sum: out (out), X (in), rows,
// cols (i32).
#pragma once

#include <cstdint>
#include <memory>

#include "ktune/choice.h"
#include "ktune/kernel_template.h"
#include "ktune/problem.h"
#include "ktune/search_space.h"

namespace ktune {

// op "gemm", name "M=64,N=96,K=80,f32"; contiguous row-major tensors on opencl:device_index.
[[nodiscard]] Problem opencl_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                                          int device_index = 0);
// MWG NWG KWG (work-group tile), MDIMC NDIMC (work-group shape), VWM VWN (vector widths), SA SB
// (local-memory caching of A and B, 0 or 1): about 40 configs of 64 to 256 work-items.
[[nodiscard]] SearchSpace opencl_gemm_space();
// "opencl_gemm"; supports: the GEMM's shapes, N % VWN == 0, local memory <= 32 KiB.
[[nodiscard]] std::shared_ptr<KernelTemplate> opencl_gemm_template(SearchSpace space);
// "opencl_gemm_naive": one work-item per output.
[[nodiscard]] ChoicePtr opencl_gemm_reference();

// op "row_sum", name "rows=256,cols=1000,f32".
[[nodiscard]] Problem opencl_row_sum_problem(std::int64_t rows, std::int64_t cols,
                                             int device_index = 0);
// WGS (work-items per row, a power of two) x VW (vector width): 12 configs.
[[nodiscard]] SearchSpace opencl_row_sum_space();
// "opencl_row_sum"; supports: cols % VW == 0.
[[nodiscard]] std::shared_ptr<KernelTemplate> opencl_row_sum_template(SearchSpace space);
// "opencl_row_sum_naive": one work-item per row.
[[nodiscard]] ChoicePtr opencl_row_sum_reference();

}  // namespace ktune

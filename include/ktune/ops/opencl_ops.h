// The built-in OpenCL problems, f32: a GEMM (row-major C[M,N] = A[M,K] * B[K,N]; the
// CLBlast-xgemm-like template kernels/opencl/gemm.cl) and a row sum (out[r] = sum_c X[r,c];
// kernels/opencl/row_reduce.cl). Each has a problem builder on opencl:<device>, a default search
// space, a template with launch and supports hooks, and a config-free naive reference kernel of
// the same signature.
// GEMM arguments: C (out), A (in), B (in), M, N, K (i32), then a fused epilogue's operands
// (include/ktune/core/epilogue.h: bias [N], rowbias [M], residual [M, N], f32). Row sum: out (out),
// X (in), rows, cols (i32).
#pragma once

#include <cstdint>
#include <memory>

#include "ktune/choice/choice.h"
#include "ktune/choice/kernel_template.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/problem.h"
#include "ktune/space/search_space.h"

namespace ktune {

// op "gemm", name "M=64,N=96,K=80,f32" (",bias+relu" with an epilogue); contiguous row-major
// tensors on opencl:device_index; after C, A, B, M, N, K the epilogue's operands.
[[nodiscard]] Problem opencl_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                                          int device_index = 0, const Epilogue& epilogue = {});
// MWG NWG KWG (work-group tile), MDIMC NDIMC (work-group shape), VWM VWN (vector widths), SA SB
// (local-memory caching of A and B, 0 or 1): about 40 configs of 64 to 256 work-items.
[[nodiscard]] SearchSpace opencl_gemm_space();
// "opencl_gemm"; supports: the GEMM's shapes, N % VWN == 0, local memory <= 32 KiB. With an
// epilogue, it is fused into every store (the hook's #defines in front of gemm.cl), the kernel
// takes its operands after K, and the template is named "opencl_gemm_<epilogue>", e.g.
// "opencl_gemm_bias_relu".
[[nodiscard]] std::shared_ptr<KernelTemplate> opencl_gemm_template(SearchSpace space,
                                                                   const Epilogue& epilogue = {});
// "opencl_gemm_naive" ("opencl_gemm_naive_<epilogue>"): one work-item per output, its finished
// dot product through the epilogue. It shares only the rendered epilogue() with the template,
// not the tiled store; test/opencl checks it against Epilogue::apply on the host.
[[nodiscard]] ChoicePtr opencl_gemm_reference(const Epilogue& epilogue = {});

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

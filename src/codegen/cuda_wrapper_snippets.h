// Private to the codegen module: the fixed parts of a generated CUDA program (the tensor ABI and
// its checks, the error and launch helpers, the pointwise and row kernels, the benchmark's
// device helpers), as CUDA C++ text. cuda_wrapper.cpp writes the parts that depend on the graph.
#pragma once

#include <string_view>

namespace ktune::codegen::detail {

// Includes of every generated CUDA program's host code (<graph>.cpp, a C++ compiler's).
inline constexpr std::string_view kCudaWrapperIncludes[] = {
    "<cuda.h>",     "<cuda_runtime.h>", "<cuda_fp16.h>", "<cuda_bf16.h>", "<cublas_v2.h>",
    "<cublasLt.h>", "<algorithm>",      "<cmath>",       "<cstdarg>",     "<cstddef>",
    "<cstdint>",    "<cstdio>",         "<cstdlib>",     "<cstring>",     "<initializer_list>",
    "<new>",        "<vector>",
};
// Includes of its kernels (<graph>_kernels.cu, nvcc's).
inline constexpr std::string_view kCudaKernelIncludes[] = {
    "<cuda_fp16.h>",
    "<cuda_bf16.h>",
    "<cmath>",
    "<cstdint>",
};

// KtuneCudaTensor, ktune_fail, ktune_check_tensor, the CUDA / driver / cuBLAS status macros.
[[nodiscard]] std::string_view cuda_runtime_snippet();
// The first lines of every program's host code, the same for all: kCudaWrapperIncludes and
// cuda_runtime_snippet() under the guard KTUNE_CUDA_PRELUDE, so that a precompiled copy of them
// (`c++ -include ktune_cuda_prelude.h`, its .gch beside it) can stand in for them.
[[nodiscard]] const std::string& cuda_prelude();
// The element conversions, the pointwise kernel with its functors, transpose, row_softmax,
// row_sum and layer_norm, each a __device__ template on the element type that the program's
// extern "C" instances call (plan_kernels).
[[nodiscard]] std::string_view cuda_kernels_snippet();
// The row kernels alone (part of cuda_kernels_snippet()): register-held rows where they fit.
[[nodiscard]] std::string_view cuda_row_kernels_snippet();
// ktune_lt_setup: a cuBLASLt GEMM's descriptors and its heuristic answer, as the worker's.
[[nodiscard]] std::string_view cuda_cublaslt_snippet();
// ktune_upload (host floats to a device tensor of a dtype), for the benchmark main().
[[nodiscard]] std::string_view cuda_benchmark_snippet();

}  // namespace ktune::codegen::detail

// cuBLAS and cuBLASLt GEMMs as extern choices on CUDA problems. The libraries are opened with
// dlopen (libcublas.so.13 / libcublasLt.so.13, then .so.12) in the worker that runs them; the
// parent only names them (and reads their versions for cache keys when it can).
//
// Problem shape (ops' CUDA GEMM): row-major C[M,N] = A[M,K] * B[K,N]; A, B, C of one dtype
// (f32, f16, bf16), fp32 accumulation; `bind` gives the argument indices {c, a, b, m, n, k}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ktune/choice/choice.h"
#include "ktune/core/epilogue.h"

namespace ktune {

// cublasGemmEx with CUBLAS_GEMM_DEFAULT; named `name`. `alpha`: C = alpha A B (LaunchSpec::alpha:
// an epilogue's leading scale folded into the call).
[[nodiscard]] ChoicePtr make_cublas_gemm_choice(std::vector<int> bind,
                                                std::string name = "cublas_gemm", double alpha = 1);

// The verification reference of the CUDA GEMMs: cublasGemmEx as above with
// CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION (partial sums of split-K algorithms in fp32,
// as every template accumulates), "cublas_gemm_fp32_reduction" (LaunchSpec::algo 1).
[[nodiscard]] ChoicePtr make_cublas_reference_gemm_choice(std::vector<int> bind);

// cuBLASLt: `count` choices "cublaslt_algo0" .. "cublaslt_algo<count-1>", the i-th running the
// i-th algorithm returned by cublasLtMatmulAlgoGetHeuristic for the problem (with a 32 MiB
// workspace each). A choice whose index is past what the heuristic returns is kUnsupported in
// the worker, so the parent needs no GPU to build the list. With `library_epilogue` (a
// cublasLtEpilogue_t, CUBLASLT_EPILOGUE_RELU_BIAS say; a bias epilogue needs bind[6], the bias
// vector of N), the heuristic is asked for that fused epilogue; the choices are named
// "<prefix>_algo<i>". `alpha` as for make_cublas_gemm_choice.
[[nodiscard]] std::vector<ChoicePtr> make_cublaslt_gemm_choices(
    const std::vector<int>& bind, int count, int library_epilogue = 0,
    std::string_view prefix = "cublaslt", double alpha = 1);

// cuBLASLt's fused epilogue (a cublasLtEpilogue_t) equal to `epilogue`, or 0 where it has none:
// bias, relu and bias+relu. Not GELU: cuBLASLt's is the tanh approximation, ours PyTorch's
// exact erf form. cuBLASLt's bias is a vector of N added to every row: our "bias".
[[nodiscard]] int cublaslt_epilogue_of(const Epilogue& epilogue);

}  // namespace ktune

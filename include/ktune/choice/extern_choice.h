// Extern choices: library calls that compete with templates and serve as references: OpenBLAS
// beside C++ kernels, cuBLAS beside CUDA kernels.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/choice/choice.h"

namespace ktune {

// Which kernel arguments a library call reads: role -> the problem's argument name.
// openblas.gemm roles: c, a, b (buffers; f32 -> sgemm, f64 -> dgemm), m, n, k (scalars);
// optional: trans_a, trans_b ("0"/"1" literals), alpha, beta (literals, default 1 and 0).
// Row-major C[m,n] = alpha * op(A) op(B) + beta * C.
// cublas.gemm (CUDA builds): roles c, a, b (buffers of one dtype: f32, f16, bf16; fp32
// accumulation), m, n, k (scalar arguments), nothing else; row-major C[m,n] = A[m,k] B[k,n] with
// cublasGemmEx on the GPU.
struct ExternDesc {
  std::string name;  // the choice's name in tables; defaults to the kind with '.' -> '_'
  std::string kind;  // "openblas.gemm"
  std::vector<std::pair<std::string, std::string>> bind;
  // The spec's argument names in order: kinds that run in a worker (cublas.gemm) bind by
  // argument index.
  std::vector<std::string> arg_names{};
};

// The kinds this build knows, e.g. {"openblas.gemm", "cublas.gemm"}.
[[nodiscard]] std::vector<std::string> extern_kinds();
// The kernel language a kind goes with: "c++" (it runs on the CPU) or "cuda"; empty for a kind
// this build does not know.
[[nodiscard]] std::string extern_kind_language(std::string_view kind);
// kInvalidArgument for an unknown kind or a missing or unknown role.
[[nodiscard]] Result<ChoicePtr> make_extern_choice(const ExternDesc& desc);

}  // namespace ktune

// Extern choices: library calls that compete with templates (OpenBLAS first; cuBLAS later).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ktune/choice/choice.h"

namespace ktune {

// Which kernel arguments a library call reads: role -> the problem's argument name.
// openblas.gemm roles: c, a, b (buffers; f32 -> sgemm, f64 -> dgemm), m, n, k (scalars);
// optional: trans_a, trans_b ("0"/"1" literals), alpha, beta (literals, default 1 and 0).
// Row-major C[m,n] = alpha * op(A) op(B) + beta * C.
struct ExternDesc {
  std::string name;  // the choice's name in tables; defaults to the kind with '.' -> '_'
  std::string kind;  // "openblas.gemm"
  std::vector<std::pair<std::string, std::string>> bind;
};

// The kinds this build knows, e.g. {"openblas.gemm"}.
[[nodiscard]] std::vector<std::string> extern_kinds();
// kInvalidArgument for an unknown kind or a missing or unknown role.
[[nodiscard]] Result<ChoicePtr> make_extern_choice(const ExternDesc& desc);

}  // namespace ktune

// The row alignment of a GEMM problem (gemm_signature: C, A, B, M, N, K): the widest copy, in
// elements, that starts every row of A, B and C on its own boundary. The tensor-core templates
// pick their global-memory copy width from it (gemm_wgmma.cu's VEC), so that exactly one
// variant of each tile shape serves a shape and none is compiled that cannot.
#pragma once

#include <cstdint>
#include <variant>

#include "ktune/core/problem.h"

namespace ktune {

// 8 (16-byte copies of 16-bit elements) when N, K and the element offsets of A, B and C are
// all multiples of 8; 2 (4-byte copies) when they are all even; else 1. A row of A starts at
// offset + r * K, of B at offset + k * N, of C at offset + r * N. Scalars that are missing or
// not integers (a problem the template's supports hook refuses anyway) give 1.
inline int gemm_row_alignment(const Problem& p) {
  if (p.args.size() < 6) return 1;
  std::int64_t all = 0;  // OR of everything that must be a multiple: its low bits decide
  for (int i = 4; i < 6; ++i) {
    const auto* v = std::get_if<std::int64_t>(&p.args[i].scalar);
    if (v == nullptr) return 1;
    all |= *v;
  }
  for (int i = 0; i < 3; ++i) all |= p.args[i].tensor.offset;
  return all % 8 == 0 ? 8 : all % 2 == 0 ? 2 : 1;
}

}  // namespace ktune

// Epilogue: what follows a GEMM, fused into its store (Inductor's `store_output` hook with an
// `epilogue_fn`): bias along the columns or the rows, scaling, ReLU/GELU/SiLU and a residual add,
// applied in the order given to the fp32 accumulator before the one rounding to C's dtype.
//
// Text form (CLI and specs), comma-separated, applied left to right:
//   bias       v += bias[col]          (a vector of N, broadcast over rows: a Linear layer's bias)
//   rowbias    v += rowbias[row]       (a vector of M)
//   scale=S    v *= S
//   relu       v = max(v, 0)
//   gelu       v = 0.5 v (1 + erf(v / sqrt 2))   (PyTorch's exact GELU)
//   silu       v = v / (1 + exp(-v))
//   residual   v += residual[row, col] (an M x N tensor of C's dtype)
// Each tensor operand appears at most once; a fused problem's arguments are C, A, B, M, N, K and
// then the operands in the order they appear.
//
// Rendering: render_defines() writes the #defines a template's hook reads. A template that
// supports epilogues defines, after them,
//   float epilogue(int row, int col, long long idx, float acc KTUNE_EPILOGUE_PARAMS)
//       KTUNE_EPILOGUE_BODY
// (idx = row * N + col, C's element), passes KTUNE_EPILOGUE_PARAMS on through its kernel's
// parameter list and KTUNE_EPILOGUE_ARGS at the calls, and provides KTUNE_LOAD(ptr, i): the
// element ptr[i] as a float. Without an epilogue the template's own defaults apply (identity).
// With a residual, KTUNE_EPILOGUE_MATRIX also names it (the operand of C's shape), for a
// template that loads it its own way (the TMA GEMM batches its loads on interior tiles).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/dtype.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"

namespace ktune {

enum class EpilogueOpKind { kBias, kRowBias, kScale, kRelu, kGelu, kSilu, kResidual };

struct EpilogueOp {
  EpilogueOpKind kind = EpilogueOpKind::kRelu;
  double scale = 1.0;  // kScale only

  friend bool operator==(const EpilogueOp&, const EpilogueOp&) = default;
};

// The shape of a tensor operand: [N] (bias), [M] (rowbias) or [M, N] (residual).
enum class EpilogueOperandShape { kColumns, kRows, kMatrix };

struct EpilogueOperand {
  std::string name;  // "bias", "rowbias", "residual": the problem argument's name
  EpilogueOperandShape shape = EpilogueOperandShape::kColumns;
};

// The language a template is written in; selects the math functions' names.
enum class EpilogueLanguage { kCpp, kCuda, kOpenCL };

class Epilogue {
 public:
  Epilogue() = default;  // none: the identity
  explicit Epilogue(std::vector<EpilogueOp> ops) : ops_(std::move(ops)) {}

  // "bias,relu", "scale=0.5,gelu", "rowbias,silu,residual"; "" and "none" are the identity.
  // Errors name the offending item and list what is accepted, without saying where the text came
  // from: the caller adds that (a spec position, "--epilogue").
  [[nodiscard]] static Result<Epilogue> parse(std::string_view text);

  [[nodiscard]] bool empty() const { return ops_.empty(); }
  [[nodiscard]] const std::vector<EpilogueOp>& ops() const { return ops_; }
  // Canonical text: "bias+relu", "scale=0.5+gelu"; "none" when empty. Part of problem names.
  [[nodiscard]] std::string name() const;
  // name() as part of an identifier: "bias_relu", "scale_0_5_gelu" (choice and template names).
  [[nodiscard]] std::string tag() const;
  // The tensor operands, in the order of the problem's arguments after C, A, B, M, N, K.
  [[nodiscard]] std::vector<EpilogueOperand> operands() const;

  // The #defines of the hook (see the top of this file), each on one line.
  // `pointer_type` declares an operand, e.g. "const ktune_gemm::elem_t* __restrict__".
  [[nodiscard]] std::string render_defines(std::string_view pointer_type,
                                           EpilogueLanguage language) const;

  // The reference: applies the epilogue in place to a row-major M x N float matrix `c`, with
  // the operands (as floats, in operands() order) read from `operands`.
  void apply(float* c, std::int64_t m, std::int64_t n,
             const std::vector<const float*>& operands) const;
  // One element, as the fused kernels compute it.
  [[nodiscard]] float apply_one(float acc, std::int64_t row, std::int64_t col, std::int64_t n,
                                const std::vector<const float*>& operands) const;

  // Problem arguments for the operands, of `dtype`, contiguous on `device`, for an M x N output.
  [[nodiscard]] std::vector<ProblemArg> problem_args(DType dtype, std::int64_t m, std::int64_t n,
                                                     const Device& device) const;

  friend bool operator==(const Epilogue&, const Epilogue&) = default;

 private:
  std::vector<EpilogueOp> ops_;
};

// A GEMM kernel's parameters: C (out), A, B (in) of `dtype`, the i32 scalars M, N, K, then the
// epilogue's operands (in, of `dtype`), as the templates with the hook take them.
[[nodiscard]] Signature gemm_signature(DType dtype, const Epilogue& epilogue);

}  // namespace ktune

// Problem: one concrete call to tune: the kernel's arguments with their TensorSpecs and scalar
// values. A spec's problem entry becomes a Problem once its size expressions are evaluated.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ktune/core/dtype.h"
#include "ktune/core/tensor_spec.h"

namespace ktune {

enum class ArgRole { kIn, kOut, kInOut, kScalar };

[[nodiscard]] std::string_view arg_role_name(ArgRole role);  // "in", "out", "inout", "scalar"

// One formal parameter of a kernel entry function, in call order.
struct KernelParam {
  std::string name;
  ArgRole role = ArgRole::kIn;
  DType dtype = DType::kF32;  // element type for buffers, value type for scalars
};
using Signature = std::vector<KernelParam>;

// A scalar argument's value; integers for integer dtypes, double for floating ones.
using ScalarValue = std::variant<std::int64_t, double>;

struct ProblemArg {
  KernelParam param;
  TensorSpec tensor;   // buffers only
  ScalarValue scalar;  // scalars only
};

struct Problem {
  std::string op;    // what is computed, e.g. "matmul" (the spec's name)
  std::string name;  // this instance, e.g. "M=32,N=4096,K=4096"
  std::vector<ProblemArg> args;

  [[nodiscard]] Signature signature() const;
  // Stable text identifying op, every TensorSpec key and every scalar value.
  [[nodiscard]] std::string key() const;
};

}  // namespace ktune

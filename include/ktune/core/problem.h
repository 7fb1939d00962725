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

// How an input buffer's data is made: a spec's `init:`. kRandom is ktune's own data (DataSet's
// distributions, tensor_fill.h); the others are the user's, because some kernels are only
// meaningful on their own domain (log(x) needs x > 0, a gather needs indices in range).
enum class InitKind { kRandom, kUniform, kNormal, kInt, kZeros, kOnes, kArange };

[[nodiscard]] std::string_view init_kind_name(InitKind kind);  // "random", "uniform", ...

struct DataInit {
  InitKind kind = InitKind::kRandom;
  double a = 0;  // uniform, int: low; normal: mean
  double b = 0;  // uniform, int: high (int: inclusive); normal: standard deviation

  // "uniform(0.5,2)", "zeros"; empty for kRandom, so that keys of problems without an init are
  // what they were before inits existed (tuning caches stay valid).
  [[nodiscard]] std::string key() const;
  bool operator==(const DataInit&) const = default;
};

struct ProblemArg {
  KernelParam param;
  TensorSpec tensor;   // buffers only
  ScalarValue scalar;  // scalars only
  DataInit init{};     // input buffers only; {} so that {param, tensor, scalar} stays complete
};

struct Problem {
  std::string op;    // what is computed, e.g. "matmul" (the spec's name)
  std::string name;  // this instance, e.g. "M=32,N=4096,K=4096"
  std::vector<ProblemArg> args;

  [[nodiscard]] Signature signature() const;
  // Stable text identifying op, every TensorSpec key, every scalar value and every init.
  [[nodiscard]] std::string key() const;
};

}  // namespace ktune

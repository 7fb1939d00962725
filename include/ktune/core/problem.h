// Problem: one concrete call to tune: the kernel's arguments with their TensorSpecs and scalar
// values. A spec's problem entry becomes a Problem once its size expressions are evaluated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ktune/core/dtype.h"
#include "ktune/core/tensor_spec.h"
#include "ktune/core/tolerance.h"

namespace ktune {

// kScratch: a device buffer the kernel may use as it likes (a multi-pass reduction's partial
// sums): redzoned and poisoned before every run (a kernel relying on zeros fails), never compared
// and not checked unchanged.
enum class ArgRole { kIn, kOut, kInOut, kScalar, kScratch };

// "in", "out", "inout", "scalar", "scratch"
[[nodiscard]] std::string_view arg_role_name(ArgRole role);

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
// kNpy: the contents of a NumPy .npy file (tensor/npy.h), matching the buffer's dtype and shape.
enum class InitKind { kRandom, kUniform, kNormal, kInt, kZeros, kOnes, kArange, kNpy };

[[nodiscard]] std::string_view init_kind_name(InitKind kind);  // "random", "uniform", ...

struct DataInit {
  InitKind kind = InitKind::kRandom;
  double a = 0;  // uniform, int: low; normal: mean
  double b = 0;  // uniform, int: high (int: inclusive); normal: standard deviation
  // kNpy: the file (absolute: a worker reads it from another folder) and the digest of its
  // contents when the problem was made, so that an edited file is another problem and a file
  // changed under a running tuning is refused instead of read.
  std::string path{};
  std::string digest{};

  // "uniform(0.5,2)", "zeros", "npy(<digest>)"; empty for kRandom, so that keys of problems without
  // an init are what they were before inits existed (tuning caches stay valid).
  [[nodiscard]] std::string key() const;
  bool operator==(const DataInit&) const = default;
};

struct ProblemArg {
  KernelParam param;
  TensorSpec tensor;   // buffers only
  ScalarValue scalar;  // scalars only
  DataInit init{};     // input buffers only; {} so that {param, tensor, scalar} stays complete
  // Outputs only: the output's own tolerance (else the request's, else its dtype's default) and
  // whether NaN is a legal value of it (output_tolerance() in compare.h combines them).
  std::optional<Tolerance> tolerance{};
  bool nan_ok = false;
};

struct Problem {
  std::string op;    // what is computed, e.g. "matmul" (the spec's name)
  std::string name;  // this instance, e.g. "M=32,N=4096,K=4096"
  std::vector<ProblemArg> args;

  [[nodiscard]] Signature signature() const;
  // Stable text identifying op, every TensorSpec key, every scalar value, every init and every
  // output's own tolerance and nan_ok.
  [[nodiscard]] std::string key() const;
};

}  // namespace ktune

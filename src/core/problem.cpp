// Problem: its signature and its stable key.
#include "ktune/core/problem.h"

#include <fmt/format.h>

namespace ktune {

std::string_view arg_role_name(ArgRole role) {
  switch (role) {
    case ArgRole::kIn:
      return "in";
    case ArgRole::kOut:
      return "out";
    case ArgRole::kInOut:
      return "inout";
    case ArgRole::kScalar:
      return "scalar";
    case ArgRole::kScratch:
      return "scratch";
  }
  return "unknown";
}

std::string_view init_kind_name(InitKind kind) {
  switch (kind) {
    case InitKind::kRandom:
      return "random";
    case InitKind::kUniform:
      return "uniform";
    case InitKind::kNormal:
      return "normal";
    case InitKind::kInt:
      return "int";
    case InitKind::kZeros:
      return "zeros";
    case InitKind::kOnes:
      return "ones";
    case InitKind::kArange:
      return "arange";
    case InitKind::kNpy:
      return "npy";
  }
  return "unknown";
}

std::string DataInit::key() const {
  switch (kind) {
    case InitKind::kRandom:
      return "";
    case InitKind::kUniform:
    case InitKind::kNormal:
    case InitKind::kInt:
      return fmt::format("{}({},{})", init_kind_name(kind), a, b);
    case InitKind::kNpy:
      // The contents, not the path: a file moved is the same problem, one edited another.
      return fmt::format("npy({})", digest);
    default:
      return std::string(init_kind_name(kind));
  }
}

Signature Problem::signature() const {
  Signature sig;
  sig.reserve(args.size());
  for (const ProblemArg& a : args) sig.push_back(a.param);
  return sig;
}

std::string Problem::key() const {
  std::string key = op + "(";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ProblemArg& a = args[i];
    if (i) key += ", ";
    key += fmt::format("{} {} ", arg_role_name(a.param.role), a.param.name);
    if (a.param.role == ArgRole::kScalar) {
      key += fmt::format("{}=", dtype_name(a.param.dtype));
      if (const auto* v = std::get_if<std::int64_t>(&a.scalar)) {
        key += fmt::format("{}", *v);
      } else {
        key += fmt::format("{}", std::get<double>(a.scalar));
      }
    } else {
      key += a.tensor.key();
      if (a.init.kind != InitKind::kRandom) key += fmt::format(" init={}", a.init.key());
      // Only when set, so that keys of problems without them are what they were.
      if (a.tolerance) {
        key += fmt::format(" tol={},{},{}", a.tolerance->rtol, a.tolerance->atol,
                           a.tolerance->max_rel_l2);
        if (a.tolerance->rms_atol != 0) key += fmt::format(",rms={}", a.tolerance->rms_atol);
      }
      if (a.nan_ok) key += " nan_ok";
    }
  }
  return key + ")";
}

}  // namespace ktune

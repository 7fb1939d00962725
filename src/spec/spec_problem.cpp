// spec_signature and make_problem: a spec's argument declarations evaluated for one problem.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "core/checked_size.h"
#include "ktune/spec/spec.h"
#include "spec/spec_expr.h"
#include "spec/spec_sections.h"
#include "tensor/npy.h"

namespace ktune {
namespace {

using spec_detail::Bindings;

constexpr double kMaxExact = 9.0e15;  // below 2^53: every integer up to here is a double

std::pair<double, double> integer_range(DType dtype) {
  switch (dtype) {
    case DType::kI8:
      return {-128, 127};
    case DType::kI32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default:
      return {-kMaxExact, kMaxExact};
  }
}

struct Evaluator {
  const Spec& spec;
  const ArgDecl& arg;
  std::size_t index;
  const std::string& problem;
  const Bindings& bindings;

  // "<file>:<line>: args[1].shape[0]: 'M-100' is -68 in problem 'small' (arg 'A'); expected ..."
  std::unexpected<Error> fail(std::string_view field, std::string_view what,
                              std::string_view expected) const {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}:{}: args[{}].{}: {} in problem '{}' (arg '{}'){}", spec.file.string(),
                    arg.line, index, field, what, problem, arg.name, expected));
  }

  Result<double> value(std::string_view field, const std::string& expr) const {
    auto v = spec_detail::eval_expr(expr, bindings);
    if (!v) return fail(field, fmt::format("'{}': {}", expr, v.error()), "");
    return *v;
  }

  // Shapes, strides and offsets: whole numbers >= 0.
  Result<std::int64_t> extent(std::string_view field, const std::string& expr) const {
    auto v = value(field, expr);
    if (!v) return std::unexpected(v.error());
    if (*v < 0 || *v != std::nearbyint(*v) || *v > kMaxExact) {
      return fail(field, fmt::format("'{}' is {}", expr, *v), "; expected a non-negative integer");
    }
    return static_cast<std::int64_t>(*v);
  }

  Result<std::vector<std::int64_t>> extents(std::string_view field,
                                            const std::vector<std::string>& exprs) const {
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < exprs.size(); ++i) {
      auto v = extent(fmt::format("{}[{}]", field, i), exprs[i]);
      if (!v) return std::unexpected(v.error());
      out.push_back(*v);
    }
    return out;
  }

  // The init's bounds for this problem: low <= high, std >= 0, and for an integer dtype values
  // that fit it (a store past its range would wrap).
  // An npy init: the file, relative to the spec's folder, made absolute (a worker reads it from
  // its own folder), checked against this problem's shape and hashed.
  Result<DataInit> npy(const std::vector<std::int64_t>& shape) const {
    DataInit out{InitKind::kNpy, 0, 0, {}, {}};
    std::error_code ec;
    const std::filesystem::path path =
        std::filesystem::absolute(spec.file.parent_path() / arg.init_path, ec).lexically_normal();
    if (ec)
      return fail("init", fmt::format("npy '{}': {}", arg.init_path.string(), ec.message()), "");
    auto digest = npy_digest(path, arg.dtype, shape);
    if (!digest) return fail("init", digest.error().message, "");
    out.path = path.string();
    out.digest = std::move(*digest);
    return out;
  }

  Result<DataInit> init(std::int64_t numel) const {
    DataInit out{arg.init, 0, 0, {}, {}};
    if (arg.init == InitKind::kArange) {
      const double hi = integer_range(arg.dtype).second;
      if (!is_floating(arg.dtype) && static_cast<double>(numel - 1) > hi) {
        return fail("init", fmt::format("arange up to {}", numel - 1),
                    fmt::format("; expected values that fit {}", dtype_name(arg.dtype)));
      }
      return out;
    }
    if (arg.init_a.empty()) return out;
    auto a = value("init", arg.init_a);
    if (!a) return std::unexpected(a.error());
    auto b = value("init", arg.init_b);
    if (!b) return std::unexpected(b.error());
    out.a = *a;
    out.b = *b;
    const std::string name(init_kind_name(arg.init));
    if (arg.init == InitKind::kNormal) {
      if (out.b < 0)
        return fail("init", fmt::format("normal std '{}' is {}", arg.init_b, out.b),
                    "; expected a standard deviation >= 0");
      return out;
    }
    if (arg.init == InitKind::kInt ? std::ceil(out.a) > std::floor(out.b) : out.a > out.b) {
      return fail("init",
                  fmt::format("{} low '{}' is {} and high '{}' is {}", name, arg.init_a, out.a,
                              arg.init_b, out.b),
                  arg.init == InitKind::kInt ? "; expected an integer in [low, high]"
                                             : "; expected low <= high");
    }
    auto [lo, hi] = integer_range(arg.dtype);
    if (!is_floating(arg.dtype) && (out.a < lo || out.b > hi)) {
      return fail("init", fmt::format("{} [{}, {}]", name, out.a, out.b),
                  fmt::format("; expected bounds that fit {}", dtype_name(arg.dtype)));
    }
    return out;
  }

  Result<ScalarValue> scalar() const {
    auto v = value("value", arg.value);
    if (!v) return std::unexpected(v.error());
    if (is_floating(arg.dtype)) return ScalarValue(*v);
    auto [lo, hi] = integer_range(arg.dtype);
    if (*v != std::nearbyint(*v) || *v < lo || *v > hi) {
      return fail("value", fmt::format("'{}' is {}", arg.value, *v),
                  fmt::format("; expected an integer that fits {}", dtype_name(arg.dtype)));
    }
    return ScalarValue(static_cast<std::int64_t>(*v));
  }
};

}  // namespace

std::unexpected<Error> spec_detail::op_spec_error(const Spec& spec, std::string_view what) {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}:{}: op: spec '{}' names the built-in op {}, whose {} are its "
                                "own; expected a spec with a kernel (ktune tune runs op specs)",
                                spec.file.string(), spec.op.line, spec.name, spec.op.name, what));
}

Signature spec_signature(const Spec& spec) {
  Signature signature;
  for (const ArgDecl& arg : spec.args) signature.push_back({arg.name, arg.role, arg.dtype});
  for (const EpilogueOperand& o : spec.epilogue.operands()) {
    signature.push_back({o.name, ArgRole::kIn, spec.args[spec.output].dtype});
  }
  return signature;
}

Result<Problem> make_problem(const Spec& spec, const ProblemDecl& decl) {
  if (!spec.op.name.empty()) return spec_detail::op_spec_error(spec, "problems");
  Problem problem;
  problem.op = spec.name;
  problem.name = decl.name.empty() ? spec_detail::default_problem_name(decl) : decl.name;
  const Bindings& bindings = decl.sizes;
  // A device kernel's buffers live on its device (the worker's device 0: it sees one).
  Device device;
  if (spec.kernel.language == "cuda") device = {DeviceKind::kCuda, 0};
  if (spec.kernel.language == "opencl") device = {DeviceKind::kOpenCL, 0};
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    const ArgDecl& arg = spec.args[i];
    Evaluator eval{spec, arg, i, problem.name, bindings};
    ProblemArg out;
    out.param = {arg.name, arg.role, arg.dtype};
    if (arg.role == ArgRole::kScalar) {
      auto value = eval.scalar();
      if (!value) return std::unexpected(value.error());
      out.scalar = *value;
      problem.args.push_back(std::move(out));
      continue;
    }
    auto sizes = eval.extents("shape", arg.shape);
    if (!sizes) return std::unexpected(sizes.error());
    // Each size is exact below 2^53, but their product can pass int64, which TensorSpec's own
    // arithmetic does not check (fuzz/fuzz_spec.cpp checks that none gets through).
    if (!checked_numel(*sizes)) {
      return eval.fail(
          "shape", fmt::format("[{}] is [{}]", fmt::join(arg.shape, ", "), fmt::join(*sizes, ", ")),
          "; expected at most 2^63 - 1 elements");
    }
    if (arg.strides.empty()) {
      out.tensor = TensorSpec::contiguous(arg.dtype, std::move(*sizes));
    } else {
      auto strides = eval.extents("strides", arg.strides);
      if (!strides) return std::unexpected(strides.error());
      out.tensor.dtype = arg.dtype;
      out.tensor.sizes = std::move(*sizes);
      out.tensor.strides = std::move(*strides);
    }
    out.tensor.device = device;
    if (!arg.offset.empty()) {
      auto offset = eval.extent("offset", arg.offset);
      if (!offset) return std::unexpected(offset.error());
      out.tensor.offset = *offset;
    }
    if (!checked_storage_bytes(out.tensor)) {
      return eval.fail(arg.strides.empty() ? "shape" : "strides",
                       "the storage that the sizes, strides and offset span",
                       "; expected at most 2^63 - 1 bytes");
    }
    auto init =
        arg.init == InitKind::kNpy ? eval.npy(out.tensor.sizes) : eval.init(out.tensor.numel());
    if (!init) return std::unexpected(init.error());
    out.init = *init;
    out.tolerance = arg.tolerance;
    out.nan_ok = arg.nan_ok;
    problem.args.push_back(std::move(out));
  }
  if (!spec.epilogue.empty()) {
    // parse_epilogue made sure the output is 2-D: [M, N].
    const ProblemArg& c = problem.args[spec.output];
    std::vector<ProblemArg> operands = spec.epilogue.problem_args(
        c.param.dtype, c.tensor.sizes[0], c.tensor.sizes[1], c.tensor.device);
    for (ProblemArg& a : operands) problem.args.push_back(std::move(a));
    problem.name = fmt::format("{},{}", problem.name, spec.epilogue.name());
  }
  return problem;
}

}  // namespace ktune

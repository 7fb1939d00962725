// The "openblas.gemm" extern choice: row-major C[m,n] = alpha * op(A) op(B) + beta * C through
// cblas_sgemm / cblas_dgemm. The binding maps roles to the problem's argument names; supports()
// resolves it against a Problem (kinds, dtypes, shapes, unit inner strides) into a GemmPlan that
// load() turns into a KernelFn. Buffer pointers point at the view's first element.
#include "choice/openblas_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "choice/openblas_library.h"
#include "core/hash.h"

namespace ktune {
namespace {

constexpr const char* kKind = "openblas.gemm";
constexpr const char* kRequiredRoles[] = {"c", "a", "b", "m", "n", "k"};
constexpr const char* kOptionalRoles[] = {"trans_a", "trans_b", "alpha", "beta"};

struct GemmBinding {
  std::map<std::string, std::string> names;  // required role -> the problem's argument name
  bool trans_a = false;
  bool trans_b = false;
  double alpha = 1;
  double beta = 0;
};

// Indices into the problem's arguments and everything cblas needs besides the pointers.
struct GemmPlan {
  std::size_t c = 0, a = 0, b = 0, m = 0, n = 0, k = 0;
  DType dtype = DType::kF32;
  DType m_dtype = DType::kI64, n_dtype = DType::kI64, k_dtype = DType::kI64;
  std::int64_t mv = 0, nv = 0, kv = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
};

// "OpenBLAS 0.3.21" from the library's own config string (the run-time library, not the header).
std::string openblas_version() {
  auto lib = openblas_library();
  if (!lib) return "OpenBLAS unavailable";
  std::string config = (*lib)->get_config();
  std::size_t first = config.find(' ');
  std::size_t second = first == std::string::npos ? first : config.find(' ', first + 1);
  return config.substr(0, second);
}

std::optional<double> parse_double(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// The value of an integer scalar argument as passed in `args` (see Module::launch).
std::int64_t read_int(DType dtype, const void* p) {
  return dtype == DType::kI32 ? *static_cast<const std::int32_t*>(p)
                              : *static_cast<const std::int64_t*>(p);
}

class OpenBlasGemmChoice final : public Choice {
 public:
  OpenBlasGemmChoice(std::string name, GemmBinding binding)
      : name_(std::move(name)), bind_(std::move(binding)) {}

  Kind kind() const override { return Kind::kExtern; }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override;
  std::string info() const override;
  Status supports(const Problem& problem) const override {
    Result<GemmPlan> plan = make_plan(problem);
    if (!plan) return std::unexpected(plan.error());
    return {};
  }
  Status compile(const Backend&) override { return {}; }
  Result<KernelFn> load(const Backend&, const Problem& problem) override { return kernel(problem); }
  Result<LaunchSpec> launch_spec(const Problem& problem) const override;
  // The call on `problem`'s arguments, what load() and a worker's launch both run.
  Result<KernelFn> kernel(const Problem& problem) const;

 private:
  Result<GemmPlan> make_plan(const Problem& problem) const;
  Result<std::size_t> find_arg(const Problem& problem, const std::string& role) const;
  Result<std::int64_t> leading_dim(const Problem& problem, const std::string& role,
                                   std::size_t index, std::int64_t rows, std::int64_t cols) const;
  std::unexpected<Error> fail(std::string what) const {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{} ({}): {}", name_, kKind, what));
  }

  std::string name_;
  GemmBinding bind_;
  // For info(), once a problem has been seen (by the parent, which may never load the choice
  // itself when a worker runs it): a display cache, hence mutable.
  mutable std::optional<DType> loaded_dtype_;
};

std::string OpenBlasGemmChoice::hash_key() const {
  Hasher h;
  h.add(kKind).add("v1");
  for (const auto& [role, arg] : bind_.names) h.add(role).add(arg);
  h.add(fmt::format("ta={} tb={} alpha={} beta={}", bind_.trans_a, bind_.trans_b, bind_.alpha,
                    bind_.beta));
  auto lib = openblas_library();
  h.add(lib ? std::string((*lib)->get_config()) : std::string("unavailable"));
  return h.hex();
}

std::string OpenBlasGemmChoice::info() const {
  std::string fn = "cblas_?gemm";
  if (loaded_dtype_) fn = *loaded_dtype_ == DType::kF64 ? "cblas_dgemm" : "cblas_sgemm";
  std::string trans = fmt::format("{}{}", bind_.trans_a ? 'T' : 'N', bind_.trans_b ? 'T' : 'N');
  auto lib = openblas_library();
  return fmt::format("{} {} ({}, {} threads)", fn, trans, openblas_version(),
                     lib ? (*lib)->get_num_threads() : 0);
}

Result<std::size_t> OpenBlasGemmChoice::find_arg(const Problem& problem,
                                                 const std::string& role) const {
  const std::string& arg = bind_.names.at(role);
  for (std::size_t i = 0; i < problem.args.size(); ++i) {
    if (problem.args[i].param.name == arg) return i;
  }
  return fail(fmt::format("role '{}' is bound to '{}', which the problem has no argument named",
                          role, arg));
}

Result<std::int64_t> OpenBlasGemmChoice::leading_dim(const Problem& problem,
                                                     const std::string& role, std::size_t index,
                                                     std::int64_t rows, std::int64_t cols) const {
  const ProblemArg& arg = problem.args[index];
  const TensorSpec& t = arg.tensor;
  if (t.sizes.size() != 2 || t.strides.size() != 2) {
    return fail(fmt::format("'{}' ({}) must be 2-D; got {}", arg.param.name, role, t.key()));
  }
  if (t.sizes[0] != rows || t.sizes[1] != cols) {
    return fail(fmt::format("'{}' ({}) has sizes [{},{}]; expected [{},{}] from m, n, k",
                            arg.param.name, role, t.sizes[0], t.sizes[1], rows, cols));
  }
  if (t.device.kind != DeviceKind::kCpu) {
    return fail(
        fmt::format("'{}' ({}) is on {}; expected cpu", arg.param.name, role, t.device.str()));
  }
  if (cols > 1 && t.strides[1] != 1) {
    return fail(fmt::format("'{}' ({}) needs a unit inner stride; got strides {{{},{}}}",
                            arg.param.name, role, t.strides[0], t.strides[1]));
  }
  std::int64_t min_ld = std::max<std::int64_t>(1, cols);
  std::int64_t ld = rows > 1 ? t.strides[0] : min_ld;
  if (ld < min_ld || ld > INT_MAX) {
    return fail(fmt::format("'{}' ({}) has row stride {}; expected {} to {}", arg.param.name, role,
                            ld, min_ld, INT_MAX));
  }
  return ld;
}

Result<GemmPlan> OpenBlasGemmChoice::make_plan(const Problem& problem) const {
  GemmPlan plan;
  std::pair<const char*, std::size_t*> slots[] = {{"c", &plan.c}, {"a", &plan.a}, {"b", &plan.b},
                                                  {"m", &plan.m}, {"n", &plan.n}, {"k", &plan.k}};
  for (auto& [role, slot] : slots) {
    Result<std::size_t> i = find_arg(problem, role);
    if (!i) return std::unexpected(i.error());
    *slot = *i;
  }
  for (auto [role, index] : {std::pair{"m", plan.m}, {"n", plan.n}, {"k", plan.k}}) {
    const ProblemArg& arg = problem.args[index];
    if (arg.param.role != ArgRole::kScalar ||
        (arg.param.dtype != DType::kI32 && arg.param.dtype != DType::kI64)) {
      return fail(fmt::format("'{}' ({}) must be an i32 or i64 scalar; got {} {}", arg.param.name,
                              role, arg_role_name(arg.param.role), dtype_name(arg.param.dtype)));
    }
    const std::int64_t* v = std::get_if<std::int64_t>(&arg.scalar);
    if (v == nullptr || *v < 0 || *v > INT_MAX) {
      return fail(
          fmt::format("'{}' ({}) must hold an integer in [0, {}]", arg.param.name, role, INT_MAX));
    }
  }
  plan.mv = std::get<std::int64_t>(problem.args[plan.m].scalar);
  plan.nv = std::get<std::int64_t>(problem.args[plan.n].scalar);
  plan.kv = std::get<std::int64_t>(problem.args[plan.k].scalar);
  plan.m_dtype = problem.args[plan.m].param.dtype;
  plan.n_dtype = problem.args[plan.n].param.dtype;
  plan.k_dtype = problem.args[plan.k].param.dtype;

  const KernelParam& c = problem.args[plan.c].param;
  if (c.role != ArgRole::kOut && c.role != ArgRole::kInOut) {
    return fail(fmt::format("'{}' (c) must be an out or inout buffer; got {}", c.name,
                            arg_role_name(c.role)));
  }
  if (bind_.beta != 0 && c.role != ArgRole::kInOut) {
    return fail(fmt::format("beta = {} reads '{}' (c), so it must be inout; got {}", bind_.beta,
                            c.name, arg_role_name(c.role)));
  }
  if (c.dtype != DType::kF32 && c.dtype != DType::kF64) {
    return fail(fmt::format("'{}' (c) must be f32 or f64; got {}", c.name, dtype_name(c.dtype)));
  }
  plan.dtype = c.dtype;
  for (auto [role, index] : {std::pair{"a", plan.a}, {"b", plan.b}}) {
    const KernelParam& p = problem.args[index].param;
    if (p.role != ArgRole::kIn && p.role != ArgRole::kInOut) {
      return fail(fmt::format("'{}' ({}) must be an in or inout buffer; got {}", p.name, role,
                              arg_role_name(p.role)));
    }
    if (p.dtype != plan.dtype) {
      return fail(fmt::format("'{}' ({}) must have c's dtype {}; got {}", p.name, role,
                              dtype_name(plan.dtype), dtype_name(p.dtype)));
    }
  }
  auto ldc = leading_dim(problem, "c", plan.c, plan.mv, plan.nv);
  if (!ldc) return std::unexpected(ldc.error());
  auto lda = bind_.trans_a ? leading_dim(problem, "a", plan.a, plan.kv, plan.mv)
                           : leading_dim(problem, "a", plan.a, plan.mv, plan.kv);
  if (!lda) return std::unexpected(lda.error());
  auto ldb = bind_.trans_b ? leading_dim(problem, "b", plan.b, plan.nv, plan.kv)
                           : leading_dim(problem, "b", plan.b, plan.kv, plan.nv);
  if (!ldb) return std::unexpected(ldb.error());
  plan.ldc = *ldc;
  plan.lda = *lda;
  plan.ldb = *ldb;
  return plan;
}

Result<LaunchSpec> OpenBlasGemmChoice::launch_spec(const Problem& problem) const {
  Result<GemmPlan> plan = make_plan(problem);
  if (!plan) return std::unexpected(plan.error());
  loaded_dtype_ = plan->dtype;
  LaunchSpec spec;
  spec.kind = LaunchKind::kCpuLibrary;
  spec.library = "openblas";
  // fmt's shortest round-trip form: the worker parses back the same doubles.
  spec.entry = fmt::format("gemm {}{} alpha={} beta={}", bind_.trans_a ? 'T' : 'N',
                           bind_.trans_b ? 'T' : 'N', bind_.alpha, bind_.beta);
  for (std::size_t i : {plan->c, plan->a, plan->b, plan->m, plan->n, plan->k}) {
    spec.bind.push_back(static_cast<int>(i));
  }
  return spec;
}

Result<KernelFn> OpenBlasGemmChoice::kernel(const Problem& problem) const {
  Result<GemmPlan> plan = make_plan(problem);
  if (!plan) return std::unexpected(plan.error());
  auto lib = openblas_library();
  if (!lib) return std::unexpected(lib.error());
  loaded_dtype_ = plan->dtype;
  const CBLAS_TRANSPOSE ta = bind_.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = bind_.trans_b ? CblasTrans : CblasNoTrans;
  const double alpha = bind_.alpha;
  const double beta = bind_.beta;
  std::string where = name_;
  return KernelFn([p = *plan, ta, tb, alpha, beta, where, lib = *lib](void* const* args) -> Status {
    std::int64_t m = read_int(p.m_dtype, args[p.m]);
    std::int64_t n = read_int(p.n_dtype, args[p.n]);
    std::int64_t k = read_int(p.k_dtype, args[p.k]);
    if (m != p.mv || n != p.nv || k != p.kv) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: launched with m,n,k = {},{},{}; loaded for {},{},{}",
                                    where, m, n, k, p.mv, p.nv, p.kv));
    }
    auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n), bk = static_cast<blasint>(k);
    auto lda = static_cast<blasint>(p.lda), ldb = static_cast<blasint>(p.ldb);
    auto ldc = static_cast<blasint>(p.ldc);
    if (p.dtype == DType::kF32) {
      lib->sgemm(CblasRowMajor, ta, tb, bm, bn, bk, static_cast<float>(alpha),
                 static_cast<const float*>(args[p.a]), lda, static_cast<const float*>(args[p.b]),
                 ldb, static_cast<float>(beta), static_cast<float*>(args[p.c]), ldc);
    } else {
      lib->dgemm(CblasRowMajor, ta, tb, bm, bn, bk, alpha, static_cast<const double*>(args[p.a]),
                 lda, static_cast<const double*>(args[p.b]), ldb, beta,
                 static_cast<double*>(args[p.c]), ldc);
    }
    return {};
  });
}

Result<GemmBinding> parse_binding(const ExternDesc& desc, const std::string& name) {
  auto fail = [&](std::string what) {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{} ({}): {}", name, kKind, what));
  };
  GemmBinding b;
  std::map<std::string, std::string> seen;
  for (const auto& [role, value] : desc.bind) {
    bool known =
        std::ranges::count(kRequiredRoles, role) + std::ranges::count(kOptionalRoles, role) > 0;
    if (!known) {
      return fail(
          fmt::format("unknown role '{}'; roles: c, a, b, m, n, k, trans_a, trans_b, "
                      "alpha, beta",
                      role));
    }
    if (!seen.emplace(role, value).second) return fail(fmt::format("role '{}' bound twice", role));
    if (value.empty()) return fail(fmt::format("role '{}' is bound to an empty name", role));
  }
  for (const char* role : kRequiredRoles) {
    auto it = seen.find(role);
    if (it == seen.end()) {
      return fail(fmt::format("missing role '{}'; required roles: c, a, b, m, n, k", role));
    }
    b.names[role] = it->second;
  }
  for (auto [role, flag] : {std::pair{"trans_a", &b.trans_a}, {"trans_b", &b.trans_b}}) {
    auto it = seen.find(role);
    if (it == seen.end()) continue;
    if (it->second != "0" && it->second != "1") {
      return fail(fmt::format("role '{}' must be \"0\" or \"1\"; got \"{}\"", role, it->second));
    }
    *flag = it->second == "1";
  }
  for (auto [role, slot] : {std::pair{"alpha", &b.alpha}, {"beta", &b.beta}}) {
    auto it = seen.find(role);
    if (it == seen.end()) continue;
    std::optional<double> v = parse_double(it->second);
    if (!v) return fail(fmt::format("role '{}' must be a number; got \"{}\"", role, it->second));
    *slot = *v;
  }
  return b;
}

}  // namespace

Result<KernelFn> load_openblas_launch(const LaunchSpec& spec, const Problem& problem) {
  auto fail = [&](std::string what) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("openblas launch '{}': {}", spec.entry, what));
  };
  if (spec.library != "openblas") {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("CPU library '{}': unknown; known: openblas", spec.library));
  }
  // "gemm NT alpha=1 beta=0", as launch_spec() writes it.
  char ta = 0, tb = 0;
  char alpha[64] = {}, beta[64] = {};
  if (std::sscanf(spec.entry.c_str(), "gemm %c%c alpha=%63s beta=%63s", &ta, &tb, alpha, beta) !=
          4 ||
      (ta != 'N' && ta != 'T') || (tb != 'N' && tb != 'T')) {
    return fail("expected \"gemm <N|T><N|T> alpha=<x> beta=<y>\"");
  }
  GemmBinding b;
  b.trans_a = ta == 'T';
  b.trans_b = tb == 'T';
  std::optional<double> a = parse_double(alpha), c = parse_double(beta);
  if (!a || !c) return fail("alpha and beta must be numbers");
  b.alpha = *a;
  b.beta = *c;
  if (spec.bind.size() != std::size(kRequiredRoles)) {
    return fail(fmt::format("bind has {} arguments; expected {} (c, a, b, m, n, k)",
                            spec.bind.size(), std::size(kRequiredRoles)));
  }
  for (std::size_t i = 0; i < spec.bind.size(); ++i) {
    const int arg = spec.bind[i];
    if (arg < 0 || static_cast<std::size_t>(arg) >= problem.args.size()) {
      return fail(
          fmt::format("bind[{}] = {} is not an argument of problem '{}'", i, arg, problem.name));
    }
    b.names[kRequiredRoles[i]] = problem.args[static_cast<std::size_t>(arg)].param.name;
  }
  return OpenBlasGemmChoice("openblas", std::move(b)).kernel(problem);
}

Result<ChoicePtr> make_openblas_gemm(const ExternDesc& desc) {
  std::string name = desc.name;
  if (name.empty()) {
    name = desc.kind;
    std::ranges::replace(name, '.', '_');
  }
  Result<GemmBinding> binding = parse_binding(desc, name);
  if (!binding) return std::unexpected(binding.error());
  return ChoicePtr(std::make_unique<OpenBlasGemmChoice>(std::move(name), std::move(*binding)));
}

}  // namespace ktune

// The cuBLAS and cuBLASLt GEMM choices: a name, a cache identity and a launch spec each; what
// they run lives in the worker (cublas_gemm_runner.cpp). Also the problem check both share.
#include "ktune/choice/cublas_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <string>
#include <utility>

#include "choice/cublas_gemm_runner.h"
#include "choice/cublas_library.h"
#include "core/hash.h"

namespace ktune {
namespace {

constexpr const char* kRoles[] = {"c", "a", "b", "m", "n", "k"};

// Largest power of two dividing `bytes`, at most 16 (16 for 0).
std::uint32_t alignment_of(std::int64_t bytes) {
  if (bytes == 0) return 16;
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(16, std::uint64_t{1} << std::countr_zero(std::uint64_t(bytes))));
}

class GemmPlanner {
 public:
  GemmPlanner(const Problem& problem, std::string_view who) : problem_(problem), who_(who) {}

  std::unexpected<Error> fail(std::string what) const {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", who_, what));
  }

  Result<std::int64_t> scalar(std::size_t index, const char* role) const {
    const ProblemArg& arg = problem_.args[index];
    if (arg.param.role != ArgRole::kScalar ||
        (arg.param.dtype != DType::kI32 && arg.param.dtype != DType::kI64)) {
      return fail(fmt::format("'{}' ({}) must be an i32 or i64 scalar; got {} {}", arg.param.name,
                              role, arg_role_name(arg.param.role), dtype_name(arg.param.dtype)));
    }
    const std::int64_t* v = std::get_if<std::int64_t>(&arg.scalar);
    if (v == nullptr || *v < 1 || *v > INT_MAX) {
      return fail(
          fmt::format("'{}' ({}) must hold an integer in [1, {}]", arg.param.name, role, INT_MAX));
    }
    return *v;
  }

  // The row stride of a row-major [rows, cols] view on the GPU with a unit inner stride.
  Result<std::int64_t> matrix(std::size_t index, const char* role, DType dtype, std::int64_t rows,
                              std::int64_t cols, std::uint32_t* align) const {
    const ProblemArg& arg = problem_.args[index];
    const KernelParam& p = arg.param;
    const TensorSpec& t = arg.tensor;
    const bool is_c = role[0] == 'c';
    const bool role_ok = is_c ? p.role == ArgRole::kOut || p.role == ArgRole::kInOut
                              : p.role == ArgRole::kIn || p.role == ArgRole::kInOut;
    if (!role_ok) {
      return fail(fmt::format("'{}' ({}) must be {} buffer; got {}", p.name, role,
                              is_c ? "an out or inout" : "an in or inout", arg_role_name(p.role)));
    }
    if (p.dtype != dtype || t.dtype != dtype) {
      return fail(fmt::format("'{}' ({}) must have c's dtype {}; got {}", p.name, role,
                              dtype_name(dtype), dtype_name(p.dtype != dtype ? p.dtype : t.dtype)));
    }
    if (t.device.kind != DeviceKind::kCuda) {
      return fail(
          fmt::format("'{}' ({}) is on {}; expected a CUDA device", p.name, role, t.device.str()));
    }
    if (t.sizes.size() != 2 || t.strides.size() != 2) {
      return fail(fmt::format("'{}' ({}) must be 2-D; got {}", p.name, role, t.key()));
    }
    if (t.sizes[0] != rows || t.sizes[1] != cols) {
      return fail(fmt::format("'{}' ({}) has sizes [{},{}]; expected [{},{}] from m, n, k", p.name,
                              role, t.sizes[0], t.sizes[1], rows, cols));
    }
    if (cols > 1 && t.strides[1] != 1) {
      return fail(
          fmt::format("'{}' ({}) must be row-major with a unit inner stride; got strides "
                      "{{{},{}}}",
                      p.name, role, t.strides[0], t.strides[1]));
    }
    const std::int64_t ld = rows > 1 ? t.strides[0] : cols;
    if (ld < cols || ld > INT_MAX) {
      return fail(fmt::format("'{}' ({}) has row stride {}; expected {} to {}", p.name, role, ld,
                              cols, INT_MAX));
    }
    if (t.offset < 0) return fail(fmt::format("'{}' ({}) has a negative offset", p.name, role));
    *align = alignment_of(t.offset * static_cast<std::int64_t>(dtype_size(dtype)));
    return ld;
  }

 private:
  const Problem& problem_;
  std::string_view who_;
};

// The choice for cuBLAS (library "cublas", algo -1) and for one cuBLASLt heuristic result.
class CublasGemmChoice final : public Choice {
 public:
  CublasGemmChoice(std::string name, std::string library, int algo, std::vector<int> bind,
                   int library_epilogue = 0, double alpha = 1)
      : name_(std::move(name)),
        library_(std::move(library)),
        algo_(algo),
        library_epilogue_(library_epilogue),
        alpha_(alpha),
        bind_(std::move(bind)) {}

  Kind kind() const override { return Kind::kExtern; }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override {
    Hasher h;
    h.add(library_ == "cublas" ? "cublas.gemm" : "cublaslt.gemm").add("v1");
    h.add(library_ == "cublas" ? cublas_version_text() : cublaslt_version_text());
    h.add(std::int64_t{algo_});
    for (int i : bind_) h.add(std::int64_t{i});
    if (library_epilogue_ != 0) h.add("epilogue").add(std::int64_t{library_epilogue_});
    if (alpha_ != 1) h.add("alpha").add(fmt::format("{}", alpha_));
    return h.hex();
  }
  std::string info() const override {
    const std::string scaled = alpha_ != 1 ? fmt::format(", alpha={}", alpha_) : "";
    return describe() + scaled;
  }
  std::string describe() const {
    if (library_ == "cublas") {
      return algo_ == 1 ? "cublasGemmEx, fp32 reduction" : "cublasGemmEx";
    }
    if (library_epilogue_ != 0) {
      const char* what = library_epilogue_ == CUBLASLT_EPILOGUE_RELU_BIAS ? "RELU_BIAS"
                         : library_epilogue_ == CUBLASLT_EPILOGUE_BIAS    ? "BIAS"
                         : library_epilogue_ == CUBLASLT_EPILOGUE_RELU    ? "RELU"
                                                                          : "other";
      return fmt::format("cublasLt heuristic #{} with its epilogue {} ({})", algo_, what,
                         library_epilogue_);
    }
    return fmt::format("cublasLt heuristic #{}", algo_);
  }
  Status supports(const Problem& problem) const override {
    Result<CublasGemmPlan> plan = make_cublas_gemm_plan(problem, bind_, name_);
    if (!plan) return std::unexpected(plan.error());
    return {};
  }
  Status compile(const Backend&) override { return {}; }
  Result<KernelFn> load(const Backend&, const Problem&) override {
    return make_error(ErrorCode::kUnavailable,
                      fmt::format("{}: runs in the CUDA worker (a {} launch), not in ktune's own "
                                  "process",
                                  name_, launch_kind_name(LaunchKind::kCudaLibrary)));
  }
  Result<LaunchSpec> launch_spec(const Problem& problem) const override {
    if (Status s = supports(problem); !s) return std::unexpected(s.error());
    LaunchSpec spec;
    spec.kind = LaunchKind::kCudaLibrary;
    spec.library = library_;
    spec.algo = algo_;
    spec.bind = bind_;
    spec.library_epilogue = library_epilogue_;
    spec.alpha = alpha_;
    return spec;
  }

 private:
  std::string name_;
  std::string library_;
  int algo_ = -1;
  int library_epilogue_ = 0;
  double alpha_ = 1;
  std::vector<int> bind_;
};

}  // namespace

Result<CublasGemmPlan> make_cublas_gemm_plan(const Problem& problem, const std::vector<int>& bind,
                                             std::string_view who) {
  GemmPlanner planner(problem, who);
  if (bind.size() != 6 && bind.size() != 7) {
    return planner.fail(
        fmt::format("bind must hold 6 or 7 argument indices {{c, a, b, m, n, k[, bias]}}; got {}",
                    bind.size()));
  }
  for (std::size_t r = 0; r < bind.size(); ++r) {
    if (bind[r] < 0 || static_cast<std::size_t>(bind[r]) >= problem.args.size()) {
      return planner.fail(fmt::format("bind index {} ({}) is outside the problem's {} arguments",
                                      bind[r], r < 6 ? kRoles[r] : "bias", problem.args.size()));
    }
  }
  CublasGemmPlan plan;
  plan.c = static_cast<std::size_t>(bind[0]);
  plan.a = static_cast<std::size_t>(bind[1]);
  plan.b = static_cast<std::size_t>(bind[2]);
  plan.arg_count = problem.args.size();
  if (plan.c == plan.a || plan.c == plan.b) {
    return planner.fail("c must be another argument than a and b");
  }
  std::int64_t* dims[] = {&plan.m, &plan.n, &plan.k};
  for (int d = 0; d < 3; ++d) {
    Result<std::int64_t> v = planner.scalar(static_cast<std::size_t>(bind[3 + d]), kRoles[3 + d]);
    if (!v) return std::unexpected(v.error());
    *dims[d] = *v;
  }
  plan.dtype = problem.args[plan.c].param.dtype;
  if (plan.dtype != DType::kF32 && plan.dtype != DType::kF16 && plan.dtype != DType::kBF16) {
    return planner.fail(fmt::format("'{}' (c) must be f32, f16 or bf16; got {}",
                                    problem.args[plan.c].param.name, dtype_name(plan.dtype)));
  }
  auto ldc = planner.matrix(plan.c, "c", plan.dtype, plan.m, plan.n, &plan.align_c);
  if (!ldc) return std::unexpected(ldc.error());
  auto lda = planner.matrix(plan.a, "a", plan.dtype, plan.m, plan.k, &plan.align_a);
  if (!lda) return std::unexpected(lda.error());
  auto ldb = planner.matrix(plan.b, "b", plan.dtype, plan.k, plan.n, &plan.align_b);
  if (!ldb) return std::unexpected(ldb.error());
  plan.ldc = *ldc;
  plan.lda = *lda;
  plan.ldb = *ldb;
  if (bind.size() == 7) {
    plan.bias = static_cast<std::size_t>(bind[6]);
    const ProblemArg& b = problem.args[plan.bias];
    const TensorSpec want = TensorSpec::contiguous(plan.dtype, {plan.n}, b.tensor.device);
    if (b.param.role != ArgRole::kIn || b.tensor.device.kind != DeviceKind::kCuda ||
        b.tensor.sizes != want.sizes || b.tensor.strides != want.strides ||
        b.tensor.dtype != plan.dtype || b.tensor.offset % 8 != 0) {
      return planner.fail(
          fmt::format("'{}' (bias) must be an in buffer of {} contiguous {} on a "
                      "CUDA device, 16-byte aligned; got {}",
                      b.param.name, plan.n, dtype_name(plan.dtype), b.tensor.key()));
    }
  }
  return plan;
}

ChoicePtr make_cublas_gemm_choice(std::vector<int> bind, std::string name, double alpha) {
  return std::make_unique<CublasGemmChoice>(std::move(name), "cublas", -1, std::move(bind), 0,
                                            alpha);
}

ChoicePtr make_cublas_reference_gemm_choice(std::vector<int> bind) {
  return std::make_unique<CublasGemmChoice>("cublas_gemm_fp32_reduction", "cublas", 1,
                                            std::move(bind));
}

std::vector<ChoicePtr> make_cublaslt_gemm_choices(const std::vector<int>& bind, int count,
                                                  int library_epilogue, std::string_view prefix,
                                                  double alpha) {
  std::vector<ChoicePtr> out;
  out.reserve(static_cast<std::size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    out.push_back(std::make_unique<CublasGemmChoice>(fmt::format("{}_algo{}", prefix, i),
                                                     "cublaslt", i, bind, library_epilogue, alpha));
  }
  return out;
}

int cublaslt_epilogue_of(const Epilogue& epilogue) {
  const std::vector<EpilogueOp>& ops = epilogue.ops();
  const auto is = [&](std::size_t i, EpilogueOpKind k) { return ops[i].kind == k; };
  if (ops.size() == 1 && is(0, EpilogueOpKind::kBias)) return CUBLASLT_EPILOGUE_BIAS;
  if (ops.size() == 1 && is(0, EpilogueOpKind::kRelu)) return CUBLASLT_EPILOGUE_RELU;
  if (ops.size() == 2 && is(0, EpilogueOpKind::kBias) && is(1, EpilogueOpKind::kRelu)) {
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  }
  return 0;
}

}  // namespace ktune

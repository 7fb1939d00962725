// EpiloguePass: the epilogue as a separate pass over C, compiled (the baseline) or on the host
// (the reference).
#include "ktune/choice/epilogue_pass.h"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/hash.h"

namespace ktune {
namespace {

// Where a pass finds its data in a problem's arguments.
struct PassPlan {
  std::size_t c = 0;
  std::vector<std::size_t> operands;
  std::int64_t m = 0, n = 0;
};

std::string identifier(std::string_view text) {
  std::string out;
  for (char ch : text) {
    const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_';
    out += keep ? ch : '_';
  }
  return out;
}

class EpiloguePassChoice final : public Choice {
 public:
  EpiloguePassChoice(Epilogue epilogue, std::string output, EpiloguePassKind kind)
      : epilogue_(std::move(epilogue)),
        output_(std::move(output)),
        kind_(kind),
        name_(fmt::format("epilogue_pass_{}{}", identifier(epilogue_.name()),
                          kind_ == EpiloguePassKind::kHost ? "_host" : "")) {}

  Kind kind() const override { return Kind::kExtern; }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override {
    Hasher h;
    h.add("ktune.epilogue_pass.v1").add(epilogue_.name()).add(output_);
    h.add(kind_ == EpiloguePassKind::kHost ? std::string("host") : epilogue_pass_source(epilogue_));
    return h.hex();
  }
  std::string info() const override {
    return fmt::format("{} pass over {}: {}",
                       kind_ == EpiloguePassKind::kHost ? "host" : "compiled", output_,
                       epilogue_.name());
  }
  Status supports(const Problem& problem) const override {
    Result<PassPlan> plan = make_plan(problem);
    if (!plan) return std::unexpected(plan.error());
    return {};
  }
  Status compile(const Backend& backend) override;
  double compile_s() const override { return compile_s_; }
  Result<KernelFn> load(const Backend& backend, const Problem& problem) override;
  const Artifact* artifact() const override { return artifact_ ? &*artifact_ : nullptr; }

 private:
  Result<PassPlan> make_plan(const Problem& problem) const;
  std::unexpected<Error> fail(std::string what) const {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", name_, what));
  }

  Epilogue epilogue_;
  std::string output_;
  EpiloguePassKind kind_;
  std::string name_;
  std::optional<Artifact> artifact_;
  double compile_s_ = 0;
};

Result<PassPlan> EpiloguePassChoice::make_plan(const Problem& problem) const {
  auto find = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < problem.args.size(); ++i) {
      if (problem.args[i].param.name == name) return i;
    }
    return std::nullopt;
  };
  // A buffer of f32 on the CPU, contiguous, with `sizes`.
  auto check = [&](std::size_t i, const std::vector<std::int64_t>& sizes) -> Status {
    const ProblemArg& a = problem.args[i];
    const TensorSpec want = TensorSpec::contiguous(DType::kF32, sizes);
    if (a.param.role == ArgRole::kScalar || a.tensor.dtype != DType::kF32 ||
        a.tensor.device.kind != DeviceKind::kCpu || a.tensor.sizes != want.sizes ||
        a.tensor.strides != want.strides) {
      return fail(fmt::format("argument '{}' is {}; expected a contiguous f32 CPU buffer of {}",
                              a.param.name, a.tensor.key(), want.key()));
    }
    return {};
  };
  PassPlan plan;
  std::optional<std::size_t> c = find(output_);
  if (!c) return fail(fmt::format("the problem has no argument '{}' (the output)", output_));
  plan.c = *c;
  const TensorSpec& ct = problem.args[plan.c].tensor;
  if (ct.sizes.size() != 2) {
    return fail(fmt::format("output '{}' is {}; expected 2-D", output_, ct.key()));
  }
  plan.m = ct.sizes[0];
  plan.n = ct.sizes[1];
  if (Status s = check(plan.c, {plan.m, plan.n}); !s) return std::unexpected(s.error());
  for (const EpilogueOperand& o : epilogue_.operands()) {
    std::optional<std::size_t> i = find(o.name);
    if (!i) return fail(fmt::format("the problem has no argument '{}' (an operand)", o.name));
    const std::vector<std::int64_t> sizes =
        o.shape == EpilogueOperandShape::kColumns ? std::vector{plan.n}
        : o.shape == EpilogueOperandShape::kRows  ? std::vector{plan.m}
                                                  : std::vector{plan.m, plan.n};
    if (Status s = check(*i, sizes); !s) return std::unexpected(s.error());
    plan.operands.push_back(*i);
  }
  return plan;
}

Status EpiloguePassChoice::compile(const Backend& backend) {
  if (kind_ == EpiloguePassKind::kHost || artifact_) return {};
  KernelSource source;
  source.name = name_;
  source.code = epilogue_pass_source(epilogue_);
  source.entry = "ktune_epilogue_pass";
  source.signature = {{"C", ArgRole::kInOut, DType::kF32},
                      {"M", ArgRole::kScalar, DType::kI64},
                      {"N", ArgRole::kScalar, DType::kI64}};
  for (const EpilogueOperand& o : epilogue_.operands()) {
    source.signature.push_back({o.name, ArgRole::kIn, DType::kF32});
  }
  source.extra_flags = {"-fopenmp"};
  Result<Artifact> artifact = backend.compile(source);
  if (!artifact) return std::unexpected(artifact.error());
  compile_s_ = artifact->from_cache ? 0 : artifact->compile_s;
  artifact_ = std::move(*artifact);
  return {};
}

Result<KernelFn> EpiloguePassChoice::load(const Backend& backend, const Problem& problem) {
  Result<PassPlan> plan = make_plan(problem);
  if (!plan) return std::unexpected(plan.error());
  if (kind_ == EpiloguePassKind::kHost) {
    return KernelFn([epilogue = epilogue_, plan = *plan](void* const* args) -> Status {
      std::vector<const float*> operands;
      for (std::size_t i : plan.operands) operands.push_back(static_cast<const float*>(args[i]));
      epilogue.apply(static_cast<float*>(args[plan.c]), plan.m, plan.n, operands);
      return {};
    });
  }
  if (Status s = compile(backend); !s) return std::unexpected(s.error());
  Result<std::unique_ptr<Module>> module = backend.load(*artifact_);
  if (!module) return std::unexpected(module.error());
  std::shared_ptr<Module> shared = std::move(*module);  // KernelFn must be copyable
  return KernelFn([shared, plan = *plan](void* const* args) -> Status {
    // The pass's own argument list: C, M, N, operands; at most three operands.
    std::int64_t m = plan.m, n = plan.n;
    void* pass_args[6] = {args[plan.c], &m, &n, nullptr, nullptr, nullptr};
    for (std::size_t i = 0; i < plan.operands.size(); ++i)
      pass_args[3 + i] = args[plan.operands[i]];
    return shared->launch(pass_args);
  });
}

}  // namespace

std::string epilogue_pass_source(const Epilogue& epilogue) {
  return fmt::format(
      R"(// The separate epilogue pass ({}): C[M, N] rewritten in place, row by row.
#include <cmath>
{}#define KTUNE_LOAD(ptr, i) ((ptr)[i])
static inline float epilogue(int row, int col, long long idx, float acc KTUNE_EPILOGUE_PARAMS)
    KTUNE_EPILOGUE_BODY

void ktune_epilogue_pass(float* __restrict__ C, long long M, long long N KTUNE_EPILOGUE_PARAMS) {{
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < M; ++i) {{
    float* __restrict__ c = C + i * N;
    for (long long j = 0; j < N; ++j)
      c[j] = epilogue((int)i, (int)j, i * N + j, c[j] KTUNE_EPILOGUE_ARGS);
  }}
}}
)",
      epilogue.name(),
      epilogue.render_defines("const float* __restrict__", EpilogueLanguage::kCpp));
}

ChoicePtr make_epilogue_pass(Epilogue epilogue, std::string output, EpiloguePassKind kind) {
  return std::make_unique<EpiloguePassChoice>(std::move(epilogue), std::move(output), kind);
}

}  // namespace ktune

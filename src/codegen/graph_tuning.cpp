// pick_gemms and the gemm spec check: which spec argument is C, A, B, M, N, K, and turning the
// Selector's winner into something the wrapper can emit.
#include "ktune/graph_tuning.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ktune::codegen {
namespace {

std::string strip(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

std::optional<GemmOperand> operand_of(const ArgDecl& a) {
  if (a.role == ArgRole::kScalar) {
    const std::string v = strip(a.value);
    if (v == "M") return GemmOperand::kM;
    if (v == "N") return GemmOperand::kN;
    if (v == "K") return GemmOperand::kK;
    return std::nullopt;
  }
  if (a.dtype != DType::kF32 || a.shape.size() != 2 || !a.strides.empty()) return std::nullopt;
  const std::string shape = strip(a.shape[0]) + "," + strip(a.shape[1]);
  if (a.role == ArgRole::kOut && shape == "M,N") return GemmOperand::kC;
  if (a.role == ArgRole::kIn && shape == "M,K") return GemmOperand::kA;
  if (a.role == ArgRole::kIn && shape == "K,N") return GemmOperand::kB;
  return std::nullopt;
}

std::unexpected<Error> bad_spec(const Spec& spec, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: gemm spec: {}", spec.file.string(), what));
}

// The externs the wrapper can emit: openblas.gemm binding c, a, b, m, n, k to C, A, B, M, N, K,
// with no transposes, alpha or beta.
Status check_extern(const GemmSpec& g, const ExternDesc& e) {
  if (e.kind != "openblas.gemm") {
    return bad_spec(g.spec, fmt::format("extern '{}': kind '{}' cannot be emitted by the wrapper; "
                                        "expected openblas.gemm",
                                        e.name, e.kind));
  }
  const char* roles[] = {"c", "a", "b", "m", "n", "k"};
  const GemmOperand want[] = {GemmOperand::kC, GemmOperand::kA, GemmOperand::kB,
                              GemmOperand::kM, GemmOperand::kN, GemmOperand::kK};
  for (const auto& [role, arg] : e.bind) {
    const auto r = std::find(std::begin(roles), std::end(roles), role);
    if (r == std::end(roles)) {
      return bad_spec(g.spec, fmt::format("extern '{}': binding '{}' is not supported by the "
                                          "wrapper; expected only c, a, b, m, n, k",
                                          e.name, role));
    }
    bool ok = false;
    for (std::size_t i = 0; i < g.spec.args.size(); ++i) {
      if (g.spec.args[i].name == arg) ok = g.operands[i] == want[r - std::begin(roles)];
    }
    if (!ok) {
      return bad_spec(g.spec, fmt::format("extern '{}': '{}' must be bound to the {} argument",
                                          e.name, role, std::string(1, char(std::toupper(**r)))));
    }
  }
  return {};
}

}  // namespace

Result<GemmSpec> load_gemm_spec(const std::filesystem::path& file) {
  auto spec = load_spec(file);
  if (!spec) return std::unexpected(spec.error());
  GemmSpec g;
  g.spec = std::move(*spec);
  bool seen[6] = {};
  for (const ArgDecl& a : g.spec.args) {
    auto op = operand_of(a);
    if (!op || seen[static_cast<int>(*op)]) {
      return bad_spec(g.spec,
                      fmt::format("argument '{}' is not one of C (out f32 [M, N]), A (in f32 "
                                  "[M, K]), B (in f32 [K, N]) or the scalars M, N, K (each once)",
                                  a.name));
    }
    seen[static_cast<int>(*op)] = true;
    g.operands.push_back(*op);
  }
  if (g.operands.size() != 6) {
    return bad_spec(
        g.spec, fmt::format("expected 6 arguments (C, A, B, M, N, K); got {}", g.operands.size()));
  }
  for (const ExternDesc& e : g.spec.externs) {
    if (auto ok = check_extern(g, e); !ok) return std::unexpected(ok.error());
  }
  auto choices = make_spec_choices(g.spec);
  if (!choices) return std::unexpected(choices.error());
  g.choices = std::move(*choices);
  g.template_candidates = g.choices.candidates.size() - g.spec.externs.size();
  return g;
}

Result<std::size_t> find_candidate(const GemmSpec& spec, const std::string& name) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < spec.choices.candidates.size(); ++i) {
    if (spec.choices.candidates[i]->name() == name) return i;
    if (names.size() < 4) names.push_back(spec.choices.candidates[i]->name());
  }
  return make_error(
      ErrorCode::kNotFound,
      fmt::format("{}: no candidate named '{}'; the spec has {} ({}, ...)", spec.spec.file.string(),
                  name, spec.choices.candidates.size(), fmt::join(names, ", ")));
}

Result<GemmPick> make_gemm_pick(const GemmSpec& spec, std::size_t index) {
  KTUNE_CHECK(index < spec.choices.candidates.size());
  const Choice& c = *spec.choices.candidates[index];
  GemmPick pick;
  pick.choice = c.name();
  pick.info = c.info();
  if (index >= spec.template_candidates) {
    pick.is_extern = true;
    return pick;
  }
  // Templates' choices are their space's valid configs in enumeration order.
  const std::vector<Config> configs = spec.choices.kernel_template->space().enumerate();
  KTUNE_CHECK(index < configs.size());
  auto source = spec.choices.kernel_template->render(configs[index]);
  if (!source) return std::unexpected(source.error());
  pick.source = std::move(*source);
  pick.operands = spec.operands;
  return pick;
}

Result<std::map<std::string, GemmPick>> pick_gemms(const Graph& graph, GemmSpec& spec,
                                                   Selector* selector,
                                                   const std::optional<std::string>& force) {
  std::optional<std::size_t> forced;
  if (force) {
    auto index = find_candidate(spec, *force);
    if (!index) return std::unexpected(index.error());
    forced = *index;
  }
  std::map<std::string, GemmPick> picks;
  std::map<std::string, GemmPick> by_problem;  // each distinct shape is tuned once
  for (const GraphNode& n : graph.nodes) {
    if (n.op != OpKind::kGemm) continue;
    ProblemDecl decl;
    decl.name = n.name;
    decl.sizes = {{"M", n.out.sizes[0]}, {"N", n.out.sizes[1]}, {"K", 0}};
    for (const GraphInput& in : graph.inputs) {
      if (in.name == n.inputs[0]) decl.sizes[2].second = in.spec.sizes[1];
    }
    for (const GraphNode& m : graph.nodes) {
      if (m.name == n.inputs[0]) decl.sizes[2].second = m.out.sizes[1];
    }
    auto problem = make_problem(spec.spec, decl);
    if (!problem) return std::unexpected(problem.error());
    const std::string key = problem->key();
    if (auto it = by_problem.find(key); it != by_problem.end()) {
      picks.emplace(n.name, it->second);
      continue;
    }
    std::size_t index = 0;
    bool from_cache = false;
    if (forced) {
      index = *forced;
    } else {
      KTUNE_CHECK(selector != nullptr);
      auto sel = selector->select(*problem, spec.choices.candidates, spec.choices.reference.get());
      if (!sel) {
        return make_error(sel.error().code, fmt::format("{}: gemm '{}': {}", graph.file.string(),
                                                        n.name, sel.error().message));
      }
      index = sel->winner_index;
      from_cache = sel->from_cache;
    }
    auto pick = make_gemm_pick(spec, index);
    if (!pick) return std::unexpected(pick.error());
    pick->from_cache = from_cache;
    by_problem.emplace(key, *pick);
    picks.emplace(n.name, std::move(*pick));
  }
  return picks;
}

}  // namespace ktune::codegen

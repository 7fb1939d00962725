// pick_gemms and the gemm spec check: which spec argument is C, A, B, M, N, K, turning the
// Selector's winner into something the wrapper can emit, and the fusion decision of each chain
// (find_fusions is in graph_fusion.cpp).
#include "ktune/codegen/graph_tuning.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "ktune/codegen/graph_fusion.h"

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
  if (!g.spec.epilogue.empty()) {
    // Fusion is the graph's to decide, from the nodes after each gemm.
    return bad_spec(g.spec, fmt::format("has epilogue '{}'; a graph's gemm spec must be a plain "
                                        "GEMM (pointwise nodes after a gemm are fused when that "
                                        "wins)",
                                        g.spec.epilogue.name()));
  }
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
  Result<std::vector<Config>> configs = spec.choices.kernel_template->space().enumerate();
  if (!configs) return std::unexpected(configs.error());
  KTUNE_CHECK(index < configs->size());
  auto source = spec.choices.kernel_template->render((*configs)[index]);
  if (!source) return std::unexpected(source.error());
  pick.source = std::move(*source);
  pick.operands = spec.operands;
  return pick;
}

namespace {

ProblemDecl gemm_decl(const Graph& graph, const GraphNode& n) {
  ProblemDecl decl;
  decl.name = n.name;
  decl.sizes = {{"M", n.out.sizes[0]}, {"N", n.out.sizes[1]}, {"K", 0}};
  for (const GraphInput& in : graph.inputs) {
    if (in.name == n.inputs[0]) decl.sizes[2].second = in.spec.sizes[1];
  }
  for (const GraphNode& m : graph.nodes) {
    if (m.name == n.inputs[0]) decl.sizes[2].second = m.out.sizes[1];
  }
  return decl;
}

// The gemm spec with `epilogue` fused: the same candidates in the same order (template configs,
// then each extern as `<name>+epilogue`), so that an index means the same config in both.
Result<GemmSpec> fused_spec(const GemmSpec& plain, const Epilogue& epilogue) {
  GemmSpec g;
  g.spec = plain.spec;
  g.spec.epilogue = epilogue;
  g.spec.output = static_cast<std::size_t>(
      std::find(plain.operands.begin(), plain.operands.end(), GemmOperand::kC) -
      plain.operands.begin());
  g.operands = plain.operands;
  auto choices = make_spec_choices(g.spec);
  if (!choices) return std::unexpected(choices.error());
  g.choices = std::move(*choices);
  g.template_candidates = g.choices.candidates.size() - g.spec.externs.size();
  KTUNE_CHECK(g.choices.candidates.size() == plain.choices.candidates.size());
  return g;
}

// The fastest valid median among the record's template configs (`templates`) or its unfused
// pairs, with its name.
std::optional<std::pair<double, std::string>> fastest(const TuningRecord& record,
                                                      const GemmSpec& fused, bool templates) {
  std::optional<std::pair<double, std::string>> best;
  for (std::size_t i = 0; i < fused.choices.candidates.size(); ++i) {
    if ((i < fused.template_candidates) != templates) continue;
    for (const CandidateRecord& c : record.candidates) {
      if (c.name != fused.choices.candidates[i]->name() || c.outcome != Outcome::kOk || !c.stats ||
          c.stats->median_ns <= 0) {
        continue;
      }
      if (!best || c.stats->median_ns < best->first) best = {c.stats->median_ns, c.name};
    }
  }
  return best;
}

// What the fused problem of one chain decided; shared by the gemms with the same problem.
struct FusedOutcome {
  std::size_t index = 0;  // into the fused spec's candidates
  bool from_cache = false;
  std::string why;  // "1.16x the best unfused pair", "openblas+epilogue won", "forced"
};

std::string why_of(const TuningRecord& record, const GemmSpec& fused, std::size_t winner) {
  const bool fused_won = winner < fused.template_candidates;
  const std::string& name = fused.choices.candidates[winner]->name();
  const auto mine = fastest(record, fused, fused_won);
  const auto other = fastest(record, fused, !fused_won);
  if (fused_won) {
    if (!other || !mine) return "no unfused pair ran";
    return fmt::format("{:.2f}x the best unfused pair", other->first / mine->first);
  }
  if (!other || !mine) return name + " won; no fused config ran";
  return fmt::format("{} won, {:.2f}x the best fused config", name, other->first / mine->first);
}

Result<FusedOutcome> tune_fused(const Graph& graph, const GraphNode& n, GemmSpec& fused,
                                const ProblemDecl& decl, Selector* selector,
                                std::optional<std::size_t> forced,
                                std::map<std::string, FusedOutcome>& memo) {
  auto problem = make_problem(fused.spec, decl);
  if (!problem) return std::unexpected(problem.error());
  const std::string key = problem->key();
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  FusedOutcome o;
  if (forced) {
    o.index = *forced;
    o.why = o.index < fused.template_candidates
                ? "forced"
                : fmt::format("{} forced", fused.choices.candidates[o.index]->name());
  } else {
    KTUNE_CHECK(selector != nullptr);
    auto sel = selector->select(*problem, fused.choices.candidates, fused.choices.reference.get());
    if (!sel) {
      return make_error(sel.error().code,
                        fmt::format("{}: gemm '{}' with epilogue {}: {}", graph.file.string(),
                                    n.name, fused.spec.epilogue.name(), sel.error().message));
    }
    o.index = sel->winner_index;
    o.from_cache = sel->from_cache;
    o.why = why_of(sel->record, fused, o.index);
  }
  memo.emplace(key, o);
  return o;
}

void report(std::FILE* f, const std::string& line) {
  if (f == nullptr) return;
  std::fputs(("ktune: " + line + "\n").c_str(), f);
  std::fflush(f);
}

}  // namespace

Result<std::map<std::string, GemmPick>> pick_gemms(const Graph& graph, GemmSpec& spec,
                                                   Selector* selector, const PickOptions& options) {
  std::optional<std::size_t> forced;
  if (options.force) {
    auto index = find_candidate(spec, *options.force);
    if (!index) return std::unexpected(index.error());
    forced = *index;
  }
  std::vector<FusionChain> chains;
  if (options.fuse) chains = find_fusions(graph);
  std::map<std::size_t, const FusionChain*> chain_of;  // by the gemm's node index
  for (const FusionChain& c : chains) chain_of.emplace(c.gemm, &c);
  std::map<std::string, GemmSpec> fused_specs;  // by epilogue name
  std::map<std::string, FusedOutcome> by_fused_problem;

  std::map<std::string, GemmPick> picks;
  std::map<std::string, GemmPick> by_problem;  // each distinct shape is tuned once
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& n = graph.nodes[i];
    if (n.op != OpKind::kGemm) continue;
    const ProblemDecl decl = gemm_decl(graph, n);
    std::string chain, why;
    if (auto c = chain_of.find(i); c != chain_of.end()) {
      const FusionChain& fc = *c->second;
      auto fs = fused_specs.find(fc.epilogue.name());
      if (fs == fused_specs.end()) {
        auto made = fused_spec(spec, fc.epilogue);
        if (!made) return std::unexpected(made.error());
        fs = fused_specs.emplace(fc.epilogue.name(), std::move(*made)).first;
      }
      auto outcome = tune_fused(graph, n, fs->second, decl, selector, forced, by_fused_problem);
      if (!outcome) return std::unexpected(outcome.error());
      chain = fc.label(graph);
      why = outcome->why;
      if (outcome->index < fs->second.template_candidates) {
        auto pick = make_gemm_pick(fs->second, outcome->index);
        if (!pick) return std::unexpected(pick.error());
        pick->from_cache = outcome->from_cache;
        for (std::size_t k : fc.nodes) pick->fused.push_back(graph.nodes[k].name);
        pick->epilogue_args = fc.operands;
        pick->chain = chain;
        pick->fusion = why;
        report(options.progress, fmt::format("fused {}: {} ({})", chain, pick->choice, why));
        picks.emplace(n.name, std::move(*pick));
        continue;
      }
      report(options.progress, fmt::format("not fused {}: {}", chain, why));
    }
    auto problem = make_problem(spec.spec, decl);
    if (!problem) return std::unexpected(problem.error());
    const std::string key = problem->key();
    auto it = by_problem.find(key);
    if (it == by_problem.end()) {
      std::size_t index = 0;
      bool from_cache = false;
      if (forced) {
        index = *forced;
      } else {
        KTUNE_CHECK(selector != nullptr);
        auto sel =
            selector->select(*problem, spec.choices.candidates, spec.choices.reference.get());
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
      it = by_problem.emplace(key, std::move(*pick)).first;
    }
    GemmPick pick = it->second;
    pick.chain = chain;
    pick.fusion = why;
    picks.emplace(n.name, std::move(pick));
  }
  return picks;
}

}  // namespace ktune::codegen

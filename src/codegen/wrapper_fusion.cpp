// apply_fusions: the graph as the generated program runs it, each fused gemm in its chain's place.
#include <fmt/format.h>

#include <set>

#include "ktune/codegen/graph_fusion.h"

namespace ktune::codegen {
namespace {

std::unexpected<Error> bad_pick(const Graph& g, const std::string& gemm, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: fused gemm '{}': {}", g.file.string(), gemm, what));
}

}  // namespace

Result<FusedGraph> apply_fusions(const Graph& g, const std::map<std::string, GemmPick>& picks) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) index.emplace(g.nodes[i].name, i);
  // Every pointwise node a fused call computes, and the gemm that computes it.
  std::map<std::string, std::string> absorbed;
  for (const auto& [gemm, pick] : picks) {
    if (pick.fused.empty()) continue;
    auto at = index.find(gemm);
    // A CPU extern is the bare library call; a CUDA launch (a library GEMM with cuBLASLt's or a
    // separate epilogue, too) computes what its `epilogue` says.
    if ((pick.is_extern && !pick.launch) || at == index.end()) {
      return bad_pick(g, gemm,
                      "only a template pick (or a CUDA launch) of a gemm node can compute other "
                      "nodes");
    }
    for (const std::string& f : pick.fused) {
      auto it = index.find(f);
      if (it == index.end() || it->second <= at->second || !absorbed.emplace(f, gemm).second) {
        return bad_pick(g, gemm,
                        fmt::format("'{}' is not a later node of the graph that no "
                                    "other gemm computes",
                                    f));
      }
    }
    for (const std::string& a : pick.epilogue_args) {
      auto it = index.find(a);
      if (it != index.end() && it->second >= at->second) {
        return bad_pick(g, gemm,
                        fmt::format("its epilogue reads '{}', which is computed after "
                                    "the gemm",
                                    a));
      }
    }
  }

  FusedGraph out;
  out.graph.name = g.name;
  out.graph.file = g.file;
  out.graph.gemm_spec = g.gemm_spec;
  out.graph.inputs = g.inputs;
  out.graph.outputs = g.outputs;
  out.graph.outputs_where = g.outputs_where;
  // Values that exist in the program: a node's output that a fused call computes inside its
  // store (all but the chain's last) never does.
  std::set<std::string> gone;
  for (const auto& [gemm, pick] : picks) {
    if (pick.fused.empty()) continue;
    gone.insert(gemm);
    gone.insert(pick.fused.begin(), pick.fused.end() - 1);
  }
  for (const std::string& o : g.outputs) {
    if (gone.contains(o)) {
      return bad_pick(g, absorbed.contains(o) ? absorbed.at(o) : o,
                      fmt::format("graph output '{}' exists only inside the fused call", o));
    }
  }
  for (const GraphNode& n : g.nodes) {
    for (const std::string& x : n.inputs) {
      if (gone.contains(x) && !absorbed.contains(n.name)) {
        return bad_pick(g, absorbed.contains(x) ? absorbed.at(x) : x,
                        fmt::format("node '{}' reads '{}', which exists only inside the fused call",
                                    n.name, x));
      }
    }
    if (absorbed.contains(n.name)) continue;
    auto pick = picks.find(n.name);
    if (n.op != OpKind::kGemm || pick == picks.end() || pick->second.fused.empty()) {
      if (pick != picks.end()) out.picks.emplace(n.name, pick->second);
      out.graph.nodes.push_back(n);
      continue;
    }
    // One node in the gemm's place, named and shaped as the chain's last node, reading A, B and
    // the epilogue's operands (the memory planner sees them as its reads).
    const GemmPick& p = pick->second;
    const GraphNode& last = g.nodes[index.at(p.fused.back())];
    GraphNode fused = n;
    fused.name = last.name;
    fused.out = last.out;
    fused.inputs.insert(fused.inputs.end(), p.epilogue_args.begin(), p.epilogue_args.end());
    std::vector<GraphNode>& steps = out.fused_nodes[fused.name];
    steps.push_back(n);
    for (const std::string& f : p.fused) steps.push_back(g.nodes[index.at(f)]);
    out.picks.emplace(fused.name, p);
    out.graph.nodes.push_back(std::move(fused));
  }
  return out;
}

}  // namespace ktune::codegen

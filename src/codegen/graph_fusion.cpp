// find_fusions: which pointwise nodes after a gemm its epilogue hook can compute.
#include "ktune/codegen/graph_fusion.h"

#include <map>
#include <optional>
#include <string>

namespace ktune::codegen {
namespace {

// How a graph uses each value: readers (one per input slot, so add(h, h) reads h twice) and
// whether the caller gets it back.
struct Uses {
  std::map<std::string, int> reads;
  std::map<std::string, std::size_t> defined_at;  // node index; graph inputs are absent
  std::map<std::string, bool> is_output;
};

Uses uses_of(const Graph& g) {
  Uses u;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (const std::string& x : g.nodes[i].inputs) ++u.reads[x];
    u.defined_at.emplace(g.nodes[i].name, i);
  }
  for (const std::string& o : g.outputs) u.is_output[o] = true;
  return u;
}

// The only node after `from` that reads `value`, when exactly one does.
std::optional<std::size_t> sole_reader(const Graph& g, const std::string& value, std::size_t from) {
  for (std::size_t i = from + 1; i < g.nodes.size(); ++i) {
    for (const std::string& x : g.nodes[i].inputs) {
      if (x == value) return i;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string FusionChain::label(const Graph& g) const {
  std::string out = g.nodes[gemm].name;
  for (std::size_t i : nodes) out += "+" + g.nodes[i].name;
  return out;
}

std::vector<FusionChain> find_fusions(const Graph& g) {
  const Uses u = uses_of(g);
  // The fused call runs where the gemm was: an operand must exist by then.
  auto ready_before = [&](const std::string& value, std::size_t gemm) {
    auto it = u.defined_at.find(value);
    return it == u.defined_at.end() || it->second < gemm;
  };
  std::vector<FusionChain> chains;
  for (std::size_t gi = 0; gi < g.nodes.size(); ++gi) {
    if (g.nodes[gi].op != OpKind::kGemm) continue;
    FusionChain chain;
    chain.gemm = gi;
    std::vector<EpilogueOp> ops;
    bool has_bias = false, has_rowbias = false, has_residual = false;
    std::string value = g.nodes[gi].name;
    std::size_t at = gi;
    while (true) {
      // The value disappears from the program: nothing else may read it.
      auto reads = u.reads.find(value);
      if (reads == u.reads.end() || reads->second != 1 || u.is_output.contains(value)) break;
      const auto next = sole_reader(g, value, at);
      if (!next) break;
      const GraphNode& n = g.nodes[*next];
      EpilogueOp op;
      std::string operand;
      if (n.op == OpKind::kBiasAdd && n.inputs[0] == value && !has_bias &&
          ready_before(n.inputs[1], gi)) {
        op.kind = EpilogueOpKind::kBias;  // validate_graph() checked b is [N]
        operand = n.inputs[1];
        has_bias = true;
      } else if (n.op == OpKind::kRowBiasAdd && n.inputs[0] == value && !has_rowbias &&
                 ready_before(n.inputs[1], gi)) {
        op.kind = EpilogueOpKind::kRowBias;  // validate_graph() checked b is [M]
        operand = n.inputs[1];
        has_rowbias = true;
      } else if (n.op == OpKind::kAdd && !has_residual) {
        // Either order: float addition commutes exactly.
        const std::string& other = n.inputs[0] == value ? n.inputs[1] : n.inputs[0];
        if (other == value || !ready_before(other, gi)) break;
        op.kind = EpilogueOpKind::kResidual;  // validate_graph() checked equal shapes
        operand = other;
        has_residual = true;
      } else if (n.op == OpKind::kRelu) {
        op.kind = EpilogueOpKind::kRelu;
      } else if (n.op == OpKind::kGelu) {
        op.kind = EpilogueOpKind::kGelu;
      } else if (n.op == OpKind::kSilu) {
        op.kind = EpilogueOpKind::kSilu;
      } else if (n.op == OpKind::kScale) {
        op.kind = EpilogueOpKind::kScale;
        op.scale = n.alpha;
      } else {
        break;
      }
      ops.push_back(op);
      if (!operand.empty()) chain.operands.push_back(operand);
      chain.nodes.push_back(*next);
      value = n.name;
      at = *next;
    }
    if (chain.nodes.empty()) continue;
    chain.epilogue = Epilogue(std::move(ops));
    chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace ktune::codegen

// Fusion of a graph's pointwise nodes into the gemm before them (Inductor's epilogue fusion of a
// template buffer), in one place: which chains can fuse (find_fusions, graph_fusion.cpp; graph
// tuning tunes each as one fused problem) and the graph as the generated program runs it once a
// fused pick won (apply_fusions, wrapper_fusion.cpp; the wrapper codegen emits it).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "ktune/codegen/graph.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/status.h"

namespace ktune::codegen {

// A gemm and the pointwise nodes after it that its epilogue can compute, in order, each reading
// the previous one's result.
struct FusionChain {
  std::size_t gemm = 0;               // index into Graph::nodes
  std::vector<std::size_t> nodes;     // the pointwise nodes; never empty
  Epilogue epilogue;                  // one step per node
  std::vector<std::string> operands;  // graph values for Epilogue::operands(), in its order
  [[nodiscard]] std::string label(const Graph& graph) const;  // "h+h_bias+a"
};

// Every gemm's longest fusible chain, in node order (gemms without one are left out). A node
// joins when it is bias_add (-> bias), row_bias_add (-> rowbias), relu, gelu, silu, scale
// (-> scale=alpha) or add of an [M, N] value (-> residual); the value it reads is read by nothing
// else and is not a graph output; its other input is a graph input or a node before the gemm
// (the fused call runs where the gemm was); and the chain has no bias (row bias, residual) of
// that kind yet, as Epilogue allows each operand once.
[[nodiscard]] std::vector<FusionChain> find_fusions(const Graph& graph);

// A graph as the generated program runs it: each fused pick's gemm node becomes one node in the
// gemm's place, named and shaped as its chain's last node, reading A, B and the epilogue's
// operands; the chain's pointwise nodes and intermediate values are gone. Without fused picks,
// the graph itself.
struct FusedGraph {
  // Shapes filled, as validate_graph() left them; a fused gemm's inputs are A, B, then its
  // epilogue's operands, more than op_arity() says.
  Graph graph;
  std::map<std::string, GemmPick> picks;  // by `graph`'s node names
  // By fused node name: the original gemm and pointwise nodes it computes, in order.
  std::map<std::string, std::vector<GraphNode>> fused_nodes;
};
// kInvalidArgument when a fused pick cannot be applied: an extern, a fused name that is not a
// later node, a node computed by two gemms, an operand computed after the gemm, or a value inside
// a chain that another node or the outputs still read.
[[nodiscard]] Result<FusedGraph> apply_fusions(const Graph& graph,
                                               const std::map<std::string, GemmPick>& picks);

}  // namespace ktune::codegen

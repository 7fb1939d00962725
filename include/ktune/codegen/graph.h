// Graph: what `ktune compile` turns into a host program: named input tensors, a list of nodes
// (one tuned or generated kernel call each, in program order) and the names of the outputs.
// Read from YAML or JSON (one schema, docs in examples/mlp_block/README.md) or built in C++ with
// GraphBuilder; either way validate_graph() infers every node's TensorSpec and reports bad graphs
// with the file, line and field, as the spec module does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/core/tensor_spec.h"

namespace ktune::codegen {

enum class OpKind {
  kGemm,        // C[M,N] = A[M,K] B[K,N]; tuned through the Selector
  kBiasAdd,     // Y[M,N] = X[M,N] + b[N] (the bias added to every row)
  kRowBiasAdd,  // Y[M,N] = X[M,N] + b[M] (b[i] added to every element of row i)
  kRelu,        // Y = max(X, 0)
  kGelu,        // Y = X/2 (1 + erf(X/sqrt 2))
  kSilu,        // Y = X / (1 + exp(-X))
  kAdd,         // Y = X + Z, same shapes
  kScale,       // Y = alpha X
  kTranspose,   // Y[N,M] = X[M,N]
  kRowSoftmax,  // Y[M,N] = softmax of each row of X
  kRowSum,      // Y[M] = sum of each row of X[M,N]
  kLayerNorm,   // Y[M,N] = (X - mean) / sqrt(var + eps) * gamma[N] + beta[N], over each row
};

// The name in graph files: "gemm", "bias_add", "row_bias_add", "relu", "gelu", "silu", "add",
// "scale", "transpose", "row_softmax", "row_sum", "layer_norm".
[[nodiscard]] std::string_view op_name(OpKind op);
[[nodiscard]] std::optional<OpKind> parse_op(std::string_view name);
[[nodiscard]] int op_arity(OpKind op);

struct GraphInput {
  std::string name;
  TensorSpec spec;    // f32, f16 or bf16; strides are kept; the codegens take row-major ones only
  std::string where;  // "graph.yaml:4:5" or "graph 'mlp'": the position in error messages
};

struct GraphNode {
  std::string name;  // names the node's output buffer
  OpKind op = OpKind::kRelu;
  std::vector<std::string> inputs;
  double alpha = 1;   // kScale
  double eps = 1e-5;  // kLayerNorm: added to the variance (PyTorch's default)
  TensorSpec out;     // filled by validate_graph()
  std::string where;  // as GraphInput::where
};

struct Graph {
  std::string name;  // a C identifier: prefixes the generated entry points (<name>_run)
  std::filesystem::path file;
  // The spec whose kernel template (and externs) compete for every gemm node, resolved against
  // the graph's folder; its args must be C (out, [M, N]), A ([M, K]), B ([K, N]) and the
  // scalars M, N, K in any order.
  std::filesystem::path gemm_spec;
  std::vector<GraphInput> inputs;
  std::vector<GraphNode> nodes;
  std::vector<std::string> outputs;
  std::string outputs_where;
};

// Checks names (identifiers, unique), inputs (known, defined before use: this also rules out
// cycles), arity, dtypes (f32, f16 or bf16; every input of a node of one dtype, which its output
// has) and shapes, and fills every node's `out`. Errors read
// "graph.yaml:12:5: nodes[2].inputs[1]: 'h3' is used before it is defined (by nodes[4])".
[[nodiscard]] Status validate_graph(Graph& graph);

// Where `ktune compile` emits a graph's program: C++ for the CPU, or CUDA C++ for a GPU.
enum class CodegenTarget { kCpu, kCuda };
[[nodiscard]] std::string_view target_name(CodegenTarget target);  // "cpu", "cuda"
// What the target's codegen cannot emit, found before any tuning, at the input or node's
// position: the CPU codegen computes in f32 only ("graph.yaml:4:5: inputs[0].dtype: the CPU
// codegen supports f32; got 'bf16' (compile with --device cuda)"); the CUDA one every op in f32,
// f16 and bf16.
[[nodiscard]] Status check_target(const Graph& graph, CodegenTarget target);

// Reads and validates a graph file (.yaml, .yml or .json; JSON is read as YAML, so that both
// report lines and columns).
[[nodiscard]] Result<Graph> load_graph(const std::filesystem::path& file);
[[nodiscard]] Result<Graph> parse_graph(std::string_view text, const std::filesystem::path& file);
// The graph in the file schema, as JSON (nlohmann); parse_graph() reads it back.
[[nodiscard]] std::string graph_to_json(const Graph& graph);

// Builds a graph in C++; build() validates it (the errors name the graph and the node).
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name);
  GraphBuilder& input(std::string name, TensorSpec spec);
  GraphBuilder& node(std::string name, OpKind op, std::vector<std::string> inputs,
                     double alpha = 1);
  GraphBuilder& output(std::string name);
  GraphBuilder& gemm_spec(std::filesystem::path spec);
  [[nodiscard]] Result<Graph> build() const;

 private:
  Graph graph_;
};

}  // namespace ktune::codegen

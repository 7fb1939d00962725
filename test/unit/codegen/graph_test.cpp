// Graph files and the builder: the examples load, every kind of bad graph is reported with its
// file, line and field, and JSON round-trips.
#include "ktune/codegen/graph.h"

#include <gtest/gtest.h>

#include <string>

namespace ktune::codegen {
namespace {

const std::string kHeader = R"(name: g
inputs:
  - {name: x, dtype: f32, shape: [4, 8]}
  - {name: w, dtype: f32, shape: [8, 16]}
  - {name: b, dtype: f32, shape: [16]}
)";

std::string error_of(const std::string& nodes_and_outputs) {
  auto g = parse_graph(kHeader + nodes_and_outputs, "g.yaml");
  EXPECT_FALSE(g.has_value());
  return g ? "" : g.error().message;
}

TEST(Graph, ExamplesLoadWithInferredShapes) {
  for (const char* name : {"mlp_block", "transformer_block"}) {
    auto g = load_graph(std::string(KTUNE_SOURCE_DIR) + "/examples/" + name + "/graph.yaml");
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->name, name);
    EXPECT_TRUE(std::filesystem::is_regular_file(g->gemm_spec));
    EXPECT_EQ(g->nodes.back().out.sizes, g->inputs[0].spec.sizes);
  }
}

// The GPU example: bf16, loads without a gemm_spec, refused by the CPU target only.
TEST(Graph, Bf16ExampleIsForTheCudaTarget) {
  auto g = load_graph(std::string(KTUNE_SOURCE_DIR) + "/examples/mlp_block/graph_bf16.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->nodes.back().out.dtype, DType::kBF16);
  EXPECT_TRUE(check_target(*g, CodegenTarget::kCuda));
  EXPECT_FALSE(check_target(*g, CodegenTarget::kCpu));
}

TEST(Graph, InfersShapes) {
  auto g = parse_graph(kHeader + R"(nodes:
  - {name: h, op: gemm, inputs: [x, w]}
  - {name: hb, op: bias_add, inputs: [h, b]}
  - {name: t, op: transpose, inputs: [hb]}
  - {name: s, op: row_sum, inputs: [t]}
  - {name: p, op: row_softmax, inputs: [t]}
  - {name: q, op: scale, inputs: [p], alpha: 0.5}
outputs: [s, q]
)",
                       "g.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->nodes[0].out.sizes, (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(g->nodes[2].out.sizes, (std::vector<std::int64_t>{16, 4}));
  EXPECT_EQ(g->nodes[3].out.sizes, (std::vector<std::int64_t>{16}));
  EXPECT_EQ(g->nodes[5].alpha, 0.5);
}

TEST(Graph, LayerNormTakesGammaBetaAndEps) {
  auto g = parse_graph(kHeader + R"(nodes:
  - {name: h, op: gemm, inputs: [x, w]}
  - {name: n, op: layer_norm, inputs: [h, b, b], eps: 1e-6}
outputs: [n]
)",
                       "g.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->nodes[1].out.sizes, (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(g->nodes[1].eps, 1e-6);
  auto back = parse_graph(graph_to_json(*g), "g.json");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->nodes[1].eps, 1e-6);
}

TEST(GraphErrors, LayerNorm) {
  EXPECT_EQ(error_of("nodes:\n  - {name: n, op: layer_norm, inputs: [x, b, b]}\noutputs: [n]\n"),
            "g.yaml:7:5: nodes[0]: shape mismatch: layer_norm needs X[M, N], gamma[N] and "
            "beta[N]; got X[4, 8], gamma[16] and beta[16]");
  EXPECT_EQ(error_of("nodes:\n  - {name: n, op: relu, inputs: [x], eps: 1e-5}\noutputs: [n]\n"),
            "g.yaml:7:43: nodes[0].eps: only layer_norm takes eps");
  EXPECT_EQ(error_of("nodes:\n  - {name: h, op: gemm, inputs: [x, w]}\n"
                     "  - {name: n, op: layer_norm, inputs: [h, b, b], eps: -1}\noutputs: [n]\n"),
            "g.yaml:8:55: nodes[1].eps: expected a positive number; got -1");
  EXPECT_EQ(error_of("nodes:\n  - {name: n, op: layer_norm, inputs: [x, b]}\noutputs: [n]\n"),
            "g.yaml:7:5: nodes[0].inputs: layer_norm takes 3 input(s); got 2");
}

TEST(GraphErrors, UnknownInput) {
  EXPECT_EQ(error_of("nodes:\n  - {name: h, op: gemm, inputs: [x, w2]}\noutputs: [h]\n"),
            "g.yaml:7:5: nodes[0].inputs[1]: unknown input 'w2'; not a graph input or an earlier "
            "node");
}

TEST(GraphErrors, ShapeMismatch) {
  EXPECT_EQ(error_of("nodes:\n  - {name: h, op: gemm, inputs: [w, x]}\noutputs: [h]\n"),
            "g.yaml:7:5: nodes[0]: shape mismatch: gemm needs A[M, K] and B[K, N]; got A[8, 16] "
            "and B[4, 8]");
  EXPECT_EQ(error_of("nodes:\n  - {name: h, op: bias_add, inputs: [x, b]}\noutputs: [h]\n"),
            "g.yaml:7:5: nodes[0]: shape mismatch: bias_add needs X[M, N] and b[N]; got X[4, 8] "
            "and b[16]");
}

TEST(GraphErrors, UseBeforeDefinitionAndCycles) {
  EXPECT_EQ(error_of("nodes:\n  - {name: a, op: relu, inputs: [c]}\n"
                     "  - {name: c, op: relu, inputs: [a]}\noutputs: [c]\n"),
            "g.yaml:7:5: nodes[0].inputs[0]: 'c' is used before it is defined (by nodes[1]); "
            "nodes run in file order, so this is a cycle or a wrong order");
  EXPECT_EQ(error_of("nodes:\n  - {name: a, op: relu, inputs: [a]}\noutputs: [a]\n"),
            "g.yaml:7:5: nodes[0].inputs[0]: 'a' reads its own output (a cycle)");
}

TEST(GraphErrors, UnknownOpArityAndOutputs) {
  EXPECT_EQ(
      error_of("nodes:\n  - {name: a, op: conv, inputs: [x]}\noutputs: [a]\n"),
      "g.yaml:7:19: nodes[0].op: unknown op 'conv'; expected one of gemm, bias_add, "
      "row_bias_add, relu, gelu, silu, add, scale, transpose, row_softmax, row_sum, layer_norm");
  EXPECT_EQ(error_of("nodes:\n  - {name: a, op: add, inputs: [x]}\noutputs: [a]\n"),
            "g.yaml:7:5: nodes[0].inputs: add takes 2 input(s); got 1");
  EXPECT_EQ(error_of("nodes:\n  - {name: a, op: relu, inputs: [x]}\noutputs: [z]\n"),
            "g.yaml:8:10: outputs[0]: unknown output 'z'; expected a node's name");
  EXPECT_EQ(error_of("nodes:\n  - {name: x, op: relu, inputs: [w]}\noutputs: [x]\n"),
            "g.yaml:7:5: nodes[0].name: duplicate name 'x'");
}

// bf16 and f16 graphs load (the CUDA codegen takes them) and the CPU target refuses them at the
// input's position, before any tuning; a node mixing dtypes is an error where it is written.
TEST(GraphErrors, RowBiasNeedsOneValuePerRow) {
  EXPECT_EQ(error_of("nodes:\n  - {name: h, op: gemm, inputs: [x, w]}\n"
                     "  - {name: y, op: row_bias_add, inputs: [h, b]}\noutputs: [y]\n"),
            "g.yaml:8:5: nodes[1]: shape mismatch: row_bias_add needs X[M, N] and b[M]; got "
            "X[4, 16] and b[16]");
}

TEST(GraphErrors, DtypesPerNodeAndPerTarget) {
  const std::string head = R"(name: g
inputs:
  - {name: x, dtype: bf16, shape: [4, 8]}
  - {name: w, dtype: bf16, shape: [8, 16]}
  - {name: b, dtype: f16, shape: [16]}
)";
  auto g = parse_graph(head +
                           "nodes:\n  - {name: h, op: gemm, inputs: [x, w]}\n"
                           "  - {name: s, op: silu, inputs: [h]}\noutputs: [s]\n",
                       "g.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->nodes[1].out.dtype, DType::kBF16);
  EXPECT_TRUE(check_target(*g, CodegenTarget::kCuda));
  Status cpu = check_target(*g, CodegenTarget::kCpu);
  ASSERT_FALSE(cpu);
  EXPECT_EQ(cpu.error().message,
            "g.yaml:3:5: inputs[0].dtype: the CPU codegen supports f32; got 'bf16' (compile with "
            "--device cuda)");
  g = parse_graph(head +
                      "nodes:\n  - {name: h, op: gemm, inputs: [x, w]}\n"
                      "  - {name: hb, op: bias_add, inputs: [h, b]}\noutputs: [hb]\n",
                  "g.yaml");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().message,
            "g.yaml:8:5: nodes[1].inputs[1]: dtype mismatch: 'b' is f16 but 'h' is bf16; every "
            "input of bias_add must have one dtype");
}

TEST(GraphErrors, BadInputsAndSyntax) {
  auto g = parse_graph(
      "name: g\ninputs:\n  - {name: x, dtype: f64, shape: [2]}\nnodes: []\n"
      "outputs: []\n",
      "g.yaml");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().message,
            "g.yaml:3:5: inputs[0].dtype: unsupported dtype 'f64'; expected f32, f16 or bf16");
  g = parse_graph(
      "name: g\ninputs:\n  - {name: x, shape: [2, 3], strides: [1, 2]}\nnodes: []\n"
      "outputs: []\n",
      "g.yaml");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().message,
            "g.yaml:3:5: inputs[0].strides: the codegens need row-major inputs; expected "
            "strides [3, 1], got [1, 2]");
  g = parse_graph("name: g\ninputs: [\n", "g.yaml");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().code, ErrorCode::kParse);
  EXPECT_TRUE(g.error().message.starts_with("g.yaml:")) << g.error().message;
  g = parse_graph("name: g\nnodez: []\n", "g.yaml");
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().message,
            "g.yaml:2:1: nodez: unknown key; expected one of name, gemm_spec, inputs, nodes, "
            "outputs");
}

TEST(Graph, JsonRoundTrip) {
  auto g = load_graph(std::string(KTUNE_SOURCE_DIR) + "/examples/transformer_block/graph.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  const std::string json = graph_to_json(*g);
  auto back = parse_graph(json, g->file.parent_path() / "graph.json");
  ASSERT_TRUE(back.has_value()) << back.error().message << "\n" << json;
  EXPECT_EQ(graph_to_json(*back), json);
  ASSERT_EQ(back->nodes.size(), g->nodes.size());
  for (std::size_t i = 0; i < g->nodes.size(); ++i) EXPECT_EQ(back->nodes[i].out, g->nodes[i].out);
}

TEST(Graph, BuilderValidatesWithNames) {
  auto g = GraphBuilder("b")
               .input("x", TensorSpec::contiguous(DType::kF32, {2, 3}))
               .node("y", OpKind::kRelu, {"x"})
               .output("y")
               .build();
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->nodes[0].out.sizes, (std::vector<std::int64_t>{2, 3}));
  auto bad = GraphBuilder("b")
                 .input("x", TensorSpec::contiguous(DType::kF32, {2, 3}))
                 .node("y", OpKind::kAdd, {"x", "q"})
                 .output("y")
                 .build();
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "graph 'b' node 'y': nodes[0].inputs[1]: unknown input 'q'; not a graph input or an "
            "earlier node");
}

}  // namespace
}  // namespace ktune::codegen

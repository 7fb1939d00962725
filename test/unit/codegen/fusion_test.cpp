// Fusion detection (find_fusions): the chains after a gemm that its epilogue can compute, and
// those that must stay apart; and apply_fusions, the program the wrapper emits for fused picks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ktune/codegen/graph_fusion.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/codegen/wrapper_codegen.h"

namespace ktune::codegen {
namespace {

// x[4, 8] w[8, 16] b[16] r[4, 16]; gemm h = x w is [4, 16].
const std::string kHeader = R"(name: g
inputs:
  - {name: x, dtype: f32, shape: [4, 8]}
  - {name: w, dtype: f32, shape: [8, 16]}
  - {name: b, dtype: f32, shape: [16]}
  - {name: r, dtype: f32, shape: [4, 16]}
  - {name: rb, dtype: f32, shape: [4]}
nodes:
  - {name: h, op: gemm, inputs: [x, w]}
)";

Graph graph(const std::string& nodes_and_outputs) {
  auto g = parse_graph(kHeader + nodes_and_outputs, "g.yaml");
  EXPECT_TRUE(g.has_value()) << g.error().message;
  return g ? *g : Graph{};
}

// Each chain as "label: epilogue [operands]".
std::vector<std::string> chains(const std::string& nodes_and_outputs) {
  const Graph g = graph(nodes_and_outputs);
  std::vector<std::string> out;
  for (const FusionChain& c : find_fusions(g)) {
    std::string s = c.label(g) + ": " + c.epilogue.name();
    for (const std::string& o : c.operands) s += " " + o;
    out.push_back(s);
  }
  return out;
}

using Chains = std::vector<std::string>;

TEST(Fusion, ExampleChains) {
  for (const auto& [name, want] :
       {std::pair<std::string, Chains>{"mlp_block", {"h+h_bias+a: bias+relu b1", "o+y: bias b2"}},
        {"transformer_block",
         {"scores+scaled: scale=0.125", "proj+h: residual x", "f+f_bias+g: bias+gelu b1",
          "m+m_bias+y: bias+residual b2 h"}}}) {
    auto g = load_graph(std::string(KTUNE_SOURCE_DIR) + "/examples/" + name + "/graph.yaml");
    ASSERT_TRUE(g.has_value()) << g.error().message;
    Chains got;
    for (const FusionChain& c : find_fusions(*g)) {
      std::string s = c.label(*g) + ": " + c.epilogue.name();
      for (const std::string& o : c.operands) s += " " + o;
      got.push_back(s);
    }
    EXPECT_EQ(got, want) << name;
  }
}

TEST(Fusion, EveryStepKind) {
  EXPECT_EQ(chains("  - {name: s, op: scale, inputs: [h], alpha: 0.5}\n"
                   "  - {name: hb, op: bias_add, inputs: [s, b]}\n"
                   "  - {name: g, op: gelu, inputs: [hb]}\n"
                   "  - {name: y, op: add, inputs: [r, g]}\n"  // residual on either side
                   "  - {name: z, op: relu, inputs: [y]}\n"
                   "outputs: [z]\n"),
            Chains{"h+s+hb+g+y+z: scale=0.5+bias+gelu+residual+relu b r"});
}

TEST(Fusion, RowBiasAndSilu) {
  EXPECT_EQ(chains("  - {name: p, op: row_bias_add, inputs: [h, rb]}\n"
                   "  - {name: q, op: bias_add, inputs: [p, b]}\n"
                   "  - {name: s, op: silu, inputs: [q]}\n"
                   "outputs: [s]\n"),
            Chains{"h+p+q+s: rowbias+bias+silu rb b"});
}

TEST(Fusion, ChainNeedNotBeAdjacent) {
  EXPECT_EQ(chains("  - {name: u, op: relu, inputs: [r]}\n"
                   "  - {name: y, op: relu, inputs: [h]}\n"
                   "outputs: [y, u]\n"),
            Chains{"h+y: relu"});
}

TEST(Fusion, IntermediateReadTwiceIsNotFused) {
  EXPECT_EQ(chains("  - {name: p, op: relu, inputs: [h]}\n"
                   "  - {name: q, op: gelu, inputs: [h]}\n"
                   "outputs: [p, q]\n"),
            Chains{});
  EXPECT_EQ(chains("  - {name: d, op: add, inputs: [h, h]}\noutputs: [d]\n"), Chains{});
  // The chain ends at the value read twice: the last node may have many readers.
  EXPECT_EQ(chains("  - {name: hb, op: bias_add, inputs: [h, b]}\n"
                   "  - {name: p, op: relu, inputs: [hb]}\n"
                   "  - {name: q, op: gelu, inputs: [hb]}\n"
                   "outputs: [p, q]\n"),
            Chains{"h+hb: bias b"});
}

TEST(Fusion, IntermediateGraphOutputIsNotFused) {
  EXPECT_EQ(chains("  - {name: p, op: relu, inputs: [h]}\noutputs: [h, p]\n"), Chains{});
  EXPECT_EQ(chains("  - {name: hb, op: bias_add, inputs: [h, b]}\n"
                   "  - {name: p, op: relu, inputs: [hb]}\n"
                   "outputs: [hb, p]\n"),
            Chains{"h+hb: bias b"});
}

TEST(Fusion, OperandComputedAfterTheGemmIsNotFused) {
  // The fused call runs where the gemm was; z does not exist yet.
  EXPECT_EQ(chains("  - {name: z, op: relu, inputs: [r]}\n"
                   "  - {name: y, op: add, inputs: [h, z]}\n"
                   "outputs: [y]\n"),
            Chains{});
  EXPECT_EQ(chains("  - {name: rt, op: transpose, inputs: [r]}\n"
                   "  - {name: bs, op: row_sum, inputs: [rt]}\n"
                   "  - {name: y, op: bias_add, inputs: [h, bs]}\n"
                   "outputs: [y]\n"),
            Chains{});
}

TEST(Fusion, OneOperandOfEachKind) {
  EXPECT_EQ(chains("  - {name: p, op: bias_add, inputs: [h, b]}\n"
                   "  - {name: q, op: bias_add, inputs: [p, b]}\n"
                   "outputs: [q]\n"),
            Chains{"h+p: bias b"});
  EXPECT_EQ(chains("  - {name: p, op: add, inputs: [h, r]}\n"
                   "  - {name: q, op: add, inputs: [p, r]}\n"
                   "outputs: [q]\n"),
            Chains{"h+p: residual r"});
}

TEST(Fusion, OtherOpsEndTheChain) {
  // Not pointwise over C's elements: a row bias would need X[M, N] + v[M], which bias_add (v[N])
  // and add (equal shapes) cannot express, so rows, transposes and reductions stay apart.
  EXPECT_EQ(chains("  - {name: t, op: transpose, inputs: [h]}\noutputs: [t]\n"), Chains{});
  EXPECT_EQ(chains("  - {name: s, op: row_softmax, inputs: [h]}\noutputs: [s]\n"), Chains{});
  EXPECT_EQ(chains("  - {name: p, op: relu, inputs: [h]}\n"
                   "  - {name: s, op: row_sum, inputs: [p]}\n"
                   "outputs: [s]\n"),
            Chains{"h+p: relu"});
  // A gemm reading the gemm's output is not an epilogue either.
  EXPECT_EQ(chains("  - {name: w2, op: transpose, inputs: [r]}\n"
                   "  - {name: y, op: gemm, inputs: [h, w2]}\noutputs: [y]\n"),
            Chains{});
}

// A hand-made fused pick, as pick_gemms makes them.
GemmPick fused_pick(std::vector<std::string> fused, std::vector<std::string> args) {
  GemmPick p;
  p.choice = "mm_fused";
  p.fused = std::move(fused);
  p.epilogue_args = std::move(args);
  return p;
}

TEST(FusionApply, ReplacesTheChainWithOneNode) {
  const Graph g = graph(
      "  - {name: u, op: relu, inputs: [r]}\n"
      "  - {name: hb, op: bias_add, inputs: [h, b]}\n"
      "  - {name: y, op: add, inputs: [hb, u]}\n"
      "  - {name: z, op: scale, inputs: [y], alpha: 2}\n"
      "outputs: [z]\n");
  // u is defined after h: only h+hb fuses.
  auto fg = apply_fusions(g, {{"h", fused_pick({"hb"}, {"b"})}});
  ASSERT_TRUE(fg.has_value()) << fg.error().message;
  std::vector<std::string> names;
  for (const GraphNode& n : fg->graph.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"hb", "u", "y", "z"}));
  EXPECT_EQ(fg->graph.nodes[0].op, OpKind::kGemm);
  EXPECT_EQ(fg->graph.nodes[0].inputs, (std::vector<std::string>{"x", "w", "b"}));
  ASSERT_TRUE(fg->picks.contains("hb"));
  EXPECT_FALSE(fg->picks.contains("h"));
  ASSERT_EQ(fg->fused_nodes.at("hb").size(), 2u);
  EXPECT_EQ(fg->fused_nodes.at("hb")[0].name, "h");
  // The planner sees four steps: no buffer for h.
  const PlanInput plan = plan_input(fg->graph);
  EXPECT_EQ(plan.buffers.size(), 4u);
  EXPECT_EQ(plan.steps[2].reads, (std::vector<std::size_t>{0, 1}));  // y reads hb and u
}

TEST(FusionApply, RejectsPicksThatCannotApply) {
  const Graph g = graph(
      "  - {name: hb, op: bias_add, inputs: [h, b]}\n"
      "  - {name: p, op: relu, inputs: [hb]}\n"
      "  - {name: q, op: gelu, inputs: [hb]}\n"
      "outputs: [p, q]\n");
  auto fg = apply_fusions(g, {{"h", fused_pick({"hb", "p"}, {"b"})}});
  ASSERT_FALSE(fg.has_value());
  EXPECT_EQ(fg.error().message,
            "g.yaml: fused gemm 'h': node 'q' reads 'hb', which exists only inside the fused call");
  fg = apply_fusions(g, {{"h", fused_pick({"nope"}, {})}});
  ASSERT_FALSE(fg.has_value());
  EXPECT_NE(fg.error().message.find("'nope' is not a later node"), std::string::npos);
  GemmPick ext = fused_pick({"hb"}, {"b"});
  ext.is_extern = true;
  EXPECT_FALSE(apply_fusions(g, {{"h", ext}}).has_value());
}

}  // namespace
}  // namespace ktune::codegen

// The emitted program: golden files for the examples with a forced pick (tuning would make the
// text depend on the machine; a forced template pick also forces fusion, fuse=true), and
// generated programs, plain and fused, built and run against the unfused reference.
// KTUNE_UPDATE_GOLDENS=1 rewrites the goldens; review the diff before committing it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/file_util.h"
#include "core/subprocess.h"
#include "ktune/codegen/wrapper_codegen.h"
#include "support/temp_dir.h"
#include "unit/codegen/graph_reference.h"

namespace ktune::codegen {
namespace {

const std::string kSource = KTUNE_SOURCE_DIR;
const std::string kSmallSpec = kSource + "/test/data/codegen/matmul_small.yaml";

Graph example(const std::string& name) {
  auto g = load_graph(kSource + "/examples/" + name + "/graph.yaml");
  KTUNE_CHECK(g.has_value());
  return *g;
}

// Every gemm of `g` gets candidate `choice` of `spec_file`, without tuning; with `fuse`, every
// fusible chain is fused when `choice` is a template config (its fused twin is forced too).
std::map<std::string, GemmPick> forced(const Graph& g, const std::string& spec_file,
                                       const std::string& choice, bool fuse = false) {
  auto spec = load_gemm_spec(spec_file);
  KTUNE_CHECK(spec.has_value());
  PickOptions options;
  options.force = choice;
  options.fuse = fuse;
  auto picks = pick_gemms(g, *spec, nullptr, options);
  KTUNE_CHECK(picks.has_value());
  return *picks;
}

void expect_golden(const std::string& text, const std::string& golden) {
  const std::string path = kSource + "/test/data/codegen/" + golden;
  if (const char* update = std::getenv("KTUNE_UPDATE_GOLDENS"); update && *update == '1') {
    ASSERT_TRUE(write_file_atomic(path, text).has_value());
  }
  auto want = read_file(path);
  ASSERT_TRUE(want.has_value()) << want.error().message;
  EXPECT_EQ(text, *want) << "golden " << path
                         << " differs; KTUNE_UPDATE_GOLDENS=1 rewrites it (review the diff)";
}

TEST(WrapperGolden, MlpBlockTemplatePickPool) {
  const Graph g = example("mlp_block");
  const auto picks =
      forced(g, g.gemm_spec, "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B0");
  auto w = emit_wrapper(g, picks, Planner::kPool);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->flags, (std::vector<std::string>{"-fopenmp"}));
  expect_golden(w->source, "mlp_block.pool.cpp.golden");
}

// Both gemms fused (bias + relu, then bias): one call each, no pointwise kernels left, and the
// intermediate buffers gone from the plan.
TEST(WrapperGolden, MlpBlockFusedTemplatePool) {
  const Graph g = example("mlp_block");
  const auto picks = forced(g, g.gemm_spec, "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B0",
                            /*fuse=*/true);
  ASSERT_EQ(picks.at("h").fused, (std::vector<std::string>{"h_bias", "a"}));
  ASSERT_EQ(picks.at("o").fused, (std::vector<std::string>{"y"}));
  auto w = emit_wrapper(g, picks, Planner::kPool);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->plan.peak_bytes, 131072u + 65536u);  // a and y; unfused: 262144
  EXPECT_EQ(w->source.find("ktune_relu("), std::string::npos);
  EXPECT_EQ(w->source.find("ktune_bias_add("), std::string::npos);
  EXPECT_EQ(w->source.find("#line"), std::string::npos);
  expect_golden(w->source, "mlp_block.fused.pool.cpp.golden");
}

TEST(WrapperGolden, TransformerBlockOpenBlasArena) {
  const Graph g = example("transformer_block");
  auto w = emit_wrapper(g, forced(g, g.gemm_spec, "openblas"), Planner::kArena);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_TRUE(w->flags.empty());
  expect_golden(w->source, "transformer_block.arena.cpp.golden");
}

TEST(Wrapper, GemmSpecArgumentsAreChecked) {
  test::TempDir dir("gemm-spec");
  std::ofstream(dir.path() / "bad.yaml")
      << "name: mm\nkernel: {source: " << kSource << "/examples/matmul_cpu/matmul.cpp, entry: "
      << "matmul}\nargs:\n  - {name: C, role: out, dtype: f32, shape: [M, K]}\n"
      << "  - {name: A, role: in, dtype: f32, shape: [M, K]}\n"
      << "  - {name: M, dtype: i32, value: M}\nproblems:\n  - {M: 4, K: 4}\n";
  auto spec = load_gemm_spec(dir.path() / "bad.yaml");
  ASSERT_FALSE(spec.has_value());
  EXPECT_EQ(spec.error().message,
            (dir.path() / "bad.yaml").string() +
                ": gemm spec: argument 'C' is not one of C (out f32 [M, N]), A (in f32 [M, K]), "
                "B (in f32 [K, N]) or the scalars M, N, K (each once)");
}

// Builds lib<graph>.so only (the executable is the CLI test's), runs it through dlopen.
void build_and_check(const Graph& g, const std::map<std::string, GemmPick>& picks, Planner p) {
  auto w = emit_wrapper(g, picks, p);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  test::TempDir dir("codegen");
  auto files = write_wrapper(g, *w, dir.path(), WrapperBuildOptions{}, /*build=*/false);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  ProcessOptions popts;
  popts.timeout = std::chrono::minutes(2);
  auto r = run_process(files->library_command, popts);
  ASSERT_TRUE(r.has_value() && r->ok()) << (r ? r->output : r.error().message);
  test::expect_matches_reference(g, files->library, 7);
}

TEST(WrapperRun, TransformerBlockTemplatePool) {
  const Graph g = example("transformer_block");
  build_and_check(g, forced(g, kSmallSpec, "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B1"),
                  Planner::kPool);
}

TEST(WrapperRun, MlpBlockOpenBlasArena) {
  const Graph g = example("mlp_block");
  build_and_check(g, forced(g, kSmallSpec, "openblas"), Planner::kArena);
}

// The pointwise ops without a gemm, row_bias_add and silu among them, against the reference.
TEST(WrapperRun, PointwiseOpsWithoutGemms) {
  auto g = parse_graph(R"(name: pointwise
inputs:
  - {name: x, dtype: f32, shape: [6, 10]}
  - {name: r, dtype: f32, shape: [6]}
  - {name: c, dtype: f32, shape: [10]}
nodes:
  - {name: a, op: row_bias_add, inputs: [x, r]}
  - {name: b, op: bias_add, inputs: [a, c]}
  - {name: s, op: silu, inputs: [b]}
  - {name: y, op: add, inputs: [s, x]}
outputs: [y]
)",
                       "pointwise.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  build_and_check(*g, {}, Planner::kArena);
}

// Fused programs against the unfused reference: bias + relu and bias (mlp_block); scale, a
// residual graph input, bias + gelu, and bias + a residual computed by the graph
// (transformer_block).
TEST(WrapperRun, MlpBlockFusedArena) {
  const Graph g = example("mlp_block");
  const auto picks = forced(g, kSmallSpec, "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B0",
                            /*fuse=*/true);
  ASSERT_EQ(picks.at("h").choice,
            "matmul_bias_relu_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B0");
  build_and_check(g, picks, Planner::kArena);
}

TEST(WrapperRun, TransformerBlockFusedPool) {
  const Graph g = example("transformer_block");
  const auto picks = forced(g, kSmallSpec, "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B1",
                            /*fuse=*/true);
  std::map<std::string, std::string> chains;
  for (const auto& [node, pick] : picks) {
    if (!pick.fused.empty()) chains[node] = pick.chain;
  }
  EXPECT_EQ(chains, (std::map<std::string, std::string>{{"scores", "scores+scaled"},
                                                        {"proj", "proj+h"},
                                                        {"f", "f+f_bias+g"},
                                                        {"m", "m+m_bias+y"}}));
  build_and_check(g, picks, Planner::kPool);
}

// A forced extern's fused twin is `<extern>+epilogue`: the chains are reported, not fused.
TEST(Wrapper, ForcedExternKeepsTheChainsUnfused) {
  const Graph g = example("mlp_block");
  const auto picks = forced(g, kSmallSpec, "openblas", /*fuse=*/true);
  ASSERT_EQ(picks.size(), 2u);
  EXPECT_TRUE(picks.at("h").fused.empty());
  EXPECT_EQ(picks.at("h").chain, "h+h_bias+a");
  EXPECT_EQ(picks.at("h").fusion, "openblas+epilogue forced");
  EXPECT_EQ(picks.at("o").chain, "o+y");
  auto w = emit_wrapper(g, picks, Planner::kPool);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->plan.peak_bytes, 262144u);
}

}  // namespace
}  // namespace ktune::codegen

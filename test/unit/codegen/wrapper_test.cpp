// The emitted program: golden files for the examples with a forced pick (tuning would make the
// text depend on the machine), and generated programs built and run against the reference.
// KTUNE_UPDATE_GOLDENS=1 rewrites the goldens; review the diff before committing it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ktune/file_util.h"
#include "ktune/subprocess.h"
#include "ktune/wrapper_codegen.h"
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

// Every gemm of `g` gets candidate `choice` of `spec_file`, without tuning.
std::map<std::string, GemmPick> forced(const Graph& g, const std::string& spec_file,
                                       const std::string& choice) {
  auto spec = load_gemm_spec(spec_file);
  KTUNE_CHECK(spec.has_value());
  auto picks = pick_gemms(g, *spec, nullptr, choice);
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

}  // namespace
}  // namespace ktune::codegen

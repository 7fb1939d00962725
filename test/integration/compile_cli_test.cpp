// `ktune compile`: the README's example end to end (tune, emit, build, run, match the reference),
// the tuning cache answering the second time, and its errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "ktune/graph.h"
#include "support/cli_run.h"
#include "unit/codegen/graph_reference.h"

namespace ktune::test {
namespace {

const std::string kSource = KTUNE_SOURCE_DIR;
const std::string kGraph = kSource + "/examples/mlp_block/graph.yaml";
// Two template configs and OpenBLAS: the example's own spec would compile dozens of configs.
const std::string kSmallSpec = kSource + "/test/data/codegen/matmul_small.yaml";

CliResult run_program(const std::vector<std::string>& argv) {
  auto r = run_process(argv);
  if (!r) return {-1, r.error().message};
  return {r->exit_code, r->output};
}

TEST(CompileCli, MlpBlockBuildsRunsAndMatchesTheReference) {
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string dir = (out.path() / "mlp").string();
  CliResult first = run_cli(cache.path(), {"compile", kGraph, "-o", dir, "--gemm-spec", kSmallSpec,
                                           "--budget-ms", "5", "-q"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("2 gemm(s) (0 from the tuning cache)"), std::string::npos)
      << first.output;
  EXPECT_NE(first.output.find("Memory plan (pool): peak 262144 bytes"), std::string::npos)
      << first.output;

  CliResult bench = run_program({dir + "/mlp_block", "3", "1"});
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("mlp_block: median "), std::string::npos) << bench.output;
  EXPECT_NE(bench.output.find("over 3 runs (seed 1"), std::string::npos) << bench.output;

  auto graph = codegen::load_graph(kGraph);
  ASSERT_TRUE(graph.has_value()) << graph.error().message;
  expect_matches_reference(*graph, dir + "/libmlp_block.so", 3);

  // Same gemms, other planner: the picks come from the tuning cache.
  CliResult second = run_cli(cache.path(), {"compile", kGraph, "-o", dir, "--gemm-spec", kSmallSpec,
                                            "--planner", "arena", "-q"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("(2 from the tuning cache)"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("Memory plan (arena): peak 262144 bytes in 1 allocation(s)"),
            std::string::npos)
      << second.output;
  expect_matches_reference(*graph, dir + "/libmlp_block.so", 4);
}

TEST(CompileCli, NoBuildWritesOnlyTheSource) {
  ScratchDir cache("compile-cache"), out("compile-out");
  CliResult r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--gemm-spec",
                                       kSmallSpec, "--force-pick", "openblas", "--no-build"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(forced openblas; 0 from the tuning cache)"), std::string::npos)
      << r.output;
  EXPECT_TRUE(std::filesystem::exists(out.path() / "mlp_block.cpp"));
  EXPECT_FALSE(std::filesystem::exists(out.path() / "libmlp_block.so"));
  EXPECT_EQ(count_artifacts(cache.path()), 0);  // nothing tuned, nothing compiled
}

TEST(CompileCli, Errors) {
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string bad = write_text(out.path(), "bad.yaml",
                                     "name: bad\ninputs:\n  - {name: x, shape: [2, 3]}\nnodes:\n"
                                     "  - {name: y, op: relu, inputs: [z]}\noutputs: [y]\n");
  CliResult r = run_cli(cache.path(), {"compile", bad, "-o", out.path().string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "error: " + bad +
                          ":5:5: nodes[0].inputs[0]: unknown input 'z'; not a graph input or an "
                          "earlier node\n");
  r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--planner", "best"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "error: planner: unknown planner 'best'; expected pool or arena\n");
  r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--gemm-spec",
                             kSmallSpec, "--force-pick", "nope", "--no-build"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no candidate named 'nope'"), std::string::npos) << r.output;
  r = run_cli(cache.path(), {"compile", kGraph});
  EXPECT_EQ(r.exit_code, 2) << r.output;  // usage: -o is required
  r = run_cli(cache.path(), {"compile", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--planner"), std::string::npos);
}

}  // namespace
}  // namespace ktune::test

// `ktune compile`: the README's example end to end (tune, emit, build, run, match the reference),
// with and without fusion, the tuning cache answering the second time, and its errors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/file_util.h"
#include "ktune/codegen/graph.h"
#include "support/cli_run.h"
#include "support/cores.h"
#include "unit/codegen/graph_reference.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

const std::string kSource = KTUNE_SOURCE_DIR;
const std::string kGraph = kSource + "/examples/mlp_block/graph.yaml";
// Two template configs and OpenBLAS: the example's own spec would compile dozens of configs.
const std::string kSmallSpec = kSource + "/test/data/codegen/matmul_small.yaml";

CliResult run_program(const std::vector<std::string>& argv) {
  auto r = run_process(argv);
  if (!r) return {-1, r.error().message};
  return {r->exit_code, r->output};
}

// Without fusion (--no-fuse): the gemms and pointwise nodes as the graph has them.
TEST(CompileCli, MlpBlockBuildsRunsAndMatchesTheReference) {
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string dir = (out.path() / "mlp").string();
  CliResult first = run_cli(cache.path(), {"compile", kGraph, "-o", dir, "--gemm-spec", kSmallSpec,
                                           "--budget-ms", "5", "-q", "--no-fuse"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("2 gemm(s) (0 from the tuning cache)"), std::string::npos)
      << first.output;
  EXPECT_NE(first.output.find("Memory plan (pool): peak 262144 bytes"), std::string::npos)
      << first.output;

  CliResult bench = run_program({dir + "/mlp_block", "3", "1"});
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("mlp_block: median "), std::string::npos) << bench.output;
  EXPECT_NE(bench.output.find("over 3 runs (seed 1"), std::string::npos) << bench.output;
  // Arguments that are not the usage's are refused with it (exit 2), never read as 0 runs.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"abc"},
                                              {"0"},
                                              {"3x"},
                                              {"-1"},
                                              {"3", "seed"},
                                              {"3", "18446744073709551616"},
                                              {"3", "1", "extra"}}) {
    std::vector<std::string> argv = {dir + "/mlp_block"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    CliResult r = run_program(argv);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.output;
    EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("usage: mlp_block [RUNS [SEED]]"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("median"), std::string::npos) << r.output;
  }
  CliResult help = run_program({dir + "/mlp_block", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_NE(help.output.find("usage: mlp_block [RUNS [SEED]]"), std::string::npos) << help.output;

  auto graph = codegen::load_graph(kGraph);
  ASSERT_TRUE(graph.has_value()) << graph.error().message;
  expect_matches_reference(*graph, dir + "/libmlp_block.so", 3);

  // Same gemms, other planner: the picks come from the tuning cache.
  CliResult second = run_cli(cache.path(), {"compile", kGraph, "-o", dir, "--gemm-spec", kSmallSpec,
                                            "--planner", "arena", "-q", "--no-fuse"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("(2 from the tuning cache)"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("Memory plan (arena): peak 262144 bytes in 1 allocation(s)"),
            std::string::npos)
      << second.output;
  expect_matches_reference(*graph, dir + "/libmlp_block.so", 4);
}

// With fusion (the default), each chain's fused problem is tuned: whichever wins, the decision is
// printed for both chains and the program matches the unfused reference; the second time the
// tuning cache answers with the same decisions.
TEST(CompileCli, MlpBlockFusionDecisionIsTunedAndCached) {
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string dir = (out.path() / "mlp").string();
  auto graph = codegen::load_graph(kGraph);
  ASSERT_TRUE(graph.has_value()) << graph.error().message;
  std::vector<std::string> decisions;
  for (int run = 0; run < 2; ++run) {
    CliResult r = run_cli(cache.path(), {"compile", kGraph, "-o", dir, "--gemm-spec", kSmallSpec,
                                         "--budget-ms", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> lines;
    for (const char* chain : {"h+h_bias+a", "o+y"}) {
      const std::string fused = fmt::format("ktune: fused {}: matmul_bias", chain);
      const std::string apart = fmt::format("ktune: not fused {}: openblas+epilogue won", chain);
      const std::size_t at = std::min(r.output.find(fused), r.output.find(apart));
      ASSERT_NE(at, std::string::npos) << chain << "\n" << r.output;
      lines.push_back(r.output.substr(at, r.output.find_first_of(",(\n", at) - at));
    }
    if (run == 0) {
      EXPECT_NE(r.output.find("2 gemm(s) (0 from the tuning cache)"), std::string::npos)
          << r.output;
      decisions = lines;
    } else {
      EXPECT_NE(r.output.find("2 gemm(s) (2 from the tuning cache)"), std::string::npos)
          << r.output;
      EXPECT_EQ(lines, decisions);
    }
    expect_matches_reference(*graph, dir + "/libmlp_block.so", 5 + run);
  }
}

// A forced template pick forces its fused twin: both chains fused, deterministically.
TEST(CompileCli, ForcedTemplatePickFusesAndNoFuseKeepsTheNodes) {
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string pick = "matmul_VEC8_MR4_NV2_KC256_UNROLL4_LOOP_ORDER0_PACK_B0";
  CliResult r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--gemm-spec",
                                       kSmallSpec, "--force-pick", pick, "--no-build"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(
      r.output.find("ktune: fused h+h_bias+a: matmul_bias_relu_" + pick.substr(7) + " (forced)"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  o+y: matmul_bias_" + pick.substr(7) + " (fused; forced)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Memory plan (pool): peak 196608 bytes"), std::string::npos) << r.output;
  auto source = read_file(out.path() / "mlp_block.cpp");
  ASSERT_TRUE(source.has_value());
  EXPECT_NE(source->find("// fused: h = gemm(x, w1); h_bias = bias_add(h, b1); a = relu(h_bias)"),
            std::string::npos);
  EXPECT_EQ(source->find("ktune_relu("), std::string::npos);

  r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--gemm-spec",
                             kSmallSpec, "--force-pick", pick, "--no-build", "--no-fuse"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("fused"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Memory plan (pool): peak 262144 bytes"), std::string::npos) << r.output;
  source = read_file(out.path() / "mlp_block.cpp");
  ASSERT_TRUE(source.has_value());
  EXPECT_NE(source->find("ktune_relu(a, h_bias, 32768);"), std::string::npos);
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

// --devices: the graph's gemms measured on two one-core CPU devices at once; the picks are keyed
// as one core's, apart from a whole-machine compile's.
TEST(CompileCli, DevicesSpreadTheCandidatesAndKeyThePicksApart) {
  KTUNE_REQUIRE_TWO_CORES(two_cores);
  ScratchDir cache("compile-cache"), out("compile-out");
  const std::string dir = (out.path() / "mlp").string();
  const std::vector<std::string> args = {"compile",  kGraph,        "-o", dir,        "--gemm-spec",
                                         kSmallSpec, "--budget-ms", "5",  "--no-fuse"};
  std::vector<std::string> spread = args;
  spread.insert(spread.end(), {"--devices", two_cores});
  CliResult r = run_cli(cache.path(), spread);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("on 2 devices at once (cpu:"));
  EXPECT_THAT(r.output, HasSubstr("2 gemm(s) (0 from the tuning cache)"));
  r = run_cli(cache.path(), spread);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 gemm(s) (2 from the tuning cache)"));
  // The whole machine is another device: tuned again, not served one-core picks.
  r = run_cli(cache.path(), args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("2 gemm(s) (0 from the tuning cache)"));

  std::vector<std::string> in_process = spread;
  in_process.push_back("--in-process");
  r = run_cli(cache.path(), in_process);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("cannot be combined with --in-process"));
  std::vector<std::string> bad = args;
  bad.insert(bad.end(), {"--devices", "0-1,1"});
  r = run_cli(cache.path(), bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
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
  // The target: a bf16 graph is refused by the CPU codegen before any tuning, where it says so.
  const std::string bf16 =
      write_text(out.path(), "bf16.yaml",
                 "name: b\ninputs:\n  - {name: x, dtype: bf16, shape: [2, 3]}\n"
                 "nodes:\n  - {name: y, op: silu, inputs: [x]}\n"
                 "outputs: [y]\n");
  r = run_cli(cache.path(), {"compile", bf16, "-o", out.path().string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "error: " + bf16 +
                          ":3:5: inputs[0].dtype: the CPU codegen supports f32; got 'bf16' "
                          "(compile with --device cuda)\n");
  r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--device", "gpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "error: --device: expected cpu, cuda or cuda:N (N a GPU index); got 'gpu'\n");
  r = run_cli(cache.path(), {"compile", kGraph, "-o", out.path().string(), "--arch", "sm_90a"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output, "error: --arch, --nvcc and --cublaslt-algos apply to --device cuda\n");
  r = run_cli(cache.path(), {"compile", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--planner"), std::string::npos);
}

}  // namespace
}  // namespace ktune::test

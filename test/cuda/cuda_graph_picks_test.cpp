// pick_cuda_gemms: a graph's gemms with their chains as CUDA GEMM problems. Without a GPU (NVRTC
// for sm_90a): forced picks carry the launch the emitter needs (cuBLAS with the separate epilogue
// cubin after it, a template config with the chain in its store), fused picks apply to the graph,
// and an unknown forced name is an error naming the gemm. On a GPU: tuned picks, then the same
// problems answered by the tuning cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/cuda_driver.h"
#include "ktune/codegen/cuda_gemm_picks.h"
#include "ktune/codegen/cuda_wrapper.h"
#include "ktune/codegen/graph_fusion.h"
#include "ktune/ops/cuda_gemm.h"
#include "ktune/tuning/cuda_gemm_tuning.h"
#include "mlp_bf16_graph.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using codegen::GemmPick;
using ::testing::HasSubstr;

codegen::Graph mlp() {
  auto g = codegen::parse_graph(kMlpBf16Graph, "mlp.yaml");
  KTUNE_CHECK(g.has_value());
  return *g;
}

SelectorOptions quiet_options() {
  SelectorOptions o = cuda_gemm_selector_defaults();
  o.bench.budget_ms = 1;
  o.bench.min_runs = 1;
  o.bench.max_runs = 3;
  o.out = nullptr;
  o.progress = nullptr;
  o.worker.executable = worker_exe();
  return o;
}

class CudaGraphPicks : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = CudaBackend::create({.arch = "sm_90a"}, dir_.path());
    if (!b && b.error().code == ErrorCode::kUnavailable) {
      GTEST_SKIP() << "[SKIP] NVRTC is not installed";
    }
    ASSERT_TRUE(b.has_value()) << b.error().message;
    backend_.emplace(std::move(*b));
  }
  TempDir dir_{"cuda-graph-picks"};
  std::optional<CudaBackend> backend_;
  std::unique_ptr<TuningCache> cache_ = make_memory_cache();
};

TEST_F(CudaGraphPicks, ForcedLibraryPickRunsTheEpilogueKernelAfterIt) {
  codegen::CudaPickOptions o;
  o.force = "cublas_gemm";
  auto picks = codegen::pick_cuda_gemms(mlp(), *backend_, *cache_, quiet_options(), o);
  ASSERT_TRUE(picks.has_value()) << picks.error().message;
  ASSERT_EQ(picks->size(), 2u);
  const GemmPick& h = picks->at("h");
  EXPECT_EQ(h.choice, "cublas_gemm+epilogue");
  EXPECT_EQ(h.chain, "h+h_bias+a");
  EXPECT_EQ(h.fused, (std::vector<std::string>{"h_bias", "a"}));
  EXPECT_EQ(h.epilogue_args, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(h.epilogue.name(), "bias+silu");
  ASSERT_TRUE(h.launch.has_value());
  EXPECT_EQ(h.launch->kind, LaunchKind::kCudaLibrary);
  EXPECT_EQ(h.launch->library, "cublas");
  ASSERT_EQ(h.launch->then.size(), 1u);
  EXPECT_EQ(h.launch->then[0].kind, LaunchKind::kCudaCubin);
  EXPECT_TRUE(std::filesystem::is_regular_file(h.launch->then[0].artifact));
  EXPECT_EQ(picks->at("o").epilogue.name(), "bias");

  // The fused graph the emitter gets: two calls, each writing its chain's last node.
  auto fused = codegen::apply_fusions(mlp(), *picks);
  ASSERT_TRUE(fused.has_value()) << fused.error().message;
  ASSERT_EQ(fused->graph.nodes.size(), 2u);
  EXPECT_EQ(fused->graph.nodes[0].name, "a");
  EXPECT_EQ(fused->graph.nodes[0].inputs, (std::vector<std::string>{"x", "w1", "b1"}));
  EXPECT_EQ(fused->graph.nodes[1].name, "y");
}

TEST_F(CudaGraphPicks, ForcedTemplateConfigFusesTheChainIntoItsStore) {
  const Problem plain = cuda_gemm_problem(64, 256, 128, DType::kBF16);
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &plain, false, {}, true);
  ASSERT_FALSE(set.candidates.empty());
  const std::string name = set.candidates[0]->name();  // a tensor-core template config
  codegen::CudaPickOptions o;
  o.force = name;
  auto picks = codegen::pick_cuda_gemms(mlp(), *backend_, *cache_, quiet_options(), o);
  ASSERT_TRUE(picks.has_value()) << picks.error().message;
  const GemmPick& h = picks->at("h");
  EXPECT_NE(h.choice, name);  // its twin with the epilogue
  EXPECT_THAT(h.choice, HasSubstr("bias_silu"));
  ASSERT_TRUE(h.launch.has_value());
  EXPECT_EQ(h.launch->kind, LaunchKind::kCudaCubin);
  EXPECT_TRUE(h.launch->then.empty());
  EXPECT_TRUE(std::filesystem::is_regular_file(h.launch->artifact));
  EXPECT_GT(h.launch->grid[0] * h.launch->grid[1] * h.launch->grid[2], 0u);
}

// Attention's scores: a gemm and a scale. The scale folds into cuBLAS's alpha (no pass over the
// scores), and the emitted program calls cuBLAS with it.
TEST_F(CudaGraphPicks, ScaledLibraryPickCarriesAlphaIntoTheProgram) {
  auto g = codegen::parse_graph(R"(name: scores
inputs:
  - {name: q, dtype: bf16, shape: [64, 32]}
  - {name: kt, dtype: bf16, shape: [32, 64]}
nodes:
  - {name: s, op: gemm, inputs: [q, kt]}
  - {name: scaled, op: scale, inputs: [s], alpha: 0.125}
outputs: [scaled]
)",
                                "scores.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  codegen::CudaPickOptions o;
  o.force = "cublas_gemm_scaled";
  auto picks = codegen::pick_cuda_gemms(*g, *backend_, *cache_, quiet_options(), o);
  ASSERT_TRUE(picks.has_value()) << picks.error().message;
  const GemmPick& s = picks->at("s");
  EXPECT_EQ(s.choice, "cublas_gemm_scaled");
  ASSERT_TRUE(s.launch.has_value());
  EXPECT_EQ(s.launch->alpha, 0.125);
  EXPECT_TRUE(s.launch->then.empty());
  auto program = codegen::emit_cuda_wrapper(*g, *picks);
  ASSERT_TRUE(program.has_value()) << program.error().message;
  EXPECT_THAT(program->host, HasSubstr("const float ktune_alpha = 0.125f"));
  EXPECT_EQ(program->host.find("gemm_epilogue"), std::string::npos);  // no separate pass
}

// The code cache is attacker-controlled: a cubin changed after it was verified and measured is
// refused by the emitter (its recorded SHA-256), not embedded into the user's program.
TEST_F(CudaGraphPicks, ATamperedCubinIsNotEmbedded) {
  const Problem plain = cuda_gemm_problem(64, 256, 128, DType::kBF16);
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &plain, false, {}, true);
  codegen::CudaPickOptions o;
  o.force = set.candidates[0]->name();
  auto picks = codegen::pick_cuda_gemms(mlp(), *backend_, *cache_, quiet_options(), o);
  ASSERT_TRUE(picks.has_value()) << picks.error().message;
  ASSERT_TRUE(codegen::emit_cuda_wrapper(mlp(), *picks).has_value());
  const std::filesystem::path cubin = picks->at("h").launch->artifact;
  {
    std::ofstream f(cubin, std::ios::binary | std::ios::app);
    f << "planted";
  }
  auto program = codegen::emit_cuda_wrapper(mlp(), *picks);
  ASSERT_FALSE(program.has_value());
  EXPECT_EQ(program.error().code, ErrorCode::kInvalidArgument) << program.error().message;
  // The fused call is named after its chain's last node.
  EXPECT_THAT(program.error().message, HasSubstr("gemm 'a'"));
  EXPECT_THAT(program.error().message, HasSubstr("does not match the SHA-256"));
}

TEST_F(CudaGraphPicks, WithoutFusionPicksArePlainGemms) {
  codegen::CudaPickOptions o;
  o.force = "cublas_gemm";
  o.fuse = false;
  auto picks = codegen::pick_cuda_gemms(mlp(), *backend_, *cache_, quiet_options(), o);
  ASSERT_TRUE(picks.has_value()) << picks.error().message;
  EXPECT_EQ(picks->at("h").choice, "cublas_gemm");
  EXPECT_TRUE(picks->at("h").fused.empty());
  EXPECT_TRUE(picks->at("h").launch->then.empty());
}

TEST_F(CudaGraphPicks, UnknownForcedNameNamesTheGemm) {
  codegen::CudaPickOptions o;
  o.force = "no_such_kernel";
  auto picks = codegen::pick_cuda_gemms(mlp(), *backend_, *cache_, quiet_options(), o);
  ASSERT_FALSE(picks.has_value());
  EXPECT_THAT(picks.error().message,
              HasSubstr("mlp.yaml: gemm 'h': --force-pick: no candidate 'no_such_kernel'"));
}

TEST(CudaGraphPicksGpu, TunedPicksThenTheTuningCache) {
  if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
  TempDir dir("cuda-graph-picks-gpu");
  auto backend = CudaBackend::create({}, dir.path());
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  std::unique_ptr<TuningCache> cache = make_memory_cache();
  codegen::CudaPickOptions o;
  o.cublaslt_algos = 2;
  auto first = codegen::pick_cuda_gemms(mlp(), *backend, *cache, quiet_options(), o);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  for (const auto& [node, pick] : *first) {
    EXPECT_FALSE(pick.from_cache) << node;
    EXPECT_TRUE(pick.launch.has_value()) << node;
    EXPECT_FALSE(pick.fused.empty()) << node << ": every CUDA candidate computes the chain";
  }
  // The second problem's candidates were compiled in the background while the first was tuned
  // (pick_cuda_gemms' prefetch): some of its templates cost its own tuning no compile at all.
  auto records = cache->list();
  ASSERT_TRUE(records.has_value()) << records.error().message;
  ASSERT_EQ(records->size(), 2u);
  int prefetched = 0, templates = 0;
  for (const TuningRecord& r : *records) {
    if (r.problem_name.find("bias+relu") != std::string::npos) continue;  // the first problem
    for (const CandidateRecord& c : r.candidates) {
      if (!c.name.starts_with("cuda_gemm_") || c.outcome == Outcome::kUnsupported) continue;
      ++templates;
      prefetched += c.compile_s == 0 ? 1 : 0;
    }
  }
  EXPECT_GT(templates, 0);
  EXPECT_GT(prefetched, 0) << "of " << templates << " templates";
  auto again = codegen::pick_cuda_gemms(mlp(), *backend, *cache, quiet_options(), o);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  for (const auto& [node, pick] : *again) {
    EXPECT_TRUE(pick.from_cache) << node;
    EXPECT_EQ(pick.choice, first->at(node).choice) << node;
  }
}

}  // namespace
}  // namespace ktune::test

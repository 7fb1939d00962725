// Test helpers for the CUDA codegen (CUDA builds only): graphs from examples/ with their dtype
// rewritten, and hand-made CUDA picks from the real candidate set of each gemm's (fused) problem:
// a template config compiled by NVRTC for sm_90a (no GPU needed), cuBLAS, a cuBLASLt algorithm
// with or without its own fused epilogue, or cuBLAS followed by the separate epilogue kernel.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ktune/backend/cuda_backend.h"
#include "ktune/codegen/graph.h"
#include "ktune/codegen/graph_tuning.h"
#include "ktune/ops/cuda_gemm.h"

namespace ktune::test {

// A graph file with every input's dtype set to `dtype`, validated again.
inline codegen::Graph graph_as(const std::filesystem::path& file, DType dtype) {
  auto g = codegen::load_graph(file);
  EXPECT_TRUE(g.has_value()) << g.error().message;
  if (!g) return {};
  for (codegen::GraphInput& in : g->inputs) in.spec.dtype = dtype;
  const Status s = codegen::validate_graph(*g);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  return *g;
}

struct CudaPickSpec {
  std::string gemm;                // the gemm node
  std::vector<std::string> fused;  // the pointwise nodes its launch computes
  std::vector<std::string> args;   // their operands (graph values)
  std::string epilogue;            // Epilogue text, "" for none
  // A candidate name ("cublas_gemm", "cublaslt_algo1", "cublaslt_bias_relu_algo0",
  // "cublas_gemm+epilogue"), or "template": the first template config that supports the problem.
  std::string candidate;
};

// The pick as pick_cuda_gemms() makes it; compiles what it launches with `backend`.
inline codegen::GemmPick cuda_pick(const codegen::Graph& g, const CudaBackend& backend,
                                   const CudaPickSpec& s) {
  codegen::GemmPick pick;
  const codegen::GraphNode* node = nullptr;
  const TensorSpec* a = nullptr;
  for (const codegen::GraphNode& n : g.nodes) {
    if (n.name == s.gemm) node = &n;
  }
  EXPECT_NE(node, nullptr) << s.gemm;
  if (node == nullptr) return pick;
  for (const codegen::GraphInput& in : g.inputs) {
    if (in.name == node->inputs[0]) a = &in.spec;
  }
  for (const codegen::GraphNode& n : g.nodes) {
    if (n.name == node->inputs[0]) a = &n.out;
  }
  auto e = Epilogue::parse(s.epilogue);
  EXPECT_TRUE(e.has_value());
  const DType dtype = node->out.dtype;
  const Problem p =
      cuda_gemm_problem(node->out.sizes[0], node->out.sizes[1], a->sizes[1], dtype, 0, *e);
  CudaGemmCandidates set = cuda_gemm_candidates(dtype, 2, &p, true, *e, false);
  for (ChoicePtr& c : set.candidates) {
    const bool is_template = c->name().starts_with("cuda_gemm_");
    if (s.candidate == "template" ? !(is_template && c->supports(p).has_value())
                                  : c->name() != s.candidate) {
      continue;
    }
    const Status compiled = c->compile(backend);
    EXPECT_TRUE(compiled.has_value()) << c->name() << ": " << compiled.error().message;
    auto launch = c->launch_spec(p);
    EXPECT_TRUE(launch.has_value()) << c->name() << ": " << launch.error().message;
    if (!launch) return pick;
    pick.choice = c->name();
    pick.info = p.name;
    pick.launch = *launch;
    pick.epilogue = *e;
    pick.fused = s.fused;
    pick.epilogue_args = s.args;
    return pick;
  }
  ADD_FAILURE() << "no candidate " << s.candidate << " for " << p.name;
  return pick;
}

inline std::map<std::string, codegen::GemmPick> cuda_picks(const codegen::Graph& g,
                                                           const CudaBackend& backend,
                                                           const std::vector<CudaPickSpec>& specs) {
  std::map<std::string, codegen::GemmPick> picks;
  for (const CudaPickSpec& s : specs) picks[s.gemm] = cuda_pick(g, backend, s);
  return picks;
}

// examples/mlp_block: h = gemm(x, w1) with bias+relu in cuBLASLt's epilogue, o = gemm(a, w2)
// with its bias in a template's store.
inline std::vector<CudaPickSpec> mlp_picks() {
  return {{"h", {"h_bias", "a"}, {"b1"}, "bias,relu", "cublaslt_bias_relu_algo0"},
          {"o", {"y"}, {"b2"}, "bias", "template"}};
}

// examples/transformer_block: every kind of pick; the scale before the softmax stays a node
// (folded into the softmax by the codegen).
inline std::vector<CudaPickSpec> transformer_picks() {
  return {{"q", {}, {}, "", "cublas_gemm"},
          {"k", {}, {}, "", "cublaslt_algo1"},
          {"v", {}, {}, "", "template"},
          {"scores", {}, {}, "", "cublaslt_algo0"},
          {"attn", {}, {}, "", "cublas_gemm"},
          {"proj", {"h"}, {"x"}, "residual", "cublas_gemm+epilogue"},
          {"f", {"f_bias", "g"}, {"b1"}, "bias,gelu", "template"},
          {"m", {"m_bias"}, {"b2"}, "bias", "cublaslt_bias_algo0"}};
}

// A small graph with every op at least once, in `d`: layer_norm, gemm (four, one of each pick
// kind in every_op_picks()), bias_add, relu, silu and add fused into them and standalone, gelu,
// transpose, a scale folded into a row_softmax and one standalone, row_sum. Outputs u, pr, rs.
inline codegen::Graph every_op_graph(DType d) {
  using T = TensorSpec;
  auto g = codegen::GraphBuilder("every_op")
               .input("x", T::contiguous(d, {64, 128}))
               .input("ln_g", T::contiguous(d, {128}))
               .input("ln_b", T::contiguous(d, {128}))
               .input("w1", T::contiguous(d, {128, 256}))
               .input("b1", T::contiguous(d, {256}))
               .input("w2", T::contiguous(d, {256, 128}))
               .input("wq", T::contiguous(d, {128, 64}))
               .node("a", codegen::OpKind::kLayerNorm, {"x", "ln_g", "ln_b"})
               .node("h", codegen::OpKind::kGemm, {"a", "w1"})
               .node("hb", codegen::OpKind::kBiasAdd, {"h", "b1"})
               .node("r", codegen::OpKind::kRelu, {"hb"})
               .node("s", codegen::OpKind::kSilu, {"r"})
               .node("gl", codegen::OpKind::kGelu, {"s"})
               .node("o", codegen::OpKind::kGemm, {"gl", "w2"})
               .node("res", codegen::OpKind::kAdd, {"o", "x"})
               .node("q", codegen::OpKind::kGemm, {"res", "wq"})
               .node("qs", codegen::OpKind::kSilu, {"q"})
               .node("qt", codegen::OpKind::kTranspose, {"qs"})
               .node("sc", codegen::OpKind::kGemm, {"qs", "qt"})
               .node("scs", codegen::OpKind::kScale, {"sc"}, 0.125)
               .node("pr", codegen::OpKind::kRowSoftmax, {"scs"})
               .node("ps", codegen::OpKind::kScale, {"pr"}, 3.0)
               .node("rs", codegen::OpKind::kRowSum, {"ps"})
               .input("rb", T::contiguous(d, {64}))
               .node("v0", codegen::OpKind::kRowBiasAdd, {"res", "rb"})
               .node("v", codegen::OpKind::kBiasAdd, {"v0", "ln_b"})
               .node("w", codegen::OpKind::kAdd, {"v", "x"})
               .node("u", codegen::OpKind::kRelu, {"w"})
               .output("u")
               .output("pr")
               .output("rs")
               .build();
  EXPECT_TRUE(g.has_value()) << g.error().message;
  return g ? *g : codegen::Graph{};
}

inline std::vector<CudaPickSpec> every_op_picks() {
  return {{"h", {"hb", "r"}, {"b1"}, "bias,relu", "cublaslt_bias_relu_algo0"},
          {"o", {"res"}, {"x"}, "residual", "template"},
          {"q", {"qs"}, {}, "silu", "cublas_gemm+epilogue"},
          {"sc", {}, {}, "", "cublaslt_algo0"}};
}

}  // namespace ktune::test

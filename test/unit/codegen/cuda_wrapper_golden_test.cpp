// The emitted CUDA program as golden text, its host code and its kernels:
// examples/transformer_block in bf16 with library picks only (cuBLAS, cuBLASLt with its bias
// epilogue, cuBLAS with a folded scale), so that the text depends on nothing of the machine (no
// cubin bytes). Any change to the CUDA codegen shows up here as a diff to review.
// KTUNE_UPDATE_GOLDENS=1 rewrites the goldens.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "core/file_util.h"
#include "ktune/codegen/cuda_wrapper.h"

namespace ktune::codegen {
namespace {

const std::string kSource = KTUNE_SOURCE_DIR;

GemmPick library(std::string library, int algo, double alpha = 1) {
  GemmPick p;
  p.choice = library == "cublas" ? "cublas_gemm" : "cublaslt_algo" + std::to_string(algo);
  p.is_extern = true;
  LaunchSpec s;
  s.kind = LaunchKind::kCudaLibrary;
  s.library = std::move(library);
  s.algo = algo;
  s.bind = {0, 1, 2, 3, 4, 5};
  s.alpha = alpha;
  p.launch = s;
  return p;
}

TEST(CudaWrapperGolden, TransformerBlockBf16LibraryPicks) {
  auto text = read_file(kSource + "/examples/transformer_block/graph.yaml");
  ASSERT_TRUE(text.has_value());
  std::string yaml = *text;
  for (std::size_t at = yaml.find("f32"); at != std::string::npos; at = yaml.find("f32", at)) {
    yaml.replace(at, 3, "bf16");
  }
  auto g = parse_graph(yaml, kSource + "/examples/transformer_block/graph.yaml");
  ASSERT_TRUE(g.has_value()) << g.error().message;

  std::map<std::string, GemmPick> picks;
  for (const char* node : {"q", "k", "v", "attn"}) picks[node] = library("cublas", -1);
  // scores * 0.125: cuBLAS with alpha, the scale node computed by the call.
  picks["scores"] = library("cublas", -1, 0.125);
  picks["scores"].choice = "cublas_gemm_scaled";
  picks["scores"].fused = {"scaled"};
  picks["scores"].epilogue = *Epilogue::parse("scale=0.125");
  // proj: plain cuBLASLt; h = proj + x stays a node.
  picks["proj"] = library("cublaslt", 2);
  // f + b1: cuBLASLt's bias epilogue (bind[6]: the bias, the first epilogue operand); g stays.
  picks["f"] = library("cublaslt", 0);
  picks["f"].choice = "cublaslt_bias_algo0";
  picks["f"].launch->library_epilogue = 4;  // CUBLASLT_EPILOGUE_BIAS
  picks["f"].launch->bind.push_back(6);
  picks["f"].fused = {"f_bias"};
  picks["f"].epilogue_args = {"b1"};
  picks["f"].epilogue = *Epilogue::parse("bias");
  picks["m"] = library("cublaslt", 1);

  auto w = emit_cuda_wrapper(*g, picks);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  for (const auto& [text, name] :
       {std::pair{&w->host, "transformer_block.bf16.cpp.golden"},
        std::pair{&w->kernels, "transformer_block.bf16.kernels.cu.golden"}}) {
    const std::string path = kSource + "/test/data/codegen/" + name;
    if (const char* update = std::getenv("KTUNE_UPDATE_GOLDENS"); update && *update == '1') {
      ASSERT_TRUE(write_file_atomic(path, *text).has_value());
    }
    auto want = read_file(path);
    ASSERT_TRUE(want.has_value()) << want.error().message;
    EXPECT_EQ(*text, *want) << "golden " << path
                            << " differs; KTUNE_UPDATE_GOLDENS=1 rewrites it (review the diff)";
  }
}

}  // namespace
}  // namespace ktune::codegen

// The CUDA codegen without a GPU: the emitted program's structure for examples/mlp_block and
// examples/transformer_block in bf16 and f32 with every kind of CUDA pick (a template cubin
// compiled by NVRTC for sm_90a, cuBLAS, cuBLASLt with and without its fused epilogue, cuBLAS
// followed by the separate epilogue kernel), nvcc building it (skipped without nvcc), and the
// picks it refuses.
#include "ktune/codegen/cuda_wrapper.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/subprocess.h"
#include "ktune/codegen/graph_fusion.h"
#include "support/temp_dir.h"

#if KTUNE_HAVE_CUDA
#include "unit/codegen/cuda_picks.h"
#endif

namespace ktune::test {
namespace {

using codegen::emit_cuda_wrapper;
using codegen::GemmPick;
using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CudaWrapper, RefusesPicksThatAreNotCudaLaunches) {
  codegen::Graph g;
  auto built = codegen::GraphBuilder("tiny")
                   .input("x", TensorSpec::contiguous(DType::kBF16, {16, 16}))
                   .input("w", TensorSpec::contiguous(DType::kBF16, {16, 16}))
                   .node("y", codegen::OpKind::kGemm, {"x", "w"})
                   .output("y")
                   .build();
  ASSERT_TRUE(built.has_value()) << built.error().message;
  GemmPick cpu;
  cpu.choice = "openblas";
  cpu.is_extern = true;
  auto r = emit_cuda_wrapper(*built, {{"y", cpu}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message, HasSubstr("gemm 'y' (pick 'openblas'): not a CUDA launch"));

  GemmPick so;
  so.choice = "cpu_template";
  so.launch = LaunchSpec{};  // kCpuSharedObject
  r = emit_cuda_wrapper(*built, {{"y", so}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("a cpu_so launch; the CUDA codegen runs cuda_cubin"));

  GemmPick other;
  other.choice = "rocblas";
  other.launch = LaunchSpec{};
  other.launch->kind = LaunchKind::kCudaLibrary;
  other.launch->library = "rocblas";
  other.launch->bind = {0, 1, 2, 3, 4, 5};
  r = emit_cuda_wrapper(*built, {{"y", other}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("library 'rocblas'"));

  other.launch->library = "cublas";
  other.launch->bind = {1, 0, 2, 3, 4, 5};
  r = emit_cuda_wrapper(*built, {{"y", other}});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("bind {1, 0, 2, 3, 4, 5}"));

  other.launch->bind = {0, 1, 2, 3, 4, 5};
  LaunchSpec missing;
  missing.kind = LaunchKind::kCudaCubin;
  missing.artifact = "/nonexistent/k.cubin";
  missing.entry = "gemm_epilogue";
  other.launch->then.push_back(missing);
  r = emit_cuda_wrapper(*built, {{"y", other}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/k.cubin"));

  EXPECT_FALSE(emit_cuda_wrapper(*built, {}).has_value());  // no pick at all
}

// A cuBLAS pick for every gemm, with pick_cuda_gemms()'s fusions when `fuse`: every chain of
// find_fusions() fused into its gemm's problem, whatever the pick.
std::map<std::string, GemmPick> cublas_picks(const codegen::Graph& g, bool fuse) {
  std::map<std::string, GemmPick> picks;
  for (const codegen::GraphNode& n : g.nodes) {
    if (n.op != codegen::OpKind::kGemm) continue;
    GemmPick& p = picks[n.name];
    p.choice = "cublas_gemm";
    p.is_extern = true;
    p.launch = LaunchSpec{};
    p.launch->kind = LaunchKind::kCudaLibrary;
    p.launch->library = "cublas";
    p.launch->bind = {0, 1, 2, 3, 4, 5};
  }
  if (!fuse) return picks;
  for (const codegen::FusionChain& c : codegen::find_fusions(g)) {
    GemmPick& p = picks[g.nodes[c.gemm].name];
    for (std::size_t k : c.nodes) p.fused.push_back(g.nodes[k].name);
    p.epilogue = c.epilogue;
    p.epilogue_args = c.operands;
  }
  return picks;
}

// The program's own kernels follow from the graph and whether chains fuse, never from the picks:
// predict_cuda_kernels() (what `ktune compile` starts nvcc on before tuning) is the text that
// emit_cuda_wrapper() writes.
TEST(CudaWrapper, TheKernelsArePredictedBeforeThePicks) {
  for (const char* example : {"mlp_block", "transformer_block"}) {
    for (const char* dtype : {"f32", "bf16", "f16"}) {
      const std::string file =
          std::string(KTUNE_SOURCE_DIR) + "/examples/" + example + "/graph.yaml";
      auto text = read_file(file);
      ASSERT_TRUE(text.has_value());
      std::string yaml = *text;
      for (std::size_t at = yaml.find("f32"); at != std::string::npos; at = yaml.find("f32", at)) {
        yaml.replace(at, 3, dtype);
        at += 3;
      }
      auto g = codegen::parse_graph(yaml, file);
      ASSERT_TRUE(g.has_value()) << g.error().message;
      for (bool fuse : {true, false}) {
        SCOPED_TRACE(fmt::format("{} {} fuse={}", example, dtype, fuse));
        auto predicted = codegen::predict_cuda_kernels(*g, fuse);
        ASSERT_TRUE(predicted.has_value()) << predicted.error().message;
        auto w = emit_cuda_wrapper(*g, cublas_picks(*g, fuse));
        ASSERT_TRUE(w.has_value()) << w.error().message;
        EXPECT_EQ(*predicted, w->kernels);
        // The MLP fused is gemms alone: no kernels of its own, no module, no .S.
        const bool none = fuse && example == std::string("mlp_block");
        EXPECT_EQ(w->kernels.empty(), none);
        EXPECT_EQ(w->host.find("_kernels_cubin") == std::string::npos, none);
      }
    }
  }
}

#if KTUNE_HAVE_CUDA

// $KTUNE_TEST_SOURCE_DIR overrides the source folder compiled in (as support/cli_run.h's).
std::filesystem::path example_graph(const std::string& name) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return std::filesystem::path(moved && *moved ? moved : KTUNE_SOURCE_DIR) / "examples" / name /
         "graph.yaml";
}

struct Emitted {
  codegen::Graph graph;
  codegen::CudaWrapper wrapper;
};

class CudaWrapperEmit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = new TempDir("cuda-wrapper-cache");
    auto b = CudaBackend::create({.arch = "sm_90a"}, cache_->path());
    if (b) backend_ = new CudaBackend(std::move(*b));
  }
  static void TearDownTestSuite() {
    delete backend_;
    delete cache_;
    backend_ = nullptr;
    cache_ = nullptr;
  }
  void SetUp() override {
    if (backend_ == nullptr) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  }
  static Emitted emit(const char* example, DType dtype, const std::vector<CudaPickSpec>& specs) {
    Emitted e;
    e.graph = graph_as(example_graph(example), dtype);
    auto w = emit_cuda_wrapper(e.graph, cuda_picks(e.graph, *backend_, specs));
    EXPECT_TRUE(w.has_value()) << w.error().message;
    if (w) e.wrapper = std::move(*w);
    return e;
  }
  static TempDir* cache_;
  static CudaBackend* backend_;
};
TempDir* CudaWrapperEmit::cache_ = nullptr;
CudaBackend* CudaWrapperEmit::backend_ = nullptr;

// What every program has: the ABI, one device allocation, the checks, the capture and replay.
void expect_program(const Emitted& e) {
  const std::string& s = e.wrapper.host;
  const std::string& G = e.graph.name;
  EXPECT_THAT(s, HasSubstr("#ifndef KTUNE_CUDA_TENSOR_DEFINED"));
  for (const std::string fn : {"_create(", "_run(", "_last_error(", "_destroy(", "_arena_bytes("}) {
    EXPECT_THAT(s, HasSubstr("extern \"C\"")) << fn;
    EXPECT_THAT(s, HasSubstr(G + fn)) << fn;
  }
  EXPECT_EQ(count(s, "cudaMalloc("), 2u) << "the arena, and the benchmark's ktune_upload";
  EXPECT_EQ(count(s, "cudaMalloc(reinterpret_cast<void**>(&p->arena)"), 1u);
  EXPECT_THAT(s, Not(HasSubstr("cuMemAlloc")));
  EXPECT_THAT(s, HasSubstr("cudaStreamBeginCapture(p->capture, cudaStreamCaptureModeThreadLocal)"));
  EXPECT_THAT(s, HasSubstr("cudaGraphExecUpdate(p->exec, graph, &info)"));
  EXPECT_THAT(s, HasSubstr("cudaGraphLaunch(p->exec, stream)"));
  for (const codegen::GraphInput& in : e.graph.inputs) {
    EXPECT_THAT(s, HasSubstr(fmt::format("\"input\", \"{}\", inputs[", in.name)));
  }
  for (const std::string& o : e.graph.outputs) {
    EXPECT_THAT(s, HasSubstr(fmt::format("\"output\", \"{}\", outputs[", o)));
    EXPECT_THAT(s, HasSubstr(fmt::format("* {} = static_cast<", o)));
  }
  EXPECT_THAT(s, HasSubstr("int main(int argc, char** argv)"));
  EXPECT_EQ(e.wrapper.plan.arena_output_bytes, 0u) << "outputs are the caller's";
}

TEST_F(CudaWrapperEmit, MlpBlockBf16) {
  const Emitted e = emit("mlp_block", DType::kBF16, mlp_picks());
  expect_program(e);
  const std::string& s = e.wrapper.host;
  EXPECT_THAT(s,
              HasSubstr("// fused: h = gemm(x, w1); h_bias = bias_add(h, b1); a = relu(h_bias)"));
  EXPECT_THAT(s, HasSubstr("ktune_lt_setup(ktune_error, ktune_where, \"a\", p->lt, CUDA_R_16BF, "
                           "64, 512, 256, 6, 0,"));
  EXPECT_THAT(s, HasSubstr("const void* ktune_bias = b1;"));
  EXPECT_THAT(s, HasSubstr("// fused: o = gemm(a, w2); y = bias_add(o, b2)"));
  EXPECT_THAT(s,
              HasSubstr("void* ktune_args[] = {&y, &a, &w2, &ktune_m, &ktune_n, &ktune_k, &b2};"));
  EXPECT_EQ(count(s, "cuModuleLoadData("), 1u);
  EXPECT_TRUE(e.wrapper.kernels.empty()) << "every step a gemm: no kernels of its own";
  EXPECT_THAT(
      s, HasSubstr("__nv_bfloat16* a = reinterpret_cast<__nv_bfloat16*>(ktune_p->arena + 0);"));
  EXPECT_EQ(e.wrapper.plan.arena_bytes, 64u * 512 * 2);
}

TEST_F(CudaWrapperEmit, TransformerBlockF32) {
  const Emitted e = emit("transformer_block", DType::kF32, transformer_picks());
  expect_program(e);
  const std::string& s = e.wrapper.host;
  EXPECT_EQ(count(s, "KTUNE_CUBLAS(cublasGemmEx("), 3u);      // q, attn, proj
  EXPECT_EQ(count(s, "KTUNE_CUBLASLT(cublasLtMatmul("), 3u);  // k, scores, m
  EXPECT_EQ(count(s, "CUDA_R_32F, 64, 64, 64, 0, 1,"), 1u);   // k: answer 1 of the heuristic
  // proj: cuBLAS, then the separate residual kernel on the same arguments.
  EXPECT_THAT(s, HasSubstr("// fused: proj = gemm(attn, wo); h = add(proj, x)"));
  EXPECT_THAT(s, HasSubstr("{  // gemm_epilogue"));
  EXPECT_THAT(
      s, HasSubstr("void* ktune_args[] = {&h, &attn, &wo, &ktune_m, &ktune_n, &ktune_k, &x};"));
  // The scale before the softmax is folded into it; the transpose and norms are kernels.
  EXPECT_THAT(s, HasSubstr("row_softmax((scores) * 0.125f), the scale 'scaled' folded in"));
  EXPECT_THAT(s, HasSubstr("{64, 1, 1}, {32, 1, 1}, ktune_stream, p, scores, 64, 0.125f));  // "
                           "ktune_row_softmax_f32_v1"));
  EXPECT_THAT(e.wrapper.kernels, Not(HasSubstr("ktune_pointwise_scale")));
  // f32: the scalar 32 x 33 tile, (32, 8) threads.
  EXPECT_THAT(s, HasSubstr("{2, 2, 1}, {32, 8, 1}, ktune_stream, kt, k, 64, 64));  // "
                           "ktune_transpose_f32_s"));
  EXPECT_EQ(count(s, "{64, 1, 1}, {32, 1, 1}, ktune_stream, "), 3u);  // 2 layer norms, softmax
  EXPECT_EQ(count(s, "));  // ktune_layer_norm_f32_v1"), 2u);
  EXPECT_THAT(s, HasSubstr("ktune_stream, y, m_bias, h, 4096LL, 0LL, 0.0f));  // "
                           "ktune_pointwise_add_f32_v"));
  // Each kernel instance once in the kernels, launched by name from them.
  for (const char* k : {"ktune_row_softmax_f32_v1", "ktune_transpose_f32_s",
                        "ktune_layer_norm_f32_v1", "ktune_pointwise_add_f32_v"}) {
    EXPECT_EQ(count(e.wrapper.kernels, std::string("__global__ void ") + k + "("), 1u) << k;
    EXPECT_EQ(count(s, std::string("p->kernels, \"") + k + "\""), 1u) << k;
  }
  // Two template cubins (v and f), the separate epilogue's and the program's own kernels.
  EXPECT_EQ(count(s, "cuModuleLoadData("), 4u);
  EXPECT_THAT(s, Not(HasSubstr("<<<")));
  EXPECT_THAT(s, Not(HasSubstr("__global__")));
  for (const auto& p : e.wrapper.plan.placements) {
    if (p.in_arena) {
      EXPECT_EQ(p.offset % 256, 0u);
    }
  }
}

// Both programs of one dtype each through nvcc: the library and the benchmark.
TEST_F(CudaWrapperEmit, NvccBuildsTheLibraryAndTheBenchmark) {
  codegen::CudaBuildOptions options;
  const std::string probe = options.nvcc + " --version >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) GTEST_SKIP() << "[SKIP] nvcc not found: " << options.nvcc;
  for (const auto& [example, dtype] :
       {std::pair{"transformer_block", DType::kBF16}, std::pair{"mlp_block", DType::kF32}}) {
    const Emitted e = emit(example, dtype,
                           example == std::string("mlp_block") ? mlp_picks() : transformer_picks());
    TempDir dir("cuda-wrapper-build");
    auto files = codegen::write_cuda_wrapper(e.graph, e.wrapper, dir.path(), options, true);
    ASSERT_TRUE(files.has_value()) << files.error().message;
    EXPECT_TRUE(std::filesystem::exists(files->library));
    EXPECT_TRUE(std::filesystem::exists(files->executable));
    EXPECT_EQ(files->host.extension(), ".cpp");
    // Bad arguments are refused before the GPU is touched: usage on stderr, exit 2 (where the
    // executable can load at all: it links the driver's libcuda.so.1).
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver == nullptr) continue;
    dlclose(driver);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"abc"}, {"0"}, {"5", "-1"}, {"5", "1", "x"}}) {
      std::vector<std::string> argv = {files->executable.string()};
      argv.insert(argv.end(), args.begin(), args.end());
      auto r = run_process(argv);
      ASSERT_TRUE(r.has_value()) << r.error().message;
      EXPECT_EQ(r->exit_code, 2) << args[0] << ": " << r->output;
      EXPECT_THAT(r->output, HasSubstr("usage: " + e.graph.name + " [RUNS [SEED]]"));
    }
  }
}

// The GPU test's graph (test/cuda/cuda_compile_test.cpp): emitted and built here already.
TEST_F(CudaWrapperEmit, EveryOpGraphBuilds) {
  const codegen::Graph g = every_op_graph(DType::kBF16);
  auto w = emit_cuda_wrapper(g, cuda_picks(g, *backend_, every_op_picks()));
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const std::string& s = w->host;
  for (const char* call :
       {"{64, 1, 1}, {32, 1, 1}, ktune_stream, a, x, ln_g, ln_b, 128, 1e-05f));  // "
        "ktune_layer_norm_bf16_v1",
        "ktune_stream, qt, qs, ", "// ktune_transpose_bf16_v",
        "3.0f));  // ktune_pointwise_scale_bf16_v", "// ktune_row_sum_bf16_v",
        "{64, 1, 1}, {32, 1, 1}, ktune_stream, pr, sc, 64, 0.125f));  // ktune_row_softmax_bf16_v1",
        "ktune_stream, v0, res, rb, 8192LL, -128LL, 0.0f));",  // per row
        "ktune_stream, v, v0, ln_b, 8192LL, 128LL, 0.0f));"}) {
    EXPECT_THAT(s, HasSubstr(call));
  }
  for (const char* functor :
       {"KtuneSilu{}", "KtuneGelu{}", "KtuneRelu{}", "KtuneScale{alpha}", "KtuneAdd{}"}) {
    EXPECT_THAT(w->kernels, HasSubstr(functor));
  }
  codegen::CudaBuildOptions options;
  if (std::system((options.nvcc + " --version >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "[SKIP] nvcc not found: " << options.nvcc;
  }
  TempDir dir("cuda-wrapper-every-op");
  auto files = codegen::write_cuda_wrapper(g, *w, dir.path(), options, true);
  ASSERT_TRUE(files.has_value()) << files.error().message;
}

// Rows that do not divide into 16-byte vectors: the scalar kernels, and no arena workspace
// without library GEMMs (two 300-byte buffers at 256-byte aligned offsets).
TEST_F(CudaWrapperEmit, OddWidthsTakeTheScalarKernels) {
  using codegen::OpKind;
  auto g = codegen::GraphBuilder("odd")
               .input("x", TensorSpec::contiguous(DType::kF16, {5, 30}))
               .input("gm", TensorSpec::contiguous(DType::kF16, {30}))
               .input("bt", TensorSpec::contiguous(DType::kF16, {30}))
               .node("n", OpKind::kLayerNorm, {"x", "gm", "bt"})
               .node("b", OpKind::kBiasAdd, {"n", "gm"})
               .node("p", OpKind::kRowSoftmax, {"b"})
               .node("t", OpKind::kTranspose, {"p"})
               .node("s", OpKind::kRowSum, {"t"})
               .output("s")
               .build();
  ASSERT_TRUE(g.has_value()) << g.error().message;
  auto w = emit_cuda_wrapper(*g, {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const std::string& s = w->host;
  EXPECT_THAT(s, HasSubstr("{5, 1, 1}, {32, 1, 1}, ktune_stream, n, x, gm, bt, 30, 1e-05f));  "
                           "// ktune_layer_norm_f16_s1"));
  EXPECT_THAT(s, HasSubstr("ktune_stream, b, n, gm, 150LL, 30LL, 0.0f));  // "
                           "ktune_pointwise_add_f16_s"));
  EXPECT_THAT(s, HasSubstr("{5, 1, 1}, {32, 1, 1}, ktune_stream, p, b, 30, 1.0f));  // "
                           "ktune_row_softmax_f16_s1"));
  EXPECT_THAT(s, HasSubstr("{30, 1, 1}, {32, 1, 1}, ktune_stream, s, t, 5));  // "
                           "ktune_row_sum_f16_s"));
  EXPECT_THAT(w->kernels, HasSubstr("ktune_layer_norm<false, 1>(y, x, gamma, beta, n, eps);"));
  EXPECT_THAT(s, HasSubstr("__half* x = static_cast<__half*>(ktune_inputs[0].data);"));
  EXPECT_THAT(s, Not(HasSubstr("cublasCreate")));
  EXPECT_THAT(s, HasSubstr("extern \"C\" size_t odd_arena_bytes(void) { return 1024; }"));
  codegen::CudaBuildOptions options;
  if (std::system((options.nvcc + " --version >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "[SKIP] nvcc not found: " << options.nvcc;
  }
  TempDir dir("cuda-wrapper-odd");
  auto files = codegen::write_cuda_wrapper(*g, *w, dir.path(), options, true);
  ASSERT_TRUE(files.has_value()) << files.error().message;
}

// The row kernels' blocks from the row's length (f16: 8 elements per 16-byte chunk): one chunk
// per thread up to 512 threads, more chunks beyond, elements where rows do not divide into
// chunks, the streaming fallback past 8 chunks per thread; the 16-byte transpose's partial
// tiles. All of them through nvcc.
TEST_F(CudaWrapperEmit, RowKernelsHoldRowsInRegistersWhereTheyFit) {
  using codegen::OpKind;
  using T = TensorSpec;
  const DType h = DType::kF16;
  auto g = codegen::GraphBuilder("rows")
               .input("a", T::contiguous(h, {4, 2048}))
               .input("a2", T::contiguous(h, {4, 16384}))
               .input("a3", T::contiguous(h, {2, 40000}))
               .input("c", T::contiguous(h, {3, 1001}))
               .input("c2", T::contiguous(h, {2, 4099}))
               .input("g", T::contiguous(h, {2048}))
               .input("f", T::contiguous(h, {72, 136}))
               .node("la", OpKind::kLayerNorm, {"a", "g", "g"})
               .node("sa2", OpKind::kRowSoftmax, {"a2"})
               .node("sa3", OpKind::kRowSoftmax, {"a3"})
               .node("sc", OpKind::kRowSoftmax, {"c"})
               .node("sc2", OpKind::kRowSoftmax, {"c2"})
               .node("tf", OpKind::kTranspose, {"f"})
               .output("la")
               .output("sa2")
               .output("sa3")
               .output("sc")
               .output("sc2")
               .output("tf")
               .build();
  ASSERT_TRUE(g.has_value()) << g.error().message;
  auto w = emit_cuda_wrapper(*g, {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const std::string& s = w->host;
  for (const char* call :
       {"{4, 1, 1}, {256, 1, 1}, ktune_stream, la, a, g, g, 2048, 1e-05f));  // "
        "ktune_layer_norm_f16_v1",
        "{4, 1, 1}, {512, 1, 1}, ktune_stream, sa2, a2, 16384, 1.0f));  // "
        "ktune_row_softmax_f16_v4",
        "{2, 1, 1}, {1024, 1, 1}, ktune_stream, sa3, a3, 40000, 1.0f));  // "
        "ktune_row_softmax_f16_v0",
        "{3, 1, 1}, {512, 1, 1}, ktune_stream, sc, c, 1001, 1.0f));  // ktune_row_softmax_f16_s2",
        "{2, 1, 1}, {1024, 1, 1}, ktune_stream, sc2, c2, 4099, 1.0f));  // "
        "ktune_row_softmax_f16_s0",
        // 64 x 64 tiles: 3 x 2 of them, partial at both edges.
        "{3, 2, 1}, {256, 1, 1}, ktune_stream, tf, f, 72, 136));  // ktune_transpose_f16_v"}) {
    EXPECT_THAT(s, HasSubstr(call));
  }
  EXPECT_THAT(w->kernels, HasSubstr("__launch_bounds__(256) ktune_transpose_f16_v("));
  EXPECT_THAT(w->kernels, HasSubstr("ktune_row_softmax<false, 0>(y, x, n, scale);"));
  codegen::CudaBuildOptions options;
  if (std::system((options.nvcc + " --version >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "[SKIP] nvcc not found: " << options.nvcc;
  }
  TempDir dir("cuda-wrapper-rows");
  auto files = codegen::write_cuda_wrapper(*g, *w, dir.path(), options, true);
  ASSERT_TRUE(files.has_value()) << files.error().message;
}

TEST_F(CudaWrapperEmit, TheTextIsDeterministic) {
  const Emitted a = emit("mlp_block", DType::kBF16, mlp_picks());
  const Emitted b = emit("mlp_block", DType::kBF16, mlp_picks());
  EXPECT_EQ(a.wrapper.host, b.wrapper.host);
  EXPECT_EQ(a.wrapper.kernels, b.wrapper.kernels);
  EXPECT_THAT(a.wrapper.host, Not(HasSubstr(cache_->path().string())));
}

#endif  // KTUNE_HAVE_CUDA

}  // namespace
}  // namespace ktune::test

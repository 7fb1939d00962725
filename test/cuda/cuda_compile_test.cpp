// The CUDA codegen on a GPU: a graph with every op (bf16 and f32) and every kind of CUDA pick
// emitted, built by nvcc for this GPU, loaded with dlopen and run on device tensors against the
// double-precision reference; the run-time checks of sizes, dtypes, alignment and device; a
// second run with other output buffers (captured again) and on the legacy default stream; the
// benchmark executable. Skips without a GPU (or without nvcc).
#include <dlfcn.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/cuda_driver.h"
#include "core/subprocess.h"
#include "ktune/codegen/cuda_wrapper.h"
#include "support/temp_dir.h"
#include "unit/codegen/cuda_picks.h"
#include "unit/codegen/graph_reference.h"

namespace ktune::test {
namespace {

using codegen::OpKind;
using ::testing::HasSubstr;

extern "C" {
struct KtuneCudaTensor {  // the generated program's ABI
  void* data;
  int dtype;
  int device;
  int ndim;
  std::int64_t sizes[8];
  std::int64_t strides[8];
};
}
using CreateFn = int (*)(void**);
using RunFn = int (*)(void*, const KtuneCudaTensor*, int, const KtuneCudaTensor*, int, CUstream);
using ErrorFn = const char* (*)(const void*);
using DestroyFn = void (*)(void*);
using BytesFn = std::size_t (*)();

float round_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&f, &u, 4);
  return f;
}

class CudaCompileGpu : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    auto driver = cuda_driver();
    if (!driver) GTEST_SKIP() << "[SKIP] no GPU: " << driver.error().message;
    cu_ = *driver;
    ASSERT_EQ(cu_->DevicePrimaryCtxRetain(&ctx_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cu_->CtxSetCurrent(ctx_), CUDA_SUCCESS);
    auto info = cuda_device_info(0);
    ASSERT_TRUE(info.has_value()) << info.error().message;
    arch_ = info->arch();
    if (std::system((options().nvcc + " --version >/dev/null 2>&1").c_str()) != 0) {
      GTEST_SKIP() << "[SKIP] nvcc not found";
    }
  }
  void TearDown() override {
    for (CUdeviceptr p : allocated_) (void)cu_->MemFree(p);
    if (ctx_ != nullptr) (void)cu_->DevicePrimaryCtxRelease(0);
  }
  codegen::CudaBuildOptions options() const {
    codegen::CudaBuildOptions o;
    o.arch = arch_.empty() ? "sm_90a" : arch_;
    return o;
  }
  // A device copy of `v` in the dtype (f32 or bf16), as a tensor of `t`'s shape.
  KtuneCudaTensor upload(const std::vector<double>& v, const TensorSpec& t) {
    const bool bf16 = t.dtype == DType::kBF16;
    std::vector<unsigned char> host(v.size() * (bf16 ? 2 : 4));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float f = static_cast<float>(v[i]);
      if (bf16) {
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        const std::uint16_t h = static_cast<std::uint16_t>(u >> 16);  // already rounded
        std::memcpy(host.data() + 2 * i, &h, 2);
      } else {
        std::memcpy(host.data() + 4 * i, &f, 4);
      }
    }
    CUdeviceptr d = 0;
    EXPECT_EQ(cu_->MemAlloc(&d, host.size()), CUDA_SUCCESS);
    allocated_.push_back(d);
    EXPECT_EQ(cu_->MemcpyHtoD(d, host.data(), host.size()), CUDA_SUCCESS);
    KtuneCudaTensor out{reinterpret_cast<void*>(static_cast<std::uintptr_t>(d)),  // NOLINT
                        bf16 ? 2 : 0,
                        0,
                        static_cast<int>(t.sizes.size()),
                        {},
                        {}};
    std::copy(t.sizes.begin(), t.sizes.end(), out.sizes);
    std::copy(t.strides.begin(), t.strides.end(), out.strides);
    return out;
  }
  std::vector<double> download(const KtuneCudaTensor& t, std::size_t n) {
    const bool bf16 = t.dtype == 2;
    std::vector<unsigned char> host(n * (bf16 ? 2 : 4));
    EXPECT_EQ(cu_->MemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(t.data), host.size()),
              CUDA_SUCCESS);
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      float f = 0;
      if (bf16) {
        const std::uint32_t u = static_cast<std::uint32_t>(host[2 * i] | (host[2 * i + 1] << 8))
                                << 16;
        std::memcpy(&f, &u, 4);
      } else {
        std::memcpy(&f, host.data() + 4 * i, 4);
      }
      out[i] = f;
    }
    return out;
  }

  const CudaDriver* cu_ = nullptr;
  CUcontext ctx_ = nullptr;
  std::string arch_;
  std::vector<CUdeviceptr> allocated_;
};

TEST_P(CudaCompileGpu, EveryOpMatchesTheReferenceAndBadTensorsAreRefused) {
  const DType dtype = GetParam();
  const codegen::Graph g = every_op_graph(dtype);
  TempDir cache("cuda-compile-cache");
  auto backend = CudaBackend::create({.arch = arch_}, cache.path());
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  auto w = codegen::emit_cuda_wrapper(g, cuda_picks(g, *backend, every_op_picks()));
  ASSERT_TRUE(w.has_value()) << w.error().message;
  TempDir dir("cuda-compile");
  auto files = codegen::write_cuda_wrapper(g, *w, dir.path(), options(), true);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  void* lib = dlopen(files->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "every_op_create"));
  auto run = reinterpret_cast<RunFn>(dlsym(lib, "every_op_run"));
  auto last_error = reinterpret_cast<ErrorFn>(dlsym(lib, "every_op_last_error"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(lib, "every_op_destroy"));
  auto arena_bytes = reinterpret_cast<BytesFn>(dlsym(lib, "every_op_arena_bytes"));
  ASSERT_TRUE(create && run && last_error && destroy && arena_bytes);
  const std::size_t arena = arena_bytes();
  EXPECT_EQ(arena, w->plan.arena_bytes + codegen::kCudaWorkspaceBytes);

  // Inputs of magnitude about 1 at every layer: each weight scaled by 1/sqrt(its rows).
  Values in = seeded_inputs(g, 11);
  for (const char* wname : {"w1", "w2", "wq"}) {
    const double rows =
        static_cast<double>(in[wname].size()) / (wname == std::string("wq")   ? 64.0
                                                 : wname == std::string("w1") ? 256
                                                                              : 128);
    for (double& e : in[wname]) e /= std::sqrt(rows);
  }
  for (auto& [name, v] : in) {
    for (double& e : v)
      e = dtype == DType::kBF16 ? round_bf16(static_cast<float>(e)) : static_cast<float>(e);
  }
  const Values want = reference_eval(g, in);
  std::vector<KtuneCudaTensor> inputs, outputs;
  for (const codegen::GraphInput& x : g.inputs) inputs.push_back(upload(in.at(x.name), x.spec));
  const int n_in = static_cast<int>(inputs.size());
  std::vector<TensorSpec> out_specs;
  for (const std::string& o : g.outputs) {
    for (const codegen::GraphNode& n : g.nodes) {
      if (n.name == o) out_specs.push_back(n.out);
    }
  }
  for (const TensorSpec& t : out_specs) {
    outputs.push_back(upload(std::vector<double>(t.numel()), t));
  }

  void* program = nullptr;
  ASSERT_EQ(create(&program), 0) << last_error(program);
  const double atol = dtype == DType::kBF16 ? 2e-2 : 1e-4;
  const double rtol = dtype == DType::kBF16 ? 5e-2 : 1e-3;
  const auto check = [&](const std::vector<KtuneCudaTensor>& outs, const char* when) {
    ASSERT_EQ(cu_->CtxSynchronize(), CUDA_SUCCESS) << when;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const std::vector<double> got = download(outs[i], out_specs[i].numel());
      const std::vector<double>& ref = want.at(g.outputs[i]);
      int bad = 0;
      for (std::size_t e = 0; e < got.size(); ++e) {
        if (!(std::abs(got[e] - ref[e]) <= atol + rtol * std::abs(ref[e])) && bad++ < 3) {
          ADD_FAILURE() << when << ": " << g.outputs[i] << "[" << e << "] = " << got[e]
                        << ", expected " << ref[e];
        }
      }
      EXPECT_EQ(bad, 0) << when << ": " << g.outputs[i];
    }
  };
  CUstream stream = nullptr;
  ASSERT_EQ(cu_->StreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(run(program, inputs.data(), n_in, outputs.data(), 3, stream), 0) << last_error(program);
  check(outputs, "first run");
  // Other output buffers: the graph is captured again; on the legacy default stream.
  std::vector<KtuneCudaTensor> other;
  for (const TensorSpec& t : out_specs) other.push_back(upload(std::vector<double>(t.numel()), t));
  ASSERT_EQ(run(program, inputs.data(), n_in, other.data(), 3, nullptr), 0) << last_error(program);
  check(other, "second run, other outputs, stream 0");
  ASSERT_EQ(run(program, inputs.data(), n_in, outputs.data(), 3, stream), 0) << last_error(program);
  check(outputs, "third run, the first outputs again");

  const auto refused = [&](std::vector<KtuneCudaTensor> ins, std::vector<KtuneCudaTensor> outs,
                           const std::string& message) {
    EXPECT_NE(run(program, ins.data(), static_cast<int>(ins.size()), outs.data(),
                  static_cast<int>(outs.size()), stream),
              0)
        << message;
    EXPECT_THAT(std::string(last_error(program)), HasSubstr(message));
  };
  std::vector<KtuneCudaTensor> bad = inputs;
  bad[0].sizes[0] = 63;
  refused(bad, outputs, "input 'x': expected ");
  bad = inputs;
  bad[3].dtype = dtype == DType::kBF16 ? 0 : 2;
  refused(bad, outputs, "input 'w1': expected ");
  bad = inputs;
  bad[1].data = static_cast<char*>(bad[1].data) + 2;
  refused(bad, outputs, "input 'ln_g': expected a 16-byte aligned device address");
  alignas(16) static float host[128];
  bad = inputs;
  bad[2].data = host;
  refused(bad, outputs, "input 'ln_b': expected memory of CUDA device 0");
  std::vector<KtuneCudaTensor> fewer(outputs.begin(), outputs.end() - 1);
  refused(inputs, fewer, fmt::format("expected {0} inputs and 3 outputs; got {0} and 2", n_in));
  // After the refusals, a good run still is.
  ASSERT_EQ(run(program, inputs.data(), n_in, other.data(), 3, stream), 0) << last_error(program);
  check(other, "after the refusals");
  destroy(program);
  (void)cu_->StreamDestroy(stream);
  dlclose(lib);

  auto bench = run_process({files->executable.string(), "abc"});
  ASSERT_TRUE(bench.has_value());
  EXPECT_EQ(bench->exit_code, 2) << bench->output;
  EXPECT_THAT(bench->output, HasSubstr("usage: every_op [RUNS [SEED]]"));
  bench = run_process({files->executable.string(), "5", "3"});
  ASSERT_TRUE(bench.has_value());
  EXPECT_EQ(bench->exit_code, 0) << bench->output;
  EXPECT_THAT(bench->output, HasSubstr("every_op: median "));
  EXPECT_THAT(bench->output, HasSubstr(fmt::format("arena {} bytes", arena)));
}

// Every path of the generated row kernels and transpose against the reference: rows held in
// registers (one chunk per thread, several, elements of rows that do not divide into 16-byte
// vectors, a row shorter than a warp's chunks) and too long for them (the streaming fallback,
// vectors and elements), the 16-byte transpose with partial tiles, a broadcast bias. The
// tolerance is relative to each output's largest magnitude, so that softmax rows of 40000
// elements are checked as closely as short ones.
TEST_P(CudaCompileGpu, EveryRowKernelPathMatchesTheReference) {
  const DType d = GetParam();
  using T = TensorSpec;
  auto built = codegen::GraphBuilder("row_paths")
                   .input("a", T::contiguous(d, {4, 4096}))
                   .input("b", T::contiguous(d, {3, 40000}))
                   .input("gb", T::contiguous(d, {40000}))
                   .input("bb", T::contiguous(d, {40000}))
                   .input("c", T::contiguous(d, {6, 1001}))
                   .input("gc", T::contiguous(d, {1001}))
                   .input("bc", T::contiguous(d, {1001}))
                   .input("dd", T::contiguous(d, {2, 4099}))
                   .input("e", T::contiguous(d, {7, 12}))
                   .input("ge", T::contiguous(d, {12}))
                   .input("be", T::contiguous(d, {12}))
                   .input("f", T::contiguous(d, {72, 136}))
                   .input("fb", T::contiguous(d, {136}))
                   .node("sa", OpKind::kRowSoftmax, {"a"})
                   .node("lb", OpKind::kLayerNorm, {"b", "gb", "bb"})
                   .node("sb", OpKind::kRowSoftmax, {"b"})
                   .node("lc", OpKind::kLayerNorm, {"c", "gc", "bc"})
                   .node("sc", OpKind::kRowSoftmax, {"c"})
                   .node("sd", OpKind::kRowSoftmax, {"dd"})
                   .node("le", OpKind::kLayerNorm, {"e", "ge", "be"})
                   .node("se", OpKind::kRowSoftmax, {"e"})
                   .node("tf", OpKind::kTranspose, {"f"})
                   .node("bf", OpKind::kBiasAdd, {"f", "fb"})
                   .output("sa")
                   .output("lb")
                   .output("sb")
                   .output("lc")
                   .output("sc")
                   .output("sd")
                   .output("le")
                   .output("se")
                   .output("tf")
                   .output("bf")
                   .build();
  ASSERT_TRUE(built.has_value()) << built.error().message;
  const codegen::Graph& g = *built;
  auto w = codegen::emit_cuda_wrapper(g, {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  // The paths the emitter chose (bf16: 8 elements per chunk, f32: 4).
  const bool bf16 = d == DType::kBF16;
  const std::string dt = bf16 ? "bf16" : "f32";
  // The launch of kernel `name` with `grid` blocks of `block` threads.
  const auto launches = [&](const std::string& name, int grid, int block) {
    const std::string want = fmt::format("{{{}, 1, 1}}, {{{}, 1, 1}}, ktune_stream,", grid, block);
    for (std::size_t at = w->host.find("// " + name + "\n"); at != std::string::npos;
         at = w->host.find("// " + name + "\n", at + 1)) {
      const std::size_t line = w->host.rfind('\n', at);
      if (w->host.substr(line, at - line).find(want) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(launches(fmt::format("ktune_row_softmax_{}_v{}", dt, bf16 ? 1 : 2), 4, 512));
  EXPECT_TRUE(launches(fmt::format("ktune_layer_norm_{}_v0", dt), 3, 1024));
  EXPECT_TRUE(launches(fmt::format("ktune_row_softmax_{}_s0", dt), 2, 1024));
  EXPECT_TRUE(launches(fmt::format("ktune_layer_norm_{}_s2", dt), 6, 512));
  EXPECT_TRUE(launches(fmt::format("ktune_layer_norm_{}_{}1", dt, bf16 ? "s" : "v"), 7, 32));
  TempDir dir("cuda-row-paths");
  auto files = codegen::write_cuda_wrapper(g, *w, dir.path(), options(), true);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  void* lib = dlopen(files->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "row_paths_create"));
  auto run = reinterpret_cast<RunFn>(dlsym(lib, "row_paths_run"));
  auto last_error = reinterpret_cast<ErrorFn>(dlsym(lib, "row_paths_last_error"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(lib, "row_paths_destroy"));
  ASSERT_TRUE(create && run && last_error && destroy);
  Values in = seeded_inputs(g, 5);
  for (auto& [name, v] : in) {
    for (double& e : v) e = bf16 ? round_bf16(static_cast<float>(e)) : static_cast<float>(e);
  }
  const Values want = reference_eval(g, in);
  std::vector<KtuneCudaTensor> inputs, outputs;
  for (const codegen::GraphInput& x : g.inputs) inputs.push_back(upload(in.at(x.name), x.spec));
  std::vector<TensorSpec> out_specs;
  for (const std::string& o : g.outputs) {
    for (const codegen::GraphNode& n : g.nodes) {
      if (n.name == o) out_specs.push_back(n.out);
    }
  }
  for (const TensorSpec& t : out_specs)
    outputs.push_back(upload(std::vector<double>(t.numel()), t));
  void* program = nullptr;
  ASSERT_EQ(create(&program), 0) << last_error(program);
  ASSERT_EQ(run(program, inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                static_cast<int>(outputs.size()), nullptr),
            0)
      << last_error(program);
  ASSERT_EQ(cu_->CtxSynchronize(), CUDA_SUCCESS);
  const double rtol = bf16 ? 1e-2 : 1e-4;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<double> got = download(outputs[i], out_specs[i].numel());
    const std::vector<double>& ref = want.at(g.outputs[i]);
    double largest = 0;
    for (double r : ref) largest = std::max(largest, std::abs(r));
    int bad = 0;
    for (std::size_t e = 0; e < got.size(); ++e) {
      if (!(std::abs(got[e] - ref[e]) <= rtol * (largest * 0.1 + std::abs(ref[e]))) && bad++ < 3) {
        ADD_FAILURE() << g.outputs[i] << "[" << e << "] = " << got[e] << ", expected " << ref[e];
      }
    }
    EXPECT_EQ(bad, 0) << g.outputs[i];
  }
  destroy(program);
  dlclose(lib);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaCompileGpu, ::testing::Values(DType::kBF16, DType::kF32),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ktune::test

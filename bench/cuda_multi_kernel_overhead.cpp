// Google Benchmark figures for a call through CudaMultiKernel after the pick, on the GPU machine
// (docs/benchmarks.md; bench/gpu/runtime_overhead.sh runs it):
//   BM_DirectLaunch          a one-thread kernel enqueued with cuLaunchKernel on a stream
//   BM_CudaMultiKernelCall   the same launch as the pick of a CudaMultiKernel: bucket, atomic
//                            load, compare, indirect call, then the launch
//   BM_DispatcherCall        a call of open_dispatcher's pick for bench/cuda_dispatch/scale.yaml
//                            (n = 256: one block of y = 2 x) by the span of sizes, when
//                            KTUNE_BENCH_DISPATCH_SPEC and KTUNE_BENCH_DISPATCH_CACHE name the
//                            spec and a cache it was tuned into
//   BM_DirectScaleLaunch     the same y = 2 x kernel launched directly (its host cost alone)
// Both synchronise the stream every 256 launches (the same work in both), so that the time is
// the host's enqueueing, not a full launch queue waiting for the GPU.
#include <benchmark/benchmark.h>
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "backend/nvrtc_library.h"
#include "core/cuda_driver.h"
#include "ktune/runtime/cuda_multi_kernel.h"
#include "ktune/tuning/spec_dispatcher.h"

namespace {

using namespace ktune;

const CudaDriver* g_cu = nullptr;
CUfunction g_bump = nullptr;
CUstream g_stream = nullptr;
CUdeviceptr g_x = 0;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "cuda_multi_kernel_overhead: %s\n", what);
  std::exit(1);
}

void setup() {
  if (g_cu != nullptr) return;
  auto cu = cuda_driver();
  if (!cu) die(cu.error().message.c_str());
  g_cu = *cu;
  CUcontext ctx = nullptr;
  if (g_cu->DevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS || g_cu->CtxSetCurrent(ctx) != 0)
    die("no context");
  auto info = cuda_device_info(0);
  auto nv = nvrtc_library();
  if (!info || !nv) die("no device info or NVRTC");
  auto c =
      nvrtc_compile(**nv, "extern \"C\" __global__ void bump(float* x, long long n) { x[0] += n; }",
                    "bump.cu", {"--gpu-architecture=" + info->arch()});
  if (!c || c->result != NVRTC_SUCCESS) die("bump does not compile");
  CUmodule m = nullptr;
  if (g_cu->ModuleLoadData(&m, c->cubin.data()) != CUDA_SUCCESS ||
      g_cu->ModuleGetFunction(&g_bump, m, "bump") != CUDA_SUCCESS ||
      g_cu->StreamCreate(&g_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      g_cu->MemAlloc(&g_x, 4) != CUDA_SUCCESS || g_cu->MemsetD8(g_x, 0, 4) != CUDA_SUCCESS)
    die("module, stream or memory");
}

void bump(CUstream_st* stream, float* x, std::int64_t n) {
  long long count = n;
  void* params[] = {&x, &count};
  (void)g_cu->LaunchKernel(g_bump, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr);
}
void bump_twice(CUstream_st* stream, float* x, std::int64_t n) {
  bump(stream, x, n);
  bump(stream, x, -n);
  bump(stream, x, n);
}

ShapeKey bucket(float* const&, const std::int64_t& n) { return {n, 0, 0, 0}; }
std::size_t x_bytes(float* const&, const std::int64_t&) { return sizeof(float); }

void BM_DirectLaunch(benchmark::State& state) {
  setup();
  auto* x = reinterpret_cast<float*>(g_x);
  int k = 0;
  for (auto _ : state) {
    bump(g_stream, x, 1);
    if (++k % 256 == 0) (void)g_cu->StreamSynchronize(g_stream);
  }
  (void)g_cu->StreamSynchronize(g_stream);
}
BENCHMARK(BM_DirectLaunch);

void BM_CudaMultiKernelCall(benchmark::State& state) {
  setup();
  MultiKernelOptions o;
  o.name = "bench_bump";
  o.report = nullptr;
  o.bench = {.warmup_runs = 1, .budget_ms = 1, .min_runs = 3, .max_runs = 20};
  using Bump = CudaMultiKernel<float*, std::int64_t>;
  auto mk = Bump::create(o, {{"bump", &bump}, {"bump_twice", &bump_twice}}, &bucket,
                         {{0, &x_bytes, ArgUse::kInOut}});
  if (!mk) die(mk.error().message.c_str());
  auto* x = reinterpret_cast<float*>(g_x);
  if (!(*mk)(g_stream, x, 1)) die("the first call (the pick) failed");
  if (mk->picked(bucket(x, 1)) != "bump") die("the pick is not the one-launch variant");
  int k = 0;
  for (auto _ : state) {
    (void)(*mk)(g_stream, x, 1);
    if (++k % 256 == 0) (void)g_cu->StreamSynchronize(g_stream);
  }
  (void)g_cu->StreamSynchronize(g_stream);
}
BENCHMARK(BM_CudaMultiKernelCall);

CUfunction g_scale = nullptr;
CUdeviceptr g_sy = 0, g_sx = 0;  // y and x of the scale kernel (256 floats each)

void setup_scale() {
  setup();
  if (g_scale != nullptr) return;
  auto info = cuda_device_info(0);
  auto nv = nvrtc_library();
  if (!info || !nv) die("no device info or NVRTC");
  auto c = nvrtc_compile(**nv,
                         "extern \"C\" __global__ void scale(float* y, const float* x, int n) {\n"
                         "  int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "  if (j < n) y[j] = 2.0f * x[j];\n}\n",
                         "scale.cu", {"--gpu-architecture=" + info->arch()});
  if (!c || c->result != NVRTC_SUCCESS) die("scale does not compile");
  CUmodule m = nullptr;
  if (g_cu->ModuleLoadData(&m, c->cubin.data()) != CUDA_SUCCESS ||
      g_cu->ModuleGetFunction(&g_scale, m, "scale") != CUDA_SUCCESS ||
      g_cu->MemAlloc(&g_sy, 256 * 4) != CUDA_SUCCESS ||
      g_cu->MemAlloc(&g_sx, 256 * 4) != CUDA_SUCCESS)
    die("scale module or memory");
}

void BM_DirectScaleLaunch(benchmark::State& state) {
  setup_scale();
  int n = 256;
  void* params[] = {&g_sy, &g_sx, &n};
  int k = 0;
  for (auto _ : state) {
    (void)g_cu->LaunchKernel(g_scale, 1, 1, 1, 256, 1, 1, 0, g_stream, params, nullptr);
    if (++k % 256 == 0) (void)g_cu->StreamSynchronize(g_stream);
  }
  (void)g_cu->StreamSynchronize(g_stream);
}

void BM_DispatcherCall(benchmark::State& state) {
  const char* spec = std::getenv("KTUNE_BENCH_DISPATCH_SPEC");
  const char* cache = std::getenv("KTUNE_BENCH_DISPATCH_CACHE");
  if (spec == nullptr || cache == nullptr) {
    state.SkipWithError("KTUNE_BENCH_DISPATCH_SPEC and KTUNE_BENCH_DISPATCH_CACHE are unset");
    return;
  }
  setup_scale();
  DispatcherOptions o;
  o.cache_dir = cache;
  o.cuda_stream = g_stream;
  auto d = open_dispatcher(spec, o);
  if (!d) die(d.error().message.c_str());
  int n = 256;
  const std::int64_t sizes[] = {256};
  void* args[] = {reinterpret_cast<void*>(g_sy), reinterpret_cast<void*>(g_sx), &n};
  auto served = (*d)->lookup(sizes);
  if (!served || served->source != Dispatcher::Source::kExact) die("n = 256 is not tuned");
  int k = 0;
  for (auto _ : state) {
    (void)(*d)->call(sizes, args);
    if (++k % 256 == 0) (void)g_cu->StreamSynchronize(g_stream);
  }
  (void)g_cu->StreamSynchronize(g_stream);
}

BENCHMARK(BM_DirectScaleLaunch);
BENCHMARK(BM_DispatcherCall);

}  // namespace

BENCHMARK_MAIN();

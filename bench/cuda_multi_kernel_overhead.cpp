// Google Benchmark figures for a call through CudaMultiKernel after the pick, on the GPU machine
// (docs/benchmarks.md; bench/gpu/runtime_overhead.sh runs it):
//   BM_DirectLaunch          a one-thread kernel enqueued with cuLaunchKernel on a stream
//   BM_CudaMultiKernelCall   the same launch as the pick of a CudaMultiKernel: bucket, atomic
//                            load, compare, indirect call, then the launch
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

}  // namespace

BENCHMARK_MAIN();

// Serving a user's own CUDA kernel, tuned ahead, from a plain CUDA program: the sum of
// examples/cuda_reduction (two launches per call: partial sums, then their sum) on this
// program's stream and cudaMalloc'ed buffers. Tune first:
//   ktune tune examples/cuda_reduction/spec.yaml --problem n2e24
// then: cuda_dispatch examples/cuda_reduction/spec.yaml [CACHE_DIR]. The tuned size is served by
// its pick, a larger one by the nearest pick (with the grid its launch rule gives for it). Exits
// 1 when a sum is wrong or anything fails, 2 on bad arguments.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ktune/tuning/spec_dispatcher.h"

namespace {

using namespace ktune;

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// One sum of n floats through the dispatcher, checked against a double sum on the host.
bool serve(Dispatcher& d, cudaStream_t stream, int n) {
  std::vector<float> x(static_cast<std::size_t>(n));
  double want = 0;
  for (int i = 0; i < n; ++i) {
    x[static_cast<std::size_t>(i)] = static_cast<float>((i % 1000) - 500) / 1000.0f;
    want += x[static_cast<std::size_t>(i)];
  }
  float *dx = nullptr, *dout = nullptr, *dpartials = nullptr;
  if (!cuda_ok(cudaMalloc(&dx, x.size() * sizeof(float)), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&dout, sizeof(float)), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&dpartials, 4096 * sizeof(float)), "cudaMalloc") ||
      !cuda_ok(
          cudaMemcpyAsync(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync")) {
    return false;
  }
  const Sizes sizes = {{"n", n}};
  auto served = d.lookup(sizes);
  if (!served) {
    std::fprintf(stderr, "error: %s\n", served.error().message.c_str());
    return false;
  }
  // The spec's arguments in order: out, x, partials (device addresses), n (a pointer to it).
  void* args[] = {dout, dx, dpartials, &n};
  Status s = d.call(sizes, args);
  float got = 0;
  const bool copied =
      s &&
      cuda_ok(cudaMemcpyAsync(&got, dout, sizeof(float), cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync") &&
      cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(dpartials);
  if (!s) {
    std::fprintf(stderr, "error: %s\n", s.error().message.c_str());
    return false;
  }
  if (!copied) return false;
  const bool right = std::fabs(got - want) <= 1e-3 * (1 + std::fabs(want)) + 1e-6 * n;
  std::printf("n=%-9d -> %s (%s): sum %.6g, expected %.6g%s\n", n, served->name->c_str(),
              dispatch_source_name(served->source), got, want, right ? "" : "  WRONG");
  return right;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || std::string(argv[1]) == "--help") {
    std::fprintf(argc == 2 ? stdout : stderr, "usage: cuda_dispatch SPEC [CACHE_DIR]\n");
    return argc == 2 ? 0 : 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no CUDA device\n");
    return 1;
  }
  cudaStream_t stream = nullptr;
  // A runtime call makes the device's primary context current: the dispatcher loads its
  // kernels in it.
  if (!cuda_ok(cudaSetDevice(0), "cudaSetDevice") ||
      !cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")) {
    return 1;
  }
  DispatcherOptions options;
  if (argc == 3) options.cache_dir = argv[2];
  options.cuda_stream = stream;
  auto dispatcher = open_dispatcher(argv[1], options);
  if (!dispatcher) {
    std::fprintf(stderr, "error: %s\n", dispatcher.error().message.c_str());
    return 1;
  }
  bool ok = true;
  for (int n : {1 << 24, 1 << 25}) ok = serve(**dispatcher, stream, n) && ok;
  cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}

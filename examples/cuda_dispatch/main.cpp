// Serving kernels tuned ahead from a plain CUDA program, on its stream and cudaMalloc'ed buffers:
// a user's own kernel, the sum of examples/cuda_reduction (two launches per call: partial sums,
// then their sum), or ktune's bf16 GEMM of an `op: cuda.gemm` spec (a template cubin, cuBLAS or
// a cuBLASLt algorithm, whichever was picked). Tune first:
//   ktune tune examples/cuda_reduction/spec.yaml --problem n2e24
//   ktune tune examples/cuda_gemm/gemm_bf16.yaml --problem square1024
// then: cuda_dispatch SPEC [CACHE_DIR]. The tuned size is served by its pick, another one by the
// nearest pick (launched for the sizes called with). Exits 1 when a result is wrong or anything
// fails, 2 on bad arguments.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ktune/spec/spec.h"
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

std::uint16_t to_bf16(float f) {  // exact for the small integers used here
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t bits = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// C = A B (bf16, row-major) through the dispatcher of an op: cuda.gemm spec; 64 rows of C
// checked against the host within bf16's rounding of C.
bool serve_gemm(Dispatcher& d, cudaStream_t stream, int m, int n, int k) {
  std::vector<std::uint16_t> a(std::size_t(m) * k), b(std::size_t(k) * n), c(std::size_t(m) * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = to_bf16(float(int(i * 7 % 3) - 1));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = to_bf16(float(int(i * 5 % 3) - 1));
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  if (!cuda_ok(cudaMalloc(&da, a.size() * 2), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&db, b.size() * 2), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&dc, c.size() * 2), "cudaMalloc") ||
      !cuda_ok(cudaMemcpyAsync(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync") ||
      !cuda_ok(cudaMemcpyAsync(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync")) {
    return false;
  }
  const Sizes sizes = {{"M", m}, {"N", n}, {"K", k}};
  auto served = d.lookup(sizes);
  if (!served) {
    std::fprintf(stderr, "error: %s\n", served.error().message.c_str());
    return false;
  }
  // The op's arguments: C, A, B (device addresses), then M, N, K (pointers to int32).
  void* args[] = {dc, da, db, &m, &n, &k};
  Status s = d.call(sizes, args);
  const bool copied =
      s &&
      cuda_ok(cudaMemcpyAsync(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync") &&
      cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  if (!s) {
    std::fprintf(stderr, "error: %s\n", s.error().message.c_str());
    return false;
  }
  if (!copied) return false;
  int wrong = 0;
  for (int i = 0; i < m; i += std::max(1, m / 64)) {
    for (int j = 0; j < n; ++j) {
      float want = 0;  // sums of integers: exact in fp32
      for (int p = 0; p < k; ++p) {
        want += from_bf16(a[std::size_t(i) * k + p]) * from_bf16(b[std::size_t(p) * n + j]);
      }
      const float got = from_bf16(c[std::size_t(i) * n + j]);
      wrong += !(std::fabs(got - want) <= std::fabs(want) / 128);
    }
  }
  std::printf("gemm %dx%dx%d -> %s (%s): %s\n", m, n, k, served->name->c_str(),
              dispatch_source_name(served->source), wrong ? "WRONG" : "checked");
  return wrong == 0;
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
  Result<Spec> spec = load_spec(argv[1]);
  if (!spec) {
    std::fprintf(stderr, "error: %s\n", spec.error().message.c_str());
    return 2;
  }
  const bool gemm = spec->op.name == "cuda.gemm";
  if (gemm && spec->op.dtype != DType::kBF16) {
    std::fprintf(stderr, "error: %s: this example serves bf16 GEMMs; the spec's dtype is %s\n",
                 argv[1], std::string(dtype_name(spec->op.dtype)).c_str());
    return 2;
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
  if (gemm) {
    ok = serve_gemm(**dispatcher, stream, 1024, 1024, 1024);
    ok = serve_gemm(**dispatcher, stream, 768, 1024, 512) && ok;
  } else {
    for (int n : {1 << 24, 1 << 25}) ok = serve(**dispatcher, stream, n) && ok;
  }
  cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}

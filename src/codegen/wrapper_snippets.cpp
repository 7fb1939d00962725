// The fixed text of generated wrapper programs. Kept as plain C++17 so that the generated file
// builds with the same flags as the kernels; every name starts with ktune_ or Ktune so that it
// cannot collide with a graph's buffer names (which are identifiers chosen by the user).
#include "codegen/wrapper_snippets.h"

#include <fmt/format.h>

namespace ktune::codegen::detail {

std::string_view runtime_snippet() {
  return R"(// ---- Tensors passed to and returned by the entry points.
#ifndef KTUNE_TENSOR_DEFINED
#define KTUNE_TENSOR_DEFINED
extern "C" {
// Data, rank, then sizes and strides in elements (the first `ndim` of each are used).
struct KtuneTensor {
  void* data;
  int ndim;
  std::int64_t sizes[8];
  std::int64_t strides[8];
};
}
#endif

static KtuneTensor ktune_tensor(void* data, std::initializer_list<std::int64_t> sizes,
                                std::initializer_list<std::int64_t> strides) {
  KtuneTensor t{data, static_cast<int>(sizes.size()), {}, {}};
  std::copy(sizes.begin(), sizes.end(), t.sizes);
  std::copy(strides.begin(), strides.end(), t.strides);
  return t;
}

// The input's sizes and strides must be the ones the program was generated for.
static bool ktune_check(const char* where, const KtuneTensor& t, const char* name,
                        std::initializer_list<std::int64_t> sizes,
                        std::initializer_list<std::int64_t> strides) {
  bool ok = t.data != nullptr && t.ndim == static_cast<int>(sizes.size()) &&
            std::equal(sizes.begin(), sizes.end(), t.sizes) &&
            std::equal(strides.begin(), strides.end(), t.strides);
  if (ok) return true;
  std::fprintf(stderr, "error: %s: input '%s': expected sizes [", where, name);
  for (std::int64_t s : sizes) std::fprintf(stderr, " %lld", static_cast<long long>(s));
  std::fprintf(stderr, " ] strides [");
  for (std::int64_t s : strides) std::fprintf(stderr, " %lld", static_cast<long long>(s));
  std::fprintf(stderr, " ]; got %s rank %d, sizes [", t.data ? "data," : "null data,", t.ndim);
  for (int i = 0; i < t.ndim && i < 8; ++i)
    std::fprintf(stderr, " %lld", static_cast<long long>(t.sizes[i]));
  std::fprintf(stderr, " ] strides [");
  for (int i = 0; i < t.ndim && i < 8; ++i)
    std::fprintf(stderr, " %lld", static_cast<long long>(t.strides[i]));
  std::fprintf(stderr, " ]\n");
  return false;
}

// 64-byte aligned, for the kernels' vector loads; freed with std::free.
template <class T>
static T* ktune_alloc(std::size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) {
    std::fprintf(stderr, "error: out of memory allocating %zu bytes\n", bytes);
    std::abort();
  }
  return static_cast<T*>(p);
}
)";
}

std::string_view openblas_snippet() {
  return R"(// ---- OpenBLAS's cblas_sgemm, opened with dlopen on first use (as ktune does when tuning), so
// that the program builds without OpenBLAS's headers and reports its absence at run time.
namespace ktune_openblas {
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                       float, float*, int);
static Sgemm sgemm() {
  static const Sgemm fn = [] {
    void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) lib = dlopen("libopenblas.so", RTLD_NOW | RTLD_GLOBAL);
    return lib ? reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm")) : nullptr;
  }();
  return fn;
}
// Row-major C[M,N] = A[M,K] B[K,N] (CblasRowMajor = 101, CblasNoTrans = 111).
static void gemm(float* C, const float* A, const float* B, int M, int N, int K) {
  sgemm()(101, 111, 111, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}
}  // namespace ktune_openblas
)";
}

std::string_view op_snippet(OpKind op) {
  switch (op) {
    case OpKind::kGemm:
      return "";
    case OpKind::kBiasAdd:
      return R"(// y[i, j] = x[i, j] + b[j]
static void ktune_bias_add(float* y, const float* x, const float* b, long m, long n) {
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) y[i * n + j] = x[i * n + j] + b[j];
}
)";
    case OpKind::kRowBiasAdd:
      return R"(// y[i, j] = x[i, j] + b[i]
static void ktune_row_bias_add(float* y, const float* x, const float* b, long m, long n) {
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) y[i * n + j] = x[i * n + j] + b[i];
}
)";
    case OpKind::kRelu:
      return R"(static void ktune_relu(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
)";
    case OpKind::kGelu:
      return R"(// The exact (erf) GELU.
static void ktune_gelu(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}
)";
    case OpKind::kSilu:
      return R"(static void ktune_silu(float* y, const float* x, long n) {
  for (long i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}
)";
    case OpKind::kAdd:
      return R"(static void ktune_add(float* y, const float* a, const float* b, long n) {
  for (long i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
)";
    case OpKind::kScale:
      return R"(static void ktune_scale(float* y, const float* x, float alpha, long n) {
  for (long i = 0; i < n; ++i) y[i] = alpha * x[i];
}
)";
    case OpKind::kTranspose:
      return R"(// y[j, i] = x[i, j] for x[m, n]
static void ktune_transpose(float* y, const float* x, long m, long n) {
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) y[j * m + i] = x[i * n + j];
}
)";
    case OpKind::kLayerNorm:
      return R"(// Each row: (x - mean) / sqrt(var + eps) * gamma + beta, the biased variance (as
// PyTorch's layer_norm), both moments accumulated in double.
static void ktune_layer_norm(float* y, const float* x, const float* gamma, const float* beta,
                             float eps, long m, long n) {
  for (long i = 0; i < m; ++i) {
    const float* xi = x + i * n;
    float* yi = y + i * n;
    double sum = 0.0;
    for (long j = 0; j < n; ++j) sum += xi[j];
    const double mean = sum / static_cast<double>(n);
    double sq = 0.0;
    for (long j = 0; j < n; ++j) sq += (xi[j] - mean) * (xi[j] - mean);
    const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(n) + eps));
    for (long j = 0; j < n; ++j) {
      yi[j] = static_cast<float>(xi[j] - mean) * inv * gamma[j] + beta[j];
    }
  }
}
)";
    case OpKind::kRowSoftmax:
      return R"(// Each row: exp(x - max) / sum, the max subtracted so that exp cannot overflow.
static void ktune_row_softmax(float* y, const float* x, long m, long n) {
  for (long i = 0; i < m; ++i) {
    const float* xi = x + i * n;
    float* yi = y + i * n;
    float mx = xi[0];
    for (long j = 1; j < n; ++j) mx = xi[j] > mx ? xi[j] : mx;
    float sum = 0.0f;
    for (long j = 0; j < n; ++j) sum += (yi[j] = std::exp(xi[j] - mx));
    for (long j = 0; j < n; ++j) yi[j] /= sum;
  }
}
)";
    case OpKind::kRowSum:
      return R"(static void ktune_row_sum(float* y, const float* x, long m, long n) {
  for (long i = 0; i < m; ++i) {
    float sum = 0.0f;
    for (long j = 0; j < n; ++j) sum += x[i * n + j];
    y[i] = sum;
  }
}
)";
  }
  return "";
}

std::string_view benchmark_snippet() {
  return R"(// ---- The benchmark harness: seeded random inputs, warm-up, timed runs, the median.
#ifdef KTUNE_BENCHMARK_MAIN
// Uniform in [-1, 1) from splitmix64, so that a seed names the inputs on every machine.
static void ktune_random_fill(std::vector<float>& v, std::uint64_t seed) {
  std::uint64_t s = seed;
  for (float& x : v) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    x = static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
}

// A whole number in [lo, hi] written in decimal, nothing else; false otherwise.
static bool ktune_parse_count(const char* text, unsigned long long lo, unsigned long long hi,
                              unsigned long long* out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  unsigned long long v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    const unsigned long long d = static_cast<unsigned long long>(*p - '0');
    if (v > (~0ULL - d) / 10) return false;  // past 2^64
    v = v * 10 + d;
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

static double ktune_median_ms(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}
#endif
)";
}

std::string benchmark_usage(std::string_view name) {
  return fmt::format(
      "// Usage: {0} [RUNS [SEED]]. Input i is filled from seed SEED + i.\n"
      "static const char* const kUsage =\n"
      "    \"usage: {0} [RUNS [SEED]]\\n\"\n"
      "    \"  RUNS  timed runs after 3 warm-up runs, a whole number in [1, 1000000] (default "
      "50)\\n\"\n"
      "    \"  SEED  input i is filled from seed SEED + i, a whole number in [0, 2^64 - 1] "
      "(default 0)\\n\";\n",
      name);
}

std::string_view benchmark_main_args() {
  // Arguments that are not what the usage says are refused (exit 2), never read as 0.
  return "int main(int argc, char** argv) {\n"
         "  if (argc == 2 && (std::strcmp(argv[1], \"--help\") == 0 || "
         "std::strcmp(argv[1], \"-h\") == 0)) {\n"
         "    std::fputs(kUsage, stdout);\n"
         "    return 0;\n"
         "  }\n"
         "  unsigned long long runs_arg = 50, seed_arg = 0;\n"
         "  const bool runs_ok = argc < 2 || ktune_parse_count(argv[1], 1, 1000000, &runs_arg);\n"
         "  const bool seed_ok = argc < 3 || ktune_parse_count(argv[2], 0, ~0ULL, &seed_arg);\n"
         "  if (argc > 3 || !runs_ok || !seed_ok) {\n"
         "    std::fprintf(stderr, \"error: %s\\n%s\",\n"
         "                 argc > 3   ? \"too many arguments\"\n"
         "                 : !runs_ok ? \"RUNS is not a whole number in [1, 1000000]\"\n"
         "                            : \"SEED is not a whole number in [0, 2^64 - 1]\",\n"
         "                 kUsage);\n"
         "    return 2;\n"
         "  }\n"
         "  const int runs = static_cast<int>(runs_arg);\n"
         "  const std::uint64_t seed = seed_arg;\n";
}

}  // namespace ktune::codegen::detail

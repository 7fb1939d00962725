// The fixed text of generated CUDA programs: plain CUDA C++17 for nvcc; every name starts with
// ktune_, Ktune or KTUNE_ so that it cannot collide with a graph's buffer names.
#include "codegen/cuda_wrapper_snippets.h"

#include <string>

namespace ktune::codegen::detail {

const std::string& cuda_prelude() {
  static const std::string text = [] {
    std::string s =
        "// ---- The fixed part: a precompiled copy of it may come first (c++ -include).\n"
        "#ifndef KTUNE_CUDA_PRELUDE\n#define KTUNE_CUDA_PRELUDE\n";
    for (std::string_view i : kCudaWrapperIncludes) s += "#include " + std::string(i) + "\n";
    s += "\n";
    s += cuda_runtime_snippet();
    s += "#endif  // KTUNE_CUDA_PRELUDE\n";
    return s;
  }();
  return text;
}

std::string_view cuda_runtime_snippet() {
  return R"KT(// ---- Tensors passed to the entry points: the caller's device memory.
#ifndef KTUNE_CUDA_TENSOR_DEFINED
#define KTUNE_CUDA_TENSOR_DEFINED
extern "C" {
// Row-major device memory; sizes and strides in elements (the first `ndim` of each are used).
struct KtuneCudaTensor {
  void* data;
  int dtype;  // 0 f32, 1 f16, 2 bf16
  int device;
  int ndim;
  std::int64_t sizes[8];
  std::int64_t strides[8];
};
}
#endif

#define KTUNE_ERROR_BYTES 1024

static const char* ktune_dtype_name(int dtype) {
  return dtype == 0 ? "f32" : dtype == 1 ? "f16" : dtype == 2 ? "bf16" : "an unknown dtype";
}

// Writes the message for <graph>_last_error and answers 1, what every failing call returns.
static int ktune_fail(char* error, const char* format, ...) __attribute__((format(printf, 2, 3)));
static int ktune_fail(char* error, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(error, KTUNE_ERROR_BYTES, format, args);
  va_end(args);
  return 1;
}

// A failed call names itself and the entry point (`ktune_where`) in the message it writes to
// `ktune_error`: both are locals of every function that uses these.
#define KTUNE_CUDA(call)                                                                     \
  do {                                                                                       \
    cudaError_t ktune_e = (call);                                                            \
    if (ktune_e != cudaSuccess)                                                              \
      return ktune_fail(ktune_error, "%s: %s failed: %s", ktune_where, #call,                   \
                        cudaGetErrorString(ktune_e));                                        \
  } while (0)
#define KTUNE_CU(call)                                                                       \
  do {                                                                                       \
    CUresult ktune_e = (call);                                                               \
    if (ktune_e != CUDA_SUCCESS) {                                                           \
      const char* ktune_s = nullptr;                                                         \
      cuGetErrorString(ktune_e, &ktune_s);                                                   \
      return ktune_fail(ktune_error, "%s: %s failed: %s", ktune_where, #call,                   \
                        ktune_s ? ktune_s : "unknown driver error");                         \
    }                                                                                        \
  } while (0)
#define KTUNE_CUBLAS(call)                                                                   \
  do {                                                                                       \
    cublasStatus_t ktune_e = (call);                                                         \
    if (ktune_e != CUBLAS_STATUS_SUCCESS)                                                    \
      return ktune_fail(ktune_error, "%s: %s failed: %s", ktune_where, #call,                   \
                        cublasGetStatusString(ktune_e));                                     \
  } while (0)
#define KTUNE_CUBLASLT(call)                                                                 \
  do {                                                                                       \
    cublasStatus_t ktune_e = (call);                                                         \
    if (ktune_e != CUBLAS_STATUS_SUCCESS)                                                    \
      return ktune_fail(ktune_error, "%s: %s failed: %s", ktune_where, #call,                   \
                        cublasLtGetStatusString(ktune_e));                                   \
  } while (0)

// A kernel of the program's own (<graph>_kernels.cubin) on `stream`: each argument passed by
// address, so each must have exactly the type of the kernel's parameter.
template <class... A>
static CUresult ktune_launch(CUfunction f, dim3 grid, dim3 block, cudaStream_t stream, A... a) {
  void* args[] = {static_cast<void*>(&a)...};
  return cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, 0, stream, args,
                        nullptr);
}

static int ktune_print_dims(char* out, std::size_t cap, const std::int64_t* v, int n) {
  int used = std::snprintf(out, cap, "[");
  for (int i = 0; i < n && i < 8; ++i) {
    used += std::snprintf(out + used, cap - static_cast<std::size_t>(used), i ? ", %lld" : "%lld",
                          static_cast<long long>(v[i]));
  }
  return used + std::snprintf(out + used, cap - static_cast<std::size_t>(used), "]");
}

// The tensor must be what the program was generated for: dtype, rank, sizes, row-major strides,
// the current device and a 16-byte aligned address (the kernels' vector accesses, cuBLASLt's
// algorithms chosen for 16-byte alignment).
static int ktune_check_tensor(char* error, const char* where, const char* kind, const char* name,
                              const KtuneCudaTensor& t, int dtype, int ndim,
                              const std::int64_t* sizes, const std::int64_t* strides,
                              int device) {
  bool same = t.dtype == dtype && t.ndim == ndim;
  for (int i = 0; same && i < ndim; ++i) same = t.sizes[i] == sizes[i] && t.strides[i] == strides[i];
  if (!same) {
    char want[2][160], got[2][160];
    ktune_print_dims(want[0], sizeof want[0], sizes, ndim);
    ktune_print_dims(want[1], sizeof want[1], strides, ndim);
    const int n = t.ndim < 0 ? 0 : t.ndim;
    ktune_print_dims(got[0], sizeof got[0], t.sizes, n);
    ktune_print_dims(got[1], sizeof got[1], t.strides, n);
    return ktune_fail(error,
                      "%s: %s '%s': expected %s sizes %s strides %s; got %s sizes %s strides %s",
                      where, kind, name, ktune_dtype_name(dtype), want[0], want[1],
                      ktune_dtype_name(t.dtype), got[0], got[1]);
  }
  if (t.data == nullptr || reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0) {
    return ktune_fail(error, "%s: %s '%s': expected a 16-byte aligned device address; got %p",
                      where, kind, name, t.data);
  }
  if (t.device != device) {
    return ktune_fail(error, "%s: %s '%s': expected device %d (the current one); got device %d",
                      where, kind, name, device, t.device);
  }
  return 0;
}

// What the driver says about the address: memory of the current device (checked once per new
// address, when the graph is captured again).
static int ktune_check_pointer(char* error, const char* where, const char* kind,
                               const char* name, const void* data, int device) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, data) != cudaSuccess) {
    (void)cudaGetLastError();
    a.type = cudaMemoryTypeUnregistered;
  }
  if ((a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) || a.device != device) {
    return ktune_fail(error,
                      "%s: %s '%s': expected memory of CUDA device %d; got %s memory at %p",
                      where, kind, name, device,
                      a.type == cudaMemoryTypeHost           ? "pinned host"
                      : a.type == cudaMemoryTypeUnregistered ? "unregistered host"
                                                             : "another device's",
                      data);
  }
  return 0;
}
)KT";
}

std::string_view cuda_cublaslt_snippet() {
  return R"KT(// ---- cuBLASLt as ktune's worker measured it: row-major C = A B as column-major
// C^T[n,m] = B^T[n,k] A^T[k,m], fp32 compute and scale, 16-byte alignment and the workspace
// told to the heuristic, and its answer number `algo` taken.
static int ktune_lt_setup(char* ktune_error, const char* ktune_where, const char* gemm,
                          cublasLtHandle_t lt, cudaDataType type, int m, int n, int k,
                          int epilogue, int algo, std::size_t workspace,
                          cublasLtMatmulDesc_t* desc, cublasLtMatrixLayout_t* layouts,
                          cublasLtMatmulAlgo_t* out) {
  KTUNE_CUBLASLT(cublasLtMatmulDescCreate(desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const std::int32_t no_trans = CUBLAS_OP_N;
  KTUNE_CUBLASLT(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, &no_trans,
                                                sizeof no_trans));
  KTUNE_CUBLASLT(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans,
                                                sizeof no_trans));
  if (epilogue != 0) {
    const cublasLtEpilogue_t e = static_cast<cublasLtEpilogue_t>(epilogue);
    KTUNE_CUBLASLT(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e,
                                                  sizeof e));
  }
  KTUNE_CUBLASLT(cublasLtMatrixLayoutCreate(&layouts[0], type, n, k, n));  // B^T
  KTUNE_CUBLASLT(cublasLtMatrixLayoutCreate(&layouts[1], type, k, m, k));  // A^T
  KTUNE_CUBLASLT(cublasLtMatrixLayoutCreate(&layouts[2], type, n, m, n));  // C^T
  cublasLtMatmulPreference_t pref = nullptr;
  KTUNE_CUBLASLT(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t max_workspace = workspace;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof max_workspace);
  const cublasLtMatmulPreferenceAttributes_t aligns[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  const std::uint32_t sixteen = 16;
  for (auto a : aligns) {
    if (st == CUBLAS_STATUS_SUCCESS) {
      st = cublasLtMatmulPreferenceSetAttribute(pref, a, &sixteen, sizeof sixteen);
    }
  }
  const int requested = algo + 1 > 16 ? algo + 1 : 16;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(requested));
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasLtMatmulAlgoGetHeuristic(lt, *desc, layouts[0], layouts[1], layouts[2],
                                        layouts[2], pref, requested, results.data(), &returned);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED && returned == 0) st = CUBLAS_STATUS_SUCCESS;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  KTUNE_CUBLASLT(st);
  if (returned <= algo) {
    return ktune_fail(ktune_error,
                      "%s: gemm '%s': cuBLASLt's heuristic returned %d algorithms; the pick is "
                      "answer %d (another GPU or cuBLAS version than the one tuned on?)",
                      ktune_where, gemm, returned, algo);
  }
  KTUNE_CUBLASLT(results[static_cast<std::size_t>(algo)].state);
  *out = results[static_cast<std::size_t>(algo)].algo;
  return 0;
}
)KT";
}

std::string_view cuda_benchmark_snippet() {
  return R"KT(#ifdef KTUNE_BENCHMARK_MAIN
// Host floats into a fresh device buffer of the dtype (0 f32, 1 f16, 2 bf16).
static void* ktune_upload(const std::vector<float>& v, int dtype) {
  const std::size_t n = v.size(), bytes = n * (dtype == 0 ? 4 : 2);
  std::vector<unsigned char> host(bytes);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == 0) {
      std::memcpy(host.data() + 4 * i, &v[i], 4);
    } else if (dtype == 1) {
      const __half h = __float2half(v[i]);
      std::memcpy(host.data() + 2 * i, &h, 2);
    } else {
      const __nv_bfloat16 h = __float2bfloat16(v[i]);
      std::memcpy(host.data() + 2 * i, &h, 2);
    }
  }
  void* d = nullptr;
  if (cudaMalloc(&d, bytes > 0 ? bytes : 1) != cudaSuccess ||
      cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    std::fprintf(stderr, "error: cannot upload %zu bytes to the GPU\n", bytes);
    std::exit(1);
  }
  return d;
}
#endif
)KT";
}

}  // namespace ktune::codegen::detail

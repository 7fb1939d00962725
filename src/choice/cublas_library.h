// cuBLAS and cuBLASLt, opened with dlopen on first use (libcublasLt.so.13, then .so.12, on the
// loader's path, then under $CUDA_HOME/lib64, /usr/local/cuda/lib64 and
// /usr/local/cuda/targets/x86_64-linux/lib), so that one ktune build runs with and without the
// CUDA toolkit's libraries. Only the types and constants of <cublas_v2.h> and <cublasLt.h> are
// used at build time; every function is reached through these tables.
//
// Internal header (src/): the cuBLAS headers must not leak into ktune's public headers.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <string>

#include "ktune/core/status.h"

namespace ktune {

// cublasGemmEx has a second, inline C++ overload taking a cudaDataType compute type, so its
// type cannot come from decltype(&cublasGemmEx); this is the exported one's (checked in the .cpp).
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                          int, int, const void*, const void*, cudaDataType, int,
                                          const void*, cudaDataType, int, const void*, void*,
                                          cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  // One member per function, named as in <cublas_v2.h> without the "cublas" prefix; the symbol
  // looked up is the one the header maps the name to (cublasCreate -> cublasCreate_v2).
  // One function per line: clang-format reflows X-macro lists differently on each run.
// clang-format off
#define KTUNE_CUBLAS_FUNCTIONS(X) \
  X(Create) \
  X(Destroy) \
  X(SetStream) \
  X(SetWorkspace) \
  X(SetMathMode) \
  X(GetProperty) \
  X(GetStatusName) \
  X(GetStatusString)
// clang-format on
#define KTUNE_CUBLAS_MEMBER(name) decltype(&::cublas##name) name = nullptr;
  KTUNE_CUBLAS_FUNCTIONS(KTUNE_CUBLAS_MEMBER)
#undef KTUNE_CUBLAS_MEMBER
  CublasGemmExFn GemmEx = nullptr;
  std::string path;     // the file opened, e.g. "/usr/local/cuda/lib64/libcublas.so.13"
  std::string version;  // "13.0.2", from cublasGetProperty
};

struct CublasLtApi {
  // Named as in <cublasLt.h> without the "cublasLt" prefix.
// clang-format off
#define KTUNE_CUBLASLT_FUNCTIONS(X) \
  X(Create) \
  X(Destroy) \
  X(GetVersion) \
  X(GetStatusName) \
  X(GetStatusString) \
  X(MatmulDescCreate) \
  X(MatmulDescDestroy) \
  X(MatmulDescSetAttribute) \
  X(MatrixLayoutCreate) \
  X(MatrixLayoutDestroy) \
  X(MatmulPreferenceCreate) \
  X(MatmulPreferenceDestroy) \
  X(MatmulPreferenceSetAttribute) \
  X(MatmulAlgoGetHeuristic) \
  X(Matmul) \
  X(MatmulAlgoConfigGetAttribute)
// clang-format on
#define KTUNE_CUBLASLT_MEMBER(name) decltype(&::cublasLt##name) name = nullptr;
  KTUNE_CUBLASLT_FUNCTIONS(KTUNE_CUBLASLT_MEMBER)
#undef KTUNE_CUBLASLT_MEMBER
  std::string path;     // "/usr/local/cuda/lib64/libcublasLt.so.13"
  std::string version;  // "13.0.2", from cublasLtGetVersion
  std::string dir;      // the folder searched that held it; "" for the loader's own search
  int major = 0;        // the soname's: 13 or 12
};

// The process's cuBLASLt, opened once (thread-safe). Neither call needs a GPU. kUnavailable
// with the paths tried when no library can be opened or one lacks a function.
[[nodiscard]] Result<const CublasLtApi*> cublaslt_api();
// The process's cuBLAS, of the same major version as cublaslt_api()'s library (libcublas needs
// it) and looked for first in the same folder.
[[nodiscard]] Result<const CublasApi*> cublas_api();

// For cache keys, without loading the library (dlopen of cuBLASLt takes 70 ms or more, which a
// tuning-cache hit must not pay): the file the loader would open, found as it would find it
// ($LD_LIBRARY_PATH, /etc/ld.so.conf.d, the system folders, then the toolkit folders), by its
// real name and size: "cuBLAS libcublas.so.13.0.2.14 54177976". Where no file is found, the
// loaded library's version ("cuBLAS 13.0.2"), or "cuBLAS unknown version" when none opens.
[[nodiscard]] std::string cublas_version_text();
[[nodiscard]] std::string cublaslt_version_text();

// "cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED (the functionality requested is not supported)";
// an empty Status for CUBLAS_STATUS_SUCCESS. kInvalidArgument for CUBLAS_STATUS_INVALID_VALUE
// and CUBLAS_STATUS_NOT_SUPPORTED (the problem or arguments are wrong for the library),
// kUnavailable for CUBLAS_STATUS_NOT_INITIALIZED and ARCH_MISMATCH, kIo otherwise.
[[nodiscard]] Status cublas_status(const CublasApi& api, cublasStatus_t s, const char* what);
[[nodiscard]] Status cublaslt_status(const CublasLtApi& api, cublasStatus_t s, const char* what);

}  // namespace ktune

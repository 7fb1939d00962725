// Loading OpenBLAS at run time.
#include "choice/openblas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "core/measurement_env.h"

namespace ktune {
namespace {

Result<OpenBlasLibrary> load() {
  ::setenv("OPENBLAS_THREAD_TIMEOUT",
           std::string(measurement_env_value("OPENBLAS_THREAD_TIMEOUT")).c_str(), 0);
  void* handle = nullptr;
  std::string errors;
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    handle = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (handle) break;
    if (const char* e = ::dlerror()) errors += std::string(errors.empty() ? "" : "; ") + e;
  }
  if (!handle) {
    return make_error(ErrorCode::kUnavailable,
                      "OpenBLAS: cannot open libopenblas.so.0: " + errors +
                          "; install libopenblas0 (Debian) to use openblas.gemm choices");
  }
  OpenBlasLibrary lib;
  lib.sgemm = reinterpret_cast<decltype(lib.sgemm)>(::dlsym(handle, "cblas_sgemm"));
  lib.dgemm = reinterpret_cast<decltype(lib.dgemm)>(::dlsym(handle, "cblas_dgemm"));
  lib.get_config =
      reinterpret_cast<decltype(lib.get_config)>(::dlsym(handle, "openblas_get_config"));
  lib.get_num_threads =
      reinterpret_cast<decltype(lib.get_num_threads)>(::dlsym(handle, "openblas_get_num_threads"));
  if (!lib.sgemm || !lib.dgemm || !lib.get_config || !lib.get_num_threads) {
    return make_error(ErrorCode::kUnavailable,
                      "OpenBLAS: libopenblas.so.0 lacks cblas_sgemm, cblas_dgemm, "
                      "openblas_get_config or openblas_get_num_threads");
  }
  return lib;  // the handle stays open for the life of the process, like a linked library
}

}  // namespace

Result<const OpenBlasLibrary*> openblas_library() {
  // Loaded once and never changed after: the process has one OpenBLAS, as it would if linked.
  static const Result<OpenBlasLibrary> lib = load();
  if (!lib) return std::unexpected(lib.error());
  return &*lib;
}

}  // namespace ktune

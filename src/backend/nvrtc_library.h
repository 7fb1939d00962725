// NvrtcLibrary: NVRTC (libnvrtc), opened with dlopen on first use, so that one ktune build runs
// on machines with and without the CUDA toolkit. Only the types of <nvrtc.h> are used at build
// time; every function is reached through this table, as CudaDriver does for libcuda.
//
// NVRTC itself is safe to call from several threads at once on different programs, which the
// Selector's parallel compiles rely on; this table is read-only once opened.
//
// Internal header (src/): <nvrtc.h> must not leak into ktune's public headers.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

struct NvrtcLibrary {
  // One member per function, named as in <nvrtc.h> without the "nvrtc" prefix.
  // One function per line: clang-format reflows X-macro lists differently on each run.
// clang-format off
#define KTUNE_NVRTC_FUNCTIONS(X) \
  X(Version) \
  X(GetErrorString) \
  X(GetNumSupportedArchs) \
  X(GetSupportedArchs) \
  X(CreateProgram) \
  X(CompileProgram) \
  X(GetProgramLogSize) \
  X(GetProgramLog) \
  X(GetCUBINSize) \
  X(GetCUBIN) \
  X(DestroyProgram) \
  X(AddNameExpression) \
  X(GetLoweredName)
// clang-format on
#define KTUNE_NVRTC_MEMBER(name) decltype(&::nvrtc##name) name = nullptr;
  KTUNE_NVRTC_FUNCTIONS(KTUNE_NVRTC_MEMBER)
#undef KTUNE_NVRTC_MEMBER

  int major = 0;  // nvrtcVersion, read once when the library is opened
  int minor = 0;
  std::string path;                  // the name dlopen succeeded with, for messages
  std::vector<int> supported_archs;  // 75, 80, 86, 89, 90, ... (nvrtcGetSupportedArchs)
  // The CUDA headers of the toolkit this NVRTC came with: the folder holding cuda_fp16.h, then a
  // cccl/ folder (CUDA 13 keeps CUB, Thrust and libcu++ there, and nvcc searches it), beside it
  // or else another toolkit folder's (the Python wheels' NVRTC has none), so that a kernel can
  // #include <cuda_fp16.h>, <cuda_bf16.h>, <cuda/std/...>, <cub/...>: NVRTC reads no header folder
  // of its own. Empty when none was found.
  std::vector<std::string> include_dirs;
};

// The library, opened once per process (thread-safe). Tries libnvrtc.so.13, .so.12, .so through
// the loader's search path, then the same names under $CUDA_HOME/lib64, $CUDA_PATH/lib64,
// /usr/local/cuda/lib64 and /usr/local/cuda/targets/x86_64-linux/lib. kUnavailable, naming what
// was tried, when none opens or a function is missing. The header folder is looked for next to
// the library first, then under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda and /usr.
[[nodiscard]] Result<const NvrtcLibrary*> nvrtc_library();

// "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION"; empty Status for NVRTC_SUCCESS. `code` is the
// ErrorCode the failure is reported with.
[[nodiscard]] Status nvrtc_status(const NvrtcLibrary& nvrtc, nvrtcResult r, const char* what,
                                  ErrorCode code = ErrorCode::kCompile);

// One compilation: NVRTC's answer, the program's log, and the cubin when it compiled.
struct NvrtcCompiled {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;    // the program log, possibly empty
  std::string cubin;  // empty unless result is NVRTC_SUCCESS
  // The mangled ("lowered") name of each name expression, in order, when it compiled.
  std::vector<std::string> lowered;
};

// Creates, compiles and destroys one program from `source` (named `program_name` in messages)
// with `options` ("--gpu-architecture=sm_90a", ...). `name_expressions` ("reduce<256, 4>",
// "stencil"): __global__ functions whose lowered names the caller launches by, instantiated by
// NVRTC when they are templates. A compile failure is an NvrtcCompiled with its result and log;
// Error only when NVRTC fails outside the compilation (create, GetCUBIN, a name that does not
// lower: kCompile naming it).
[[nodiscard]] Result<NvrtcCompiled> nvrtc_compile(
    const NvrtcLibrary& nvrtc, const std::string& source, const std::string& program_name,
    const std::vector<std::string>& options, const std::vector<std::string>& name_expressions = {});

}  // namespace ktune

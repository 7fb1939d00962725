// What this build of ktune was configured with (KTUNE_CUDA, KTUNE_OPENCL;
// cmake/gpu_support.cmake), and the one message for what it left out. Without CUDA or OpenCL
// headers at configure time, that backend's sources are not built; the places that would create
// them (make_device, the CLI's gemm commands) answer not_built() instead.
//
// Internal (src/): KTUNE_HAVE_CUDA and KTUNE_HAVE_OPENCL are compile definitions of the project's
// own targets, never of an installed package's consumers.
#pragma once

#include "ktune/core/status.h"

namespace ktune {

enum class BuildFeature { kCuda, kOpenCL };

inline constexpr bool kBuiltWithCuda = KTUNE_HAVE_CUDA;
inline constexpr bool kBuiltWithOpenCL = KTUNE_HAVE_OPENCL;

// kUnavailable: "this ktune build has no CUDA support ...", with how to rebuild with it.
[[nodiscard]] Error not_built(BuildFeature feature);

}  // namespace ktune

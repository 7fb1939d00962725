// The message for support that this build left out.
#include "core/build_support.h"

namespace ktune {

Error not_built(BuildFeature feature) {
  switch (feature) {
    case BuildFeature::kCuda:
      return Error{ErrorCode::kUnavailable,
                   "this ktune build has no CUDA support (it was configured without the CUDA "
                   "toolkit's headers); install NVIDIA's CUDA toolkit and rebuild with "
                   "-DKTUNE_CUDA=ON (and -DCUDAToolkit_ROOT=<dir> when it is not found)"};
    case BuildFeature::kOpenCL:
      return Error{ErrorCode::kUnavailable,
                   "this ktune build has no OpenCL support (it was configured without <CL/cl.h>); "
                   "install the OpenCL headers (Debian: opencl-c-headers, or `make deps`) and "
                   "rebuild with -DKTUNE_OPENCL=ON"};
  }
  return Error{ErrorCode::kInternal, "not_built: unknown feature"};
}

}  // namespace ktune

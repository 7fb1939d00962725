// The checking kernels (ktune_check.cu, beside this header) as the build embeds them in the
// device module: their source, for NVRTC (ktune_embed_sources, cmake/embed_sources.cmake), and
// the fatbin nvcc compiled from that same file at build time (cmake/embed_fatbin.cmake), empty
// where the build found no nvcc. Both defined in generated files (build/generated/).
#pragma once

#include <span>
#include <string_view>

namespace ktune {

// src/device/cuda/ktune_check.cu's text.
[[nodiscard]] std::string_view cuda_check_ktune_check_source();
// nvcc -fatbin of it: SASS for every major architecture that nvcc knows, PTX of the newest for
// later GPUs; empty without nvcc at build time (then the worker compiles the source with NVRTC).
[[nodiscard]] std::span<const unsigned char> cuda_check_fatbin();

}  // namespace ktune

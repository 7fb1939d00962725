// The built-in CUDA kernels' sources (kernels/cuda/*.cu, *.cuh), embedded at configure time by
// ktune_embed_sources (cmake/embed_sources.cmake), which writes the definitions. Private to the
// ops module.
#pragma once

#include <string_view>

namespace ktune {

// kernels/cuda/prelude.cuh: what every kernel below shares (elem_t, conversions, the epilogue
// hook, store_output, grouped rasterization); put in front of each when rendering.
[[nodiscard]] std::string_view cuda_prelude_source();
// kernels/cuda/gemm_mma.cu: tensor-core GEMM (f16, bf16; sm_80+).
[[nodiscard]] std::string_view cuda_gemm_mma_source();
// kernels/cuda/gemm_wgmma.cu: Hopper tensor-core GEMM (f16, bf16; sm_90a only).
[[nodiscard]] std::string_view cuda_gemm_wgmma_source();
// kernels/cuda/hopper.cuh: what the sm_90a kernels share (wgmma, mbarriers, TMA); put after
// the prelude in front of gemm_tma.cu.
[[nodiscard]] std::string_view cuda_hopper_source();
// kernels/cuda/gemm_tma.cu: Hopper warp-specialised GEMM, TMA loads (f16, bf16; sm_90a only).
[[nodiscard]] std::string_view cuda_gemm_tma_source();
// kernels/cuda/restride.cu: A and B copied with 16-byte row strides for the TMA template.
[[nodiscard]] std::string_view cuda_restride_source();
// kernels/cuda/gemm_simt.cu: portable GEMM (f16, bf16, f32; any GPU, any shape).
[[nodiscard]] std::string_view cuda_gemm_simt_source();
// kernels/cuda/epilogue.cu: a GEMM epilogue applied to C in place (after a library GEMM).
[[nodiscard]] std::string_view cuda_epilogue_source();

}  // namespace ktune

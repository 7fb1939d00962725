// What the built-in CUDA GEMM templates share (src/ops/cuda_gemm.cpp: mma, SIMT, the separate
// epilogue; src/ops/cuda_gemm_hopper.cpp: wgmma, TMA, restride): the problem's dimensions and
// checks, tile limits, the template names and the rendering of a kernel file after the prelude.
// Private to the ops module.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "ktune/choice/kernel_template.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/problem.h"
#include "ktune/space/search_space.h"

namespace ktune::cuda_gemm_internal {

inline constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kMaxGridY = 65535;

struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A parameter of our own spaces: present and an integer by construction.
[[nodiscard]] std::int64_t param(const Config& config, std::string_view name);

// M, N, K of a problem with gemm_signature (the template checks the signature first), each
// within the kernels' int range, and A, B, C contiguous row-major of those sizes, the
// epilogue's operands as Epilogue::problem_args says.
[[nodiscard]] Result<GemmDims> gemm_dims(std::string_view where, const Problem& p,
                                         const Epilogue& epilogue = {});

// `shared_bytes` within the opt-in maximum and a grid of at most 2^31-1 blocks of
// block_m x block_n.
[[nodiscard]] Status tile_limits(const std::string& where, const GemmDims& d,
                                 std::uint32_t shared_bytes, std::int64_t block_m,
                                 std::int64_t block_n);

// What the 16-byte-copy templates need: N, K and the offsets of A, B, C multiples of 8 elements,
// and tile_limits.
[[nodiscard]] Status aligned_rows_supports(const std::string& where, const Problem& p,
                                           const Epilogue& e, std::uint32_t shared_bytes,
                                           std::int64_t block_m, std::int64_t block_n);

// A 1-D grid over the BLOCK_M x BLOCK_N output tiles (at least one block).
[[nodiscard]] Result<LaunchGeometry> tiled_launch(const std::string& where, const Config& c,
                                                  const Problem& p, const Epilogue& e,
                                                  std::int64_t threads, std::uint32_t shared_bytes);

// "cuda_gemm_mma_bf16", with the epilogue's tag when there is one.
[[nodiscard]] std::string template_name(std::string_view kind, DType dtype, const Epilogue& e);

// The source of kernel file `file`: the DTYPE and epilogue #defines, kernels/cuda/prelude.cuh,
// with `hopper_header` kernels/cuda/hopper.cuh, then the file, each under its own #line name.
[[nodiscard]] std::string render_source(std::string_view file, std::string_view source, DType dtype,
                                        const Epilogue& e, bool hopper_header = false);

// The Hopper templates (src/ops/cuda_gemm_hopper.cpp): wgmma (cp.async, VEC 8/2, split-K), TMA
// (plain; restrided: reading the restride kernel's copies from the launch's workspace; cluster:
// two blocks sharing B's tiles by multicast, for large outputs), and the restride kernel itself.
enum class TmaKind { kPlain, kRestrided, kCluster };
[[nodiscard]] std::shared_ptr<KernelTemplate> wgmma_template(DType dtype, const Epilogue& e);
[[nodiscard]] std::shared_ptr<KernelTemplate> tma_template(DType dtype, const Epilogue& e,
                                                           TmaKind kind);
[[nodiscard]] std::shared_ptr<KernelTemplate> restride_template(DType dtype, const Epilogue& e);

}  // namespace ktune::cuda_gemm_internal

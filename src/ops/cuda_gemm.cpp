// The built-in CUDA GEMM: problem, the MMA, wgmma (Hopper) and SIMT templates with their search
// spaces and hooks, and the candidate set with cuBLAS and cuBLASLt.
#include "ktune/ops/cuda_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/cuda_driver.h"
#include "ktune/choice/cublas_choice.h"
#include "ktune/choice/sequence_choice.h"
#include "ops/cuda_kernels.h"
#include "ops/gemm_align.h"

namespace ktune {
namespace {

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxGridY = 65535;

struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A parameter of our own spaces: present and an integer by construction.
std::int64_t param(const Config& config, std::string_view name) {
  const ParamValue* v = config.find(name);
  KTUNE_CHECK(v != nullptr && std::holds_alternative<std::int64_t>(*v));
  return std::get<std::int64_t>(*v);
}

// The epilogue's operands of a problem with gemm_signature: contiguous, of C's dtype and device,
// [N], [M] or [M, N] as Epilogue::problem_args says.
Status check_operands(std::string_view where, const Problem& p, const Epilogue& epilogue,
                      std::int64_t m, std::int64_t n) {
  const std::vector<ProblemArg> want =
      epilogue.problem_args(p.args[0].tensor.dtype, m, n, p.args[0].tensor.device);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const TensorSpec& t = p.args[6 + i].tensor;
    if (t.sizes != want[i].tensor.sizes || t.strides != want[i].tensor.strides) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: epilogue operand {}; expected contiguous {}, got {}", where,
                      p.args[6 + i].param.name, want[i].tensor.key(), t.key()));
    }
  }
  return {};
}

// M, N, K of a problem with gemm_signature (the template checks the signature first), each
// within the kernels' int range, and A, B, C contiguous row-major of those sizes.
Result<GemmDims> gemm_dims(std::string_view where, const Problem& p,
                           const Epilogue& epilogue = {}) {
  const std::size_t want_args = 6 + epilogue.operands().size();
  if (p.args.size() != want_args) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: argument count; expected {} (C, A, B, M, N, K{}{}), got {}", where,
                    want_args, want_args > 6 ? " and the epilogue's " : "",
                    want_args > 6 ? std::to_string(want_args - 6) : "", p.args.size()));
  }
  std::int64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    const ProblemArg& a = p.args[3 + i];
    const auto* v = std::get_if<std::int64_t>(&a.scalar);
    if (v == nullptr || *v < 0 || *v > kMaxInt32) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: scalar {}; expected an integer in [0, 2^31), got {}",
                                    where, a.param.name, v ? std::to_string(*v) : "a float"));
    }
    dims[i] = *v;
  }
  const GemmDims d{dims[0], dims[1], dims[2]};
  const std::vector<std::int64_t> want[3] = {{d.m, d.n}, {d.m, d.k}, {d.k, d.n}};
  for (int i = 0; i < 3; ++i) {
    const TensorSpec& t = p.args[i].tensor;
    const TensorSpec row_major = TensorSpec::contiguous(t.dtype, want[i]);
    if (t.sizes != want[i] || t.strides != row_major.strides) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: tensor {}; expected contiguous row-major [{},{}], got {}",
                                    where, p.args[i].param.name, want[i][0], want[i][1], t.key()));
    }
  }
  if (Status s = check_operands(where, p, epilogue, d.m, d.n); !s) {
    return std::unexpected(s.error());
  }
  return d;
}

std::uint32_t mma_shared_bytes(const Config& c) {
  const std::int64_t bytes =
      param(c, "STAGES") * (param(c, "BLOCK_M") + param(c, "BLOCK_N")) * param(c, "BLOCK_K") * 2;
  return static_cast<std::uint32_t>(bytes);
}

std::int64_t mma_threads(const Config& c) {
  return (param(c, "BLOCK_M") / param(c, "WARP_M")) * (param(c, "BLOCK_N") / param(c, "WARP_N")) *
         32;
}

// What both tensor-core templates need besides their copies' alignment: `shared_bytes` within
// the opt-in maximum and a grid of at most 2^31-1 blocks.
Status tile_limits(const std::string& where, const GemmDims& d, std::uint32_t shared_bytes,
                   std::int64_t block_m, std::int64_t block_n) {
  if (shared_bytes > kCudaGemmMaxSharedBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: shared memory; expected at most {} bytes, got {}", where,
                                  kCudaGemmMaxSharedBytes, shared_bytes));
  }
  const std::int64_t blocks = ceil_div(d.m, block_m) * ceil_div(d.n, block_n);
  if (blocks > kMaxInt32) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: grid; expected at most 2^31-1 blocks, got {}", where, blocks));
  }
  return {};
}

// The MMA template: 16-byte rows (N, K and offsets multiples of 8 elements).
Status aligned_rows_supports(const std::string& where, const Problem& p, const Epilogue& e,
                             std::uint32_t shared_bytes, std::int64_t block_m,
                             std::int64_t block_n) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  // Each 16-byte cp.async copies 8 elements of one row: rows must start 16-byte aligned.
  if (d->n % 8 != 0 || d->k % 8 != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: N and K; expected multiples of 8 (16-byte rows), got "
                                  "N={} K={}",
                                  where, d->n, d->k));
  }
  for (int i = 0; i < 3; ++i) {
    if (p.args[i].tensor.offset % 8 != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: tensor {} offset; expected a multiple of 8 elements "
                                    "(16 bytes), got {}",
                                    where, p.args[i].param.name, p.args[i].tensor.offset));
    }
  }
  return tile_limits(where, *d, shared_bytes, block_m, block_n);
}

Status mma_supports(const std::string& where, const Config& c, const Problem& p,
                    const Epilogue& e) {
  return aligned_rows_supports(where, p, e, mma_shared_bytes(c), param(c, "BLOCK_M"),
                               param(c, "BLOCK_N"));
}

// A 1-D grid over the output tiles of BLOCK_M x BLOCK_N; the kernels map block ids to tiles in
// groups of GROUP_M block rows. An empty output still launches one block, which exits at once.
Result<LaunchGeometry> tiled_launch(const std::string& where, const Config& c, const Problem& p,
                                    const Epilogue& e, std::int64_t threads,
                                    std::uint32_t shared_bytes) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t blocks =
      ceil_div(d->m, param(c, "BLOCK_M")) * ceil_div(d->n, param(c, "BLOCK_N"));
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(blocks, 1)), 1, 1};
  g.block = {static_cast<std::uint64_t>(threads), 1, 1};
  g.shared_bytes = shared_bytes;
  return g;
}

Result<LaunchGeometry> mma_launch(const std::string& where, const Config& c, const Problem& p,
                                  const Epilogue& e) {
  return tiled_launch(where, c, p, e, mma_threads(c), mma_shared_bytes(c));
}

// The wgmma template's tiles, or with split-K its fp32 reduction buffer (BLOCK_M rows of
// BLOCK_N + 8 floats, over the same memory) where larger, plus 1024 bytes, so that the kernel can
// align them to the 1024-byte period of the 128-byte swizzle.
std::uint32_t wgmma_shared_bytes(const Config& c) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  const std::int64_t tiles = param(c, "STAGES") * (bm + bn) * param(c, "BLOCK_K") * 2;
  const std::int64_t reduction = param(c, "SPLIT_K") > 1 ? bm * (bn + 8) * 4 : 0;
  return static_cast<std::uint32_t>(std::max(tiles, reduction) + 1024);
}

// The SMs that split-K tries to fill. The hooks see the problem but not the device: this is the
// H100 SXM's and H200's count (an H100 PCIe has 114, where the filter errs towards splitting).
constexpr std::int64_t kSplitKSms = 132;

// Split-K trades a reduction through distributed shared memory for more blocks on the same
// tiles: it can pay only while the blocks do not fill the SMs without it, and while each slice
// keeps a pipeline's worth of K. SPLIT_K = s > 1 serves a problem whose tiles * s / 2 blocks
// (the next smaller split) leave SMs idle and whose K has at least 2 tiles per slice.
// BLOCK_N 64 halves the MMAs' operand reuse: it serves N <= 64, or outputs whose tiles of
// BLOCK_N 128 leave SMs idle. And exactly the VEC that gemm_row_alignment gives serves a shape:
// a narrower one would only lose to it, a wider one cannot copy its rows.
Status wgmma_supports(const std::string& where, const Config& c, const Problem& p,
                      const Epilogue& e) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const int align = gemm_row_alignment(p);
  if (const std::int64_t vec = param(c, "VEC"); vec != align) {
    const std::string need = align == 1 ? std::string("even rows (no VEC copies odd ones)")
                                        : fmt::format("VEC={}", align);
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: VEC; rows aligned to {} element(s) (N={} K={}, offsets C={} A={} B={}) "
                    "need {}, got VEC={}",
                    where, align, d->n, d->k, p.args[0].tensor.offset, p.args[1].tensor.offset,
                    p.args[2].tensor.offset, need, vec));
  }
  if (Status s = tile_limits(where, *d, wgmma_shared_bytes(c), bm, bn); !s) return s;
  if (bn == 64 && d->n > 64 && ceil_div(d->m, bm) * ceil_div(d->n, 128) >= kSplitKSms) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: BLOCK_N 64 cannot pay; expected N <= 64 or fewer than {} "
                    "tiles of {}x128, got N={} and {} tiles",
                    where, kSplitKSms, bm, d->n, ceil_div(d->m, bm) * ceil_div(d->n, 128)));
  }
  const std::int64_t split = param(c, "SPLIT_K");
  if (split == 1) return {};
  const std::int64_t tiles = ceil_div(d->m, bm) * ceil_div(d->n, bn);
  if (tiles * split / 2 >= kSplitKSms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: split-K {} cannot pay; expected tiles * {} < {} SMs "
                                  "(half the split leaves SMs idle), got {} tiles of {}x{}",
                                  where, split, split / 2, kSplitKSms, tiles, bm, bn));
  }
  const std::int64_t min_k = split * 2 * param(c, "BLOCK_K");
  if (d->k < min_k) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: split-K {} cannot pay; expected K >= {} (2 tiles of K per "
                                  "slice), got K={}",
                                  where, split, min_k, d->k));
  }
  return {};
}

// As mma_launch, with 128 threads per warp group and SPLIT_K blocks (one cluster) per tile.
Result<LaunchGeometry> wgmma_launch(const std::string& where, const Config& c, const Problem& p,
                                    const Epilogue& e) {
  Result<LaunchGeometry> g =
      tiled_launch(where, c, p, e, param(c, "WARPGROUPS") * 128, wgmma_shared_bytes(c));
  if (g) g->grid[0] *= static_cast<std::uint64_t>(param(c, "SPLIT_K"));
  return g;
}

// The SM count of the problem's device, once per device per process; 132 (an H100 SXM or H200)
// where no driver answers (rendering and compiling need no GPU).
int sm_count(const Problem& p) {
  static std::mutex mu;
  static std::map<int, int> counts;
  const int index = p.args[0].tensor.device.index;
  std::lock_guard lock(mu);
  auto it = counts.find(index);
  if (it == counts.end()) {
    Result<CudaDeviceInfo> info = cuda_device_info(index);
    it = counts.emplace(index, info && info->sm_count > 0 ? info->sm_count : 132).first;
  }
  return it->second;
}

// The TMA template's tiles, 1024 bytes to align them to the swizzle's period, and two 8-byte
// mbarriers per stage.
std::uint32_t tma_shared_bytes(const Config& c) {
  const std::int64_t stages = param(c, "STAGES");
  return static_cast<std::uint32_t>(stages * (param(c, "BLOCK_M") + param(c, "BLOCK_N")) * 128 +
                                    1024 + 16 * stages);
}

// The workspace of a restrided TMA GEMM (kernels/cuda/restride.cu lays it out the same way):
// A' [M, K rounded up to 8] at 0 when K % 8 != 0, B' [K, N rounded up to 8] after it at a
// 256-byte boundary when N % 8 != 0.
struct RestrideLayout {
  bool copy_a = false, copy_b = false;
  std::int64_t a_stride = 0, b_stride = 0;  // elements per row of the copies
  std::uint64_t b_offset = 0, bytes = 0;
};

RestrideLayout restride_layout(const GemmDims& d) {
  RestrideLayout l;
  l.copy_a = d.k % 8 != 0;
  l.copy_b = d.n % 8 != 0;
  l.a_stride = ceil_div(d.k, 8) * 8;
  l.b_stride = ceil_div(d.n, 8) * 8;
  l.b_offset = l.copy_a ? static_cast<std::uint64_t>(ceil_div(d.m * l.a_stride * 2, 256) * 256) : 0;
  l.bytes = l.b_offset + (l.copy_b ? static_cast<std::uint64_t>(d.k * l.b_stride * 2) : 0);
  return l;
}

// Plain: as the cp.async templates (16-byte rows: TMA's row strides and addresses are multiples
// of 16 bytes). Restrided: N or K not a multiple of 8 (else the plain one serves), A and B
// starting on 16-byte boundaries (only their row strides are fixed by the copies). Both: a
// non-empty problem (the tensor maps need non-zero extents).
Status tma_supports(const std::string& where, const Config& c, const Problem& p, const Epilogue& e,
                    bool restrided) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  if (!restrided) {
    if (Status s = aligned_rows_supports(where, p, e, tma_shared_bytes(c), bm, bn); !s) return s;
  } else {
    if (d->n % 8 == 0 && d->k % 8 == 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: N and K; the copies serve rows that are not 16-byte "
                                    "aligned, got N={} K={} (the plain TMA template serves them)",
                                    where, d->n, d->k));
    }
    for (int i = 1; i < 3; ++i) {
      if (p.args[i].tensor.offset % 8 != 0) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("{}: tensor {} offset; expected a multiple of 8 elements "
                                      "(16 bytes), got {}",
                                      where, p.args[i].param.name, p.args[i].tensor.offset));
      }
    }
    if (Status s = tile_limits(where, *d, tma_shared_bytes(c), bm, bn); !s) return s;
  }
  if (d->m == 0 || d->n == 0 || d->k == 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: M, N and K; expected non-zero (TMA), got {}x{}x{}", where,
                                  d->m, d->n, d->k));
  }
  return {};
}

// Persistent: one block per SM at most, each walking the tiles; the TMA descriptors of A
// ({K, M}, box {64, BLOCK_M}) and B ({N, K}, box {64, 64}), 128-byte swizzled: of the arguments,
// or (restrided) of their copies in the workspace where a row stride needs fixing.
Result<LaunchGeometry> tma_launch(const std::string& where, const Config& c, const Problem& p,
                                  const Epilogue& e, bool restrided) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t bm = param(c, "BLOCK_M");
  const std::int64_t tiles = ceil_div(d->m, bm) * ceil_div(d->n, param(c, "BLOCK_N"));
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::clamp<std::int64_t>(tiles, 1, sm_count(p))), 1, 1};
  g.block = {static_cast<std::uint64_t>((param(c, "CONSUMERS") + 1) * 128), 1, 1};
  g.shared_bytes = tma_shared_bytes(c);
  const auto u = [](std::int64_t v) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 1));
  };
  TensorMapDesc a{.arg = 1,
                  .dims = {u(d->k), u(d->m)},
                  .row_stride_bytes = u(d->k) * 2,
                  .box = {64, static_cast<std::uint32_t>(bm)}};
  TensorMapDesc b{
      .arg = 2, .dims = {u(d->n), u(d->k)}, .row_stride_bytes = u(d->n) * 2, .box = {64, 64}};
  if (restrided) {
    const RestrideLayout l = restride_layout(*d);
    if (l.copy_a) {
      a.arg = TensorMapDesc::kWorkspace;
      a.row_stride_bytes = static_cast<std::uint64_t>(l.a_stride) * 2;
    }
    if (l.copy_b) {
      b.arg = TensorMapDesc::kWorkspace;
      b.workspace_offset = l.b_offset;
      b.row_stride_bytes = static_cast<std::uint64_t>(l.b_stride) * 2;
    }
    g.workspace_bytes = l.bytes;
  }
  g.tensor_maps = {a, b};
  return g;
}

// The copies of a restrided TMA GEMM: 256 threads, blockIdx.y 0 for A and 1 for B, a grid of
// 16-byte chunks (at most 8 blocks per SM of an H100; the kernel loops past that).
Result<LaunchGeometry> restride_launch(const std::string& where, const Problem& p,
                                       const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const RestrideLayout l = restride_layout(*d);
  const std::int64_t chunks =
      std::max(l.copy_a ? d->m * l.a_stride / 8 : 0, l.copy_b ? d->k * l.b_stride / 8 : 0);
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::clamp<std::int64_t>(ceil_div(chunks, 256), 1, 1056)), 2,
            1};
  g.block = {256, 1, 1};
  g.workspace_bytes = std::max<std::uint64_t>(l.bytes, 16);
  return g;
}

Status simt_supports(const std::string& where, const Config& c, const Problem& p,
                     const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  if (ceil_div(d->m, param(c, "BLOCK_M")) > kMaxGridY) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: M; expected at most {} block rows, got M={}", where, kMaxGridY, d->m));
  }
  return {};
}

Result<LaunchGeometry> simt_launch(const std::string& where, const Config& c, const Problem& p,
                                   const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(d->n, bn), 1)),
            static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(d->m, bm), 1)), 1};
  g.block = {static_cast<std::uint64_t>((bm / param(c, "THREAD_M")) * (bn / param(c, "THREAD_N"))),
             1, 1};
  return g;
}

// About 50 configs for the tensor-core kernel: the block shapes that keep 4 or 8 warps busy, the
// largest warp tile the register file holds, and pipelines 96..256 elements of K deep.
SearchSpace mma_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_N", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_K", {std::int64_t{32}, std::int64_t{64}}},
      {"WARP_M", {std::int64_t{32}, std::int64_t{64}}},
      {"WARP_N", {std::int64_t{32}, std::int64_t{64}}},
      {"STAGES", {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}}},
      {"GROUP_M", {std::int64_t{1}, std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      // Threads: 4 or 8 warps (one block of 8 warps fills an SM's register file).
      "(BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32 >= 128",
      "(BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32 <= 256",
      // Registers: the largest warp tile with at least 2x2 warps, capped at 64x64 (128 fp32
      // accumulators and two fragment buffers per thread, about 240 registers).
      "WARP_M == min(64, BLOCK_M / 2) && WARP_N == min(64, BLOCK_N / 2)",
      // Pipeline depth: at least 3 stages, 96 to 256 elements of K in flight.
      "STAGES >= 3 && STAGES * BLOCK_K >= 96 && STAGES * BLOCK_K <= 256",
      // Shared memory: the H100's opt-in maximum (kCudaGemmMaxSharedBytes).
      "STAGES * (BLOCK_M + BLOCK_N) * BLOCK_K * 2 <= 232448",
      // Tile copies spread evenly over the threads (16-byte chunks).
      "(BLOCK_M * BLOCK_K / 8) % ((BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32) == 0",
      "(BLOCK_K * BLOCK_N / 8) % ((BLOCK_M / WARP_M) * (BLOCK_N / WARP_N) * 32) == 0",
      // Grouped rasterization everywhere; the plain row-major order for one pipeline per shape.
      "GROUP_M == 8 || (BLOCK_K == 32 && STAGES == 4)",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// 27 configs for the Hopper kernel: 1 or 2 warp groups, each with at most 128 accumulators per
// thread (an m64 x 256 or two m64 x 128 tiles), pipelines 4 or 5 tiles deep. With 16-byte rows
// (VEC 8) only the 15 split-K configs: the TMA template serves those shapes without a split
// (and beat this one on each shape measured, H200 2026-11-24); with 4-byte rows (VEC 2, which
// TMA cannot copy) the 12 without.
SearchSpace wgmma_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_N", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_K", {std::int64_t{64}}},
      {"WARPGROUPS", {std::int64_t{1}, std::int64_t{2}}},
      {"STAGES", {std::int64_t{4}, std::int64_t{5}}},
      {"GROUP_M", {std::int64_t{8}}},
      {"SPLIT_K", {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}, std::int64_t{8}}},
      // Elements per global -> shared copy: 8 (16-byte cp.async), 2 (4-byte cp.async) or 1
      // (register-staged); the supports hook offers only the one a shape's alignment needs.
      {"VEC", {std::int64_t{2}, std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      // Split-K is for shapes with few tiles (small M or N, large K; wgmma_supports): the tiles
      // that keep one m64 row of MMAs per warp group (the smallest blocks, so the most of them:
      // 64 x 64..256 on one warp group, 128 x 64 or 128 on two for M around 128), each
      // slice's pipeline 4 tiles deep (its share of K is short).
      "SPLIT_K == 1 || (STAGES == 4 && BLOCK_M == 64 * WARPGROUPS && "
      "(WARPGROUPS == 1 || BLOCK_N <= 128))",
      // BLOCK_N 64 (m64n64 MMAs, half the operand reuse of 128) for narrow outputs (N = 32 or
      // 64: a wider tile multiplies zeros) and few tiles (wgmma_supports): the same small tiles
      // as split-K.
      "BLOCK_N > 64 || (STAGES == 4 && BLOCK_M == 64 * WARPGROUPS)",
      // Copy widths: see above.
      "(VEC == 8) == (SPLIT_K > 1)",
      // Each warp group owns BLOCK_M / WARPGROUPS rows: whole m64 MMAs.
      "BLOCK_M % (64 * WARPGROUPS) == 0",
      // Registers: at most 128 fp32 accumulators per thread (BLOCK_N / 2 per m64 tile).
      "(BLOCK_M / (64 * WARPGROUPS)) * BLOCK_N <= 256",
      // Shared memory: the H100's opt-in maximum (kCudaGemmMaxSharedBytes), with the 1024
      // bytes of alignment slack.
      "STAGES * (BLOCK_M + BLOCK_N) * BLOCK_K * 2 + 1024 <= 232448",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// 12 configs for the TMA kernel: 1 consumer warp group (64 or 128 rows) or 2 (64 or 128 rows
// each), at most 128 accumulators per thread, and the two deepest rings that fit in shared memory
// (at most 6 stages: beyond that the loads are far enough ahead).
SearchSpace tma_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_N", {std::int64_t{128}, std::int64_t{256}}},
      {"CONSUMERS", {std::int64_t{1}, std::int64_t{2}}},
      {"STAGES", {std::int64_t{3}, std::int64_t{4}, std::int64_t{5}, std::int64_t{6}}},
      {"GROUP_M", {std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      "BLOCK_M % (64 * CONSUMERS) == 0",
      "(BLOCK_M / (64 * CONSUMERS)) * BLOCK_N <= 256",
      // Shared memory: the H100's opt-in maximum (kCudaGemmMaxSharedBytes).
      "STAGES * (BLOCK_M + BLOCK_N) * 128 + 1024 + 16 * STAGES <= 232448",
      "(STAGES + 2) * (BLOCK_M + BLOCK_N) * 128 + 1024 + 16 * (STAGES + 2) > 232448 || "
      "STAGES >= 5",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// 8 configs for the SIMT kernel: square block tiles of 64 to 256 threads.
SearchSpace simt_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{32}, std::int64_t{64}, std::int64_t{128}}},
      {"BLOCK_N", {std::int64_t{32}, std::int64_t{64}, std::int64_t{128}}},
      {"BLOCK_K", {std::int64_t{8}, std::int64_t{16}}},
      {"THREAD_M", {std::int64_t{4}, std::int64_t{8}}},
      {"THREAD_N", {std::int64_t{4}, std::int64_t{8}}},
  };
  std::vector<std::string> restrictions = {
      "BLOCK_M == BLOCK_N && THREAD_M == THREAD_N",
      "(BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) >= 64",
      "(BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) <= 256",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

int dtype_code(DType dtype) { return dtype == DType::kF16 ? 0 : dtype == DType::kBF16 ? 1 : 2; }

// "cuda_gemm_mma_bf16", with the epilogue's tag when there is one.
std::string template_name(std::string_view kind, DType dtype, const Epilogue& e) {
  return e.empty() ? fmt::format("cuda_{}_{}", kind, dtype_name(dtype))
                   : fmt::format("cuda_{}_{}_{}", kind, dtype_name(dtype), e.tag());
}

// The template's source: the dtype and, for a fused epilogue, its hook's #defines, then
// kernels/cuda/prelude.cuh and the kernel file `file` (NVRTC has no include path to this tree),
// each under its own #line name so that compiler messages point into the files. The dtype is a
// #define rather than part of the name, so that the source text (and each choice's hash)
// differs per dtype while choice names stay free of it.
std::string render_source(std::string_view file, std::string_view source, DType dtype,
                          const Epilogue& e, bool hopper_header = false) {
  std::string text = fmt::format("#define DTYPE {}\n", dtype_code(dtype));
  if (!e.empty()) {
    text += e.render_defines("const ktune_gemm::elem_t* __restrict__", EpilogueLanguage::kCuda);
  }
  text += fmt::format("#line 1 \"kernels/cuda/prelude.cuh\"\n{}", cuda_prelude_source());
  if (hopper_header) {
    text += fmt::format("#line 1 \"kernels/cuda/hopper.cuh\"\n{}", cuda_hopper_source());
  }
  return text + fmt::format("#line 1 \"kernels/cuda/{}\"\n{}", file, source);
}

std::shared_ptr<KernelTemplate> mma_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("gemm_mma", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "mma";
  desc.source = render_source("gemm_mma.cu", cuda_gemm_mma_source(), dtype, e);
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config& c, const Problem& p) { return mma_launch(name, c, p, e); };
  desc.supports = [name, e](const Config& c, const Problem& p) {
    return mma_supports(name, c, p, e);
  };
  return KernelTemplate::create(std::move(desc), mma_space());
}

std::shared_ptr<KernelTemplate> wgmma_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("gemm_wgmma", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "wgmma";
  desc.source = render_source("gemm_wgmma.cu", cuda_gemm_wgmma_source(), dtype, e, true);
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config& c, const Problem& p) {
    return wgmma_launch(name, c, p, e);
  };
  desc.supports = [name, e](const Config& c, const Problem& p) {
    return wgmma_supports(name, c, p, e);
  };
  return KernelTemplate::create(std::move(desc), wgmma_space());
}

// "cuda_gemm_tma_<dtype>", or with `restrided` "cuda_gemm_tma_restrided_<dtype>": the same
// kernel reading A and/or B from the workspace copies of the restride kernel (KTUNE_TMA_WORKSPACE).
std::shared_ptr<KernelTemplate> tma_template(DType dtype, const Epilogue& e, bool restrided) {
  const std::string name = template_name(restrided ? "gemm_tma_restrided" : "gemm_tma", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "tma";
  desc.source = render_source("gemm_tma.cu", cuda_gemm_tma_source(), dtype, e, true);
  if (restrided) desc.source = "#define KTUNE_TMA_WORKSPACE 1\n" + desc.source;
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e, restrided](const Config& c, const Problem& p) {
    return tma_launch(name, c, p, e, restrided);
  };
  desc.supports = [name, e, restrided](const Config& c, const Problem& p) {
    return tma_supports(name, c, p, e, restrided);
  };
  return KernelTemplate::create(std::move(desc), tma_space());
}

// The copies in front of a restrided TMA GEMM (kernels/cuda/restride.cu), one config.
std::shared_ptr<KernelTemplate> restride_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("restride", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "restride";
  desc.source = render_source("restride.cu", cuda_restride_source(), dtype, e);
  desc.entry = "restride";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config&, const Problem& p) { return restride_launch(name, p, e); };
  Result<SearchSpace> space = SearchSpace::create({}, {});
  KTUNE_CHECK(space.has_value());
  return KernelTemplate::create(std::move(desc), std::move(*space));
}

std::shared_ptr<KernelTemplate> simt_template(DType dtype, const Epilogue& e) {
  const std::string name = template_name("gemm_simt", dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = kCudaGemmSimtKind;
  desc.source = render_source("gemm_simt.cu", cuda_gemm_simt_source(), dtype, e);
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e](const Config& c, const Problem& p) { return simt_launch(name, c, p, e); };
  desc.supports = [name, e](const Config& c, const Problem& p) {
    return simt_supports(name, c, p, e);
  };
  return KernelTemplate::create(std::move(desc), simt_space());
}

// 256 threads, each on one 16-byte chunk per grid-stride step; at most 2^16 blocks.
Result<LaunchGeometry> epilogue_launch(const std::string& where, const Problem& p,
                                       const Epilogue& e) {
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  // 256 threads: x along a row's 16-byte chunks (a warp for short rows, up to 256), y over
  // rows; blockIdx.y covers the rows up to the grid's 65535, the kernel loops past that.
  const std::int64_t per_chunk = 16 / static_cast<std::int64_t>(dtype_size(p.args[0].tensor.dtype));
  const std::int64_t chunks = ceil_div(d->n, per_chunk);
  std::int64_t bx = 32;
  while (bx < 256 && bx < chunks) bx *= 2;
  const std::int64_t by = 256 / bx;
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::max<std::int64_t>(ceil_div(chunks, bx), 1)),
            static_cast<std::uint64_t>(std::clamp<std::int64_t>(ceil_div(d->m, by), 1, kMaxGridY)),
            1};
  g.block = {static_cast<std::uint64_t>(bx), static_cast<std::uint64_t>(by), 1};
  return g;
}

}  // namespace

Problem cuda_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                          int device_index, const Epilogue& epilogue) {
  const Device device{DeviceKind::kCuda, device_index};
  const Signature sig = gemm_signature(dtype, epilogue);
  Problem p;
  p.op = "gemm";
  p.name = fmt::format("M={},N={},K={},{}", m, n, k, dtype_name(dtype));
  if (!epilogue.empty()) p.name += "," + epilogue.name();
  p.args = {
      {sig[0], TensorSpec::contiguous(dtype, {m, n}, device), {}},
      {sig[1], TensorSpec::contiguous(dtype, {m, k}, device), {}},
      {sig[2], TensorSpec::contiguous(dtype, {k, n}, device), {}},
      {sig[3], {}, m},
      {sig[4], {}, n},
      {sig[5], {}, k},
  };
  for (ProblemArg& a : epilogue.problem_args(dtype, m, n, device)) p.args.push_back(std::move(a));
  return p;
}

std::vector<std::shared_ptr<KernelTemplate>> cuda_gemm_templates(DType dtype,
                                                                 const Epilogue& epilogue,
                                                                 bool hopper) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      // On Hopper the TMA template beat the mma.sync one on every shape measured (H200,
      // 2026-11-24: 90-95% of cuBLAS against at most 75%) and the wgmma one serves the shapes TMA
      // cannot (unaligned rows, split-K): the mma template's ~50 configs are not compiled there.
      if (hopper) {
        return {wgmma_template(dtype, epilogue), tma_template(dtype, epilogue, false),
                simt_template(dtype, epilogue)};
      }
      return {mma_template(dtype, epilogue), simt_template(dtype, epilogue)};
    case DType::kF32:
      return {simt_template(dtype, epilogue)};
    default:
      return {};
  }
}

std::shared_ptr<KernelTemplate> cuda_epilogue_template(DType dtype, const Epilogue& epilogue) {
  if (epilogue.empty() || cuda_gemm_templates(dtype).empty()) return nullptr;
  const std::string name = template_name("epilogue", dtype, epilogue);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "epilogue";
  desc.source = render_source("epilogue.cu", cuda_epilogue_source(), dtype, epilogue);
  desc.entry = "gemm_epilogue";
  desc.signature = gemm_signature(dtype, epilogue);
  desc.launch = [name, epilogue](const Config&, const Problem& p) {
    return epilogue_launch(name, p, epilogue);
  };
  Result<SearchSpace> space = SearchSpace::create({}, {});
  KTUNE_CHECK(space.has_value());
  return KernelTemplate::create(std::move(desc), std::move(*space));
}

namespace {

// An epilogue that starts with a scale: the library GEMMs with it folded into alpha (C = S A B,
// in fp32 as the separate scale), followed by the rest of the epilogue as the separate kernel or
// as cuBLASLt's own where it has it: no pass over C for the scale ("cublas_gemm_scaled",
// "cublaslt_scaled_algo2+epilogue", "cublaslt_scaled_bias_algo0").
void add_scaled_library_choices(std::vector<ChoicePtr>& out, DType dtype, const Epilogue& epilogue,
                                int cublaslt_algos) {
  const std::vector<EpilogueOp>& ops = epilogue.ops();
  if (ops.empty() || ops[0].kind != EpilogueOpKind::kScale) return;
  const double alpha = ops[0].scale;
  const Epilogue rest(std::vector<EpilogueOp>(ops.begin() + 1, ops.end()));
  const std::vector<int> bind = {0, 1, 2, 3, 4, 5};  // C, A, B, M, N, K
  std::vector<ChoicePtr> gemms;
  gemms.push_back(make_cublas_gemm_choice(bind, "cublas_gemm_scaled", alpha));
  for (ChoicePtr& c :
       make_cublaslt_gemm_choices(bind, cublaslt_algos, 0, "cublaslt_scaled", alpha)) {
    gemms.push_back(std::move(c));
  }
  if (rest.empty()) {
    for (ChoicePtr& c : gemms) out.push_back(std::move(c));
    return;
  }
  // The rest has the same operands (a scale has none), in the same argument positions.
  const std::shared_ptr<KernelTemplate> separate = cuda_epilogue_template(dtype, rest);
  for (ChoicePtr& c : gemms) {
    std::string name = c->name() + "+epilogue";
    out.push_back(make_sequence_choice(std::move(name), std::move(c), separate->choice(Config{})));
  }
  if (const int lt = cublaslt_epilogue_of(rest); lt != 0) {
    std::vector<int> lt_bind = bind;
    if (!rest.operands().empty()) lt_bind.push_back(6);  // the bias
    for (ChoicePtr& c : make_cublaslt_gemm_choices(
             lt_bind, cublaslt_algos, lt, fmt::format("cublaslt_scaled_{}", rest.tag()), alpha)) {
      out.push_back(std::move(c));
    }
  }
}

}  // namespace

CudaGemmCandidates cuda_gemm_candidates(DType dtype, int cublaslt_algos, const Problem* problem,
                                        bool with_simt, const Epilogue& epilogue, bool hopper) {
  CudaGemmCandidates out;
  std::vector<std::shared_ptr<KernelTemplate>> templates =
      cuda_gemm_templates(dtype, epilogue, hopper);
  if (templates.empty()) return out;
  bool tensor_cores_serve = false;
  // Given the problem, the wgmma configs of another copy width than its rows' alignment stay
  // out: they could never serve it (a wider VEC) or would lose to the one that does.
  const std::string vec = problem ? std::to_string(gemm_row_alignment(*problem)) : "";
  const auto other_vec = [&](const ChoicePtr& c) {
    for (const auto& [name, value] : c->params()) {
      if (name == "VEC") return value != vec;
    }
    return false;
  };
  for (const std::shared_ptr<KernelTemplate>& t : templates) {
    const bool simt = t->desc().kind == kCudaGemmSimtKind;
    if (simt && tensor_cores_serve && !with_simt) continue;
    const bool wgmma = t->desc().kind == "wgmma";
    Result<std::vector<ChoicePtr>> choices = t->choices();
    KTUNE_CHECK(choices.has_value());  // the built-in spaces are small
    for (ChoicePtr& c : *choices) {
      if (problem && wgmma && other_vec(c)) continue;
      if (!simt && problem && c->supports(*problem)) tensor_cores_serve = true;
      out.candidates.push_back(std::move(c));
    }
  }
  // Rows that TMA cannot read (N or K not a multiple of 8) on Hopper: the TMA GEMM on copies of
  // A and/or B with 16-byte row strides, the copies made by a first kernel (one pass over the
  // operands) in the launch's workspace.
  if (hopper && problem && dtype != DType::kF32 && gemm_row_alignment(*problem) != 8) {
    const std::shared_ptr<KernelTemplate> restride = restride_template(dtype, epilogue);
    Result<std::vector<ChoicePtr>> choices = tma_template(dtype, epilogue, true)->choices();
    KTUNE_CHECK(choices.has_value());
    for (ChoicePtr& c : *choices) {
      std::string name = "restride+" + c->name();
      out.candidates.push_back(
          make_sequence_choice(std::move(name), restride->choice(Config{}), std::move(c)));
    }
  }
  const std::vector<int> bind = {0, 1, 2, 3, 4, 5};  // C, A, B, M, N, K
  if (epilogue.empty()) {
    out.candidates.push_back(make_cublas_gemm_choice(bind));
    for (ChoicePtr& c : make_cublaslt_gemm_choices(bind, cublaslt_algos)) {
      out.candidates.push_back(std::move(c));
    }
    out.reference = make_cublas_reference_gemm_choice(bind);
    return out;
  }
  // The unfused pairs: each library GEMM followed by the separate epilogue kernel.
  const std::shared_ptr<KernelTemplate> separate = cuda_epilogue_template(dtype, epilogue);
  const auto pair = [&](ChoicePtr gemm) {
    std::string name = gemm->name() + "+epilogue";
    return make_sequence_choice(std::move(name), std::move(gemm), separate->choice(Config{}));
  };
  out.candidates.push_back(pair(make_cublas_gemm_choice(bind)));
  for (ChoicePtr& c : make_cublaslt_gemm_choices(bind, cublaslt_algos)) {
    out.candidates.push_back(pair(std::move(c)));
  }
  // cuBLASLt's own fused epilogue, where it has this one.
  if (const int lt = cublaslt_epilogue_of(epilogue); lt != 0) {
    std::vector<int> lt_bind = bind;
    const std::vector<EpilogueOperand> ops = epilogue.operands();
    if (!ops.empty()) lt_bind.push_back(6);  // the bias: the only operand cuBLASLt takes
    for (ChoicePtr& c : make_cublaslt_gemm_choices(lt_bind, cublaslt_algos, lt,
                                                   fmt::format("cublaslt_{}", epilogue.tag()))) {
      out.candidates.push_back(std::move(c));
    }
  }
  add_scaled_library_choices(out.candidates, dtype, epilogue, cublaslt_algos);
  out.reference = pair(make_cublas_reference_gemm_choice(bind));
  return out;
}

}  // namespace ktune

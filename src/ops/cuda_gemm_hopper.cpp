// The Hopper (sm_90a) GEMM templates: wgmma (kernels/cuda/gemm_wgmma.cu: cp.async tiles, 16- and
// 4-byte copies, split-K through clusters), TMA (kernels/cuda/gemm_tma.cu: warp-specialised,
// persistent, tensor maps; plain or restrided) and the restride copies (kernels/cuda/restride.cu),
// with their search spaces, supports filters and launch hooks.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "ktune/ops/cuda_gemm.h"
#include "ops/cuda_gemm_common.h"
#include "ops/cuda_kernels.h"
#include "ops/gemm_align.h"

namespace ktune::cuda_gemm_internal {
namespace {

// The wgmma template's tiles, or with split-K its fp32 reduction buffer (BLOCK_M rows of
// BLOCK_N + 8 floats, over the same memory) where larger, plus 1024 bytes, so that the kernel can
// align them to the 1024-byte period of the 128-byte swizzle.
std::uint32_t wgmma_shared_bytes(const Config& c) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  const std::int64_t tiles = param(c, "STAGES") * (bm + bn) * param(c, "BLOCK_K") * 2;
  const std::int64_t reduction = param(c, "SPLIT_K") > 1 ? bm * (bn + 8) * 4 : 0;
  return static_cast<std::uint32_t>(std::max(tiles, reduction) + 1024);
}

// The SM count of the problem's device, once per device per process; 132 (an H100 SXM or H200)
// where no driver answers (rendering and compiling need no GPU). A thread's device hint
// (core/cuda_predict.h: choosing what to compile before the driver is up) answers first, and is
// not remembered.
int sm_count(const Problem& p) {
  static std::mutex mu;
  static std::map<int, int> counts;
  const int index = p.args[0].tensor.device.index;
  if (const CudaDeviceInfo* hint = cuda_device_hint(index); hint && hint->sm_count > 0) {
    return hint->sm_count;
  }
  std::lock_guard lock(mu);
  auto it = counts.find(index);
  if (it == counts.end()) {
    Result<CudaDeviceInfo> info = cuda_device_info(index);
    it = counts.emplace(index, info && info->sm_count > 0 ? info->sm_count : 132).first;
  }
  return it->second;
}

// A problem of one tile row whose M leaves a whole m64 slab of every tile empty (M <= BLOCK_M -
// 64) multiplies zeros that BLOCK_M 64 on one warp group (in both templates' spaces, with the
// other parameters alike) does not: the larger tile cannot pay. At 32x8192x8192 this (with
// empty_columns_supports) leaves 11 template configs to compile instead of 22 (5 TMA with the
// narrow tile, 6 wgmma split-K): one wave of NVRTC on 16 threads (docs/benchmarks.md, `ktune
// gemm` cold).
Status empty_rows_supports(const std::string& where, const GemmDims& d, std::int64_t bm) {
  if (bm > 64 && d.m <= bm - 64) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: BLOCK_M {} cannot pay; expected M > {} (else BLOCK_M 64 "
                                  "serves the same tile row without the empty rows), got M={}",
                                  where, bm, bm - 64, d.m));
  }
  return {};
}

// Likewise for the TMA template's columns: BLOCK_N 256 where N <= 128 (BLOCK_N 128 gives the same
// one tile column). Not for the wgmma template, whose BLOCK_N 64 exists with some tiles only.
Status empty_columns_supports(const std::string& where, const GemmDims& d, std::int64_t bn) {
  if (bn > 128 && d.n <= bn - 128) {
    return make_error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: BLOCK_N {} cannot pay; expected N > {} (else BLOCK_N 128 serves the "
                    "same tile column without the empty columns), got N={}",
                    where, bn, bn - 128, d.n));
  }
  return {};
}

// Output tiles of bm x bn.
std::int64_t tile_count(const GemmDims& d, std::int64_t bm, std::int64_t bn) {
  return ceil_div(d.m, bm) * ceil_div(d.n, bn);
}

// BLOCK_N 64 halves the MMAs' operand reuse (both Hopper templates): it serves N <= 64, or
// outputs whose tiles of BLOCK_M x 128 leave SMs idle (the device's count, 132 without a GPU),
// where the narrower tile puts more SMs to reading A and B.
Status narrow_tile_supports(const std::string& where, const GemmDims& d, std::int64_t bm,
                            std::int64_t bn, std::int64_t sms) {
  if (bn == 64 && d.n > 64 && tile_count(d, bm, 128) >= sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: BLOCK_N 64 cannot pay; expected N <= 64 or fewer than {} "
                                  "tiles of {}x128, got N={} and {} tiles",
                                  where, sms, bm, d.n, tile_count(d, bm, 128)));
  }
  return {};
}

// Pairs of tile rows (a cluster of two's unit of work) times tile columns.
std::int64_t tile_pairs(const GemmDims& d, std::int64_t bm, std::int64_t bn) {
  return ceil_div(ceil_div(d.m, bm), 2) * ceil_div(d.n, bn);
}

// The TMA kernel's 64x128 tile (one consumer group) serves outputs of fewer 128x128 tiles than
// SMs (1024^3, 1000x1001x1024, 32x8192x8192: the fastest template there). Where the 128x128
// tiles fill the SMs it cannot pay: it ran 1.4-1.9x slower than the best template on all 11 such
// problems of bench/gpu/templates.sh, plain, fused and restrided (H200 2026-11-25, d784e2c).
Status small_tile_supports(const std::string& where, const Config& c, const GemmDims& d,
                           std::int64_t sms) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  if (bm == 64 && bn == 128 && param(c, "CONSUMERS") == 1 && tile_count(d, 128, 128) >= sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: BLOCK_M 64 x BLOCK_N 128 cannot pay; expected fewer than "
                                  "{} tiles of 128x128, got {} (the larger tiles serve them)",
                                  where, sms, tile_count(d, 128, 128)));
  }
  return {};
}

// Ping-pong (PINGPONG 1: two consumer groups on alternate tiles, one's epilogue under the
// other's MMAs) needs two tiles in a block: where the tiles do not outnumber the SMs (one each)
// a group would idle, and the cooperative config of the same tile serves. Where they do, the
// cooperative 128x128 on two groups cannot pay: its ping-pong twin ran 1-23% faster on every
// such shape measured, plain and fused. And ping-pong serves fused epilogues only: what it hides
// is the epilogue. Without one, 64x256 in ping-pong ran 3-13% slower than the best config on
// every plain shape (H200 2026-11-25), and 128x128 (plain and cluster) 3-13% slower than the
// cooperative 256x128 and cluster 128x256 at 4096^3, 8192^3, 2048x2048x8192 and 4096x14336x4096
// (`ktune gemm --no-abandon --top 80`, H200 2026-11-26, docs/benchmarks.md), restrided 29%
// slower at 4096x4098x4090; while with SiLU it was the fastest at 8192^3 and 4096x14336x4096.
// Its compiles are the slowest of the TMA configs (0.41-0.43 s alone against 0.27-0.35), so each
// rule keeps a compile off the cold tuning's critical path.
Status pingpong_supports(const std::string& where, const Config& c, const GemmDims& d,
                         const Epilogue& e, std::int64_t sms, TmaKind kind) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  const std::int64_t tiles = tile_count(d, bm, bn);
  const bool pingpong = param(c, "PINGPONG") == 1;
  if (pingpong && tiles <= sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: ping-pong cannot pay; expected more than {} tiles of {}x{} "
                                  "(two in a block), got {}",
                                  where, sms, bm, bn, tiles));
  }
  if (pingpong && e.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: ping-pong cannot pay without a fused epilogue (the "
                                  "cooperative configs serve plain GEMMs)",
                                  where));
  }
  const bool twin = kind != TmaKind::kCluster && !pingpong && bm == 128 && bn == 128 &&
                    param(c, "CONSUMERS") == 2;
  if (twin && tiles > sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: cooperative 128x128 on two consumer groups cannot pay; "
                                  "expected at most {} tiles, got {} ({})",
                                  where, sms, tiles,
                                  e.empty() ? "the cooperative 256x128 and 128x256 configs serve "
                                              "plain GEMMs"
                                            : "its PINGPONG 1 twin serves them"));
  }
  return {};
}

// Split-K trades a reduction through distributed shared memory for more blocks on the same
// tiles: it can pay only while the blocks do not fill the SMs without it, and while each slice
// keeps a pipeline's worth of K. SPLIT_K = s > 1 serves a problem whose tiles * s / 2 blocks
// (the next smaller split) leave SMs idle and whose K has at least 2 tiles per slice.
// BLOCK_N 64: narrow_tile_supports. And exactly the VEC that gemm_row_alignment gives serves a
// shape: a narrower one would only lose to it, a wider one cannot copy its rows.
Status wgmma_supports(const std::string& where, const Config& c, const Problem& p,
                      const Epilogue& e) {
  const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t sms = sm_count(p);  // the SMs that split-K and BLOCK_N 64 try to fill
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
  if (Status s = empty_rows_supports(where, *d, bm); !s) return s;
  if (Status s = narrow_tile_supports(where, *d, bm, bn, sms); !s) return s;
  const std::int64_t split = param(c, "SPLIT_K");
  if (split == 1) return {};
  const std::int64_t tiles = tile_count(*d, bm, bn);
  if (tiles * split / 2 >= sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: split-K {} cannot pay; expected tiles * {} < {} SMs "
                                  "(half the split leaves SMs idle), got {} tiles of {}x{}",
                                  where, split, split / 2, sms, tiles, bm, bn));
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

// The TMA template's ring, 1024 bytes to align it to the swizzle's period, two 8-byte mbarriers
// per stage, and (cooperative configs) 2304 bytes per consumer warp where it stages its stores
// (kernels/cuda/gemm_tma.cu).
std::uint32_t tma_shared_bytes(const Config& c) {
  const std::int64_t stages = param(c, "STAGES");
  const std::int64_t staging = param(c, "PINGPONG") == 1 ? 0 : param(c, "CONSUMERS") * 4 * 2304;
  return static_cast<std::uint32_t>(stages * (param(c, "BLOCK_M") + param(c, "BLOCK_N")) * 128 +
                                    1024 + 16 * stages + staging);
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
                    TmaKind kind) {
  const bool restrided = kind == TmaKind::kRestrided;
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
  if (Status s = empty_rows_supports(where, *d, bm); !s) return s;
  if (Status s = empty_columns_supports(where, *d, bn); !s) return s;
  const std::int64_t sms = sm_count(p);
  if (Status s = narrow_tile_supports(where, *d, bm, bn, sms); !s) return s;
  if (Status s = small_tile_supports(where, c, *d, sms); !s) return s;
  if (Status s = pingpong_supports(where, c, *d, e, sms, kind); !s) return s;
  // Clusters of two (tma_cluster_space: 128x256 tiles on two cooperative consumer groups, or
  // 128x128 in ping-pong) serve outputs whose pairs of tiles fill every SM twice over (two tiles
  // per SM at least): there the multicast's saving on B's traffic is worth the blocks' lockstep,
  // and the plain config of the cooperative 128x256 cannot pay (it ran 2-4% slower at 4096^3 and
  // 8192^3; H200, docs/benchmarks.md).
  const bool cluster_tile =
      bm == 128 && bn == 256 && param(c, "CONSUMERS") == 2 && param(c, "PINGPONG") == 0;
  if (kind == TmaKind::kRestrided || (kind == TmaKind::kPlain && !cluster_tile)) return {};
  // (The cluster's ping-pong configs: the same rule; pairs >= SMs means tiles >= 2 * SMs.)
  const std::int64_t pairs = tile_pairs(*d, bm, bn);
  if (kind == TmaKind::kCluster && pairs < sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: a cluster of 2 cannot pay; expected at least {} pairs of "
                                  "{}x{} tiles (two per SM), got {}",
                                  where, sms, bm, bn, pairs));
  }
  if (kind == TmaKind::kPlain && pairs >= sms) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: BLOCK_M 128 x BLOCK_N 256 without a cluster cannot pay; "
                                  "expected fewer than {} pairs of tiles, got {} (the "
                                  "cuda_gemm_tma_cluster twin serves them)",
                                  where, sms, pairs));
  }
  return {};
}

// Persistent: one block per SM at most, each walking the tiles; the TMA descriptors of A
// ({K, M}, box {64, BLOCK_M}) and B ({N, K}, box {64, 64}), 128-byte swizzled: of the arguments,
// or (restrided) of their copies in the workspace where a row stride needs fixing.
Result<LaunchGeometry> tma_launch(const std::string& where, const Config& c, const Problem& p,
                                  const Epilogue& e, TmaKind kind) {
  const bool restrided = kind == TmaKind::kRestrided;
  Result<GemmDims> d = gemm_dims(where, p, e);
  if (!d) return std::unexpected(d.error());
  const std::int64_t bm = param(c, "BLOCK_M");
  const std::int64_t tiles = tile_count(*d, bm, param(c, "BLOCK_N"));
  LaunchGeometry g;
  g.grid = {static_cast<std::uint64_t>(std::clamp<std::int64_t>(tiles, 1, sm_count(p))), 1, 1};
  if (kind == TmaKind::kCluster) {  // clusters of 2 (__cluster_dims__), a pair of tiles each
    const std::int64_t pairs = tile_pairs(*d, bm, param(c, "BLOCK_N"));
    g.grid[0] = static_cast<std::uint64_t>(2 * std::clamp<std::int64_t>(pairs, 1, sm_count(p) / 2));
  }
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
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one restriction in two literals
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

// 17 configs for the TMA kernel: cooperative, 1 consumer warp group (64 or 128 rows) or 2 (64 or
// 128 rows each), or ping-pong, 2 groups taking turns on whole tiles (PINGPONG 1); at most 128
// accumulators per thread, and the two deepest rings that fit in shared memory (at most 6
// stages: beyond that the loads are far enough ahead); and one 64x64 tile for narrow outputs.
SearchSpace tma_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"BLOCK_N", {std::int64_t{64}, std::int64_t{128}, std::int64_t{256}}},
      {"CONSUMERS", {std::int64_t{1}, std::int64_t{2}}},
      {"STAGES",
       {std::int64_t{3}, std::int64_t{4}, std::int64_t{5}, std::int64_t{6}, std::int64_t{12}}},
      {"GROUP_M", {std::int64_t{8}}},
      {"PINGPONG", {std::int64_t{0}, std::int64_t{1}}},
  };
  std::vector<std::string> restrictions = {
      // Cooperative (PINGPONG 0): the consumer groups share each tile's rows.
      "PINGPONG == 1 || BLOCK_M % (64 * CONSUMERS) == 0",
      "PINGPONG == 1 || (BLOCK_M / (64 * CONSUMERS)) * BLOCK_N <= 256",
      // Ping-pong: two groups, each a whole tile of 128 accumulators per thread (128x128 or
      // 64x256; 64x128 ran 1.1-1.2x slower than both, H200 2026-11-25).
      "PINGPONG == 0 || (CONSUMERS == 2 && (BLOCK_M / 64) * BLOCK_N == 256)",
      // The narrow tile (narrow_tile_supports: skinny or decode outputs, bound by reading A or B)
      // on one group with a 12-deep ring: 192 KiB of loads in flight per SM, as the wider tiles'
      // rings hold (8192x32x8192: 39.5 us against 40.4 with 8 stages and 42.9 for the best
      // wgmma split-K config; BLOCK_K 128 or 256 in the same bytes were no faster; H200
      // 2026-11-25).
      "(BLOCK_N == 64) == (STAGES == 12)",
      "BLOCK_N > 64 || (BLOCK_M == 64 && CONSUMERS == 1 && PINGPONG == 0)",
      // Shared memory: the H100's opt-in maximum (kCudaGemmMaxSharedBytes); tma_shared_bytes
      // (9216: a cooperative consumer group's four staging areas).
      "STAGES * (BLOCK_M + BLOCK_N) * 128 + 1024 + 16 * STAGES + (1 - PINGPONG) * CONSUMERS * 9216 "
      "<= 232448",
      "(STAGES + 2) * (BLOCK_M + BLOCK_N) * 128 + 1024 + 16 * (STAGES + 2) + (1 - PINGPONG) * "
      "CONSUMERS * 9216 > 232448 || STAGES >= 5",
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// 4 configs for clusters of two: the 128x256 tile on two cooperative consumer groups (the one
// that wins large plain outputs; 256x128 in clusters was as fast as without, H200 2026-11-25) or
// 128x128 tiles in ping-pong (as fast on plain ones, faster with a bias + residual), each with
// the two deepest rings that fit.
SearchSpace tma_cluster_space() {
  std::vector<Param> params = {
      {"BLOCK_M", {std::int64_t{128}}},
      {"BLOCK_N", {std::int64_t{128}, std::int64_t{256}}},
      {"CONSUMERS", {std::int64_t{2}}},
      {"STAGES", {std::int64_t{3}, std::int64_t{4}, std::int64_t{5}, std::int64_t{6}}},
      {"GROUP_M", {std::int64_t{8}}},
      {"PINGPONG", {std::int64_t{0}, std::int64_t{1}}},
  };
  std::vector<std::string> restrictions = {
      "PINGPONG == 1 || (BLOCK_N == 256 && STAGES <= 4)",  // cooperative: 128x256
      "PINGPONG == 0 || (BLOCK_N == 128 && STAGES >= 5)",  // ping-pong: 128x128 per group
  };
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

}  // namespace

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

// "cuda_gemm_tma_<dtype>"; "cuda_gemm_tma_restrided_<dtype>", the same kernel reading A and/or B
// from the workspace copies of the restride kernel (KTUNE_TMA_WORKSPACE); or
// "cuda_gemm_tma_cluster_<dtype>", clusters of two blocks multicasting B (CLUSTER_M 2) on the
// largest tiles.
std::shared_ptr<KernelTemplate> tma_template(DType dtype, const Epilogue& e, TmaKind kind) {
  const char* names[] = {"gemm_tma", "gemm_tma_restrided", "gemm_tma_cluster"};
  const std::string name = template_name(names[static_cast<int>(kind)], dtype, e);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.kind = "tma";
  desc.source = render_source("gemm_tma.cu", cuda_gemm_tma_source(), dtype, e, true);
  if (kind == TmaKind::kRestrided) desc.source = "#define KTUNE_TMA_WORKSPACE 1\n" + desc.source;
  if (kind == TmaKind::kCluster) desc.source = "#define CLUSTER_M 2\n" + desc.source;
  desc.entry = "gemm";
  desc.signature = gemm_signature(dtype, e);
  desc.launch = [name, e, kind](const Config& c, const Problem& p) {
    return tma_launch(name, c, p, e, kind);
  };
  desc.supports = [name, e, kind](const Config& c, const Problem& p) {
    return tma_supports(name, c, p, e, kind);
  };
  return KernelTemplate::create(std::move(desc),
                                kind == TmaKind::kCluster ? tma_cluster_space() : tma_space());
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

}  // namespace ktune::cuda_gemm_internal

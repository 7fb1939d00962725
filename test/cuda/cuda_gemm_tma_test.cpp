// The Hopper TMA + warp-specialised GEMM template (kernels/cuda/gemm_tma.cu): its search space,
// its persistent launch with two tensor maps, the supports filter, NVRTC compilation of every
// config for sm_90a (plain and with fused epilogues); on a GPU, every config verified against
// cuBLAS on aligned, ragged, multi-tile-per-block and fused-epilogue problems.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "backend/cuda_tensor_map.h"
#include "core/cuda_driver.h"
#include "core/cuda_predict.h"
#include "core/thread_pool.h"
#include "hopper_template_support.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/ops/cuda_gemm.h"
#include "ktune/select/selector.h"
#include "support/all_choices.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<KernelTemplate> tma_template(DType dtype, const Epilogue& e = {}) {
  return hopper_template("cuda_gemm_tma_", dtype, e);
}

std::shared_ptr<KernelTemplate> cluster_template(DType dtype, const Epilogue& e = {}) {
  return hopper_template("cuda_gemm_tma_cluster_", dtype, e);
}

TEST(CudaGemmTma, SpaceIsSmallAndWithinTheHardwareLimits) {
  auto t = tma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  const std::vector<Config> configs = all_configs(t->space());
  EXPECT_EQ(configs.size(), 17u);
  int pingpong = 0;
  int narrow = 0;
  for (const Config& c : configs) {
    const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
    const std::int64_t consumers = param(c, "CONSUMERS");
    // Rows per consumer group: a share of the tile, or with ping-pong the whole tile.
    const std::int64_t rows = param(c, "PINGPONG") == 1 ? bm : bm / consumers;
    if (param(c, "PINGPONG") == 1) {
      ++pingpong;
      EXPECT_EQ(consumers, 2) << c.str();
    }
    EXPECT_TRUE(bn == 64 || bn == 128 || bn == 256) << c.str();
    if (bn == 64) {  // the narrow tile: 64x64 on one group, a 12-deep ring
      ++narrow;
      EXPECT_EQ(bm, 64) << c.str();
      EXPECT_EQ(consumers, 1) << c.str();
      EXPECT_EQ(param(c, "STAGES"), 12) << c.str();
    } else {
      EXPECT_LE(param(c, "STAGES"), 6) << c.str();
    }
    EXPECT_EQ(rows % 64, 0) << c.str();
    EXPECT_EQ(bm % rows, 0) << c.str();
    EXPECT_LE(bm, 256) << c.str();                    // the TMA box
    EXPECT_LE((rows / 64) * bn / 2, 128) << c.str();  // accumulators per thread
    const std::int64_t stages = param(c, "STAGES");
    EXPECT_GE(stages, 3) << c.str();
    // The ring, its alignment, the mbarriers and (cooperative) each consumer warp's staging area.
    const std::int64_t staging = param(c, "PINGPONG") == 1 ? 0 : consumers * 4 * 2304;
    EXPECT_LE(stages * (bm + bn) * 128 + 1024 + 16 * stages + staging, kCudaGemmMaxSharedBytes)
        << c.str();
  }
  EXPECT_EQ(pingpong, 4);  // 128x128 and 64x256, two ring depths each
  EXPECT_EQ(narrow, 1);
}

// The 64x64 tile serves outputs of N <= 64 or too few 64x128 tiles to fill the SMs (132 without a
// GPU): skinny and decode shapes, bound by reading A or B.
TEST(CudaGemmTma, NarrowTileOnlyForSkinnyOrDecodeOutputs) {
  const std::vector<ChoicePtr> choices = all_choices(tma_template(DType::kBF16));
  const auto it = std::ranges::find_if(
      choices, [](const ChoicePtr& c) { return c->name().contains("BLOCK_N64_"); });
  ASSERT_NE(it, choices.end());
  const ChoicePtr& narrow = *it;
  EXPECT_TRUE(narrow->supports(cuda_gemm_problem(8192, 32, 8192, DType::kBF16)));  // N <= 64
  EXPECT_TRUE(narrow->supports(cuda_gemm_problem(32, 8192, 8192, DType::kBF16)));  // 64 tiles
  EXPECT_TRUE(narrow->supports(cuda_gemm_problem(16, 4096, 4096, DType::kBF16)));
  for (auto [m, n] : {std::array<std::int64_t, 2>{4096, 4096}, {128, 14336}, {2048, 2048}}) {
    Status s = narrow->supports(cuda_gemm_problem(m, n, 4096, DType::kBF16));
    ASSERT_FALSE(s.has_value()) << m << "x" << n;
    EXPECT_THAT(s.error().message, HasSubstr("BLOCK_N 64 cannot pay"));
  }
  auto t = tma_template(DType::kBF16);
  for (const Config& c : all_configs(t->space())) {
    if (param(c, "BLOCK_N") != 64) continue;
    Result<LaunchGeometry> g = t->desc().launch(c, cuda_gemm_problem(8192, 32, 8192, DType::kBF16));
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->grid[0], 128u);  // 128 tiles of 64x64
    EXPECT_EQ(g->block[0], 256u);
    EXPECT_EQ(g->shared_bytes, 12u * 128 * 128 + 1024 + 16 * 12 + 4 * 2304);
  }
}

TEST(CudaGemmTma, LaunchIsPersistentWithTwoTensorMaps) {
  auto t = tma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{1000, 1000, 1000},
                         {4096, 4096, 4096},
                         {1, 8, 8},
                         {130, 264, 72}}) {
    const Problem p = cuda_gemm_problem(m, n, k, DType::kBF16);
    for (const Config& c : all_configs(t->space())) {
      Result<LaunchGeometry> g = t->desc().launch(c, p);
      ASSERT_TRUE(g.has_value()) << g.error().message;
      const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
      const std::int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      // At most one block per SM (the device's count; 132 without a GPU), each walking tiles.
      EXPECT_GE(g->grid[0], 1u);
      EXPECT_LE(g->grid[0], static_cast<std::uint64_t>(tiles)) << c.str();
      if (tiles <= 100) {
        EXPECT_EQ(g->grid[0], static_cast<std::uint64_t>(tiles)) << c.str();
      }
      EXPECT_EQ(g->block[0], static_cast<std::uint64_t>((param(c, "CONSUMERS") + 1) * 128));
      const std::int64_t stages = param(c, "STAGES");
      EXPECT_EQ(g->shared_bytes,
                static_cast<std::uint32_t>(
                    stages * (bm + bn) * 128 + 1024 + 16 * stages +
                    (param(c, "PINGPONG") == 1 ? 0 : param(c, "CONSUMERS") * 4 * 2304)));
      ASSERT_EQ(g->tensor_maps.size(), 2u);
      const TensorMapDesc& a = g->tensor_maps[0];
      const TensorMapDesc& b = g->tensor_maps[1];
      EXPECT_EQ(a.arg, 1);
      EXPECT_EQ(a.dims, (std::array<std::uint64_t, 2>{static_cast<std::uint64_t>(k),
                                                      static_cast<std::uint64_t>(m)}));
      EXPECT_EQ(a.row_stride_bytes, static_cast<std::uint64_t>(k * 2));
      EXPECT_EQ(a.box, (std::array<std::uint32_t, 2>{64, static_cast<std::uint32_t>(bm)}));
      EXPECT_EQ(b.arg, 2);
      EXPECT_EQ(b.dims, (std::array<std::uint64_t, 2>{static_cast<std::uint64_t>(n),
                                                      static_cast<std::uint64_t>(k)}));
      EXPECT_EQ(b.row_stride_bytes, static_cast<std::uint64_t>(n * 2));
      EXPECT_EQ(b.box, (std::array<std::uint32_t, 2>{64, 64}));
      EXPECT_EQ(a.swizzle_bytes, 128u);
      EXPECT_EQ(b.swizzle_bytes, 128u);
    }
  }
}

// The filter runs before compiling: a config that cannot serve the shape is never compiled.
TEST(CudaGemmTma, SupportsOnlyAlignedNonEmptyProblems) {
  // Ping-pong serves fused epilogues only (PingPongOnlyWhereBlocksTakeTwoTilesWithAnEpilogue): its
  // configs are checked with SiLU fused, the others plain.
  const Epilogue silu = *Epilogue::parse("silu");
  for (const bool fused : {false, true}) {
    const Epilogue e = fused ? silu : Epilogue{};
    auto t = tma_template(DType::kBF16, e);
    ASSERT_NE(t, nullptr);
    for (const ChoicePtr& c : all_choices(t)) {
      const bool pp = c->name().contains("PINGPONG1");
      if (pp != fused) continue;
      const auto problem = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
        return cuda_gemm_problem(m, n, k, DType::kBF16, 0, e);
      };
      // (Ping-pong needs more tiles than SMs: 2000 x 2048 has 256 of 128x128 and of 64x256.)
      EXPECT_TRUE(c->supports(problem(pp ? 2000 : 1000, pp ? 2048 : 1000, 1000)).has_value())
          << c->name();
      EXPECT_TRUE(c->supports(problem(pp ? 2047 : 999, pp ? 2048 : 136, 8)).has_value())
          << c->name();  // any M
      Status k_odd = c->supports(problem(64, 64, 1001));
      ASSERT_FALSE(k_odd.has_value());
      EXPECT_THAT(k_odd.error().message, HasSubstr("K=1001"));
      EXPECT_THAT(k_odd.error().message, HasSubstr("cuda_gemm_tma_bf16"));
      EXPECT_FALSE(c->supports(problem(64, 1004, 64)).has_value());
      Problem offset = problem(64, 64, 64);
      offset.args[1].tensor.offset = 4;  // 8 bytes: TMA needs 16
      Status misaligned = c->supports(offset);
      ASSERT_FALSE(misaligned.has_value());
      EXPECT_THAT(misaligned.error().message, HasSubstr("offset"));
      Status empty = c->supports(problem(0, 64, 64));
      ASSERT_FALSE(empty.has_value());
      EXPECT_THAT(empty.error().message, HasSubstr("non-zero"));
      EXPECT_FALSE(
          c->supports(cuda_gemm_problem(64, 64, 64, DType::kF16, 0, e)).has_value());  // dtype
    }
  }
}

// The SM-counting rules (here the cluster's: pairs of tiles at least the SM count) follow a
// thread's device hint (compiling ahead of the driver for a predicted GPU), in that thread only.
TEST(CudaGemmTma, SmRulesFollowTheThreadsDeviceHint) {
  std::vector<ChoicePtr> cluster;
  const Problem p = cuda_gemm_problem(4096, 4096, 4096, DType::kBF16);
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &p, false, {}, true);
  for (ChoicePtr& c : set.candidates) {
    if (c->name().starts_with("cuda_gemm_tma_cluster_") && c->name().contains("PINGPONG0")) {
      cluster.push_back(std::move(c));
    }
  }
  ASSERT_FALSE(cluster.empty());
  const Choice& c = *cluster.front();
  ASSERT_TRUE(c.supports(p)) << "256 pairs of tiles fill 132 SMs twice";
  {
    CudaDeviceInfo many;
    many.sm_count = 1000;
    const ScopedCudaDeviceHint hint(many);
    Status big = c.supports(p);
    ASSERT_FALSE(big.has_value());
    EXPECT_THAT(big.error().message,
                HasSubstr("a cluster of 2 cannot pay; expected at least 1000"));
    bool elsewhere = false;
    std::thread([&] { elsewhere = c.supports(p).has_value(); }).join();
    EXPECT_TRUE(elsewhere) << "the hint leaked into another thread";
    many.index = 1;
    const ScopedCudaDeviceHint other(many);
    EXPECT_FALSE(c.supports(p).has_value()) << "device 1's hint hid device 0's";
  }
  EXPECT_TRUE(c.supports(p)) << "the hint outlived its scope";
}

// One tile row (or column) with a whole m64 slab of rows past M (M <= BLOCK_M - 64), or BLOCK_N
// 256 where N <= 128, only multiplies zeros: BLOCK_M 64 (one consumer) or BLOCK_N 128 serve the
// same tiles. Filtered before compiling, plain and restrided alike.
TEST(CudaGemmTma, TilesOfEmptyRowsOrColumnsCannotPay) {
  for (const bool restrided : {false, true}) {
    const std::int64_t k = restrided ? 4095 : 4096;
    std::vector<ChoicePtr> choices;
    if (!restrided) {
      choices = all_choices(tma_template(DType::kBF16));
    } else {
      const Problem odd = cuda_gemm_problem(32, 4096, k, DType::kBF16);
      CudaGemmCandidates s = cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, true);
      for (ChoicePtr& c : s.candidates) {
        if (c->name().starts_with("restride+cuda_gemm_tma_restrided_"))
          choices.push_back(std::move(c));
      }
    }
    // Ping-pong configs have their own rule (PingPongOnlyWhereBlocksTakeTwoTilesWithAnEpilogue).
    std::erase_if(choices, [](const ChoicePtr& c) { return c->name().contains("PINGPONG1"); });
    ASSERT_EQ(choices.size(), 13u);
    int m32 = 0;
    for (const ChoicePtr& c : choices) {
      const bool m64 = c->name().contains("BLOCK_M64_");
      const bool n128 = c->name().contains("BLOCK_N128_") || c->name().contains("BLOCK_N64_");
      Status s = c->supports(cuda_gemm_problem(32, 4096, k, DType::kBF16));
      EXPECT_EQ(s.has_value(), m64) << c->name();
      if (!s) {
        EXPECT_THAT(s.error().message, HasSubstr("cannot pay; expected M > ")) << c->name();
      }
      m32 += s.has_value();
      EXPECT_TRUE(c->supports(cuda_gemm_problem(200, 4096, k, DType::kBF16))) << c->name();
      Status narrow = c->supports(cuda_gemm_problem(4096, 128, k, DType::kBF16));
      EXPECT_EQ(narrow.has_value(), n128) << c->name();
      if (!narrow) {
        EXPECT_THAT(narrow.error().message, HasSubstr("BLOCK_N 256 cannot pay"));
      }
      EXPECT_TRUE(c->supports(cuda_gemm_problem(4096, 136, k, DType::kBF16))) << c->name();
    }
    EXPECT_EQ(m32, 5);  // BLOCK_N 128 and 256, two ring depths each; the narrow tile
  }
}

// The 64x128 tile on one group serves outputs of fewer 128x128 tiles than SMs (132 without a
// GPU); where those fill the SMs, the larger tiles serve. Plain, fused and restrided alike.
TEST(CudaGemmTma, SmallTileOnlyWhereLargerTilesLeaveSMsIdle) {
  const Problem odd = cuda_gemm_problem(4095, 4097, 4093, DType::kBF16);
  std::vector<ChoicePtr> choices = all_choices(tma_template(DType::kBF16, parse("gelu")));
  for (ChoicePtr& c : cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, true).candidates) {
    if (c->name().starts_with("restride+")) choices.push_back(std::move(c));
  }
  int small = 0;
  for (const ChoicePtr& c : choices) {
    if (!c->name().contains("BLOCK_M64_BLOCK_N128_CONSUMERS1_")) continue;
    ++small;
    const bool restrided = c->name().starts_with("restride+");
    const Epilogue e = restrided ? Epilogue{} : parse("gelu");
    const std::int64_t k = restrided ? 1001 : 1024;
    // 1024^2: 64 tiles of 128x128; 32 x 8192: 64; 1536 x 1408: 132; 4096^2: 1024.
    EXPECT_TRUE(c->supports(cuda_gemm_problem(1024, 1024, k, DType::kBF16, 0, e))) << c->name();
    EXPECT_TRUE(c->supports(cuda_gemm_problem(32, 8192, k, DType::kBF16, 0, e))) << c->name();
    for (auto [m, n] : {std::array<std::int64_t, 2>{1536, 1408}, {4096, 4096}}) {
      Status s = c->supports(cuda_gemm_problem(m, n, k, DType::kBF16, 0, e));
      ASSERT_FALSE(s.has_value()) << c->name() << " " << m << "x" << n;
      EXPECT_THAT(s.error().message, HasSubstr("BLOCK_M 64 x BLOCK_N 128 cannot pay"));
    }
  }
  EXPECT_EQ(small, 4);  // two ring depths, plain and restrided
}

// Clusters of two blocks sharing B by multicast: 128x256 tiles, where the pairs of tiles fill
// every SM twice over (132 without a GPU), and there instead of the plain 128x256 configs; an
// even grid of at most one block per SM. (The ping-pong configs with an epilogue fused: they
// serve no other.)
TEST(CudaGemmTma, ClustersOfTwoOnlyForLargeOutputs) {
  const std::vector<Config> configs = all_configs(cluster_template(DType::kBF16)->space());
  ASSERT_EQ(configs.size(), 4u);
  for (const Config& c : configs) {
    const bool pingpong = param(c, "PINGPONG") == 1;
    const Epilogue e = pingpong ? parse("silu") : Epilogue{};
    const auto problem = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
      return cuda_gemm_problem(m, n, k, DType::kBF16, 0, e);
    };
    auto t = cluster_template(DType::kBF16, e);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(param(c, "BLOCK_M"), 128) << c.str();
    EXPECT_EQ(param(c, "BLOCK_N"), pingpong ? 128 : 256) << c.str();
    EXPECT_EQ(param(c, "CONSUMERS"), 2) << c.str();
    ChoicePtr choice = t->choice(c);
    // 4096^2: 512 tiles of 128x256, 256 pairs (1024 and 512 of 128x128); 4096 x 14336 more.
    EXPECT_TRUE(choice->supports(problem(4096, 4096, 4096))) << c.str();
    EXPECT_TRUE(choice->supports(problem(4096, 14336, 4096))) << c.str();
    // 2048 x 2048: 64 pairs of 128x256 tiles, 128 of 128x128.
    Status small = choice->supports(problem(2048, 2048, 8192));
    ASSERT_FALSE(small.has_value()) << c.str();
    EXPECT_THAT(small.error().message, HasSubstr("a cluster of 2 cannot pay"));
    EXPECT_THAT(small.error().message, HasSubstr(pingpong ? "got 128" : "got 64"));
    EXPECT_FALSE(choice->supports(problem(64, 4096, 4096)));
    // The plain twin of the cooperative 128x256: where the cluster serves, not offered.
    ChoicePtr plain = tma_template(DType::kBF16, e)->choice(c);
    Status twin = plain->supports(problem(4096, 4096, 4096));
    EXPECT_EQ(twin.has_value(), pingpong) << c.str();
    if (!twin) {
      EXPECT_THAT(twin.error().message, HasSubstr("the cuda_gemm_tma_cluster twin serves them"));
    }
    EXPECT_TRUE(plain->supports(problem(2048, 2048, 8192))) << c.str();
    Result<LaunchGeometry> g = t->desc().launch(c, problem(4096, 4096, 4096));
    ASSERT_TRUE(g.has_value()) << g.error().message;
    EXPECT_EQ(g->grid[0], 132u) << c.str();  // 66 clusters of 2
    EXPECT_EQ(g->block[0], 384u);
    // An odd number of tile rows: the last pair's second row is past M.
    Result<LaunchGeometry> odd = t->desc().launch(c, problem(300, 512, 64));
    ASSERT_TRUE(odd.has_value());
    EXPECT_EQ(odd->grid[0] % 2, 0u);
  }
}

// Ping-pong (two consumer groups on alternate tiles) where the tiles outnumber the SMs (132
// without a GPU), so that a block takes two, and with a fused epilogue only (what it hides is
// the epilogue); there the cooperative 128x128 on two groups, its twin, is not offered, nor
// without an epilogue (the larger cooperative tiles serve plain GEMMs). Plain, cluster and
// restrided alike.
TEST(CudaGemmTma, PingPongOnlyWhereBlocksTakeTwoTilesWithAnEpilogue) {
  const Epilogue silu = *Epilogue::parse("silu");
  for (const bool fused : {false, true}) {
    const Epilogue e = fused ? silu : Epilogue{};
    int pingpong = 0;
    for (const ChoicePtr& c : all_choices(tma_template(DType::kBF16, e))) {
      if (c->name().contains("BLOCK_N64_")) continue;  // NarrowTileOnlyForSkinnyOrDecodeOutputs
      if (c->name().contains("BLOCK_M64_BLOCK_N128_CONSUMERS1_")) continue;  // SmallTileOnly...
      const bool pp = c->name().contains("PINGPONG1");
      const bool twin = !pp && c->name().contains("BLOCK_M128_BLOCK_N128_CONSUMERS2_");
      pingpong += pp;
      // 1024^2: 64 tiles of 128x128, 64 of 64x256; 2048^2: 256 and 256.
      Status few = c->supports(cuda_gemm_problem(1024, 1024, 1024, DType::kBF16, 0, e));
      EXPECT_EQ(few.has_value(), !pp) << c->name();
      if (!few) {
        EXPECT_THAT(few.error().message, HasSubstr("ping-pong cannot pay; expected more than"));
      }
      Status many = c->supports(cuda_gemm_problem(2048, 2048, 8192, DType::kBF16, 0, e));
      EXPECT_EQ(many.has_value(), !twin && (fused || !pp)) << c->name();
      if (!many) {
        EXPECT_THAT(many.error().message,
                    HasSubstr(!twin   ? "ping-pong cannot pay without a fused epilogue"
                              : fused ? "its PINGPONG 1 twin serves them"
                                      : "the cooperative 256x128 and 128x256 configs serve"));
      }
    }
    EXPECT_EQ(pingpong, 4);
    // The cluster's ping-pong configs: 4096^2 has 512 pairs of 128x128 tiles.
    int cluster = 0;
    for (const ChoicePtr& c : all_choices(cluster_template(DType::kBF16, e))) {
      if (!c->name().contains("PINGPONG1")) continue;
      ++cluster;
      EXPECT_EQ(c->supports(cuda_gemm_problem(4096, 4096, 4096, DType::kBF16, 0, e)).has_value(),
                fused)
          << c->name();
    }
    EXPECT_EQ(cluster, 2);
  }
  // Restrided: 2000 x 2001 (N odd) has 256 tiles of 128x128 and of 64x256.
  for (const bool fused : {false, true}) {
    const Epilogue e = fused ? silu : Epilogue{};
    const Problem odd = cuda_gemm_problem(2000, 2001, 1024, DType::kBF16, 0, e);
    int offered = 0, supported = 0;
    for (ChoicePtr& c : cuda_gemm_candidates(DType::kBF16, 0, &odd, false, e, true).candidates) {
      if (c->name().starts_with("restride+") && c->name().contains("PINGPONG1")) {
        supported += c->supports(odd).has_value();
        ++offered;
      }
    }
    EXPECT_EQ(offered, 4);
    EXPECT_EQ(supported, fused ? 4 : 0);
  }
}

// Rows TMA cannot read (N or K not a multiple of 8): on Hopper, "restride+cuda_gemm_tma_restrided"
// candidates copy A and/or B into the launch's workspace with 16-byte row strides, then run the
// TMA GEMM on the copies; not offered where the rows are aligned, nor without Hopper.
TEST(CudaGemmTma, RestridedCandidatesServeUnalignedRows) {
  auto restrided = [](const CudaGemmCandidates& set) {
    std::vector<const Choice*> out;
    for (const ChoicePtr& c : set.candidates) {
      if (c->name().starts_with("restride+cuda_gemm_tma_restrided_bf16_BLOCK_M")) {
        out.push_back(c.get());
      }
    }
    return out;
  };
  const Problem aligned = cuda_gemm_problem(1000, 1000, 1000, DType::kBF16);
  EXPECT_TRUE(restrided(cuda_gemm_candidates(DType::kBF16, 0, &aligned, false, {}, true)).empty());
  const Problem odd = cuda_gemm_problem(777, 1333, 2049, DType::kBF16);
  EXPECT_TRUE(restrided(cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, false)).empty());
  const CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, true);
  std::vector<const Choice*> seq = restrided(set);
  ASSERT_EQ(seq.size(), 17u);
  // Ping-pong: 77 tiles of 128x128 here, fewer than the SMs
  // (PingPongOnlyWhereBlocksTakeTwoTilesWithAnEpilogue); the 64x64 tile: 143 of 64x128, as many as
  // the SMs or more (NarrowTileOnlyFor...).
  std::erase_if(seq, [](const Choice* c) { return c->name().contains("PINGPONG1"); });
  ASSERT_EQ(seq.size(), 13u);
  for (const Choice* c : seq) {
    EXPECT_EQ(c->supports(odd).has_value(), !c->name().contains("BLOCK_N64_")) << c->name();
  }
  // Offsets of A or B off 16 bytes: the copies fix strides, not starts.
  Problem shifted = odd;
  shifted.args[1].tensor.offset = 4;
  Status s = seq.front()->supports(shifted);
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message, HasSubstr("offset"));
}

TEST(CudaGemmTma, RestridedLaunchesShareOneWorkspace) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  TempDir cache("cuda-tma-restride");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_90a"}, cache.path());
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  // K odd and N odd: both copied; A' [777, 2056] at 0, B' [2049, 1336] after it (256-aligned).
  const Problem p = cuda_gemm_problem(777, 1333, 2049, DType::kBF16);
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kBF16, 0, &p, false, {}, true);
  ChoicePtr* seq = nullptr;
  for (ChoicePtr& c : set.candidates) {
    if (c->name().starts_with("restride+")) seq = &c;
  }
  ASSERT_NE(seq, nullptr);
  ASSERT_TRUE((*seq)->compile(*backend).has_value());
  Result<LaunchSpec> spec = (*seq)->launch_spec(p);
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  const std::uint64_t a_bytes = (777ull * 2056 * 2 + 255) / 256 * 256;
  const std::uint64_t bytes = a_bytes + 2049ull * 1336 * 2;
  EXPECT_EQ(spec->entry, "restride");
  EXPECT_EQ(spec->workspace_bytes, bytes);
  EXPECT_EQ(spec->grid[1], 2u);
  ASSERT_EQ(spec->then.size(), 1u);
  const LaunchSpec& gemm = spec->then[0];
  EXPECT_EQ(gemm.entry, "gemm");
  EXPECT_EQ(gemm.workspace_bytes, bytes);
  ASSERT_EQ(gemm.tensor_maps.size(), 2u);
  EXPECT_EQ(gemm.tensor_maps[0].arg, TensorMapDesc::kWorkspace);
  EXPECT_EQ(gemm.tensor_maps[0].workspace_offset, 0u);
  EXPECT_EQ(gemm.tensor_maps[0].row_stride_bytes, 2056u * 2);
  EXPECT_EQ(gemm.tensor_maps[0].dims, (std::array<std::uint64_t, 2>{2049, 777}));
  EXPECT_EQ(gemm.tensor_maps[1].arg, TensorMapDesc::kWorkspace);
  EXPECT_EQ(gemm.tensor_maps[1].workspace_offset, a_bytes);
  EXPECT_EQ(gemm.tensor_maps[1].row_stride_bytes, 1336u * 2);
  EXPECT_EQ(gemm.tensor_maps[1].dims, (std::array<std::uint64_t, 2>{1333, 2049}));
  EXPECT_EQ(chain_workspace_bytes(*spec), bytes);
  // Only K odd: B is read in place.
  const Problem k_odd = cuda_gemm_problem(256, 512, 1001, DType::kBF16);
  Result<LaunchSpec> k_spec = (*seq)->launch_spec(k_odd);
  ASSERT_TRUE(k_spec.has_value()) << k_spec.error().message;
  EXPECT_EQ(k_spec->then[0].tensor_maps[1].arg, 2);
  EXPECT_EQ(k_spec->workspace_bytes, 256ull * 1008 * 2);
}

// Every config in bf16 and f16, and in bf16 with the epilogues cuBLASLt does not fuse.
TEST(CudaGemmTma, CompilesEveryConfigForSm90a) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  std::vector<std::pair<ChoicePtr, Problem>> work;
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (ChoicePtr& c : all_choices(tma_template(dtype))) {
      work.emplace_back(std::move(c), cuda_gemm_problem(1000, 1000, 1000, dtype));
    }
  }
  for (const char* text : {"bias,gelu", "silu", "bias,residual"}) {
    const Epilogue e = parse(text);
    for (ChoicePtr& c : all_choices(tma_template(DType::kBF16, e))) {
      work.emplace_back(std::move(c), cuda_gemm_problem(200, 264, 136, DType::kBF16, 0, e));
    }
  }
  // The restrided variant, built per problem (with the restride kernel in front).
  const Problem odd = cuda_gemm_problem(130, 67, 251, DType::kBF16);
  for (ChoicePtr& c : cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, true).candidates) {
    if (c->name().starts_with("restride+")) work.emplace_back(std::move(c), odd);
  }
  // Clusters, plain and fused.
  for (const char* text : {"", "bias,gelu"}) {
    const Epilogue e = parse(text);
    for (ChoicePtr& c : all_choices(cluster_template(DType::kBF16, e))) {
      work.emplace_back(std::move(c), cuda_gemm_problem(4096, 4096, 4096, DType::kBF16, 0, e));
    }
  }
  EXPECT_EQ(work.size(), 17u * 6 + 4 * 2);
  const std::vector<std::string> failures = compile_all_sm90a(work, [](const LaunchSpec& s) {
    const LaunchSpec& g = s.then.empty() ? s : s.then.back();  // the GEMM after restride
    return g.kind == LaunchKind::kCudaCubin && g.tensor_maps.size() == 2;
  });
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

// On an H100/H200: every config against cuBLAS (and the host epilogue).
class CudaGemmTmaGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto drv = cuda_driver(); !drv) GTEST_SKIP() << "[SKIP] no GPU: " << drv.error().message;
    backend_.emplace(CudaBackend::create({}, cache_dir_.path()));
    ASSERT_TRUE(backend_->has_value()) << (*backend_).error().message;
    if ((**backend_).arch() != "sm_90a") {
      GTEST_SKIP() << "[SKIP] not a Hopper GPU: " << (**backend_).arch();
    }
    options_.bench.budget_ms = 1;
    options_.bench.min_runs = 1;
    options_.bench.max_runs = 3;
    options_.out = nullptr;
    options_.progress = nullptr;
    options_.worker.executable = worker_exe();
  }

  // The 17 candidates of `p` whose names start with `prefix` (the plain TMA ones by default; 4
  // clusters), less those that cannot pay there, verified against cuBLAS.
  void expect_all_ok(DType dtype, const Problem& p, const Epilogue& e = {},
                     const std::string& prefix = "cuda_gemm_tma_") {
    CudaGemmCandidates set = cuda_gemm_candidates(dtype, 0, &p, false, e, true);
    std::vector<ChoicePtr> candidates;
    const bool clusters = prefix.starts_with("cuda_gemm_tma_cluster_");
    for (ChoicePtr& c : set.candidates) {
      if (c->name().starts_with(prefix) &&
          c->name().starts_with("cuda_gemm_tma_cluster_") == clusters) {
        candidates.push_back(std::move(c));
      }
    }
    ASSERT_EQ(candidates.size(), clusters ? 4u : 17u) << p.name;
    // Those whose tiles would be a slab of zeros are not offered (TilesOfEmptyRows...).
    std::erase_if(candidates, [&](const ChoicePtr& c) {
      Status s = c->supports(p);
      if (!s) {
        EXPECT_THAT(s.error().message, HasSubstr("cannot pay")) << c->name();
      }
      return !s;
    });
    ASSERT_FALSE(candidates.empty()) << p.name;
    Selector selector(**backend_, *cache_, options_);
    Result<Selection> sel = selector.select(p, candidates, set.reference.get());
    ASSERT_TRUE(sel.has_value()) << p.name << ": " << sel.error().message;
    for (const CandidateRecord& c : sel->record.candidates) {
      EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
          << p.name << " " << c.name << ": " << outcome_name(c.outcome) << ": " << c.message;
    }
  }

  TempDir cache_dir_{"cuda-tma-gpu"};
  std::optional<Result<CudaBackend>> backend_;
  std::unique_ptr<TuningCache> cache_ = make_memory_cache();
  SelectorOptions options_;
};

TEST_F(CudaGemmTmaGpu, EveryConfigMatchesCublasOnAlignedShapes) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(256, 256, 64, DType::kBF16));
  expect_all_ok(DType::kF16, cuda_gemm_problem(256, 256, 64, DType::kF16));
}

// M, N and K off the tiles (TMA's zero fill, masked stores); more tiles than SMs, so that each
// block walks several (the slot ring and the barriers' phases carry across tiles).
TEST_F(CudaGemmTmaGpu, EveryConfigMatchesCublasOnRaggedAndManyTileShapes) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(200, 264, 136, DType::kBF16));
  expect_all_ok(DType::kBF16, cuda_gemm_problem(1000, 1000, 1000, DType::kBF16));
  expect_all_ok(DType::kBF16, cuda_gemm_problem(3000, 2056, 520, DType::kBF16));
  expect_all_ok(DType::kBF16, cuda_gemm_problem(16, 4096, 512, DType::kBF16));
  // Skinny: 141 tiles of 64x64 (N <= 64), so that a block of the narrow tile takes two.
  expect_all_ok(DType::kBF16, cuda_gemm_problem(9000, 40, 1000, DType::kBF16));
  // Ping-pong (more tiles than SMs, an epilogue fused): 3 k tiles, fewer than the ring's slots,
  // so that one group's next tile starts in the slots of the other's; an odd count of tiles per
  // block; f16.
  const Epilogue silu = parse("silu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(2000, 2056, 136, DType::kBF16, 0, silu), silu);
  expect_all_ok(DType::kF16, cuda_gemm_problem(2100, 2056, 520, DType::kF16, 0, silu), silu);
}

// N or K not a multiple of 8: the restrided candidates (copies, then TMA on them) on odd and
// even-but-unaligned rows, an odd C offset, and a fused epilogue.
TEST_F(CudaGemmTmaGpu, EveryRestridedConfigMatchesCublasOnUnalignedShapes) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(777, 1333, 2049, DType::kBF16), {}, "restride+");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(1000, 1001, 1024, DType::kBF16), {}, "restride+");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(64, 8, 17, DType::kBF16), {}, "restride+");
  expect_all_ok(DType::kF16, cuda_gemm_problem(130, 66, 250, DType::kF16), {}, "restride+");
  Problem c_offset = cuda_gemm_problem(200, 263, 136, DType::kBF16);
  c_offset.args[0].tensor.offset = 1;
  expect_all_ok(DType::kBF16, c_offset, {}, "restride+");
  const Epilogue e = parse("bias,gelu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(130, 67, 251, DType::kBF16, 0, e), e, "restride+");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(2000, 2001, 1024, DType::kBF16), {}, "restride+");
  // K odd, N a multiple of 8: A copied, C's interior tiles stored through the staging area
  // (store_fragments_staged); with C off 16 bytes, pair by pair.
  expect_all_ok(DType::kBF16, cuda_gemm_problem(300, 512, 1001, DType::kBF16), {}, "restride+");
  Problem c_unaligned = cuda_gemm_problem(300, 512, 1001, DType::kBF16);
  c_unaligned.args[0].tensor.offset = 4;
  expect_all_ok(DType::kBF16, c_unaligned, {}, "restride+");
}

// Clusters of two: many pairs of tiles per cluster (the rings' phases carry across them), an odd
// number of tile rows (the last pair's second block computes zeros and stores nothing), ragged
// M, N and K, f16, and a fused epilogue.
TEST_F(CudaGemmTmaGpu, EveryClusterConfigMatchesCublas) {
  const std::string cl = "cuda_gemm_tma_cluster_";
  expect_all_ok(DType::kBF16, cuda_gemm_problem(4096, 4096, 4096, DType::kBF16), {}, cl);
  expect_all_ok(DType::kBF16, cuda_gemm_problem(2900, 4000, 1000, DType::kBF16), {}, cl);
  expect_all_ok(DType::kF16, cuda_gemm_problem(4096, 4352, 520, DType::kF16), {}, cl);
  const Epilogue e = parse("bias,gelu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(4000, 4096, 1032, DType::kBF16, 0, e), e, cl);
}

TEST_F(CudaGemmTmaGpu, EveryConfigMatchesWithFusedEpilogues) {
  for (const char* text : {"bias,gelu", "silu", "bias,residual", "scale=0.5,rowbias"}) {
    const Epilogue e = parse(text);
    expect_all_ok(DType::kBF16, cuda_gemm_problem(520, 776, 264, DType::kBF16, 0, e), e);
    // Ping-pong (272 tiles of 128x128 and of 64x256): the epilogue under the other group's MMAs.
    expect_all_ok(DType::kBF16, cuda_gemm_problem(2000, 2056, 264, DType::kBF16, 0, e), e);
  }
}

}  // namespace
}  // namespace ktune::test

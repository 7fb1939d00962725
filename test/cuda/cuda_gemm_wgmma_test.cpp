// The Hopper GEMM template (kernels/cuda/gemm_wgmma.cu): present only when asked for, its
// search space and launch hook, its supports hook for split-K (the copy widths:
// cuda_gemm_wgmma_align_test.cpp), NVRTC compilation of every config for sm_90a (plain and with a
// fused epilogue) and its refusal of other architectures; on a GPU, every config verified against
// cuBLAS on aligned, ragged, unaligned (each VEC), large and decode shapes (split-K).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/cuda_driver.h"
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

std::shared_ptr<KernelTemplate> wgmma_template(DType dtype, const Epilogue& e = {}) {
  return hopper_template("cuda_gemm_wgmma_", dtype, e);
}

TEST(CudaGemmWgmma, OnlyForHopper) {
  auto names = [](DType d, bool hopper) {
    std::vector<std::string> out;
    for (auto& t : cuda_gemm_templates(d, {}, hopper)) out.push_back(t->desc().name);
    return out;
  };
  EXPECT_EQ(names(DType::kBF16, true),
            (std::vector<std::string>{"cuda_gemm_wgmma_bf16", "cuda_gemm_tma_bf16",
                                      "cuda_gemm_tma_cluster_bf16", "cuda_gemm_simt_bf16"}));
  EXPECT_EQ(names(DType::kF16, true),
            (std::vector<std::string>{"cuda_gemm_wgmma_f16", "cuda_gemm_tma_f16",
                                      "cuda_gemm_tma_cluster_f16", "cuda_gemm_simt_f16"}));
  EXPECT_EQ(names(DType::kF32, true), (std::vector<std::string>{"cuda_gemm_simt_f32"}));
  EXPECT_EQ(names(DType::kBF16, false),
            (std::vector<std::string>{"cuda_gemm_mma_bf16", "cuda_gemm_simt_bf16"}));

  auto count_wgmma = [](const CudaGemmCandidates& set) {
    return std::count_if(set.candidates.begin(), set.candidates.end(), [](const ChoicePtr& c) {
      return c->name().starts_with("cuda_gemm_wgmma_bf16_BLOCK_M");
    });
  };
  const Problem p = cuda_gemm_problem(256, 256, 256, DType::kBF16);
  const std::int64_t configs =
      static_cast<std::int64_t>(all_configs(wgmma_template(DType::kBF16)->space()).size());
  EXPECT_EQ(count_wgmma(cuda_gemm_candidates(DType::kBF16, 1, &p)), 0);
  // The configs of the one VEC that serves the problem (16-byte rows: the 15 split-K ones).
  EXPECT_EQ(count_wgmma(cuda_gemm_candidates(DType::kBF16, 1, &p, false, {}, true)), 15);
  EXPECT_EQ(count_wgmma(cuda_gemm_candidates(DType::kBF16, 1, nullptr, false, {}, true)), configs);
  // The tensor cores serve this problem: the SIMT template stays out with the wgmma one in.
  CudaGemmCandidates hopper = cuda_gemm_candidates(DType::kBF16, 1, &p, false, {}, true);
  EXPECT_TRUE(std::none_of(hopper.candidates.begin(), hopper.candidates.end(),
                           [](const ChoicePtr& c) { return c->name().contains("_simt_"); }));
}

TEST(CudaGemmWgmma, SpaceIsSmallAndWithinTheHardwareLimits) {
  auto t = wgmma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  const std::vector<Config> configs = all_configs(t->space());
  // 15 split-K configs with 16-byte copies (VEC 8: the TMA template serves the rest of those
  // shapes) and 12 without split-K with 4-byte copies (VEC 2).
  EXPECT_EQ(configs.size(), 27u);
  for (const Config& c : configs) {
    EXPECT_EQ(param(c, "VEC") == 8, param(c, "SPLIT_K") > 1) << c.str();
  }
  std::vector<std::int64_t> splits;
  for (const Config& c : configs) {
    const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
    const std::int64_t wgs = param(c, "WARPGROUPS");
    const std::int64_t split = param(c, "SPLIT_K");
    splits.push_back(split);
    EXPECT_TRUE(split == 1 || split == 2 || split == 4 || split == 8) << c.str();
    if (split > 1 || bn == 64) {
      // One m64 row of MMAs per warp group, a 4-deep pipeline; the fp32 reduction buffer (rows
      // padded by 8 floats) fits in the pipeline's shared memory, as the kernel asserts.
      EXPECT_EQ(bm, 64 * wgs) << c.str();
      EXPECT_EQ(param(c, "STAGES"), 4) << c.str();
      EXPECT_LE(bm * (bn + 8) * 4, param(c, "STAGES") * (bm + bn) * 64 * 2) << c.str();
    }
    EXPECT_EQ(param(c, "BLOCK_K"), 64) << c.str();
    EXPECT_TRUE(bn == 64 || bn == 128 || bn == 256) << c.str();
    EXPECT_TRUE(wgs == 1 || wgs == 2) << c.str();
    EXPECT_EQ(bm % (64 * wgs), 0) << c.str();
    EXPECT_LE((bm / (64 * wgs)) * bn / 2, 128) << c.str();  // accumulators per thread
    EXPECT_GE(param(c, "STAGES"), 3) << c.str();
    const std::int64_t smem = param(c, "STAGES") * (bm + bn) * 64 * 2 + 1024;
    EXPECT_LE(smem, kCudaGemmMaxSharedBytes) << c.str();
  }
  for (std::int64_t split : {1, 2, 4, 8}) {
    EXPECT_GE(std::count(splits.begin(), splits.end(), split), 3) << "SPLIT_K " << split;
  }
}

// A tile row with a whole m64 slab past M (M <= BLOCK_M - 64) only multiplies zeros: BLOCK_M 64
// on one warp group serves the same row of tiles. Filtered before compiling.
TEST(CudaGemmWgmma, TilesOfEmptyRowsCannotPay) {
  auto t = wgmma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  // 4-byte rows (N = 4094): the configs without a split (VEC 2) serve them.
  const Problem m32 = cuda_gemm_problem(32, 4094, 4096, DType::kBF16);
  const Problem m64 = cuda_gemm_problem(64, 4094, 4096, DType::kBF16);  // 64 <= 128 - 64
  const Problem m65 = cuda_gemm_problem(65, 4094, 4096, DType::kBF16);
  int served = 0;
  for (const Config& c : all_configs(t->space())) {
    if (param(c, "SPLIT_K") > 1) continue;  // SplitKOnlyWhereItCanPay
    ChoicePtr choice = t->choice(c);
    const std::int64_t bm = param(c, "BLOCK_M");
    for (const Problem* p : {&m32, &m64}) {
      Status s = choice->supports(*p);
      EXPECT_EQ(s.has_value(), bm == 64) << c.str() << " " << p->name;
      if (bm > 64 && !s) {
        EXPECT_THAT(s.error().message, HasSubstr(fmt::format("BLOCK_M {} cannot pay", bm)));
        EXPECT_THAT(s.error().message, HasSubstr(fmt::format("expected M > {}", bm - 64)));
      }
      served += s.has_value();
    }
    EXPECT_EQ(choice->supports(m65).has_value(), bm <= 128) << c.str();
  }
  EXPECT_GT(served, 0);
}

TEST(CudaGemmWgmma, LaunchCoversTheMatrix) {
  auto t = wgmma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{1000, 1000, 1000},
                         {4096, 4096, 4096},
                         {1, 8, 8},
                         {0, 64, 64}}) {
    const Problem p = cuda_gemm_problem(m, n, k, DType::kBF16);
    for (const Config& c : all_configs(t->space())) {
      Result<LaunchGeometry> g = t->desc().launch(c, p);
      ASSERT_TRUE(g.has_value()) << g.error().message;
      const std::int64_t bm = param(c, "BLOCK_M"), bn = param(c, "BLOCK_N");
      const std::int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
      const std::int64_t split = param(c, "SPLIT_K");
      // One cluster of SPLIT_K blocks per tile (an empty output: one cluster, which exits).
      EXPECT_EQ(g->grid[0], static_cast<std::uint64_t>(std::max<std::int64_t>(tiles, 1) * split))
          << c.str();
      EXPECT_EQ(g->grid[1], 1u);
      EXPECT_EQ(g->block[0], static_cast<std::uint64_t>(param(c, "WARPGROUPS") * 128));
      const std::int64_t pipeline = param(c, "STAGES") * (bm + bn) * 64 * 2;
      const std::int64_t reduction = split > 1 ? bm * (bn + 8) * 4 : 0;
      EXPECT_EQ(g->shared_bytes, static_cast<std::uint32_t>(std::max(pipeline, reduction) + 1024))
          << c.str();
    }
  }
}

// Split-K only where the tiles alone leave SMs (132) idle, the next smaller split too, and K
// holds 2 tiles per slice: the decode shapes split, square ones do not.
TEST(CudaGemmWgmma, SplitKOnlyWhereItCanPay) {
  auto t = wgmma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  // The split configs that serve `p`, as "BLOCK_MxBLOCK_N/SPLIT_K".
  auto splits_for = [&](const Problem& p) {
    std::vector<std::string> out;
    for (const Config& c : all_configs(t->space())) {
      if (param(c, "SPLIT_K") == 1 || !t->choice(c)->supports(p)) continue;
      out.push_back(
          fmt::format("{}x{}/{}", param(c, "BLOCK_M"), param(c, "BLOCK_N"), param(c, "SPLIT_K")));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;
  auto sorted = [](V v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  // 16x4096x4096: 32 tiles of 64x128 (64 blocks at split 2, 128 at 4, 256 at 8), 16 of 64x256,
  // 64 of 64x64 (BLOCK_N 64: 32 tiles of 128 columns); BLOCK_M 128 leaves a whole m64 slab
  // empty (TilesOfEmptyRowsCannotPay).
  EXPECT_EQ(splits_for(cuda_gemm_problem(16, 4096, 4096, DType::kBF16)),
            sorted({"64x128/2", "64x128/4", "64x128/8", "64x256/2", "64x256/4", "64x256/8",
                    "64x64/2", "64x64/4"}));
  // 128x14336x4096: 112 tiles of 64x128 x 2 rows = 224 (none), 56 x 2 = 112 of 64x256 (split
  // 2), 112 of 128x128 (split 2), 224 of 128x64 (none), 64x64 not at all.
  EXPECT_EQ(splits_for(cuda_gemm_problem(128, 14336, 4096, DType::kBF16)),
            sorted({"128x128/2", "64x256/2"}));
  // 8192x32x8192: 128 tiles of 64 rows, 64 of 128.
  EXPECT_EQ(splits_for(cuda_gemm_problem(8192, 32, 8192, DType::kBF16)),
            sorted({"128x128/2", "128x128/4", "64x128/2", "64x256/2", "128x64/2", "128x64/4",
                    "64x64/2"}));
  // Enough tiles already, or too little K for 2 tiles per slice.
  EXPECT_EQ(splits_for(cuda_gemm_problem(4096, 4096, 4096, DType::kBF16)), V{});
  EXPECT_EQ(splits_for(cuda_gemm_problem(16, 4096, 511, DType::kBF16)).size(), 0u);
  EXPECT_EQ(splits_for(cuda_gemm_problem(16, 4096, 512, DType::kBF16)),
            sorted({"64x128/2", "64x128/4", "64x256/2", "64x256/4", "64x64/2", "64x64/4"}));
  // 65 rows: BLOCK_M 128 serves again (and BLOCK_M 64 needs two tile rows).
  EXPECT_EQ(splits_for(cuda_gemm_problem(65, 4096, 512, DType::kBF16)),
            sorted({"128x128/2", "128x128/4", "128x64/2", "128x64/4", "64x128/2", "64x128/4",
                    "64x256/2", "64x256/4", "64x64/2"}));

  // The reasons, naming the template and the numbers.
  Config split8;
  for (const Config& c : all_configs(t->space())) {
    if (param(c, "SPLIT_K") == 8 && param(c, "BLOCK_N") == 128 && param(c, "BLOCK_M") == 64) {
      split8 = c;
    }
  }
  ASSERT_FALSE(split8.names.empty());
  Status many = t->choice(split8)->supports(cuda_gemm_problem(4096, 4096, 4096, DType::kBF16));
  ASSERT_FALSE(many.has_value());
  EXPECT_THAT(many.error().message, HasSubstr("cuda_gemm_wgmma_bf16"));
  EXPECT_THAT(many.error().message, HasSubstr("split-K 8 cannot pay"));
  EXPECT_THAT(many.error().message, HasSubstr("got 2048 tiles of 64x128"));
  Status short_k = t->choice(split8)->supports(cuda_gemm_problem(16, 4096, 1000, DType::kBF16));
  ASSERT_FALSE(short_k.has_value());
  EXPECT_THAT(short_k.error().message, HasSubstr("expected K >= 1024"));
  EXPECT_THAT(short_k.error().message, HasSubstr("K=1000"));

  // BLOCK_N 64: narrow outputs or few tiles only.
  Config narrow;
  for (const Config& c : all_configs(t->space())) {
    if (param(c, "SPLIT_K") == 2 && param(c, "BLOCK_N") == 64 && param(c, "BLOCK_M") == 64) {
      narrow = c;
    }
  }
  ASSERT_FALSE(narrow.names.empty());
  EXPECT_TRUE(t->choice(narrow)->supports(cuda_gemm_problem(8192, 32, 8192, DType::kBF16)));
  EXPECT_TRUE(t->choice(narrow)->supports(cuda_gemm_problem(16, 4096, 4096, DType::kBF16)));
  Status wide = t->choice(narrow)->supports(cuda_gemm_problem(4096, 4096, 4096, DType::kBF16));
  ASSERT_FALSE(wide.has_value());
  EXPECT_THAT(wide.error().message, HasSubstr("BLOCK_N 64 cannot pay"));
  EXPECT_THAT(wide.error().message, HasSubstr("got N=4096 and 2048 tiles"));

  // The launch: one cluster of 8 blocks per tile, 32 tiles.
  Result<LaunchGeometry> g =
      t->desc().launch(split8, cuda_gemm_problem(16, 4096, 4096, DType::kBF16));
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->grid[0], 32u * 8u);
  EXPECT_EQ(g->block[0], 128u);
  EXPECT_EQ(g->shared_bytes, 4u * (64 + 128) * 64 * 2 + 1024);
}

// A config's copy width (its VEC parameter).
std::int64_t vec_of(const Choice& c) {
  for (const auto& [name, value] : c.params()) {
    if (name == "VEC") return std::stoll(value);
  }
  return 0;
}

// 40 rows, few tiles and K for 8 slices, with rows aligned to `vec` elements exactly.
Problem aligned_to(std::int64_t vec, DType dtype, const Epilogue& e = {}) {
  const std::int64_t extra = vec == 8 ? 0 : 2;
  return cuda_gemm_problem(40, 520 + extra, 3000 + extra, dtype, 0, e);
}

// Every config in bf16 and with a fused "bias,gelu", and the VEC 8 ones in f16 (the copies do
// not depend on the dtype): about 0.4 s of NVRTC each. Each on a problem it serves (few tiles, K
// for 8 slices, rows of its alignment), so that launch_spec checks too.
TEST(CudaGemmWgmma, CompilesEveryConfigForSm90a) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  std::vector<std::pair<ChoicePtr, Problem>> work;
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (ChoicePtr& c : all_choices(wgmma_template(dtype))) {
      const std::int64_t vec = vec_of(*c);
      if (dtype == DType::kF16 && vec != 8) continue;
      work.emplace_back(std::move(c), aligned_to(vec, dtype));
    }
  }
  const Epilogue e = parse("bias,gelu");
  for (ChoicePtr& c : all_choices(wgmma_template(DType::kBF16, e))) {
    const std::int64_t vec = vec_of(*c);
    work.emplace_back(std::move(c), aligned_to(vec, DType::kBF16, e));
  }
  EXPECT_EQ(work.size(), 27u + 15u + 27u);
  const std::vector<std::string> failures = compile_all_sm90a(work, [](const LaunchSpec& s) {
    return s.kind == LaunchKind::kCudaCubin && s.entry == "gemm";
  });
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
}

TEST(CudaGemmWgmma, RefusesToCompileForOtherArchitectures) {
  if (nvrtc_missing()) GTEST_SKIP() << "[SKIP] NVRTC is not installed";
  TempDir cache("cuda-wgmma-sm80");
  Result<CudaBackend> backend = CudaBackend::create({.arch = "sm_80"}, cache.path());
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  std::vector<ChoicePtr> choices = all_choices(wgmma_template(DType::kBF16));
  ASSERT_FALSE(choices.empty());
  Status s = choices.front()->compile(*backend);
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message, HasSubstr("needs sm_90a"));
}

// On a GPU (an H100 for the template to be offered at all): every config against cuBLAS.
class CudaGemmWgmmaGpu : public ::testing::Test {
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

  // Runs the wgmma candidates of `p` that serve it and whose names contain `only` (all where
  // empty) with the candidate set's reference; expects each of them verified, and at least
  // `min_split` split-K ones among them.
  void expect_all_ok(DType dtype, const Problem& p, const Epilogue& e = {},
                     const std::string& only = "", int min_split = 0) {
    CudaGemmCandidates set = cuda_gemm_candidates(dtype, 0, &p, false, e, true);
    std::vector<ChoicePtr> candidates;
    int split = 0;
    for (ChoicePtr& c : set.candidates) {
      if (c->name().starts_with("cuda_gemm_wgmma_") && c->name().contains(only) && c->supports(p)) {
        split += c->name().contains("SPLIT_K1") ? 0 : 1;
        candidates.push_back(std::move(c));
      }
    }
    ASSERT_FALSE(candidates.empty()) << p.name;
    EXPECT_GE(split, min_split) << p.name << ": split-K configs that serve it";
    Selector selector(**backend_, *cache_, options_);
    Result<Selection> sel = selector.select(p, candidates, set.reference.get());
    ASSERT_TRUE(sel.has_value()) << p.name << ": " << sel.error().message;
    for (const CandidateRecord& c : sel->record.candidates) {
      // Abandoned (issue 19): verified, then measured no further as clearly slower.
      EXPECT_TRUE(c.outcome == Outcome::kOk || c.outcome == Outcome::kAbandoned)
          << p.name << " " << c.name << ": " << c.message;
    }
  }

  TempDir cache_dir_{"cuda-wgmma-gpu"};
  std::optional<Result<CudaBackend>> backend_;
  std::unique_ptr<TuningCache> cache_ = make_memory_cache();
  SelectorOptions options_;
};

TEST_F(CudaGemmWgmmaGpu, EveryConfigMatchesCublasOnAnAlignedShape) {
  // 16-byte rows: the split-K configs only (the TMA template serves the rest); K for 4 slices.
  expect_all_ok(DType::kBF16, cuda_gemm_problem(256, 256, 512, DType::kBF16), {}, "", 1);
  expect_all_ok(DType::kF16, cuda_gemm_problem(256, 256, 512, DType::kF16), {}, "", 1);
}

// M, N and K all off the tiles: zero-filled rows, columns and K tail, guarded stores.
TEST_F(CudaGemmWgmmaGpu, EveryConfigMatchesCublasOnARaggedShape) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(200, 264, 1000, DType::kBF16), {}, "", 1);
  const Epilogue e = parse("bias,relu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(200, 264, 1000, DType::kBF16, 0, e), e, "", 1);
}

// N or K not multiples of 8 but even: the 4-byte cp.async configs (VEC 2), with even element
// offsets (rows start on 4-byte boundaries that are not 16-byte ones) and a fused epilogue.
TEST_F(CudaGemmWgmmaGpu, EveryConfigMatchesCublasOnUnalignedShapes) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(130, 66, 250, DType::kBF16));
  expect_all_ok(DType::kBF16, cuda_gemm_problem(64, 8, 18, DType::kBF16));
  expect_all_ok(DType::kF16, cuda_gemm_problem(200, 262, 138, DType::kF16));
  expect_all_ok(DType::kBF16, cuda_gemm_problem(778, 1334, 2050, DType::kBF16));
  Problem offsets = cuda_gemm_problem(130, 66, 250, DType::kBF16);
  offsets.args[0].tensor.offset = 2;
  offsets.args[1].tensor.offset = 6;
  offsets.args[2].tensor.offset = 4;
  expect_all_ok(DType::kBF16, offsets);
  const Epilogue e = parse("bias,relu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(130, 66, 250, DType::kBF16, 0, e), e);
}

// Many tiles with 4-byte copies (K % 8 == 2): the pipeline over 64 K tiles.
TEST_F(CudaGemmWgmmaGpu, OneConfigMatchesCublasOnALargeUnalignedShape) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(4096, 4096, 4090, DType::kBF16), {},
                "BLOCK_M128_BLOCK_N256_BLOCK_K64_WARPGROUPS2_STAGES4");
}

// Decode shapes, where split-K serves (SplitKOnlyWhereItCanPay): the clusters' reduction through
// distributed shared memory against cuBLAS, split 2, 4 and 8 at 16 rows, 2 on the others; N = 32
// loads the columns past N as zeros.
TEST_F(CudaGemmWgmmaGpu, EveryConfigMatchesCublasOnDecodeShapes) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(16, 4096, 4096, DType::kBF16), {}, "", 8);
  expect_all_ok(DType::kBF16, cuda_gemm_problem(128, 14336, 4096, DType::kBF16), {}, "", 2);
  expect_all_ok(DType::kBF16, cuda_gemm_problem(8192, 32, 8192, DType::kBF16), {}, "", 7);
  expect_all_ok(DType::kF16, cuda_gemm_problem(16, 4096, 4096, DType::kF16), {}, "", 8);
}

// Split-K off every tile: 100 rows (64 + 36, or 100 of 128), N = 520 (a partial column tile), and
// 47 K tiles with a 56-element tail, split unevenly (47 / 8: slices of 5 and 6); then with a fused
// epilogue, which must see the full sum (GELU is not linear).
TEST_F(CudaGemmWgmmaGpu, EveryConfigMatchesCublasOnARaggedSplitShape) {
  expect_all_ok(DType::kBF16, cuda_gemm_problem(100, 520, 3000, DType::kBF16), {}, "", 15);
  const Epilogue e = parse("bias,gelu");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(100, 520, 3000, DType::kBF16, 0, e), e, "", 15);
  const Epilogue r = parse("rowbias,silu,residual");
  expect_all_ok(DType::kBF16, cuda_gemm_problem(16, 4096, 4096, DType::kBF16, 0, r), r, "", 8);
}

}  // namespace
}  // namespace ktune::test

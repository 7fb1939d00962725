// The wgmma template's copy widths (VEC, kernels/cuda/gemm_wgmma.cu) against the rows'
// alignment (src/ops/gemm_align.h): exactly one VEC serves each shape, the widest its N, K and
// offsets allow, so that nothing is compiled that cannot serve it or that a wider one beats.
// No GPU needed; the GPU checks of the VEC variants are in cuda_gemm_wgmma_test.cpp.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>

#include "hopper_template_support.h"
#include "ktune/ops/cuda_gemm.h"
#include "ops/gemm_align.h"
#include "support/all_choices.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<KernelTemplate> wgmma_template(DType dtype, const Epilogue& e = {}) {
  return hopper_template("cuda_gemm_wgmma_", dtype, e);
}

std::int64_t vec_of(const ChoicePtr& c) {
  const std::string& name = c->name();
  const std::size_t at = name.rfind("_VEC");
  KTUNE_CHECK(at != std::string::npos);
  return std::stoll(name.substr(at + 4));
}

// The problem with the given element offsets of C, A and B.
Problem with_offsets(Problem p, std::int64_t c, std::int64_t a, std::int64_t b) {
  p.args[0].tensor.offset = c;
  p.args[1].tensor.offset = a;
  p.args[2].tensor.offset = b;
  return p;
}

TEST(CudaGemmWgmmaAlign, RowAlignmentIsTheWidestCopyEveryRowAllows) {
  auto align = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gemm_row_alignment(cuda_gemm_problem(m, n, k, DType::kBF16));
  };
  EXPECT_EQ(align(1000, 1000, 1000), 8);
  EXPECT_EQ(align(777, 1333, 2048), 1);  // N odd
  EXPECT_EQ(align(777, 1336, 2049), 1);  // K odd
  EXPECT_EQ(align(130, 66, 256), 2);     // N % 8 == 2
  EXPECT_EQ(align(130, 64, 250), 2);     // K % 8 == 2
  EXPECT_EQ(align(3, 64, 64), 8);        // M does not matter: rows of A and C start at r * K, r * N
  const Problem p = cuda_gemm_problem(64, 64, 64, DType::kBF16);
  EXPECT_EQ(gemm_row_alignment(with_offsets(p, 8, 16, 24)), 8);
  EXPECT_EQ(gemm_row_alignment(with_offsets(p, 2, 0, 0)), 2);  // C's offset counts too
  EXPECT_EQ(gemm_row_alignment(with_offsets(p, 0, 4, 0)), 2);
  EXPECT_EQ(gemm_row_alignment(with_offsets(p, 0, 0, 1)), 1);
  Problem float_k = p;
  float_k.args[5].scalar = 64.0;  // refused by the supports hook; here just the narrowest
  EXPECT_EQ(gemm_row_alignment(float_k), 1);
}

// Each shape: only the configs of one VEC can support it (the 12 of VEC 2; of VEC 8, the
// split-K ones where a split pays; none for odd rows), and the others say which alignment they
// found and what it needs.
TEST(CudaGemmWgmmaAlign, ExactlyOneVecServesEachShape) {
  auto t = wgmma_template(DType::kBF16);
  ASSERT_NE(t, nullptr);
  const std::vector<ChoicePtr> choices = all_choices(t);
  // 256 rows or more where VEC 2 serves: no tile has a slab of empty rows
  // (CudaGemmWgmma.TilesOfEmptyRowsCannotPay).
  const Problem base = cuda_gemm_problem(256, 64, 64, DType::kBF16);
  struct Case {
    const char* what;
    Problem problem;
    std::int64_t vec;
    const char* shown;  // part of the refusal of the other VECs
  };
  const Case cases[] = {
      {"aligned", cuda_gemm_problem(1000, 1000, 1000, DType::kBF16), 8, "N=1000 K=1000"},
      {"any M", cuda_gemm_problem(999, 8, 8, DType::kBF16), 8, "N=8 K=8"},
      {"N odd", cuda_gemm_problem(777, 1333, 2048, DType::kBF16), 1, "N=1333"},
      {"K odd", cuda_gemm_problem(64, 64, 1001, DType::kBF16), 1, "K=1001"},
      {"K % 8 == 2", cuda_gemm_problem(256, 64, 1002, DType::kBF16), 2, "K=1002"},
      {"N % 8 == 4", cuda_gemm_problem(256, 1004, 64, DType::kBF16), 2, "N=1004"},
      {"A offset 4", with_offsets(base, 0, 4, 0), 2, "A=4"},
      {"B offset 1", with_offsets(base, 0, 0, 1), 1, "B=1"},
      {"C offset 2", with_offsets(base, 2, 0, 0), 2, "C=2"},
      {"offsets 8", with_offsets(base, 8, 8, 16), 8, "C=8 A=8 B=16"},
  };
  for (const Case& c : cases) {
    std::size_t served = 0;
    for (const ChoicePtr& choice : choices) {
      Status s = choice->supports(c.problem);
      if (vec_of(choice) == c.vec) {
        // VEC 8 configs are the split-K ones, which also need few tiles and a long K
        // (CudaGemmWgmma.SplitKOnlyWhereItCanPay); the narrower ones serve every shape.
        // (VEC 2 and 1: only BLOCK_N 64 may be refused, on shapes with many tiles.)
        if (c.vec != 8 && !s) {
          EXPECT_THAT(s.error().message, HasSubstr("BLOCK_N 64 cannot pay")) << c.what;
        }
        served += s.has_value() ? 1 : 0;
        continue;
      }
      ASSERT_FALSE(s.has_value()) << c.what << ": " << choice->name();
      EXPECT_THAT(s.error().message, HasSubstr("cuda_gemm_wgmma_bf16")) << c.what;
      EXPECT_THAT(s.error().message, HasSubstr(c.shown)) << c.what;
      EXPECT_THAT(s.error().message,
                  HasSubstr(c.vec == 1 ? std::string("need even rows (no VEC copies odd ones)")
                                       : fmt::format("need VEC={}", c.vec)))
          << c.what;
      EXPECT_THAT(s.error().message, HasSubstr(fmt::format("got VEC={}", vec_of(choice))))
          << c.what;
    }
    if (c.vec == 2) {
      EXPECT_GE(served, 11u) << c.what;
    }
    if (c.vec == 1) {
      EXPECT_EQ(served, 0u) << c.what;
    }
  }
  for (const ChoicePtr& choice : choices) {  // the dtype still decides first
    EXPECT_FALSE(choice->supports(cuda_gemm_problem(64, 64, 64, DType::kF16)).has_value());
  }
}

// On Hopper a shape with even rows is served by the tensor cores (VEC 2, the only wgmma configs
// in its candidate set), so the SIMT template stays out; odd rows have no wgmma config (VEC 8
// needs 16-byte rows, VEC 2 4-byte ones): SIMT serves them with, on Hopper, the restrided TMA
// candidates.
TEST(CudaGemmWgmmaAlign, EvenRowsRunOnTheTensorCoresOfHopperOddRowsOnSimt) {
  auto count = [&](const CudaGemmCandidates& set, std::string_view kind, const Problem& p) {
    return std::count_if(set.candidates.begin(), set.candidates.end(), [&](const ChoicePtr& c) {
      return c->name().contains(kind) && c->supports(p).has_value();
    });
  };
  const Problem even = cuda_gemm_problem(777, 1334, 2050, DType::kBF16);
  const CudaGemmCandidates hopper = cuda_gemm_candidates(DType::kBF16, 0, &even, false, {}, true);
  EXPECT_GT(count(hopper, "_wgmma_", even), 0);
  EXPECT_TRUE(
      std::all_of(hopper.candidates.begin(), hopper.candidates.end(), [](const ChoicePtr& c) {
        return !c->name().contains("_wgmma_") || c->name().ends_with("_VEC2");
      }));
  EXPECT_EQ(count(hopper, "cuda_gemm_tma_bf16_", even), 0);
  EXPECT_EQ(count(hopper, "restride+cuda_gemm_tma_restrided_", even), 12);
  EXPECT_EQ(count(hopper, "_simt_", even), 0);

  const Problem odd = cuda_gemm_problem(777, 1333, 2049, DType::kBF16);
  for (bool on_hopper : {true, false}) {
    const CudaGemmCandidates set =
        cuda_gemm_candidates(DType::kBF16, 0, &odd, false, {}, on_hopper);
    EXPECT_EQ(count(set, "_wgmma_", odd), 0);
    EXPECT_EQ(count(set, "cuda_gemm_tma_bf16_", odd), 0);
    // On Hopper the TMA GEMM on copies of A and B with 16-byte row strides (cuda_gemm_tma_test).
    EXPECT_EQ(count(set, "restride+cuda_gemm_tma_restrided_", odd), on_hopper ? 12 : 0);
    EXPECT_EQ(count(set, "_mma_", odd), 0);
    EXPECT_GT(count(set, "_simt_", odd), 0);
  }
}

}  // namespace
}  // namespace ktune::test

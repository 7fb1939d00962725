// CudaCompileAhead (src/tuning/cuda_compile_ahead.h): the plan runs on a backend for the
// predicted device with that device's hint set, its candidates compile into the code cache, and
// the tuning's backend, opened afterwards on the same folder, finds each one compiled. NVRTC
// only: no GPU needed.
#include "tuning/cuda_compile_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/cuda_predict.h"
#include "ktune/ops/cuda_gemm.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

CudaDeviceInfo h100(int sms) {
  CudaDeviceInfo d;
  d.name = "NVIDIA H100";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = sms;
  d.driver_version = 13000;
  return d;
}

// The f32 SIMT template's candidates for a small problem: quick to compile.
std::vector<ChoicePtr> simt_templates(const Problem& p) {
  CudaGemmCandidates set = cuda_gemm_candidates(DType::kF32, 0, &p, true, {}, false);
  std::vector<ChoicePtr> out;
  for (ChoicePtr& c : set.candidates) {
    if (c->kind() == Choice::Kind::kTemplate && c->supports(p)) out.push_back(std::move(c));
  }
  return out;
}

TEST(CudaCompileAhead, CompilesThePlanForThePredictedDeviceIntoTheCodeCache) {
  TempDir dir("compile-ahead");
  const Problem p = cuda_gemm_problem(64, 64, 64, DType::kF32);
  std::atomic<int> plans{0};
  std::string planned_arch;
  int hinted_sms = 0;
  std::size_t planned = 0;
  {
    CudaCompileAhead ahead(h100(114), {}, dir.path(), 2, [&](const CudaBackend& b) {
      ++plans;
      planned_arch = b.arch();
      const CudaDeviceInfo* hint = cuda_device_hint(0);
      hinted_sms = hint ? hint->sm_count : 0;
      std::vector<ChoicePtr> todo = simt_templates(p);
      planned = todo.size();
      return todo;
    });
    ahead.wait();
  }
  ASSERT_EQ(plans, 1);
  EXPECT_EQ(planned_arch, "sm_90a");
  EXPECT_EQ(hinted_sms, 114) << "the plan ran without the predicted device's hint";
  EXPECT_EQ(cuda_device_hint(0), nullptr) << "the hint leaked into this thread";
  ASSERT_GT(planned, 0u);

  // The tuning's backend, for the same arch and folder, finds every one compiled.
  Result<CudaBackend> tuning = CudaBackend::create({.arch = "sm_90a"}, dir.path());
  if (!tuning && tuning.error().code == ErrorCode::kUnavailable) {
    GTEST_SKIP() << "[SKIP] NVRTC is not installed: " << tuning.error().message;
  }
  ASSERT_TRUE(tuning) << tuning.error().message;
  std::vector<ChoicePtr> again = simt_templates(p);
  ASSERT_EQ(again.size(), planned);
  for (ChoicePtr& c : again) {
    ASSERT_TRUE(c->compile(*tuning)) << c->name();
    ASSERT_NE(c->artifact(), nullptr);
    EXPECT_TRUE(c->artifact()->from_cache) << c->name() << " was compiled again";
  }
}

TEST(CudaCompileAhead, WithoutAPredictionPlansNothing) {
  TempDir dir("compile-ahead-none");
  bool planned = false;
  {
    CudaCompileAhead ahead(std::nullopt, {}, dir.path(), 2, [&](const CudaBackend&) {
      planned = true;
      return std::vector<ChoicePtr>{};
    });
    ahead.wait();
  }
  EXPECT_FALSE(planned);
}

// What the CLI says with --verbose when the driver opens another device than NVML predicted.
TEST(CudaCompileAhead, SaysWhenTheDriverOpenedAnotherDevice) {
  TempDir dir("compile-ahead-mismatch");
  CudaCompileAhead ahead(h100(132), {}, dir.path(), 1,
                         [](const CudaBackend&) { return std::vector<ChoicePtr>{}; });
  ahead.wait();
  ASSERT_TRUE(ahead.device());
  EXPECT_EQ(ahead.mismatch(h100(132)), "");
  const std::string sms = ahead.mismatch(h100(114));
  EXPECT_NE(sms.find("132 SMs, from NVML"), std::string::npos) << sms;
  EXPECT_NE(sms.find("114 SMs"), std::string::npos) << sms;
  CudaDeviceInfo ampere = h100(132);
  ampere.cc_major = 8;
  EXPECT_NE(ahead.mismatch(ampere).find("sm_80"), std::string::npos);
  const CudaCompileAhead none(std::nullopt, {}, dir.path(), 1,
                              [](const CudaBackend&) { return std::vector<ChoicePtr>{}; });
  EXPECT_FALSE(none.device());
  EXPECT_EQ(none.mismatch(h100(114)), "") << "nothing compiled ahead, nothing to say";
}

// Destroyed at once (the tuning failed before it needed them): the compiles not started are
// dropped, and the destructor returns once the running ones end.
TEST(CudaCompileAhead, DestroyedEarlyDropsWhatHasNotStarted) {
  TempDir dir("compile-ahead-early");
  const Problem p = cuda_gemm_problem(64, 64, 64, DType::kF32);
  std::size_t planned = 0;
  {
    CudaCompileAhead ahead(h100(132), {}, dir.path(), 1, [&](const CudaBackend&) {
      std::vector<ChoicePtr> todo = simt_templates(p);
      planned = todo.size();
      return todo;
    });
  }
  // One thread: at most the one compile running when it was destroyed.
  EXPECT_LE(count_artifacts(dir.path(), ".cubin"), 1);
  if (planned > 0) {
    EXPECT_LT(count_artifacts(dir.path(), ".cubin"), static_cast<int>(planned));
  }
}

}  // namespace
}  // namespace ktune::test

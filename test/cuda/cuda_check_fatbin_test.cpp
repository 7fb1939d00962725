// The checking kernels' fatbin that nvcc compiled with the build (CudaChecker::load, what the CUDA
// device uses when it opens) loads on this GPU and does what the NVRTC-compiled cubin does (the
// fallback, CudaChecker::create): the same bytes from fill() and poison() for every dtype and data
// set, and the same verdicts from equal(), sound() and outputs_pass(). Skipped without a GPU or
// without nvcc at build time.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "device/cuda/cuda_check.h"
#include "device/cuda/cuda_check_embedded.h"
#include "gpu_stream_fixture.h"
#include "ktune/core/tolerance.h"
#include "ktune/tensor/tensor_fill.h"

namespace ktune {
namespace {

class CudaCheckFatbin : public test::GpuStreamTest {
 protected:
  std::vector<std::byte> read(CUdeviceptr p, std::size_t bytes) {
    std::vector<std::byte> out(bytes);
    EXPECT_EQ(cu_->CtxSynchronize(), CUDA_SUCCESS);
    EXPECT_EQ(cu_->MemcpyDtoH(out.data(), p, bytes), CUDA_SUCCESS);
    return out;
  }
};

TEST_F(CudaCheckFatbin, LoadsOnThisGpuAndAgreesWithTheNvrtcCubin) {
  if (cuda_check_fatbin().empty()) GTEST_SKIP() << "[SKIP] this build embedded no fatbin (no nvcc)";
  Result<CudaDeviceInfo> info = cuda_device_info(0);
  ASSERT_TRUE(info) << info.error().message;
  Result<std::unique_ptr<CudaChecker>> loaded = CudaChecker::load(*cu_, info->sm_count);
  ASSERT_TRUE(loaded) << loaded.error().message;
  Result<std::unique_ptr<CudaChecker>> compiled =
      CudaChecker::create(*cu_, info->arch(), info->sm_count);
  ASSERT_TRUE(compiled) << compiled.error().message;
  CudaChecker& fatbin = **loaded;
  CudaChecker& nvrtc = **compiled;

  const std::int64_t n = 100003;  // a partial block
  for (DType dtype : kAllDTypes) {
    for (DataSet set : {DataSet::kUniform, DataSet::kStress}) {
      SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " " << data_set_name(set));
      // A poisoned prefix of 5 elements, then n filled.
      const std::size_t size = dtype_size(dtype);
      const std::size_t bytes = (static_cast<std::size_t>(n) + 5) * size;
      CUdeviceptr a = 0, b = 0;
      ASSERT_EQ(cu_->MemAlloc(&a, bytes), CUDA_SUCCESS);
      ASSERT_EQ(cu_->MemAlloc(&b, bytes), CUDA_SUCCESS);
      ASSERT_TRUE(fatbin.poison(a, bytes, dtype, stream_));
      ASSERT_TRUE(fatbin.fill(a + 5 * size, dtype, n, 77, set, stream_));
      ASSERT_TRUE(nvrtc.poison(b, bytes, dtype, stream_));
      ASSERT_TRUE(nvrtc.fill(b + 5 * size, dtype, n, 77, set, stream_));
      EXPECT_EQ(read(a, bytes), read(b, bytes));

      Result<bool> same = fatbin.equal(a, b, bytes, stream_);
      ASSERT_TRUE(same) << same.error().message;
      EXPECT_TRUE(*same);
      if (CudaChecker::screens(dtype)) {
        const CUdeviceptr values = a + 5 * size;
        double sum_fatbin = 0, sum_nvrtc = 0;
        Result<bool> sound = fatbin.sound(dtype, values, n, stream_, &sum_fatbin);
        ASSERT_TRUE(sound) << sound.error().message;
        EXPECT_TRUE(*sound);
        ASSERT_TRUE(nvrtc.sound(dtype, values, n, stream_, &sum_nvrtc));
        EXPECT_GT(sum_fatbin, 0);
        EXPECT_NEAR(sum_fatbin, sum_nvrtc, 1e-9 * sum_nvrtc);  // atomics add in any order
        Result<bool> pass =
            fatbin.outputs_pass(dtype, values, b + 5 * size, n, Tolerance{}, stream_);
        ASSERT_TRUE(pass) << pass.error().message;
        EXPECT_TRUE(*pass);
        // The poisoned prefix is not a written output.
        Result<bool> poisoned = fatbin.sound(dtype, a, n, stream_, &sum_fatbin);
        ASSERT_TRUE(poisoned) << poisoned.error().message;
        EXPECT_FALSE(*poisoned);
      }
      // The last byte changed (the trailing bytes' path where bytes % 4 != 0).
      unsigned char last = 0;
      ASSERT_EQ(cu_->MemcpyDtoH(&last, b + bytes - 1, 1), CUDA_SUCCESS);
      last = static_cast<unsigned char>(~last);
      ASSERT_EQ(cu_->MemcpyHtoD(b + bytes - 1, &last, 1), CUDA_SUCCESS);
      same = fatbin.equal(a, b, bytes, stream_);
      ASSERT_TRUE(same) << same.error().message;
      EXPECT_FALSE(*same);
      (void)cu_->MemFree(a);
      (void)cu_->MemFree(b);
    }
  }
}

// equal_each: several spans against one (the redzones against an intact one), one
// synchronisation; each span's verdict its own, including one byte changed at either end.
TEST_F(CudaCheckFatbin, EqualEachJudgesEverySpanOnItsOwn) {
  Result<CudaDeviceInfo> info = cuda_device_info(0);
  ASSERT_TRUE(info) << info.error().message;
  Result<std::unique_ptr<CudaChecker>> checker =
      cuda_check_fatbin().empty() ? CudaChecker::create(*cu_, info->arch(), info->sm_count)
                                  : CudaChecker::load(*cu_, info->sm_count);
  ASSERT_TRUE(checker) << checker.error().message;
  // 258 bytes: a 2-byte tail past the last 4-byte word, and every other span starts 2 bytes off a
  // 4-byte boundary (as the redzone after an odd number of bf16 elements does).
  const std::size_t bytes = 258;
  const std::size_t count = 6;
  CUdeviceptr intact = 0, spans = 0;
  ASSERT_EQ(cu_->MemAlloc(&intact, bytes), CUDA_SUCCESS);
  ASSERT_EQ(cu_->MemAlloc(&spans, count * bytes), CUDA_SUCCESS);
  ASSERT_EQ(cu_->MemsetD8(intact, 0xA5, bytes), CUDA_SUCCESS);
  ASSERT_EQ(cu_->MemsetD8(spans, 0xA5, count * bytes), CUDA_SUCCESS);
  const unsigned char changed = 0x5A;
  // Span 1 (misaligned): its first byte; span 2 (aligned): its last, in the tail; span 3
  // (misaligned): its last.
  ASSERT_EQ(cu_->MemcpyHtoD(spans + bytes, &changed, 1), CUDA_SUCCESS);
  ASSERT_EQ(cu_->MemcpyHtoD(spans + 3 * bytes - 1, &changed, 1), CUDA_SUCCESS);
  ASSERT_EQ(cu_->MemcpyHtoD(spans + 4 * bytes - 1, &changed, 1), CUDA_SUCCESS);
  std::vector<CUdeviceptr> at;
  for (std::size_t i = 0; i < count; ++i) at.push_back(spans + i * bytes);
  for (int twice = 0; twice < 2; ++twice) {  // the counters start from zero each time
    Result<std::vector<bool>> same = (*checker)->equal_each(at, intact, bytes, stream_);
    ASSERT_TRUE(same) << same.error().message;
    EXPECT_EQ(*same, (std::vector<bool>{true, false, false, false, true, true}));
  }
  // equal() on a misaligned pair too.
  Result<bool> equal = (*checker)->equal(spans + 5 * bytes, intact, bytes, stream_);
  ASSERT_TRUE(equal) << equal.error().message;
  EXPECT_TRUE(*equal);
  Result<std::vector<bool>> none = (*checker)->equal_each({}, intact, bytes, stream_);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());
  (void)cu_->MemFree(intact);
  (void)cu_->MemFree(spans);
}

}  // namespace
}  // namespace ktune

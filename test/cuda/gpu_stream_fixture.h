// A test fixture for code that runs on a caller's CUDA stream: the primary context of device 0
// made current and a non-blocking stream, skipped without a GPU.
#pragma once

#include <gtest/gtest.h>

#include "core/cuda_driver.h"

namespace ktune::test {

class GpuStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<const CudaDriver*> driver = cuda_driver();
    if (!driver) GTEST_SKIP() << "[SKIP] no GPU: " << driver.error().message;
    cu_ = *driver;
    ASSERT_EQ(cu_->DevicePrimaryCtxRetain(&ctx_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cu_->CtxSetCurrent(ctx_), CUDA_SUCCESS);
    ASSERT_EQ(cu_->StreamCreate(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  void TearDown() override {
    if (cu_ == nullptr) return;
    if (stream_ != nullptr) (void)cu_->StreamDestroy(stream_);
    (void)cu_->DevicePrimaryCtxRelease(0);
  }

  const CudaDriver* cu_ = nullptr;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
};

}  // namespace ktune::test

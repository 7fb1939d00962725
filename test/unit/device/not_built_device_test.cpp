// A device kind that this build left out (KTUNE_CUDA=OFF, KTUNE_OPENCL=OFF or no headers found):
// make_device still answers an adapter, whose open() says that the build lacks it and how to
// rebuild with it, so that a worker asked to run such a candidate reports it like a missing GPU.
#include <gtest/gtest.h>

#include "core/build_support.h"
#include "device/device.h"

namespace ktune {
namespace {

struct Left {
  DeviceKind kind;
  bool built;
  BuildFeature feature;
  const char* option;
};

TEST(NotBuiltDevice, OpenSaysTheBuildLacksItAndHowToRebuild) {
  int checked = 0;
  for (const Left& d :
       {Left{DeviceKind::kCuda, kBuiltWithCuda, BuildFeature::kCuda, "-DKTUNE_CUDA=ON"},
        Left{DeviceKind::kOpenCL, kBuiltWithOpenCL, BuildFeature::kOpenCL, "-DKTUNE_OPENCL=ON"}}) {
    if (d.built) continue;
    std::unique_ptr<DeviceAdapter> device = make_device(d.kind);
    ASSERT_NE(device, nullptr);
    Status opened = device->open();
    ASSERT_FALSE(opened.has_value());
    EXPECT_EQ(opened.error().code, ErrorCode::kUnavailable);
    EXPECT_EQ(opened.error().message, not_built(d.feature).message);
    EXPECT_NE(opened.error().message.find(d.option), std::string::npos) << opened.error().message;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "this build has CUDA and OpenCL support";
}

}  // namespace
}  // namespace ktune

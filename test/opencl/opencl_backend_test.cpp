// OpenCLBackend on whatever OpenCL device is present (PoCL in CI): device selection, build with
// -D defines, program binaries in the code cache, the build log on a compile error,
// fingerprints. Without OpenCL every test prints [SKIP] and passes.
#include "ktune/backend/opencl_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "backend/opencl_api.h"
#include "support/opencl_require.h"
#include "support/temp_dir.h"

namespace ktune::test {
namespace {

using ::testing::HasSubstr;

KernelSource scale_source(std::string code = "") {
  KernelSource s;
  s.name = "scale_FACTOR3";
  s.entry = "scale";
  s.code = code.empty() ? "__kernel void scale(__global float* y, __global const float* x) {\n"
                          "  const int i = get_global_id(0);\n"
                          "  y[i] = FACTOR * x[i];\n"
                          "}\n"
                        : code;
  s.defines = {{"FACTOR", "3.0f"}};
  return s;
}

TEST(OpenCLBackend, SelectsADeviceByIndexAndByNameAndRejectsAnUnknownOne) {
  KTUNE_REQUIRE_OPENCL();
  Result<OpenCLDeviceInfo> first = opencl_select_device("0:0");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_FALSE(first->name.empty());
  EXPECT_THAT(first->opencl_c_version, HasSubstr("OpenCL C"));
  EXPECT_GE(first->base_addr_align_bytes, 1u);
  // A substring of the device's own name finds it again.
  Result<OpenCLDeviceInfo> by_name = opencl_select_device(first->name.substr(0, 6));
  ASSERT_TRUE(by_name) << by_name.error().message;
  EXPECT_EQ(by_name->name, first->name);
  Result<OpenCLDeviceInfo> none = opencl_select_device("no-such-device-xyz");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(none.error().message, HasSubstr("no device matches 'no-such-device-xyz'"));
  EXPECT_THAT(none.error().message, HasSubstr(first->name));
}

TEST(OpenCLBackend, CompilesWithDefinesStoresTheProgramAndReusesIt) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-backend");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  EXPECT_EQ(backend->kind(), DeviceKind::kOpenCL);
  EXPECT_THAT(backend->device_fingerprint(), HasSubstr(backend->device_name()));
  EXPECT_THAT(backend->device_fingerprint(), HasSubstr("OpenCL C"));
  EXPECT_THAT(backend->toolchain_fingerprint(), HasSubstr("-cl-std=CL1.2"));
  EXPECT_THAT(backend->build_options(scale_source()), HasSubstr("-DFACTOR=3.0f"));

  Result<Artifact> a = backend->compile(scale_source());
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_FALSE(a->from_cache);
  EXPECT_TRUE(std::filesystem::exists(a->path));
  std::filesystem::path stem = a->path;
  stem.replace_extension();
  EXPECT_TRUE(std::filesystem::exists(stem.string() + ".cl"));
  EXPECT_TRUE(std::filesystem::exists(stem.string() + ".clopt"));

  Result<Artifact> again = backend->compile(scale_source());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->path, a->path);

  // Another define is another program.
  KernelSource other = scale_source();
  other.defines = {{"FACTOR", "2.0f"}};
  Result<Artifact> b = backend->compile(other);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_NE(b->key, a->key);

  // The artifact loads back in a fresh context (binary, or its source beside it).
  Result<OpenCLDeviceInfo> info = opencl_select_device(backend->device_selector());
  ASSERT_TRUE(info) << info.error().message;
  Result<OpenCLContext> ctx = OpenCLContext::create(*info);
  ASSERT_TRUE(ctx) << ctx.error().message;
  Result<OpenCLProgram> program = load_opencl_artifact(*ctx, a->path.string());
  ASSERT_TRUE(program) << program.error().message;
}

TEST(OpenCLBackend, ACorruptBinaryFallsBackToTheSource) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-binary");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  Result<Artifact> a = backend->compile(scale_source());
  ASSERT_TRUE(a) << a.error().message;
  if (a->path.extension() != ".clbin") GTEST_SKIP() << "[SKIP] the platform gives no binaries";
  { std::ofstream(a->path, std::ios::binary | std::ios::trunc) << "garbage"; }
  Result<OpenCLDeviceInfo> info = opencl_select_device(backend->device_selector());
  ASSERT_TRUE(info);
  Result<OpenCLContext> ctx = OpenCLContext::create(*info);
  ASSERT_TRUE(ctx) << ctx.error().message;
  Result<OpenCLProgram> program = load_opencl_artifact(*ctx, a->path.string());
  EXPECT_TRUE(program) << program.error().message;
}

TEST(OpenCLBackend, ACompileErrorIsKCompileWithTheBuildLog) {
  KTUNE_REQUIRE_OPENCL();
  TempDir dir("opencl-error");
  Result<OpenCLBackend> backend = OpenCLBackend::create({}, dir.path());
  ASSERT_TRUE(backend) << backend.error().message;
  Result<Artifact> a = backend->compile(
      scale_source("__kernel void scale(__global float* y) { y[0] = undeclared_name; }\n"));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ErrorCode::kCompile);
  EXPECT_THAT(a.error().message, HasSubstr("scale_FACTOR3: clBuildProgram"));
  EXPECT_THAT(a.error().message, HasSubstr("undeclared_name"));  // the build log
}

}  // namespace
}  // namespace ktune::test

// OpenCLApi: the OpenCL API through the ICD loader (libOpenCL.so.1), opened with dlopen on first
// use, so that one ktune build runs on machines with and without OpenCL. Only the types and
// constants of <CL/cl.h> are used at build time; every function is reached through this table.
// Also: device selection, device identity, and one RAII type per OpenCL handle.
//
// Internal header (src/): <CL/cl.h> must not leak into ktune's public headers.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>
#include <string_view>
#include <utility>

#include "ktune/core/status.h"

namespace ktune {

struct OpenCLApi {
  // One member per function, named as in <CL/cl.h> without the "cl" prefix.
  // One function per line: clang-format reflows X-macro lists differently on each run.
// clang-format off
#define KTUNE_OPENCL_FUNCTIONS(X) \
  X(GetPlatformIDs) \
  X(GetPlatformInfo) \
  X(GetDeviceIDs) \
  X(GetDeviceInfo) \
  X(CreateContext) \
  X(ReleaseContext) \
  X(CreateCommandQueue) \
  X(ReleaseCommandQueue) \
  X(CreateProgramWithSource) \
  X(CreateProgramWithBinary) \
  X(BuildProgram) \
  X(GetProgramInfo) \
  X(GetProgramBuildInfo) \
  X(ReleaseProgram) \
  X(CreateKernel) \
  X(ReleaseKernel) \
  X(SetKernelArg) \
  X(GetKernelWorkGroupInfo) \
  X(CreateBuffer) \
  X(CreateSubBuffer) \
  X(ReleaseMemObject) \
  X(EnqueueWriteBuffer) \
  X(EnqueueReadBuffer) \
  X(EnqueueFillBuffer) \
  X(EnqueueNDRangeKernel) \
  X(Finish) \
  X(WaitForEvents) \
  X(ReleaseEvent) \
  X(GetEventProfilingInfo)
// clang-format on
#define KTUNE_OPENCL_MEMBER(name) decltype(&::cl##name) name = nullptr;
  KTUNE_OPENCL_FUNCTIONS(KTUNE_OPENCL_MEMBER)
#undef KTUNE_OPENCL_MEMBER
};

// The loader, opened once per process (thread-safe). kUnavailable with a message that says why
// ("no OpenCL ICD loader: libOpenCL.so.1 not found").
[[nodiscard]] Result<const OpenCLApi*> opencl_api();

// "CL_OUT_OF_RESOURCES (-5)".
[[nodiscard]] std::string cl_error_name(cl_int code);
// "clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)"; kOk (empty Status) for CL_SUCCESS.
[[nodiscard]] Status cl_status(cl_int code, const char* what);

// What ktune needs to know of one device.
struct OpenCLDeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  int platform_index = 0, device_index = 0;
  std::string platform_name;                // "Portable Computing Language"
  std::string name;                         // "pthread-skylake-avx512-Intel(R) Xeon(R) Processor"
  std::string vendor;                       // "GenuineIntel"
  std::string driver_version;               // "3.1+debian"
  std::string device_version;               // "OpenCL 3.0 PoCL ..."
  std::string opencl_c_version;             // "OpenCL C 1.2 PoCL"
  std::size_t base_addr_align_bytes = 128;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8
  std::size_t max_work_group_size = 0;
  std::size_t local_mem_bytes = 0;
  std::size_t cache_bytes = 0;  // CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
  // Tuning-cache identity: platform, device name, vendor, driver version, OpenCL C version.
  [[nodiscard]] std::string fingerprint() const;
};

// Environment variable naming the device a process uses; WorkerOptions::env sets it per worker.
inline constexpr const char* kOpenCLDeviceEnv = "KTUNE_OPENCL_DEVICE";

// Picks a device by `selector`: "" (then $KTUNE_OPENCL_DEVICE, then the first device of the
// first platform), "<platform>:<device>" or "<device>", each part an index or a case-insensitive
// substring of the platform's or device's name ("pocl", "0:1", "portable:avx512").
// kUnavailable without a loader or a device, kNotFound when nothing matches.
[[nodiscard]] Result<OpenCLDeviceInfo> opencl_select_device(std::string_view selector);

// One context with one in-order profiling queue on one device.
class OpenCLContext {
 public:
  [[nodiscard]] static Result<OpenCLContext> create(const OpenCLDeviceInfo& device);
  OpenCLContext(OpenCLContext&& o) noexcept { *this = std::move(o); }
  OpenCLContext& operator=(OpenCLContext&& o) noexcept;
  OpenCLContext(const OpenCLContext&) = delete;
  OpenCLContext& operator=(const OpenCLContext&) = delete;
  ~OpenCLContext();

  [[nodiscard]] const OpenCLApi& api() const { return *api_; }
  [[nodiscard]] cl_context context() const { return context_; }
  [[nodiscard]] cl_command_queue queue() const { return queue_; }
  [[nodiscard]] const OpenCLDeviceInfo& info() const { return info_; }

 private:
  OpenCLContext() = default;
  const OpenCLApi* api_ = nullptr;
  OpenCLDeviceInfo info_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

// A built program. From source: `options` holds the -D defines and flags. From a binary: the
// binary is built with the same options (required by the API, cheap).
class OpenCLProgram {
 public:
  OpenCLProgram() = default;
  OpenCLProgram(const OpenCLApi* api, cl_program p) : api_(api), program_(p) {}
  OpenCLProgram(OpenCLProgram&& o) noexcept
      : api_(o.api_), program_(std::exchange(o.program_, nullptr)) {}
  OpenCLProgram& operator=(OpenCLProgram&& o) noexcept;
  OpenCLProgram(const OpenCLProgram&) = delete;
  OpenCLProgram& operator=(const OpenCLProgram&) = delete;
  ~OpenCLProgram();
  [[nodiscard]] cl_program get() const { return program_; }

 private:
  const OpenCLApi* api_ = nullptr;
  cl_program program_ = nullptr;
};

// kCompile with the build log on failure.
[[nodiscard]] Result<OpenCLProgram> build_opencl_source(const OpenCLContext& ctx,
                                                        const std::string& source,
                                                        const std::string& options);
[[nodiscard]] Result<OpenCLProgram> build_opencl_binary(const OpenCLContext& ctx,
                                                        const std::string& binary,
                                                        const std::string& options);
// The device binary of a built program; empty when the platform gives none.
[[nodiscard]] std::string opencl_program_binary(const OpenCLContext& ctx, const OpenCLProgram& p);

// An artifact in the code cache: <key>.cl (the source), <key>.clopt (build options) and, where
// the platform gives binaries, <key>.clbin. Loads the binary when present and valid, else
// builds the source.
[[nodiscard]] Result<OpenCLProgram> load_opencl_artifact(const OpenCLContext& ctx,
                                                         const std::string& artifact_path);

}  // namespace ktune

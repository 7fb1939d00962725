// OpenCLBackend: OpenCL C built through the ICD loader (opened with dlopen, so one build runs
// with and without OpenCL) for one device: PoCL on the CPU in CI, any GPU elsewhere.
//
// compile() builds the rendered source with the parameters as -D defines (clBuildProgram) and
// stores in the code cache <key>.cl (source), <key>.clopt (build options) and, where the
// platform gives program binaries, <key>.clbin. The artifact is the .clbin when present, else
// the .cl; a worker loads the binary and falls back to building the source beside it.
// Candidates run only in a worker (worker/opencl_handler.cpp): load() answers kUnavailable.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/backend/code_cache.h"

namespace ktune {

struct OpenCLOptions {
  // Which device: "" ($KTUNE_OPENCL_DEVICE, else the first device of the first platform),
  // "<platform>:<device>" or "<device>", each an index or a name substring ("pocl", "0:1").
  std::string device;
  std::vector<std::string> flags = {"-cl-std=CL1.2"};  // before the -D defines
  bool use_binaries = true;  // store program binaries in the code cache where supported
  // Called with the kernel's name and its compile command (`ktune --verbose`), before compiling
  // it; not for code-cache hits. Must be thread-safe (compiles run in parallel); no cache key
  // depends on it.
  std::function<void(const std::string& kernel, const std::string& command)> on_command{};
};

// Ok when an OpenCL device matching `device` (as OpenCLOptions::device) can be opened; else
// why not (kUnavailable: no loader, platform or device; kNotFound: nothing matches).
[[nodiscard]] Status opencl_available(std::string_view device = {});

struct OpenCLBackendState;  // the context; private to src/backend/opencl_backend.cpp

class OpenCLBackend final : public Backend {
 public:
  // Opens the loader, selects the device and creates a context on it.
  [[nodiscard]] static Result<OpenCLBackend> create(OpenCLOptions options,
                                                    std::filesystem::path cache_dir);

  [[nodiscard]] DeviceKind kind() const override { return DeviceKind::kOpenCL; }
  // Platform, device name, vendor, driver version, OpenCL C version.
  [[nodiscard]] std::string device_fingerprint() const override;
  // "opencl <device version> <OpenCL C version> <flags>".
  [[nodiscard]] std::string toolchain_fingerprint() const override;
  // kCompile with the build log on failure.
  [[nodiscard]] Result<Artifact> compile(const KernelSource& source) const override;
  [[nodiscard]] Result<std::unique_ptr<Module>> load(const Artifact& artifact) const override;

  [[nodiscard]] const OpenCLOptions& options() const { return options_; }
  // The device's name, e.g. "pthread-skylake-avx512-Intel(R) Xeon(R) Processor".
  [[nodiscard]] std::string device_name() const;
  // max_work_group_size and local_mem_bytes, also as max_threads_per_block and
  // max_shared_bytes_per_block, so that one restriction serves CUDA and OpenCL.
  [[nodiscard]] DeviceLimits device_limits() const override;
  // The selector that names this device exactly ("<platform index>:<device index>"), for
  // WorkerOptions::env (KTUNE_OPENCL_DEVICE) so that the worker opens the same device.
  [[nodiscard]] std::string device_selector() const;
  // The -D defines and flags compile() passes to clBuildProgram for `source`.
  [[nodiscard]] std::string build_options(const KernelSource& source) const;

 private:
  OpenCLBackend(OpenCLOptions options, std::filesystem::path cache_dir,
                std::shared_ptr<OpenCLBackendState> state);
  OpenCLOptions options_;
  CodeCache code_cache_;
  std::shared_ptr<OpenCLBackendState> state_;
};

}  // namespace ktune

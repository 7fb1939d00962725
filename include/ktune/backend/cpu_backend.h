// CpuBackend: C++ compiled by the system compiler into a shared object, loaded with dlopen.
//
// The compiled translation unit is: the defines, the user's source, then a generated entry shim
//   extern "C" void ktune_entry(void* const* args) { <entry>(<one cast per parameter>); }
// so that any argument list works: a buffer argument converts to whatever pointer type the entry
// declares, a scalar is read as its declared dtype and converted implicitly.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/backend/code_cache.h"

namespace ktune {

struct CpuCompileOptions {
  std::string compiler = "c++";  // $CXX when set
  std::vector<std::string> flags = {"-O3", "-march=native", "-shared", "-fPIC", "-std=c++17"};
  std::chrono::milliseconds timeout{120'000};  // per compile; past it the compiler is killed
  // Called with the kernel's name and each compiler command line before it runs (`ktune
  // --verbose`); not for code-cache hits. compile() runs on many threads at once, so this must be
  // thread-safe. Not part of any cache key: it only reports.
  std::function<void(const std::string& kernel, const std::string& command)> on_command{};
};

// Loads a shared object compiled by CpuBackend (its ktune_entry), without a backend object: what
// a worker process does. kIo with dlerror()'s text on failure.
[[nodiscard]] Result<std::unique_ptr<Module>> load_cpu_module(const std::filesystem::path& path);

class CpuBackend final : public Backend {
 public:
  // Fails when the compiler cannot be run (its --version is read once here).
  [[nodiscard]] static Result<CpuBackend> create(CpuCompileOptions options,
                                                 std::filesystem::path cache_dir);

  [[nodiscard]] DeviceKind kind() const override { return DeviceKind::kCpu; }
  [[nodiscard]] std::string device_fingerprint() const override;
  [[nodiscard]] std::string toolchain_fingerprint() const override;
  // kCompile with the compiler's output tail on failure, kTimeout past the deadline.
  [[nodiscard]] Result<Artifact> compile(const KernelSource& source) const override;
  [[nodiscard]] Result<std::unique_ptr<Module>> load(const Artifact& artifact) const override;

  [[nodiscard]] const CpuCompileOptions& options() const { return options_; }
  // The full translation unit that compile() hands to the compiler.
  [[nodiscard]] static std::string translation_unit(const KernelSource& source);

 private:
  CpuBackend(CpuCompileOptions options, std::filesystem::path cache_dir, std::string compiler_id);
  CpuCompileOptions options_;
  CodeCache code_cache_;
  std::string compiler_id_;  // first line of `<compiler> --version`
};

}  // namespace ktune

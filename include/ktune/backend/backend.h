// Backend: one per device kind. Compiles a KernelSource into an Artifact (through the code cache)
// and loads an Artifact into a Module that can be launched. Compile is thread-safe.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/device.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"

namespace ktune {

// One kernel ready to compile: source already rendered, parameters given as defines.
struct KernelSource {
  std::string name;   // procedural and greppable, e.g. "matmul_TILE_M32_TILE_N64"
  std::string code;   // the user's source after template rendering
  std::string entry;  // the function the entry shim calls
  Signature signature;
  std::vector<std::pair<std::string, std::string>> defines;  // prepended as #define NAME VALUE
  std::vector<std::string> extra_flags;                      // appended to the backend's flags
  // The user's file the code came from (absolute): compiler messages name it and its lines
  // (#line), its folder is an include path, and the headers it includes from the user's folders
  // are part of the code-cache key. Empty: generated code, named by `name`.
  std::filesystem::path source_path;
  // CUDA: the entries to launch, as C++ name expressions ("reduce<256, 4>", "stencil"); NVRTC
  // instantiates templates among them and the Artifact carries their lowered names, so that a
  // kernel need not be extern "C". Empty: `entry` is launched by its own name (extern "C").
  std::vector<std::string> name_expressions;
};

struct Artifact {
  std::filesystem::path path;  // the compiled object in the code cache
  std::string key;             // content hash: source, defines, compiler identity, flags
  bool from_cache = false;     // true when no compiler ran
  double compile_s = 0;
  // CUDA: the lowered name of each of KernelSource::name_expressions, in order.
  std::vector<std::string> entry_names;
};

// A loaded artifact. launch() takes one pointer per signature parameter: a buffer's first element
// (storage start + offset), or a pointer to a scalar's value stored as
// dtype_cpp_scalar_type(dtype).
class Module {
 public:
  virtual ~Module() = default;
  [[nodiscard]] virtual Status launch(void* const* args) = 0;
};

// Named limits of the device a backend compiles for, usable in a spec's restrictions
// (docs/spec.md, "Device limits"): CUDA max_threads_per_block, max_shared_bytes_per_block,
// warp_size, sm_count, cc_major, cc_minor; OpenCL max_work_group_size, local_mem_bytes and the
// two CUDA names for them. Empty on the CPU.
using DeviceLimits = std::vector<std::pair<std::string, double>>;

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual DeviceKind kind() const = 0;
  // Device identity for tuning-cache keys (CPU: cpu_fingerprint()).
  [[nodiscard]] virtual std::string device_fingerprint() const = 0;
  // Compiler identity and flags for tuning-cache keys.
  [[nodiscard]] virtual std::string toolchain_fingerprint() const = 0;
  [[nodiscard]] virtual Result<Artifact> compile(const KernelSource& source) const = 0;
  [[nodiscard]] virtual Result<std::unique_ptr<Module>> load(const Artifact& artifact) const = 0;
  [[nodiscard]] virtual DeviceLimits device_limits() const { return {}; }
};

}  // namespace ktune

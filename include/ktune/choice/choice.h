// Choice: one candidate implementation of a problem (Inductor's ChoiceCaller).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/problem.h"
#include "ktune/core/status.h"

namespace ktune {

// Runs the candidate once on the given arguments (see Module::launch for the layout).
using KernelFn = std::function<Status(void* const* args)>;

class Choice {
 public:
  enum class Kind { kTemplate, kExtern };
  virtual ~Choice() = default;

  [[nodiscard]] virtual Kind kind() const = 0;
  // Procedural and greppable: "matmul_TILE_M32_TILE_N64", "openblas_sgemm".
  [[nodiscard]] virtual const std::string& name() const = 0;
  // Identity in the tuning cache: changes whenever what would run changes (source, parameters,
  // flags, library version).
  [[nodiscard]] virtual std::string hash_key() const = 0;
  // For the AUTOTUNE table: "TILE_M=32 TILE_N=64" or "cblas_sgemm".
  [[nodiscard]] virtual std::string info() const = 0;
  // Can this choice handle the problem? Checked before anything is built.
  [[nodiscard]] virtual Status supports(const Problem& problem) const = 0;
  // Builds what load() needs. Thread-safe across choices; a no-op for library calls.
  [[nodiscard]] virtual Status compile(const Backend& backend) = 0;
  // Seconds the last compile() spent in the compiler (0 when it came from the code cache).
  [[nodiscard]] virtual double compile_s() const { return 0; }
  [[nodiscard]] virtual Result<KernelFn> load(const Backend& backend, const Problem& problem) = 0;
  // The compiled artifact after compile(), for running in a worker process; null for choices
  // that run in ktune's own process (library calls).
  [[nodiscard]] virtual const Artifact* artifact() const { return nullptr; }
  // How a worker runs this choice on `problem` (after compile()). kUnsupported for choices that
  // run only in ktune's own process (CPU library calls).
  [[nodiscard]] virtual Result<LaunchSpec> launch_spec(const Problem& problem) const;
  // A reference of a device problem that runs in ktune's own process on the CPU, on host copies
  // of the problem's data (a c++ reference kernel beside a CUDA or OpenCL kernel, expected
  // outputs read from files): its outputs reach the device's worker as a reference file.
  [[nodiscard]] virtual bool runs_on_host() const { return false; }
  // The parameters this choice was made from, (name, value as text) in the space's order: what
  // the tuning cache records so that a measured space can be replayed (`ktune simulate`) and
  // exported. Empty for choices without parameters (library calls).
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> params() const {
    return {};
  }
};

using ChoicePtr = std::unique_ptr<Choice>;

}  // namespace ktune

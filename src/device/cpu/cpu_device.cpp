// The CPU adapter (cpu_device.h). Everything runs synchronously in the calling thread, so
// finish() has nothing to wait for and the checks read the host buffers directly.
#include "device/cpu/cpu_device.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "bench/cpu_samples.h"
#include "choice/openblas_gemm.h"
#include "device/host_problem.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

struct CpuLaunch final : DeviceLaunch {
  explicit CpuLaunch(KernelFn f) : fn(std::move(f)) {}
  KernelFn fn;
};

// The benchmarker's flush over the problem's own buffers, the host's clock.
class CpuTimer final : public SampleSource {
 public:
  CpuTimer(const BenchOptions& options, const ProblemBuffers& buffers, KernelFn fn)
      : bench_(options),
        samples_(bench_, [&buffers, fn = std::move(fn)] { return fn(buffers.args()); }) {
    bench_.set_flush_ranges(buffers.data_ranges());
  }
  Status warm_up(int count) override { return samples_.warm_up(count); }
  Status sample(int count, std::vector<double>* ns) override { return samples_.sample(count, ns); }

 private:
  CpuBenchmarker bench_;
  CpuSamples samples_;
};

class CpuProblem final : public HostProblem {
 public:
  using HostProblem::HostProblem;
  Status enqueue(const DeviceLaunch& launch) override {
    return static_cast<const CpuLaunch&>(launch).fn(buffers().args());
  }
  Result<std::unique_ptr<SampleSource>> timer(const DeviceLaunch& launch,
                                              const BenchOptions& options) override {
    return std::make_unique<CpuTimer>(options, buffers(), static_cast<const CpuLaunch&>(launch).fn);
  }
};

class CpuDevice final : public DeviceAdapter {
 public:
  std::string_view name() const override { return "CPU"; }
  Status open() override { return {}; }
  Result<std::unique_ptr<DeviceProblem>> allocate(const Problem& problem, std::uint64_t seed,
                                                  DataSet set) override {
    Result<ProblemBuffers> host = ProblemBuffers::try_create(problem, seed, set);
    if (!host) return std::unexpected(host.error());
    return std::make_unique<CpuProblem>(std::move(*host));
  }
  Result<std::shared_ptr<const DeviceLaunch>> load(const LaunchSpec& spec,
                                                   const Problem& problem) override {
    Result<KernelFn> fn = function(spec, problem);
    if (!fn) return std::unexpected(fn.error());
    return make_cpu_launch(std::move(*fn));
  }

 private:
  Result<KernelFn> function(const LaunchSpec& spec, const Problem& problem) {
    Result<KernelFn> first = alone(spec, problem);
    if (!first || spec.then.empty()) return first;
    std::vector<KernelFn> all{std::move(*first)};
    for (const LaunchSpec& t : spec.then) {
      Result<KernelFn> next = function(t, problem);
      if (!next) return next;
      all.push_back(std::move(*next));
    }
    return KernelFn([all = std::move(all)](void* const* args) -> Status {
      for (const KernelFn& f : all) {
        if (Status s = f(args); !s) return s;
      }
      return {};
    });
  }

  Result<KernelFn> alone(const LaunchSpec& spec, const Problem& problem) {
    switch (spec.kind) {
      case LaunchKind::kCpuSharedObject: {
        Result<Module*> m = module(spec.artifact);
        if (!m) return std::unexpected(m.error());
        return KernelFn([m = *m](void* const* args) { return m->launch(args); });
      }
      case LaunchKind::kCpuLibrary:
        return load_openblas_launch(spec, problem);
      case LaunchKind::kCudaCubin:
      case LaunchKind::kCudaLibrary:
      case LaunchKind::kOpenCLProgram:
        break;
    }
    return make_error(
        ErrorCode::kUnavailable,
        fmt::format("the CPU device cannot run launch kind {}", launch_kind_name(spec.kind)));
  }

  Result<Module*> module(const std::filesystem::path& artifact) {
    if (auto it = modules_.find(artifact); it != modules_.end()) return it->second.get();
    Result<std::unique_ptr<Module>> loaded = load_cpu_module(artifact);
    if (!loaded) return std::unexpected(loaded.error());
    Module* m = loaded->get();
    modules_.emplace(artifact, std::move(*loaded));
    return m;
  }

  // Never evicted: a module's code may still be referenced (atexit handlers, thread-locals), and
  // a candidate measured again is not opened again.
  std::map<std::filesystem::path, std::unique_ptr<Module>> modules_;
};

}  // namespace

std::unique_ptr<DeviceAdapter> make_cpu_device() { return std::make_unique<CpuDevice>(); }

std::shared_ptr<const DeviceLaunch> make_cpu_launch(KernelFn fn) {
  return std::make_shared<CpuLaunch>(std::move(fn));
}

}  // namespace ktune

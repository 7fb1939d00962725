// The CPU handler: loads the artifact (cached by path for the life of the process, so a
// candidate measured again is not opened again), rebuilds the inputs from the problem and the
// seed, verifies with check_candidate() and measures with the CPU benchmarker.
//
// A reference file that cannot be read answers kUnsupported: the candidate did nothing wrong,
// and the parent should not cache it as a failure of the candidate.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ktune/backend/backend.h"
#include "bench/candidate_check.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/bench/cpu_benchmarker.h"
#include "worker/device_handler.h"
#include "ktune/tensor/problem_buffers.h"

namespace ktune {
namespace {

class CpuHandler final : public DeviceHandler {
 public:
  BenchmarkResponse handle(const BenchmarkRequest& request) override {
    BenchmarkResponse response;
    response.id = request.id;
    auto answer = [&](Outcome outcome, std::string message) {
      response.outcome = outcome;
      response.message = std::move(message);
      return response;
    };

    Result<Module*> module = load(request.launch.artifact);
    if (!module) return answer(Outcome::kLoadError, module.error().message);
    Module* m = *module;
    const KernelFn fn = [m](void* const* args) { return m->launch(args); };

    Result<Prepared*> prepared = prepare(request);
    if (!prepared) {
      return answer(Outcome::kUnsupported,
                    fmt::format("{}: no reference to verify against: {}", request.candidate,
                                prepared.error().message));
    }
    ProblemBuffers& buffers = (*prepared)->buffers;
    std::optional<ReferenceOutputs>& reference = (*prepared)->reference;

    if (request.verify) {
      CheckResult check = check_candidate(fn, buffers, reference ? &*reference : nullptr);
      if (check.outcome != Outcome::kOk) return answer(check.outcome, std::move(check.message));
    }
    if (!request.measure) return response;

    CpuBenchmarker bench(request.bench);
    bench.set_flush_ranges(buffers.data_ranges());
    buffers.reset();
    Result<BenchStats> stats = bench.measure([&] { return fn(buffers.args()); });
    if (!stats) return answer(Outcome::kLaunchError, stats.error().message);
    response.stats = *stats;
    return response;
  }

 private:
  // The inputs and the reference outputs of the last problem: every candidate of a problem
  // reuses them, since seeding large inputs costs more than running many kernels.
  struct Prepared {
    std::string key;
    ProblemBuffers buffers;
    std::optional<ReferenceOutputs> reference;
  };

  Result<Prepared*> prepare(const BenchmarkRequest& request) {
    const std::string key = fmt::format("{} seed={} expected={}", request.problem.key(),
                                        request.seed, request.expected.string());
    if (prepared_ && prepared_->key == key) return &*prepared_;
    prepared_.reset();  // free the last problem's memory first
    std::optional<ReferenceOutputs> reference;
    if (!request.expected.empty()) {
      auto ref = read_reference_file(request.expected, request.problem, request.tolerance);
      if (!ref) return std::unexpected(ref.error());
      reference = std::move(*ref);
    }
    prepared_.emplace(
        Prepared{key, ProblemBuffers::create(request.problem, request.seed), std::move(reference)});
    return &*prepared_;
  }

  std::optional<Prepared> prepared_;

  Result<Module*> load(const std::filesystem::path& artifact) {
    if (auto it = modules_.find(artifact); it != modules_.end()) return it->second.get();
    Result<std::unique_ptr<Module>> loaded = load_cpu_module(artifact);
    if (!loaded) return std::unexpected(loaded.error());
    Module* m = loaded->get();
    modules_.emplace(artifact, std::move(*loaded));
    return m;
  }

  // Never evicted: a module's code may still be referenced (atexit handlers, thread-locals).
  std::map<std::filesystem::path, std::unique_ptr<Module>> modules_;
};

}  // namespace

std::unique_ptr<DeviceHandler> make_cpu_handler() { return std::make_unique<CpuHandler>(); }

}  // namespace ktune

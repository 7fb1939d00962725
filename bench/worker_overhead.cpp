// Google Benchmark figures for isolation's cost (docs/benchmarks.md):
//   BM_WorkerRoundTrip      one verify-only request for a trivial kernel on a live worker:
//                           encode, pipe, decode, verify, answer (what isolation adds per run)
//   BM_InProcessCheck       the same verification in this process, for comparison
//   BM_WorkerStartToReady   spawning a ktune-worker until it answers the ping (a restart)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>

#include "bench/candidate_check.h"
#include "ktune/backend/cpu_backend.h"
#include "worker/worker.h"

namespace {

using namespace ktune;

const char* kSource =
    "void copy(float* y, const float* x, int n) { for (int i = 0; i < n; ++i) y[i] = x[i]; }";

struct Fixture {
  Problem problem;
  Artifact artifact;
  BenchmarkRequest request;
  static Fixture& get() {
    static Fixture f = make();
    return f;
  }
  static Fixture make() {
    Fixture f;
    const Signature sig = {{"y", ArgRole::kOut, DType::kF32},
                           {"x", ArgRole::kIn, DType::kF32},
                           {"n", ArgRole::kScalar, DType::kI32}};
    f.problem = Problem{"copy", "n=1024", {}};
    f.problem.args = {{sig[0], TensorSpec::contiguous(DType::kF32, {1024}), {}},
                      {sig[1], TensorSpec::contiguous(DType::kF32, {1024}), {}},
                      {sig[2], {}, std::int64_t{1024}}};
    auto backend =
        CpuBackend::create({.flags = {"-O2", "-shared", "-fPIC"}},
                           std::filesystem::temp_directory_path() / "ktune-bench-worker");
    if (!backend) std::abort();
    auto artifact = backend->compile({"copy", kSource, "copy", sig, {}, {}, {}, {}});
    if (!artifact) std::abort();
    f.artifact = *artifact;
    f.request.candidate = "copy";
    f.request.launch.artifact = f.artifact.path;
    f.request.problem = f.problem;
    f.request.measure = false;
    return f;
  }
};

void BM_WorkerRoundTrip(benchmark::State& state) {
  Fixture& f = Fixture::get();
  auto worker = Worker::start({});
  if (!worker) {
    state.SkipWithError(worker.error().message.c_str());
    return;
  }
  BenchmarkRequest request = f.request;
  for (auto _ : state) {
    ++request.id;
    BenchmarkResponse r = worker->run(request, std::chrono::seconds(10));
    if (r.outcome != Outcome::kOk) state.SkipWithError(r.message.c_str());
  }
}
BENCHMARK(BM_WorkerRoundTrip)->Unit(benchmark::kMicrosecond);

void BM_InProcessCheck(benchmark::State& state) {
  Fixture& f = Fixture::get();
  auto module = load_cpu_module(f.artifact.path);
  if (!module) std::abort();
  Module* m = module->get();
  const KernelFn fn = [m](void* const* args) { return m->launch(args); };
  ProblemBuffers buffers = ProblemBuffers::create(f.problem, 0);
  for (auto _ : state) {
    CheckResult c = check_candidate(fn, buffers, nullptr);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_InProcessCheck)->Unit(benchmark::kMicrosecond);

void BM_WorkerStartToReady(benchmark::State& state) {
  for (auto _ : state) {
    auto worker = Worker::start({});
    if (!worker) {
      state.SkipWithError(worker.error().message.c_str());
      return;
    }
    state.PauseTiming();
    worker->stop();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_WorkerStartToReady)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// Google Benchmark figures for the Dispatcher's cost per call after the pick (docs/benchmarks.md):
//   BM_DirectCall               the picked KernelFn called directly (a tiny kernel: one store)
//   BM_DispatcherCall           the same kernel through Dispatcher::call, same shape every call
//   BM_DispatcherCallAlternating two shapes in turn: the last-shape fast path misses every call
//                               and the shape is found in the table under a shared lock
// The difference of the first two is what the Dispatcher adds (target: under 50 ns). The spec is
// tuned ahead in this process (no worker), in a scratch cache folder removed at exit.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "ktune/backend/cpu_backend.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/runtime/dispatcher.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tuning/spec_dispatcher.h"

namespace {

using namespace ktune;

constexpr const char* kSpec = R"(name: first
kernel: {source: first.cpp, entry: first}
args:
  - {name: y, role: out, dtype: f32, shape: [N]}
  - {name: x, role: in, dtype: f32, shape: [N]}
  - {name: N, dtype: i32, value: N}
problems:
  - {N: 1}
  - {N: 2}
params:
  COPIES: [1, 2]
)";
constexpr const char* kKernel =
    R"(// Copies the first element COPIES times: as cheap as a call gets.
void first(float* y, const float* x, int n) {
  for (int i = 0; i < COPIES && i < n; ++i) y[i] = x[i];
}
)";

void fail(const Error& e) {
  std::fprintf(stderr, "error: %s\n", e.message.c_str());
  std::exit(1);
}

struct Fixture {
  std::filesystem::path dir;
  std::unique_ptr<Dispatcher> dispatcher;
  KernelFn direct;  // the pick for N=1, loaded without the Dispatcher
  std::array<float, 2> x{1, 2}, y{};
  std::int32_t n = 1;
  std::array<void*, 3> args{y.data(), x.data(), &n};

  static Fixture& get() {
    static Fixture f;
    return f;
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() {
    dispatcher.reset();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }

 private:
  Fixture() {
    Fixture& f = *this;
    std::string templ = (std::filesystem::temp_directory_path() / "ktune-bench-dispatch-XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    f.dir = templ;
    std::ofstream(f.dir / "first.yaml") << kSpec;
    std::ofstream(f.dir / "first.cpp") << kKernel;
    auto spec = load_spec(f.dir / "first.yaml");
    if (!spec) fail(spec.error());
    auto choices = make_spec_choices(*spec);
    if (!choices) fail(choices.error());
    auto backend = CpuBackend::create({}, f.dir);
    if (!backend) fail(backend.error());
    auto cache = open_sqlite_cache(f.dir);
    if (!cache) fail(cache.error());
    SelectorOptions options;  // as `ktune tune --in-process --quiet` would
    options.isolate = false;
    options.out = nullptr;
    options.progress = nullptr;
    options.bench.budget_ms = 1;
    options.seed = spec->seed;
    options.tolerance = spec->tolerance;
    Selector selector(*backend, **cache, options);
    for (const ProblemDecl& decl : spec->problems) {
      auto problem = make_problem(*spec, decl);
      if (!problem) fail(problem.error());
      auto sel = selector.select(*problem, choices->candidates, choices->reference.get());
      if (!sel) fail(sel.error());
      if (decl.sizes.front().second == 1) {
        auto fn = choices->candidates[sel->winner_index]->load(*backend, *problem);
        if (!fn) fail(fn.error());
        f.direct = *fn;
      }
    }
    DispatcherOptions dopts;
    dopts.cache_dir = f.dir;
    auto d = open_dispatcher(f.dir / "first.yaml", dopts);
    if (!d) fail(d.error());
    f.dispatcher = std::move(*d);
  }
};

void BM_DirectCall(benchmark::State& state) {
  Fixture& f = Fixture::get();
  for (auto _ : state) {
    Status s = f.direct(f.args.data());
    benchmark::DoNotOptimize(s.has_value());
  }
}
BENCHMARK(BM_DirectCall);

void BM_DispatcherCall(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const std::array<std::int64_t, 1> sizes{1};
  if (auto served = f.dispatcher->lookup(sizes);
      !served || served->source != Dispatcher::Source::kExact) {
    state.SkipWithError("N=1 is not served exactly");
    return;
  }
  for (auto _ : state) {
    Status s = f.dispatcher->call(sizes, f.args.data());
    benchmark::DoNotOptimize(s.has_value());
  }
}
BENCHMARK(BM_DispatcherCall);

void BM_DispatcherCallAlternating(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const std::array<std::int64_t, 1> one{1}, two{2};
  std::int32_t n2 = 2;
  std::array<void*, 3> args2{f.y.data(), f.x.data(), &n2};
  bool odd = false;
  for (auto _ : state) {
    odd = !odd;
    Status s = odd ? f.dispatcher->call(one, f.args.data()) : f.dispatcher->call(two, args2.data());
    benchmark::DoNotOptimize(s.has_value());
  }
}
BENCHMARK(BM_DispatcherCallAlternating);

}  // namespace

BENCHMARK_MAIN();

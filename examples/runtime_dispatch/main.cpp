// Run-time dispatch: tune a spec's shapes ahead (what `ktune tune` does, here in process through
// the library), then serve calls through a Dispatcher: tuned shapes by their pick, an unseen shape
// by the nearest tuned one while it is tuned in the background, then by its own pick. Usage:
// runtime_dispatch [CACHE_DIR]  (default: <tmp>/ktune-runtime-dispatch-example) Exits 1 when a
// result is wrong or anything fails.
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <vector>

#include "ktune/backend/cpu_backend.h"
#include "ktune/runtime/dispatcher.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/cache/tuning_cache.h"

namespace {

using namespace ktune;

int fail(const Error& e) {
  std::fprintf(stderr, "error: %s\n", e.message.c_str());
  return 1;
}

// Tunes every problem of the spec as `ktune tune --cache-dir DIR SPEC` would (the same compile
// options, seed and tolerance), so that the Dispatcher finds the picks under the same keys.
Status tune_ahead(const std::filesystem::path& spec_file, const std::filesystem::path& cache_dir) {
  auto spec = load_spec(spec_file);
  if (!spec) return std::unexpected(spec.error());
  auto choices = make_spec_choices(*spec);
  if (!choices) return std::unexpected(choices.error());
  auto backend = CpuBackend::create({}, cache_dir);
  if (!backend) return std::unexpected(backend.error());
  auto cache = open_sqlite_cache(cache_dir);
  if (!cache) return std::unexpected(cache.error());
  SelectorOptions options;
  options.out = nullptr;
  options.progress = nullptr;
  options.bench.budget_ms = 5;
  options.seed = spec->seed;
  options.tolerance = spec->tolerance;
  options.worker.executable = KTUNE_WORKER_EXECUTABLE;
  Selector selector(*backend, **cache, options);
  for (const ProblemDecl& decl : spec->problems) {
    auto problem = make_problem(*spec, decl);
    if (!problem) return std::unexpected(problem.error());
    auto sel = selector.select(*problem, choices->candidates, choices->reference.get());
    if (!sel) return std::unexpected(sel.error());
    std::printf("tuned %-8s %-14s %s\n", decl.name.c_str(), sel->record.winner.c_str(),
                sel->from_cache ? "(from the tuning cache)" : "");
  }
  return {};
}

const char* source_name(Dispatcher::Source s) {
  switch (s) {
    case Dispatcher::Source::kExact:
      return "exact";
    case Dispatcher::Source::kNearest:
      return "nearest";
    case Dispatcher::Source::kDefault:
      return "default";
  }
  return "?";
}

// One call through the dispatcher on random data, checked against a naive loop.
Status serve(Dispatcher& d, int m, int n, int k) {
  std::vector<float> a(m * k), b(k * n), c(m * n);
  std::mt19937 rng(m * 31 + n * 7 + k);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  const Sizes sizes = {{"M", m}, {"N", n}, {"K", k}};
  auto served = d.lookup(sizes);
  if (!served) return std::unexpected(served.error());
  std::printf("M=%-3d N=%-3d K=%-3d -> %-14s (%s)\n", m, n, k, served->name->c_str(),
              source_name(served->source));
  void* args[] = {c.data(), a.data(), b.data(), &m, &n, &k};
  if (Status s = d.call(sizes, args); !s) return s;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      if (std::fabs(c[i * n + j] - want) > 1e-4 * (1 + std::fabs(want))) {
        char what[160];
        std::snprintf(what, sizeof what, "C[%d,%d] = %g; expected %g", i, j, c[i * n + j], want);
        return make_error(ErrorCode::kInternal, what);
      }
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path spec = RUNTIME_DISPATCH_SPEC;
  const std::filesystem::path cache_dir =
      argc > 1 ? std::filesystem::path(argv[1])
               : std::filesystem::temp_directory_path() / "ktune-runtime-dispatch-example";
  if (Status s = tune_ahead(spec, cache_dir); !s) return fail(s.error());

  DispatcherOptions options;
  options.cache_dir = cache_dir;
  options.tune_unseen = true;
  options.selector.bench.budget_ms = 5;
  options.selector.worker.executable = KTUNE_WORKER_EXECUTABLE;
  auto dispatcher = Dispatcher::open(spec, options);
  if (!dispatcher) return fail(dispatcher.error());
  Dispatcher& d = **dispatcher;

  for (auto [m, n, k] : {std::array{64, 64, 64}, {4, 256, 128}, {48, 80, 64}}) {
    if (Status s = serve(d, m, n, k); !s) return fail(s.error());
  }
  // {48, 80, 64} was tuned in the background meanwhile.
  if (Status s = d.wait_for_background(); !s) return fail(s.error());
  if (Status s = serve(d, 48, 80, 64); !s) return fail(s.error());
  auto served = d.lookup(Sizes{{"M", 48}, {"N", 80}, {"K", 64}});
  if (!served || served->source != Dispatcher::Source::kExact) {
    std::fprintf(stderr, "error: M=48 N=80 K=64 is not served by its own pick after tuning\n");
    return 1;
  }
  std::printf("runtime_dispatch: all results correct\n");
  return 0;
}

// pick_vs_extern: re-measures, side by side, each problem's tuned pick against every library
// (extern) choice of the same spec, interleaved round by round so that machine drift hits both
// alike. Reads the pick from the tuning cache (tuning first if it is not there). Prints one
// markdown row per problem; bench/cpu_matmul.sh puts them into docs/benchmarks.md.
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/bench/bench_env.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tensor/problem_buffers.h"

using namespace ktune;

int main(int argc, char** argv) {
  ensure_benchmark_environment(argv);  // as ktune does
  if (argc < 2) {
    fmt::print(stderr, "usage: pick_vs_extern SPEC [CACHE_DIR] [ROUNDS]\n");
    return 2;
  }
  const std::filesystem::path cache_dir = argc > 2 ? argv[2] : default_cache_dir();
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 31;
  auto spec = load_spec(argv[1]);
  auto backend = CpuBackend::create({}, cache_dir);
  auto cache = open_sqlite_cache(cache_dir);
  if (!spec || !backend || !cache) {
    fmt::print(stderr, "error: {}\n",
               !spec      ? spec.error().message
               : !backend ? backend.error().message
                          : cache.error().message);
    return 1;
  }
  auto choices = make_spec_choices(*spec);
  if (!choices) {
    fmt::print(stderr, "error: {}\n", choices.error().message);
    return 1;
  }
  SelectorOptions options;
  options.out = nullptr;
  options.tolerance = spec->tolerance;
  options.seed = spec->seed;
  Selector selector(*backend, **cache, options);
  fmt::print("| problem | pick | pick median | library | library median | library / pick |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const ProblemDecl& decl : spec->problems) {
    auto problem = make_problem(*spec, decl);
    if (!problem) return 1;
    auto sel = selector.select(*problem, choices->candidates, choices->reference.get());
    if (!sel) {
      fmt::print(stderr, "error: {}\n", sel.error().message);
      return 1;
    }
    Choice& pick = *choices->candidates[sel->winner_index];
    ProblemBuffers buffers = ProblemBuffers::create(*problem, options.seed);
    CpuBenchmarker bench(options.bench);
    bench.set_flush_ranges(buffers.data_ranges());
    for (ChoicePtr& lib : choices->candidates) {
      if (lib->kind() != Choice::Kind::kExtern) continue;
      if (!pick.compile(*backend) || !lib->compile(*backend)) return 1;
      auto a = pick.load(*backend, *problem);
      auto b = lib->load(*backend, *problem);
      if (!a || !b) return 1;
      KernelFn fa = *a, fb = *b;
      // Warm both, then alternate them, swapping which goes first every round (ABBA), so that
      // neither always runs right after the other.
      const std::function<Status()> run_a = [&] { return fa(buffers.args()); };
      const std::function<Status()> run_b = [&] { return fb(buffers.args()); };
      if (!bench.measure_interleaved({run_a, run_b}, 3)) return 1;
      std::vector<double> pa, pb;
      for (int r = 0; r < rounds; ++r) {
        const bool a_first = r % 2 == 0;
        auto s = a_first ? bench.measure_interleaved({run_a, run_b}, 1)
                         : bench.measure_interleaved({run_b, run_a}, 1);
        if (!s) return 1;
        pa.push_back((*s)[a_first ? 0 : 1].median_ns);
        pb.push_back((*s)[a_first ? 1 : 0].median_ns);
      }
      const BenchStats sp = compute_stats(pa);
      const BenchStats sl = compute_stats(pb);
      fmt::print("| {} | {} | {:.3f} ms ± {:.3f} | {} | {:.3f} ms ± {:.3f} | {:.2f} |\n",
                 problem->name, pick.name(), sp.median_ns / 1e6, sp.mad_ns / 1e6, lib->name(),
                 sl.median_ns / 1e6, sl.mad_ns / 1e6, sl.median_ns / sp.median_ns);
    }
  }
  return 0;
}

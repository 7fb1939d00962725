// abandon_regret: what early abandonment costs and saves on a spec's problems. Each repeat tunes
// every problem twice from scratch (no tuning cache; the code cache is shared, so compiling is
// paid once): with abandonment and without (every candidate measured to its full budget). The
// two picks are then re-measured side by side in alternating rounds (Selector::measure_again),
// and the regret is the abandoning run's pick over the full run's. One markdown row per problem
// and repeat; bench/abandon_regret.sh puts them into docs/benchmarks.md.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/bench/bench_env.h"
#include "ktune/cache/tuning_cache.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"

using namespace ktune;

namespace {

struct Tuned {
  Selection selection;
  double seconds = 0;
  int abandoned = 0;
};

Result<Tuned> tune(const Backend& backend, const Spec& spec, const Problem& problem,
                   std::vector<ChoicePtr>& candidates, Choice* reference, bool abandon) {
  auto cache = make_memory_cache();
  SelectorOptions options;
  options.out = nullptr;
  options.progress = nullptr;
  options.tolerance = spec.tolerance;
  options.seed = spec.seed;
  options.abandon = abandon;
  Selector selector(backend, *cache, options);
  const auto t0 = std::chrono::steady_clock::now();
  auto sel = selector.select(problem, candidates, reference);
  if (!sel) return std::unexpected(sel.error());
  Tuned t{*sel, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0};
  for (const CandidateRecord& c : sel->record.candidates)
    t.abandoned += c.outcome == Outcome::kAbandoned;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_benchmark_environment(argv);  // as ktune does
  if (argc < 2) {
    fmt::print(stderr, "usage: abandon_regret SPEC [CACHE_DIR] [REPEATS] [ROUNDS]\n");
    return 2;
  }
  const std::filesystem::path cache_dir = argc > 2 ? argv[2] : default_cache_dir();
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 21;
  auto spec = load_spec(argv[1]);
  auto backend = CpuBackend::create({}, cache_dir);
  if (!spec || !backend) {
    fmt::print(stderr, "error: {}\n", !spec ? spec.error().message : backend.error().message);
    return 1;
  }
  auto choices = make_spec_choices(*spec);
  if (!choices) {
    fmt::print(stderr, "error: {}\n", choices.error().message);
    return 1;
  }
  fmt::print(
      "| problem | repeat | candidates | abandoned | tune s, abandoning | tune s, full | "
      "pick, abandoning | pick, full | regret |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---|---|---:|\n");
  for (const ProblemDecl& decl : spec->problems) {
    auto problem = make_problem(*spec, decl);
    if (!problem) return 1;
    for (int r = 0; r < repeats; ++r) {
      // Alternate which goes first, so that neither always finds the code cache warmer.
      auto first = tune(*backend, *spec, *problem, choices->candidates, choices->reference.get(),
                        r % 2 == 0);
      auto second = tune(*backend, *spec, *problem, choices->candidates, choices->reference.get(),
                         r % 2 != 0);
      if (!first || !second) {
        fmt::print(stderr, "error: {}\n", (!first ? first.error() : second.error()).message);
        return 1;
      }
      const Tuned& ab = r % 2 == 0 ? *first : *second;
      const Tuned& full = r % 2 == 0 ? *second : *first;
      Choice* pa = choices->candidates[ab.selection.winner_index].get();
      Choice* pf = choices->candidates[full.selection.winner_index].get();
      double regret = 1;
      if (pa != pf) {
        // Both picks side by side, alternating; regret is the ratio of their round medians.
        auto cache = make_memory_cache();
        SelectorOptions options;
        options.out = nullptr;
        options.progress = nullptr;
        options.tolerance = spec->tolerance;
        options.seed = spec->seed;
        Selector selector(*backend, *cache, options);
        BenchOptions round;
        round.warmup_runs = 1;
        round.min_runs = round.max_runs = 5;
        auto again =
            selector.measure_again(*problem, {pa, pf}, choices->reference.get(), round, rounds);
        if (!again) {
          fmt::print(stderr, "error: {}\n", again.error().message);
          return 1;
        }
        regret = (*again)[0].median_ns / (*again)[1].median_ns;
      }
      fmt::print("| {} | {} | {} | {} | {:.2f} | {:.2f} | {} | {} | {:.3f} |\n", problem->name,
                 r + 1, ab.selection.record.candidates.size(), ab.abandoned, ab.seconds,
                 full.seconds, pa->name(), pf->name(), regret);
      std::fflush(stdout);
    }
  }
  return 0;
}

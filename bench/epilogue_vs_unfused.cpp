// epilogue_vs_unfused: for a spec with an epilogue, re-measures side by side, on each problem's
// buffers, the fused pick against the unfused pairs it must beat: every library GEMM followed by
// the separate epilogue pass ("openblas+epilogue", a candidate of the spec), and the plain-GEMM
// pick (the same spec tuned without its epilogue) followed by the same pass; and the pass alone.
// Where the fused pick is a library pair, the fastest fused template is measured too.
// Picks come from the tuning cache (tuning first where they are not there). Interleaved rounds,
// the order rotated every round. Prints one markdown row per problem; bench/cpu_epilogue.sh puts
// them into docs/benchmarks.md.
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/bench/bench_env.h"
#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/choice/epilogue_pass.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/tensor/problem_buffers.h"

using namespace ktune;

namespace {

int fail(const std::string& what) {
  fmt::print(stderr, "error: {}\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_benchmark_environment(argv);  // as ktune does
  if (argc < 2) {
    fmt::print(stderr, "usage: epilogue_vs_unfused SPEC [CACHE_DIR] [ROUNDS]\n");
    return 2;
  }
  const std::filesystem::path cache_dir = argc > 2 ? argv[2] : default_cache_dir();
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 31;
  auto fused_spec = load_spec(argv[1]);
  if (!fused_spec) return fail(fused_spec.error().message);
  if (fused_spec->epilogue.empty()) return fail(fmt::format("{}: no epilogue", argv[1]));
  Spec plain_spec = *fused_spec;
  plain_spec.epilogue = Epilogue{};
  auto backend = CpuBackend::create({}, cache_dir);
  if (!backend) return fail(backend.error().message);
  auto cache = open_sqlite_cache(cache_dir);
  if (!cache) return fail(cache.error().message);
  auto fused = make_spec_choices(*fused_spec);
  if (!fused) return fail(fused.error().message);
  auto plain = make_spec_choices(plain_spec);
  if (!plain) return fail(plain.error().message);
  const std::string& output = fused_spec->args[fused_spec->output].name;
  ChoicePtr pass = make_epilogue_pass(fused_spec->epilogue, output, EpiloguePassKind::kCompiled);
  if (Status s = pass->compile(*backend); !s) return fail(s.error().message);

  SelectorOptions options;
  options.out = nullptr;
  options.tolerance = fused_spec->tolerance;
  options.seed = fused_spec->seed;
  Selector selector(*backend, **cache, options);
  fmt::print(
      "| problem | fused pick | fused median | library + epilogue / fused | plain pick + epilogue "
      "/ fused | plain pick | epilogue pass alone | fastest fused template / fused |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const ProblemDecl& decl : fused_spec->problems) {
    auto fp = make_problem(*fused_spec, decl);
    auto pp = make_problem(plain_spec, decl);
    if (!fp || !pp) return fail(!fp ? fp.error().message : pp.error().message);
    auto fsel = selector.select(*fp, fused->candidates, fused->reference.get());
    if (!fsel) return fail(fsel.error().message);
    auto psel = selector.select(*pp, plain->candidates, plain->reference.get());
    if (!psel) return fail(psel.error().message);
    Choice& fused_pick = *fused->candidates[fsel->winner_index];
    Choice& plain_pick = *plain->candidates[psel->winner_index];
    // The fastest template config of the fused tuning (the pick itself when it is one).
    Choice* fused_template = nullptr;
    double best_ns = 0;
    for (std::size_t i = 0; i < fsel->record.candidates.size(); ++i) {
      const CandidateRecord& c = fsel->record.candidates[i];
      for (ChoicePtr& choice : fused->candidates) {
        if (choice->name() != c.name || choice->kind() != Choice::Kind::kTemplate) continue;
        if (c.outcome != Outcome::kOk || !c.stats) continue;
        if (fused_template == nullptr || c.stats->median_ns < best_ns) {
          fused_template = choice.get();
          best_ns = c.stats->median_ns;
        }
      }
    }
    if (fused_template == nullptr) return fail("no fused template verified");
    Choice* library = nullptr;  // the first extern: "<name>+epilogue"
    for (ChoicePtr& c : fused->candidates) {
      if (c->kind() == Choice::Kind::kExtern && library == nullptr) library = c.get();
    }
    if (library == nullptr) return fail("the spec has no extern");
    for (Choice* c : {&fused_pick, &plain_pick, library, fused_template}) {
      if (Status s = c->compile(*backend); !s) return fail(s.error().message);
    }
    auto f = fused_pick.load(*backend, *fp);
    auto l = library->load(*backend, *fp);
    auto p = plain_pick.load(*backend, *pp);  // the fused problem's args begin with the plain's
    auto e = pass->load(*backend, *fp);
    auto t = fused_template->load(*backend, *fp);
    if (!f || !l || !p || !e || !t) return fail("a candidate does not load");

    ProblemBuffers buffers = ProblemBuffers::create(*fp, options.seed);
    CpuBenchmarker bench(options.bench);
    bench.set_flush_ranges(buffers.data_ranges());
    const KernelFn ff = *f, fl = *l, fpl = *p, fe = *e, ft = *t;
    std::vector<std::function<Status()>> runs = {
        [&] { return ff(buffers.args()); },
        [&] { return fl(buffers.args()); },
        [&]() -> Status {
          if (Status s = fpl(buffers.args()); !s) return s;
          return fe(buffers.args());
        },
        [&] { return fe(buffers.args()); },
        [&] { return ft(buffers.args()); },
    };
    if (!bench.measure_interleaved(runs, 3)) return fail("warm-up failed");
    std::vector<std::vector<double>> samples(runs.size());
    for (int r = 0; r < rounds; ++r) {
      // Rotate which runs first, so that none always follows the same one.
      std::vector<std::function<Status()>> order;
      for (std::size_t i = 0; i < runs.size(); ++i) order.push_back(runs[(i + r) % runs.size()]);
      auto s = bench.measure_interleaved(order, 1);
      if (!s) return fail(s.error().message);
      for (std::size_t i = 0; i < runs.size(); ++i) {
        samples[(i + r) % runs.size()].push_back((*s)[i].median_ns);
      }
    }
    std::vector<BenchStats> st;
    for (const auto& v : samples) st.push_back(compute_stats(v));
    fmt::print("| {} | {} | {:.3f} ms ± {:.3f} | {:.2f} | {:.2f} | {} | {:.3f} ms | {:.2f} |\n",
               fp->name, fused_pick.name(), st[0].median_ns / 1e6, st[0].mad_ns / 1e6,
               st[1].median_ns / st[0].median_ns, st[2].median_ns / st[0].median_ns,
               plain_pick.name(), st[3].median_ns / 1e6, st[4].median_ns / st[0].median_ns);
  }
  return 0;
}

// `ktune tune SPEC`: tune every problem of a spec on the CPU and print the AUTOTUNE tables.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

#include "cli.h"
#include "ktune/cpu_backend.h"
#include "ktune/selector.h"
#include "ktune/spec.h"
#include "ktune/tuning_cache.h"

namespace ktune::cli {
namespace {

std::size_t half_of_physical_memory_mb() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) / 2 * static_cast<std::size_t>(page) >> 20;
}

struct TuneFlags {
  std::string spec;
  std::vector<std::string> problems;  // names or 0-based indices; empty: all
  unsigned jobs = 0;
  double budget_ms = BenchOptions{}.budget_ms;
  int min_runs = BenchOptions{}.min_runs;
  int max_runs = BenchOptions{}.max_runs;
  int warmup_runs = BenchOptions{}.warmup_runs;
  bool no_flush = false;
  bool no_cache = false;
  bool retune = false;
  std::string json_log;
  std::string cxx;
  std::string cxxflags;
  int compile_timeout_s = 120;
  std::optional<std::uint64_t> seed;
  int top = 10;
  bool quiet = false;
  bool in_process = false;
  long run_timeout_ms = 0;
  // Default: half of physical memory, so that a candidate allocating without bound is stopped
  // as resource_exhausted before the kernel's OOM killer picks a process. 0: no limit.
  std::size_t memory_limit_mb = half_of_physical_memory_mb();
};

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool wanted(const TuneFlags& f, const ProblemDecl& p, std::size_t index, const Problem& problem) {
  if (f.problems.empty()) return true;
  for (const std::string& w : f.problems) {
    if (w == p.name || w == problem.name || w == std::to_string(index)) return true;
  }
  return false;
}

int run_tune(const TuneFlags& f, const CliContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  auto spec = load_spec(f.spec);
  if (!spec) {
    fmt::print(stderr, "error: {}\n", spec.error().message);
    return kExitError;
  }
  CpuCompileOptions copts;
  if (!f.cxx.empty()) copts.compiler = f.cxx;
  if (!f.cxxflags.empty()) copts.flags = split_words(f.cxxflags);
  copts.timeout = std::chrono::seconds(f.compile_timeout_s);
  auto backend = CpuBackend::create(copts, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  std::unique_ptr<TuningCache> cache;
  if (f.no_cache) {
    cache = make_memory_cache();
  } else {
    auto opened = open_sqlite_cache(ctx.cache_dir);
    if (!opened) {
      fmt::print(stderr, "error: {}\n", opened.error().message);
      return kExitError;
    }
    cache = std::move(*opened);
  }
  auto choices = make_spec_choices(*spec);
  if (!choices) {
    fmt::print(stderr, "error: {}\n", choices.error().message);
    return kExitError;
  }

  SelectorOptions sopts;
  sopts.jobs = f.jobs;
  sopts.bench.budget_ms = f.budget_ms;
  sopts.bench.min_runs = f.min_runs;
  sopts.bench.max_runs = f.max_runs;
  sopts.bench.warmup_runs = f.warmup_runs;
  sopts.bench.flush_cache = !f.no_flush;
  sopts.read_cache = !f.no_cache && !f.retune;
  sopts.write_cache = !f.no_cache;
  sopts.table_rows = f.top;
  sopts.seed = f.seed.value_or(spec->seed);
  sopts.tolerance = spec->tolerance;
  sopts.json_log = f.json_log;
  if (f.quiet) sopts.progress = nullptr;
  sopts.isolate = !f.in_process;
  sopts.run_timeout = std::chrono::milliseconds(f.run_timeout_ms);
  sopts.worker.memory_limit_bytes = f.memory_limit_mb << 20;
  Selector selector(*backend, *cache, sopts);

  int failures = 0, tuned = 0, hits = 0;
  bool matched = false;
  for (std::size_t i = 0; i < spec->problems.size(); ++i) {
    auto problem = make_problem(*spec, spec->problems[i]);
    if (!problem) {
      fmt::print(stderr, "error: {}\n", problem.error().message);
      ++failures;
      continue;
    }
    if (!wanted(f, spec->problems[i], i, *problem)) continue;
    matched = true;
    auto sel = selector.select(*problem, choices->candidates, choices->reference.get());
    if (!sel) {
      fmt::print(stderr, "error: {}\n", sel.error().message);
      ++failures;
      continue;
    }
    ++tuned;
    hits += sel->from_cache;
    std::fflush(stdout);
  }
  if (!matched && !f.problems.empty()) {
    fmt::print(stderr, "error: {}: no problem matches --problem; the spec has {}\n", f.spec,
               spec->problems.size());
    return kExitError;
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("Tuned {} problem(s) in {:.3f} s ({} from the tuning cache{}); cache: {}\n", tuned,
             total_s, hits, failures ? fmt::format(", {} failed", failures) : "",
             f.no_cache ? "off" : ctx.cache_dir.string());
  return failures ? kExitError : 0;
}

}  // namespace

void add_tune_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<TuneFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "Tune every problem of a spec: compile all candidates in parallel, verify each "
      "against the reference, measure, pick the fastest and cache the result");
  cmd->add_option("spec", f->spec, "Spec file (YAML or JSON; docs/spec.md)")->required();
  cmd->add_option("--problem", f->problems,
                  "Tune only these problems (name or 0-based index; repeatable)");
  cmd->add_option("--jobs,-j", f->jobs, "Parallel compiles (default: all cores)");
  cmd->add_option("--budget-ms", f->budget_ms, "Timed milliseconds per candidate")
      ->capture_default_str();
  cmd->add_option("--min-runs", f->min_runs, "Timed runs at least")->capture_default_str();
  cmd->add_option("--max-runs", f->max_runs, "Timed runs at most")->capture_default_str();
  cmd->add_option("--warmup-runs", f->warmup_runs, "Untimed runs first")->capture_default_str();
  cmd->add_flag("--no-flush", f->no_flush, "Do not flush the CPU caches between timed runs");
  cmd->add_flag("--no-cache", f->no_cache, "Neither read nor write the tuning cache");
  cmd->add_flag("--retune", f->retune, "Ignore a cached result; tune again and overwrite it");
  cmd->add_option("--json-log", f->json_log, "Append JSON lines (one per candidate) to FILE");
  cmd->add_option("--cxx", f->cxx, "C++ compiler (default: $CXX, else c++)");
  cmd->add_option("--cxxflags", f->cxxflags,
                  "Compiler flags, replacing the defaults (-O3 -march=native -shared -fPIC "
                  "-std=c++17)");
  cmd->add_option("--compile-timeout-s", f->compile_timeout_s, "Deadline of one compile")
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of the input data (default: the spec's seed)");
  cmd->add_option("--top", f->top, "Rows of the AUTOTUNE table")->capture_default_str();
  cmd->add_flag("--quiet,-q", f->quiet, "No progress lines on stderr");
  cmd->add_flag("--in-process", f->in_process,
                "Run generated code in the ktune process instead of a ktune-worker (faster to "
                "start; a crashing candidate then ends the run)");
  cmd->add_option("--run-timeout-ms", f->run_timeout_ms,
                  "Deadline of one candidate in a worker (default: from the reference's time, at "
                  "least 10 s)");
  cmd->add_option("--memory-limit-mb", f->memory_limit_mb,
                  "Stop a candidate whose worker's resident memory exceeds this, as "
                  "resource_exhausted; 0: no limit")
      ->capture_default_str();
  cmd->callback([f, &ctx] { ctx.exit_code = run_tune(*f, ctx); });
}

}  // namespace ktune::cli

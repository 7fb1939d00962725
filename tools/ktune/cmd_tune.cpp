// `ktune tune SPEC`: tune every problem of a spec and print the AUTOTUNE tables: a kernel spec on
// the CPU, an `op: cuda.gemm` spec on a CUDA GPU exactly as `ktune gemm` (gemm_run.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

#include "cli.h"
#include "gemm_run.h"
#include "ktune/backend/cpu_backend.h"
#include "ktune/select/selector.h"
#include "ktune/spec/spec.h"
#include "ktune/cache/tuning_cache.h"

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
  // Unset: BenchOptions' defaults for a kernel spec, `ktune gemm`'s (GemmOptions) for an op spec.
  std::optional<double> budget_ms;
  std::optional<int> min_runs;
  std::optional<int> max_runs;
  std::optional<int> warmup_runs;
  bool no_flush = false;
  bool no_cache = false;
  bool retune = false;
  std::string json_log;
  std::string cxx;
  std::string cxxflags;
  std::optional<int> compile_timeout_s;  // unset: 120
  std::optional<std::uint64_t> seed;
  int top = 10;
  bool quiet = false;
  bool in_process = false;
  long run_timeout_ms = 0;
  // Unset: half of physical memory, so that a candidate allocating without bound is stopped
  // as resource_exhausted before the kernel's OOM killer picks a process. 0: no limit.
  std::optional<std::size_t> memory_limit_mb;
  // Op specs (cuda.gemm): `ktune gemm`'s defaults; --device, --arch and --compile-only set here.
  GemmOptions gemm;
};

// The flags given that the spec's form does not use: a usage error rather than silently ignored.
std::vector<std::string> unused_flags(const TuneFlags& f, bool op_spec) {
  std::vector<std::string> out;
  auto given = [&](bool set, const char* flag) {
    if (set) out.emplace_back(flag);
  };
  if (op_spec) {
    given(f.no_flush, "--no-flush");
    given(!f.cxx.empty(), "--cxx");
    given(!f.cxxflags.empty(), "--cxxflags");
    given(f.compile_timeout_s.has_value(), "--compile-timeout-s");
    given(f.memory_limit_mb.has_value(), "--memory-limit-mb");
  } else {
    given(f.gemm.device != 0, "--device");
    given(!f.gemm.arch.empty(), "--arch");
    given(f.gemm.compile_only, "--compile-only");
  }
  return out;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool wanted(const TuneFlags& f, const ProblemDecl& p, std::size_t index,
            std::string_view problem_name) {
  if (f.problems.empty()) return true;
  for (const std::string& w : f.problems) {
    if (w == p.name || w == problem_name || w == std::to_string(index)) return true;
  }
  return false;
}

int report(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
           std::chrono::steady_clock::time_point t0, bool matched, int tuned, int hits,
           int failures) {
  if (!matched && !f.problems.empty()) {
    fmt::print(stderr, "error: {}: no problem matches --problem; the spec has {}\n", f.spec,
               spec.problems.size());
    return kExitError;
  }
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (f.gemm.compile_only) {
    fmt::print("Compiled the candidates of {} problem(s) in {:.3f} s{}\n", tuned, total_s,
               failures ? fmt::format(" ({} failed)", failures) : "");
  } else {
    fmt::print("Tuned {} problem(s) in {:.3f} s ({} from the tuning cache{}); cache: {}\n", tuned,
               total_s, hits, failures ? fmt::format(", {} failed", failures) : "",
               f.no_cache ? "off" : ctx.cache_dir.string());
  }
  return failures ? kExitError : 0;
}

// op: cuda.gemm: each problem through tune_gemm, with `ktune gemm`'s defaults where this
// command's flags are not given, so that the tuning-cache key is the one `ktune gemm` uses.
int run_gemm_spec(const TuneFlags& f, const CliContext& ctx, const Spec& spec,
                  std::chrono::steady_clock::time_point t0) {
  GemmOptions o = f.gemm;
  o.jobs = f.jobs;
  o.budget_ms = f.budget_ms.value_or(o.budget_ms);
  o.min_runs = f.min_runs.value_or(o.min_runs);
  o.max_runs = f.max_runs.value_or(o.max_runs);
  o.warmup_runs = f.warmup_runs.value_or(o.warmup_runs);
  o.no_cache = f.no_cache;
  o.retune = f.retune;
  o.in_process = f.in_process;
  o.quiet = f.quiet;
  o.top = f.top;
  o.json_log = f.json_log;
  o.run_timeout_ms = f.run_timeout_ms;
  o.seed = f.seed.value_or(spec.seed);
  auto backend = open_gemm_backend(o, ctx);
  if (!backend) return kExitError;

  int failures = 0, tuned = 0, hits = 0;
  bool matched = false;
  for (std::size_t i = 0; i < spec.problems.size(); ++i) {
    const ProblemDecl& decl = spec.problems[i];
    // parse_op_spec made sure that every problem binds M, N and K.
    const GemmShape shape{*problem_size(decl, "M"), *problem_size(decl, "N"),
                          *problem_size(decl, "K"), spec.op.dtype, spec.epilogue};
    if (!wanted(f, decl, i, decl.name)) continue;
    matched = true;
    const GemmRun run = tune_gemm(*backend, shape, o, ctx);
    if (run.exit_code != 0) {
      ++failures;
      continue;
    }
    ++tuned;
    hits += run.from_cache;
    std::fflush(stdout);
  }
  return report(f, ctx, spec, t0, matched, tuned, hits, failures);
}

int run_tune(const TuneFlags& f, const CliContext& ctx) {
  const auto t0 = std::chrono::steady_clock::now();
  auto spec = load_spec(f.spec);
  if (!spec) {
    fmt::print(stderr, "error: {}\n", spec.error().message);
    return kExitError;
  }
  const bool op_spec = !spec->op.name.empty();
  if (auto unused = unused_flags(f, op_spec); !unused.empty()) {
    fmt::print(stderr, "error: {}: {} {} not apply to {}\n", f.spec, fmt::join(unused, ", "),
               unused.size() == 1 ? "does" : "do",
               op_spec ? fmt::format("op: {} specs", spec->op.name)
                       : std::string("kernel specs (only to op: specs)"));
    return kExitUsage;
  }
  if (op_spec) return run_gemm_spec(f, ctx, *spec, t0);  // cuda.gemm, the one op
  CpuCompileOptions copts;
  if (!f.cxx.empty()) copts.compiler = f.cxx;
  if (!f.cxxflags.empty()) copts.flags = split_words(f.cxxflags);
  copts.timeout = std::chrono::seconds(f.compile_timeout_s.value_or(120));
  auto backend = CpuBackend::create(copts, ctx.cache_dir);
  if (!backend) {
    fmt::print(stderr, "error: {}\n", backend.error().message);
    return kExitError;
  }
  std::unique_ptr<TuningCache> cache = open_tuning_cache(f.no_cache, ctx);
  if (!cache) return kExitError;
  auto choices = make_spec_choices(*spec);
  if (!choices) {
    fmt::print(stderr, "error: {}\n", choices.error().message);
    return kExitError;
  }

  SelectorOptions sopts;
  sopts.jobs = f.jobs;
  sopts.bench.budget_ms = f.budget_ms.value_or(sopts.bench.budget_ms);
  sopts.bench.min_runs = f.min_runs.value_or(sopts.bench.min_runs);
  sopts.bench.max_runs = f.max_runs.value_or(sopts.bench.max_runs);
  sopts.bench.warmup_runs = f.warmup_runs.value_or(sopts.bench.warmup_runs);
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
  sopts.worker.memory_limit_bytes = f.memory_limit_mb.value_or(half_of_physical_memory_mb()) << 20;
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
    if (!wanted(f, spec->problems[i], i, problem->name)) continue;
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
  return report(f, ctx, *spec, t0, matched, tuned, hits, failures);
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
  // Defaults said in words: an op spec takes `ktune gemm`'s, a kernel spec the CPU's.
  const BenchOptions cpu;
  const GemmOptions gpu;
  auto defaults = [](auto cpu_value, auto gpu_value) {
    return fmt::format(" (default: {}; op specs: {}, as ktune gemm)", cpu_value, gpu_value);
  };
  cmd->add_option("--budget-ms", f->budget_ms,
                  "Timed milliseconds per candidate" + defaults(cpu.budget_ms, gpu.budget_ms));
  cmd->add_option("--min-runs", f->min_runs,
                  "Timed runs at least" + defaults(cpu.min_runs, gpu.min_runs));
  cmd->add_option("--max-runs", f->max_runs,
                  "Timed runs at most" + defaults(cpu.max_runs, gpu.max_runs));
  cmd->add_option("--warmup-runs", f->warmup_runs,
                  "Untimed runs first" + defaults(cpu.warmup_runs, gpu.warmup_runs));
  cmd->add_flag("--no-flush", f->no_flush, "Do not flush the CPU caches between timed runs");
  cmd->add_flag("--no-cache", f->no_cache, "Neither read nor write the tuning cache");
  cmd->add_flag("--retune", f->retune, "Ignore a cached result; tune again and overwrite it");
  cmd->add_option("--json-log", f->json_log, "Append JSON lines (one per candidate) to FILE");
  cmd->add_option("--cxx", f->cxx, "C++ compiler (default: $CXX, else c++)");
  cmd->add_option("--cxxflags", f->cxxflags,
                  "Compiler flags, replacing the defaults (-O3 -march=native -shared -fPIC "
                  "-std=c++17)");
  cmd->add_option("--compile-timeout-s", f->compile_timeout_s,
                  "Deadline of one compile (default: 120)");
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
                  fmt::format("Stop a candidate whose worker's resident memory exceeds this, as "
                              "resource_exhausted; 0: no limit (default: half of physical "
                              "memory, {})",
                              half_of_physical_memory_mb()));
  add_gemm_target_flags(*cmd, f->gemm, "op specs: ");
  cmd->callback([f, &ctx] { ctx.exit_code = run_tune(*f, ctx); });
}

}  // namespace ktune::cli

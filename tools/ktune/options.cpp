// add_selector_flags, to_selector_options and verbose_compile_hook (options.h).
#include "options.h"

#include <fmt/format.h>

#include "select/progress_line.h"

namespace ktune::cli {
namespace {

// " (default: 100)", or with op defaults " (default: 100; op specs: 20, as ktune gemm)".
template <class F>
std::string defaults_text(const SelectorFlagDefaults& d, F value) {
  if (!d.op_defaults) return fmt::format(" (default: {})", value(d.defaults));
  return fmt::format(" (default: {}; op specs: {}, as ktune gemm)", value(d.defaults),
                     value(*d.op_defaults));
}

}  // namespace

void add_selector_flags(CLI::App& cmd, SelectorFlags& f, const SelectorFlagDefaults& d) {
  using O = const SelectorOptions&;
  cmd.add_option("--jobs,-j", f.jobs, "Parallel compiles (default: all cores)");
  cmd.add_option(
      "--budget-ms", f.budget_ms,
      "Timed milliseconds per candidate" + defaults_text(d, [](O o) { return o.bench.budget_ms; }));
  cmd.add_option("--min-runs", f.min_runs,
                 "Timed runs at least" + defaults_text(d, [](O o) { return o.bench.min_runs; }));
  cmd.add_option("--max-runs", f.max_runs,
                 "Timed runs at most" + defaults_text(d, [](O o) { return o.bench.max_runs; }));
  cmd.add_option("--warmup-runs", f.warmup_runs,
                 "Untimed runs first" + defaults_text(d, [](O o) { return o.bench.warmup_runs; }));
  cmd.add_option("--close-call-band", f.close_call_band,
                 "Candidates within this fraction of the fastest are measured again, "
                 "alternating; 0: the first measurements decide" +
                     defaults_text(d, [](O o) { return o.close_call_band; }))
      ->check(CLI::Range(0.0, 10.0));
  cmd.add_option("--decide-rounds", f.decide_rounds,
                 "Alternating rounds of those close calls at most (twice as many while the "
                 "machine is noisy); 0: none" +
                     defaults_text(d, [](O o) { return o.close_call_rounds; }))
      ->check(CLI::Range(0, 1000));
  // Op specs are tuned as `ktune gemm`, which does not take the host flags.
  const std::string host_only = d.op_defaults ? " (not for op specs)" : "";
  if (d.host_flags) {
    cmd.add_flag("--no-flush", f.no_flush,
                 "Do not flush the CPU caches between timed runs" + host_only);
  }
  cmd.add_flag("--no-cache", f.no_cache, "Neither read nor write the tuning cache");
  cmd.add_flag("--retune", f.retune, "Ignore a cached result; tune again and overwrite it");
  cmd.add_option("--seed", f.seed, "Seed of the input data (default: the spec's, else 0)");
  cmd.add_option("--top", f.top,
                 "Rows of the AUTOTUNE table" + defaults_text(d, [](O o) { return o.table_rows; }));
  cmd.add_flag("--quiet,-q", f.quiet, d.quiet_help);
  cmd.add_flag("--verbose,-v", f.verbose,
               "Also print each compiler command line and each worker restart (which candidate, "
               "why) on stderr");
  cmd.add_flag("--in-process", f.in_process,
               "Run generated code in the ktune process instead of a ktune-worker (faster to "
               "start; a crashing candidate then ends the run)");
  cmd.add_option("--run-timeout-ms", f.run_timeout_ms,
                 "Deadline of one candidate in a worker (default: from the reference's time, at "
                 "least 10 s)");
  if (d.host_flags) {
    cmd.add_option("--memory-limit-mb", f.memory_limit_mb,
                   "Stop a candidate whose worker's resident memory exceeds this, as "
                   "resource_exhausted; 0: no limit" +
                       host_only +
                       fmt::format(" (default: {})", d.defaults.worker.memory_limit_bytes >> 20));
  }
  cmd.add_option("--json-log", f.json_log, "Append JSON lines (one per candidate) to FILE");
}

SelectorOptions to_selector_options(const SelectorFlags& flags, SelectorOptions base) {
  const SelectorFlags& f = flags;
  SelectorOptions& o = base;
  if (f.jobs != 0) o.jobs = f.jobs;
  o.bench.budget_ms = f.budget_ms.value_or(o.bench.budget_ms);
  o.bench.min_runs = f.min_runs.value_or(o.bench.min_runs);
  o.bench.max_runs = f.max_runs.value_or(o.bench.max_runs);
  o.bench.warmup_runs = f.warmup_runs.value_or(o.bench.warmup_runs);
  o.close_call_band = f.close_call_band.value_or(o.close_call_band);
  if (f.decide_rounds) {
    o.close_call_rounds = *f.decide_rounds;
    o.noisy_rounds = 2 * *f.decide_rounds;
  }
  if (f.no_flush) o.bench.flush_cache = false;
  o.read_cache = o.read_cache && !f.no_cache && !f.retune;
  o.write_cache = o.write_cache && !f.no_cache;
  o.seed = f.seed.value_or(o.seed);
  o.table_rows = f.top.value_or(o.table_rows);
  if (f.quiet) o.progress = nullptr;
  o.verbose = f.verbose && !f.quiet;
  if (f.in_process) o.isolate = false;
  if (f.run_timeout_ms) o.run_timeout = std::chrono::milliseconds(*f.run_timeout_ms);
  if (f.memory_limit_mb) o.worker.memory_limit_bytes = *f.memory_limit_mb << 20;
  if (!f.json_log.empty()) o.json_log = f.json_log;
  return o;
}

std::function<void(const std::string&, const std::string&)> verbose_compile_hook(
    const SelectorFlags& flags) {
  if (!flags.verbose || flags.quiet) return {};
  return [](const std::string& kernel, const std::string& command) {
    progress_note(stderr, fmt::format("compile {}: {}", kernel, command));
  };
}

}  // namespace ktune::cli

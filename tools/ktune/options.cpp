// add_selector_flags, to_selector_options, preflight, the stored-settings note and
// verbose_compile_hook (options.h).
#include "options.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "cli.h"
#include "ktune/tuning/devices.h"
#include "ktune/worker/worker_options.h"
#include "select/progress_line.h"

namespace ktune::cli {
namespace {

// The ranges of the numeric flags: wide enough for any real use, narrow enough that a slip
// (a negative count, a budget of 0) is a usage error naming the range rather than a tuning that
// measures nothing or forever.
constexpr unsigned kMaxJobs = 4096;
constexpr double kMinBudgetMs = 0.001;
constexpr double kMaxBudgetMs = 3'600'000;  // an hour per candidate
constexpr int kMaxRuns = 1'000'000;
constexpr long kMaxTimeoutMs = 86'400'000;                  // a day
constexpr std::size_t kMaxMemoryMb = std::size_t{1} << 30;  // a pebibyte
constexpr double kMinTimeLimitS = 0.001;
constexpr double kMaxTimeLimitS = 31'536'000;  // a year

// CLI11 reads "-1" into an unsigned 64-bit flag as 2^64 - 1, which CLI::Range then accepts.
const CLI::Validator kUnsignedRange(
    [](const std::string& text) {
      if (!text.starts_with('-')) return std::string();
      return fmt::format("Value {} not in range 0 to {}", text,
                         std::numeric_limits<std::uint64_t>::max());
    },
    "UINT64");

// --strategy: one of the search module's names, listed in the message otherwise.
const CLI::Validator kStrategyName(
    [](const std::string& text) {
      const std::vector<std::string_view> names = strategy_names();
      for (std::string_view n : names) {
        if (n == text) return std::string();
      }
      return fmt::format("unknown strategy '{}'; expected one of {}", text, fmt::join(names, ", "));
    },
    "STRATEGY");

// " (default: 100)", or with op defaults " (default: 100; op and cuda specs: 20, as ktune gemm;
// opencl specs: 50)".
template <class F>
std::string defaults_text(const SelectorFlagDefaults& d, F value) {
  if (!d.op_defaults) return fmt::format(" (default: {})", value(d.defaults));
  std::string opencl =
      d.opencl_defaults ? fmt::format("; opencl specs: {}", value(*d.opencl_defaults)) : "";
  return fmt::format(" (default: {}; op and cuda specs: {}, as ktune gemm{})", value(d.defaults),
                     value(*d.op_defaults), opencl);
}

}  // namespace

void add_devices_flag(CLI::App& cmd, SelectorFlags& f) {
  cmd.add_option("--devices", f.devices,
                 "Measure on several devices at once, one worker each, the candidates going to "
                 "the first idle one (the close calls and the pick are measured again on the "
                 "first device listed): CUDA GPUs or OpenCL devices of one platform by index "
                 "(0,1,3) or all; on the CPU, disjoint cores or core ranges of equal size, one "
                 "device each, its worker pinned to them (0-3,4-7: the picks are for 4 cores, "
                 "and stored apart from whole-machine ones). Every device must be the same "
                 "model. Default: one device");
}

bool apply_devices(const SelectorFlags& f, const Backend& backend, SelectorOptions& o) {
  if (f.devices.empty()) return true;
  if (f.in_process) {
    fmt::print(stderr,
               "error: --devices runs a worker per device; it cannot be combined with "
               "--in-process\n");
    return false;
  }
  auto slots = device_slots(f.devices, backend);
  if (!slots) {
    fmt::print(stderr, "error: {}\n", slots.error().message);
    return false;
  }
  o.devices = std::move(*slots);
  return true;
}

void add_selector_flags(CLI::App& cmd, SelectorFlags& f, const SelectorFlagDefaults& d) {
  using O = const SelectorOptions&;
  cmd.add_option("--jobs,-j", f.jobs, "Parallel compiles (default: all cores)")
      ->check(CLI::Range(1u, kMaxJobs));
  cmd.add_option("--budget-ms", f.budget_ms,
                 "Timed milliseconds per candidate" +
                     defaults_text(d, [](O o) { return o.bench.budget_ms; }))
      ->check(CLI::Range(kMinBudgetMs, kMaxBudgetMs));
  cmd.add_option("--min-runs", f.min_runs,
                 "Timed runs at least" + defaults_text(d, [](O o) { return o.bench.min_runs; }))
      ->check(CLI::Range(1, kMaxRuns));
  cmd.add_option("--max-runs", f.max_runs,
                 "Timed runs at most" + defaults_text(d, [](O o) { return o.bench.max_runs; }))
      ->check(CLI::Range(1, kMaxRuns));
  cmd.add_option("--warmup-runs", f.warmup_runs,
                 "Untimed runs first" + defaults_text(d, [](O o) { return o.bench.warmup_runs; }))
      ->check(CLI::Range(0, kMaxRuns));
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
  cmd.add_option("--seed", f.seed, "Seed of the input data (default: the spec's, else 0)")
      ->check(kUnsignedRange);
  cmd.add_option("--top", f.top,
                 "Rows of the AUTOTUNE table" + defaults_text(d, [](O o) { return o.table_rows; }))
      ->check(CLI::Range(0, kMaxRuns));
  cmd.add_flag("--quiet,-q", f.quiet, d.quiet_help);
  cmd.add_flag("--verbose,-v", f.verbose,
               "Also print each compiler command line and each worker restart (which candidate, "
               "why) on stderr");
  cmd.add_flag("--in-process", f.in_process,
               "Run generated code in the ktune process instead of a ktune-worker (faster to "
               "start; a crashing candidate then ends the run)");
  cmd.add_option("--run-timeout-ms", f.run_timeout_ms,
                 "Deadline of one candidate in a worker (default: a few times the best "
                 "candidate's so far plus 2 s; before the first, from the reference's time, at "
                 "least 10 s)")
      ->check(CLI::Range(1L, kMaxTimeoutMs));
  cmd.add_flag("--no-abandon", f.no_abandon,
               "Measure every candidate to its full budget, even one whose first runs are "
               "clearly slower than the best so far");
  cmd.add_flag("--no-decide-ahead", f.no_decide_ahead,
               "On a GPU or OpenCL device, run every round of the decide stage after the "
               "search, instead of starting them while the search waits on compiles");
  if (d.host_flags) {
    cmd.add_option("--memory-limit-mb", f.memory_limit_mb,
                   "Stop a candidate whose worker's resident memory exceeds this, as "
                   "resource_exhausted; 0: no limit" +
                       host_only +
                       fmt::format(" (default: {})", d.defaults.worker.memory_limit_bytes >> 20))
        ->check(CLI::Range(std::size_t{0}, kMaxMemoryMb));
  }
  cmd.add_option("--json-log", f.json_log, "Append JSON lines (one per candidate) to FILE");
  cmd.add_option("--trace", f.trace,
                 "Append a timeline of the run (compiles, worker requests and their phases) to "
                 "FILE as Chrome trace events, for ui.perfetto.dev or chrome://tracing; the same "
                 "as KTUNE_TRACE=FILE")
      ->each([](const std::string& path) {
        // Opened now, so that a typo fails before any work; the processes append to it later.
        const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                              S_IRUSR | S_IWUSR);
        if (fd < 0) {
          throw CLI::ValidationError("--trace", fmt::format("{}: cannot open for appending: {}",
                                                            path, std::strerror(errno)));
        }
        ::close(fd);
        ::setenv("KTUNE_TRACE", path.c_str(), 1);
      });
  cmd.add_option("--strategy", f.strategy,
                 fmt::format("Search strategy: which candidates are compiled and measured ({}; "
                             "default: the spec's search.strategy, else auto: every candidate of "
                             "a small space)",
                             fmt::join(strategy_names(), ", ")))
      ->check(kStrategyName);
  cmd.add_option("--max-evals", f.max_evals,
                 "Candidates compiled and measured at most (a compile failure counts); the rest "
                 "are not_evaluated (default: the spec's search.max_evals, else none)")
      ->check(kUnsignedRange)
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  cmd.add_option("--time-limit-s", f.time_limit_s,
                 "Seconds of compiling and measuring at most, checked between candidates "
                 "(default: the spec's search.time_limit_s, else none)")
      ->check(CLI::Range(kMinTimeLimitS, kMaxTimeLimitS));
  cmd.add_option("--search-seed", f.search_seed,
                 "Seed of the search strategy (default: the spec's search.seed, else 0)")
      ->check(kUnsignedRange);
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
  if (f.no_abandon) o.abandon = false;
  if (f.no_decide_ahead) o.decide_ahead = false;
  if (f.memory_limit_mb) o.worker.memory_limit_bytes = *f.memory_limit_mb << 20;
  // The CLI exits soon after its selections: it need not wait for each worker's exit (a CUDA
  // context's teardown, 60-80 ms and more on an H200; WorkerOptions::wait_at_shutdown).
  o.worker.wait_at_shutdown = false;
  if (!f.json_log.empty()) o.json_log = f.json_log;
  if (f.json) o.out = stderr;  // stdout holds the --json document
  if (f.strategy) o.search.strategy = *f.strategy;
  if (f.max_evals) o.search.max_evals = *f.max_evals;
  if (f.time_limit_s) o.search.time_limit_s = *f.time_limit_s;
  if (f.search_seed) o.search.seed = *f.search_seed;
  return o;
}

int preflight(const SelectorOptions& o) {
  if (o.bench.min_runs > o.bench.max_runs) {
    fmt::print(stderr,
               "error: --min-runs {} is above --max-runs {}: expected --min-runs <= --max-runs "
               "(each defaults to the command's value shown in --help)\n",
               o.bench.min_runs, o.bench.max_runs);
    return kExitUsage;
  }
  if (!o.json_log.empty()) {
    // Opened for appending as JsonLog will, so that a typo in the folder fails now rather than
    // after the compiles and measurements whose lines it was meant to keep.
    std::FILE* f = std::fopen(o.json_log.c_str(), "a");
    if (f == nullptr) {
      fmt::print(stderr, "error: --json-log {}: cannot open for appending: {}\n",
                 o.json_log.string(), std::strerror(errno));
      return kExitError;
    }
    std::fclose(f);
  }
  if (o.isolate && o.worker.executable.empty()) {
    // Found now, not by the first worker start after every candidate has compiled.
    if (auto worker = find_worker_executable(); !worker) {
      fmt::print(stderr,
                 "error: {}\n  (or pass --in-process to run the candidates in the ktune process, "
                 "without isolation)\n",
                 worker.error().message);
      return kExitError;
    }
  }
  return 0;
}

std::string settings_as_flags(const MeasureSettings& s) {
  std::string out = fmt::format("--budget-ms {} --min-runs {} --max-runs {} --warmup-runs {}",
                                s.budget_ms, s.min_runs, s.max_runs, s.warmup_runs);
  if (!s.flush_cache) out += " --no-flush";
  if (s.graph_calls != 0) out += fmt::format(" --graph-calls {}", s.graph_calls);
  return out + fmt::format(" --close-call-band {} --decide-rounds {}", s.close_call_band,
                           s.decide_rounds);
}

std::string stored_settings_note(const SelectorFlags& f, std::optional<int> graph_calls,
                                 const TuningRecord& record) {
  // The measurement flags given whose value differs from the record's (all of them when the
  // record has no settings).
  const std::optional<MeasureSettings>& s = record.settings;
  std::vector<std::string> differ;
  auto check = [&](bool set, bool differs, std::string flag) {
    if (set && (!s || differs)) differ.push_back(std::move(flag));
  };
  check(f.budget_ms.has_value(), s && f.budget_ms != s->budget_ms,
        fmt::format("--budget-ms {}", f.budget_ms.value_or(0)));
  check(f.min_runs.has_value(), s && f.min_runs != s->min_runs,
        fmt::format("--min-runs {}", f.min_runs.value_or(0)));
  check(f.max_runs.has_value(), s && f.max_runs != s->max_runs,
        fmt::format("--max-runs {}", f.max_runs.value_or(0)));
  check(f.warmup_runs.has_value(), s && f.warmup_runs != s->warmup_runs,
        fmt::format("--warmup-runs {}", f.warmup_runs.value_or(0)));
  check(f.no_flush, s && s->flush_cache, "--no-flush");
  check(graph_calls.has_value(), s && graph_calls != s->graph_calls,
        fmt::format("--graph-calls {}", graph_calls.value_or(0)));
  check(f.close_call_band.has_value(), s && f.close_call_band != s->close_call_band,
        fmt::format("--close-call-band {}", f.close_call_band.value_or(0)));
  check(f.decide_rounds.has_value(), s && f.decide_rounds != s->decide_rounds,
        fmt::format("--decide-rounds {}", f.decide_rounds.value_or(0)));
  if (differ.empty()) return {};
  if (!s) {
    return fmt::format(
        "[tuning cache] stored by an older ktune without its measurement settings; the flags "
        "given ({}) may differ; --retune to tune with them\n",
        fmt::join(differ, " "));
  }
  return fmt::format(
      "[tuning cache] stored with {}; the flags given differ ({}); --retune to tune with them\n",
      settings_as_flags(*s), fmt::join(differ, " "));
}

std::function<void(const std::string&, const std::string&)> verbose_compile_hook(
    const SelectorFlags& flags) {
  if (!flags.verbose || flags.quiet) return {};
  return [](const std::string& kernel, const std::string& command) {
    progress_note(stderr, fmt::format("compile {}: {}", kernel, command));
  };
}

}  // namespace ktune::cli

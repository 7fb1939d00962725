// The flags that every tuning command (tune, gemm, opencl-gemm, compile) shares, registered by one
// function and mapped to SelectorOptions by one other, so that a flag is spelled, described and
// applied the same way everywhere. Each command passes its own defaults.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ktune/select/selector.h"

namespace ktune::cli {

// As typed; unset optionals take the command's defaults in to_selector_options.
struct SelectorFlags {
  unsigned jobs = 0;  // 0: the defaults' (all cores)
  std::optional<double> budget_ms;
  std::optional<int> min_runs;
  std::optional<int> max_runs;
  std::optional<int> warmup_runs;
  std::optional<double> close_call_band;
  std::optional<int> decide_rounds;
  bool no_flush = false;
  bool no_cache = false;
  bool retune = false;
  std::optional<std::uint64_t> seed;
  std::optional<int> top;
  bool quiet = false;
  bool verbose = false;
  bool in_process = false;
  std::optional<long> run_timeout_ms;
  bool no_abandon = false;
  bool no_decide_ahead = false;
  std::optional<std::size_t> memory_limit_mb;  // 0: no limit
  std::string json_log;
  bool json = false;  // --json (`tune`, `gemm`; json_out.h): the tables go to stderr
  std::string trace;  // --trace: KTUNE_TRACE for this process and its workers (core/trace.h)
  // The search (override the spec's `search:`): strategy, candidates measured at most, wall
  // time of compiling and measuring, the strategy's seed.
  std::optional<std::string> strategy;
  std::optional<std::uint64_t> max_evals;
  std::optional<double> time_limit_s;
  std::optional<std::uint64_t> search_seed;
  // --devices (add_devices_flag; `tune`, `gemm`, `opencl-gemm`, `compile`): empty: one device.
  std::string devices;
};

struct SelectorFlagDefaults {
  // What an unset flag means for this command, as shown in --help.
  SelectorOptions defaults;
  // `ktune tune`: the defaults of op specs (`ktune gemm`'s), shown next to the others.
  std::optional<SelectorOptions> op_defaults;
  // --no-flush and --memory-limit-mb bound CPU candidates (the flush of the CPU caches, a worker's
  // resident memory); `ktune gemm` does not take them.
  bool host_flags = true;
  // What --quiet silences for this command.
  std::string quiet_help = "No progress lines on stderr";
  // `ktune tune`: the defaults of opencl kernel specs (`ktune opencl-gemm`'s). Last, so that
  // positional initialisers stay valid.
  std::optional<SelectorOptions> opencl_defaults{};
};

// --m, --n and --k of the GEMM commands: a size of at least 1 that a 64-bit element count holds.
inline const CLI::Range kSizeRange(std::int64_t{1}, std::int64_t{1} << 31);

// Registers --jobs/-j, --budget-ms, --min-runs, --max-runs, --warmup-runs, --close-call-band,
// --no-flush, --no-cache, --retune, --seed, --top, --quiet/-q, --in-process, --run-timeout-ms,
// --no-abandon, --no-decide-ahead, --memory-limit-mb, --json-log, --strategy, --max-evals,
// --time-limit-s and
// --search-seed on `cmd`, bound to `flags`.
void add_selector_flags(CLI::App& cmd, SelectorFlags& flags, const SelectorFlagDefaults& d);

// --devices on `cmd`, bound to flags.devices: `tune`, `gemm` and `opencl-gemm` take it.
void add_devices_flag(CLI::App& cmd, SelectorFlags& flags);

// --devices for `backend` into o.devices (ktune/tuning/devices.h), checked against the machine.
// False, with the error printed, when the list is wrong, cannot be served on this machine, or
// comes with --in-process (several devices need a worker each).
[[nodiscard]] bool apply_devices(const SelectorFlags& flags, const Backend& backend,
                                 SelectorOptions& o);

// `base` (the command's defaults) with every flag given applied over it. --quiet silences the
// progress lines only; --no-cache and --retune set read_cache and write_cache (the cache itself
// is open_tuning_cache's).
[[nodiscard]] SelectorOptions to_selector_options(const SelectorFlags& flags, SelectorOptions base);

// After parsing and before anything is compiled, what the per-flag range checks cannot see, so
// that a run fails at once rather than after its compiles: --min-runs above --max-runs (either
// against the other's default; exit 2), a --json-log that cannot be opened for appending, and,
// unless --in-process, a ktune-worker that cannot be found (where it looked; exit 1). 0 when all
// is well; otherwise the error is printed and the exit code returned.
[[nodiscard]] int preflight(const SelectorOptions& resolved);

// "--budget-ms 100 --min-runs 3 ...": the settings as the flags that ask for them.
[[nodiscard]] std::string settings_as_flags(const MeasureSettings& settings);

// On a tuning-cache hit, the measurement flags given explicitly (--budget-ms, --min-runs,
// --max-runs, --warmup-runs, --no-flush, --graph-calls, --close-call-band, --decide-rounds) are
// not in the key, so that tweaking one still finds an earlier tuning; but they must not be
// silently ignored. The line that says which stored settings answered and that --retune tunes
// with the flags, when one given differs from them (or the record predates stored settings);
// empty otherwise. `graph_calls`: the value in effect when the flag was given (`ktune gemm`).
[[nodiscard]] std::string stored_settings_note(const SelectorFlags& flags,
                                               std::optional<int> graph_calls,
                                               const TuningRecord& record);

// --verbose: each compiler command line on stderr, through the progress lines (a live line is
// cleared for it and redrawn); empty without --verbose or with --quiet.
// The OpenCL commands' defaults (`ktune opencl-gemm`, `ktune tune` on an opencl kernel): a
// budget for devices from PoCL to GPUs. Defined in cmd_opencl.cpp.
[[nodiscard]] SelectorOptions opencl_defaults();

[[nodiscard]] std::function<void(const std::string&, const std::string&)> verbose_compile_hook(
    const SelectorFlags& flags);

}  // namespace ktune::cli

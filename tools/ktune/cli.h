// The ktune CLI: shared context and one registration function per subcommand (cmd_<verb>.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/select/selector.h"

namespace ktune::cli {

// Exit codes: 0 success, 1 a reported error, 2 a usage error.
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct CliContext {
  std::filesystem::path cache_dir;  // --cache-dir, else $KTUNE_CACHE_DIR, else ~/.cache/ktune
  // --cache, else $KTUNE_CACHE_URL: a shared tuning cache (redis://...), checked by
  // parse_cache_url when parsed; empty: the SQLite tuning cache in cache_dir.
  std::string cache_url;
  // Where open_cache_in found the tuning cache: the URL, or cache_dir when Redis could not be
  // opened (set by open_cache_in, for cache_location's messages).
  mutable std::string cache_in_use;
  bool allow_shared_cache_dir = false;  // --allow-shared-cache-dir
  int exit_code = 0;
};

// Before a command uses ctx.cache_dir: the code cache folder must be this user's alone (refused
// otherwise, a warning with --allow-shared-cache-dir), and the temporaries that a killed ktune
// left in it are removed. False, with the error printed, when the folder is refused.
[[nodiscard]] bool prepare_cache_dir(const CliContext& ctx);
// The SQLite tuning cache in ctx.cache_dir (prepare_cache_dir first). Null, with the error
// printed, when it cannot be opened or its folder is refused.
[[nodiscard]] std::unique_ptr<TuningCache> open_sqlite_in(const CliContext& ctx);
// The tuning cache of ctx.cache_url, with the SQLite one of ctx.cache_dir behind it (taken, with
// one warning, when the shared one is unreachable: make_fallback_cache); without a URL,
// open_sqlite_in(ctx). Null, with the error printed, when it cannot be opened (the SQLite one,
// or a redis:// URL in a build without Redis support).
[[nodiscard]] std::unique_ptr<TuningCache> open_cache_in(const CliContext& ctx);

// --compile-only: the choices that `wanted` accepts (all without it) compiled on `jobs` threads
// (0: all cores), each failure printed to stderr as "error: <choice>: <message>".
struct CompileCounts {
  int compiled = 0;
  int failed = 0;
};
[[nodiscard]] CompileCounts compile_choices(const Backend& backend, std::vector<ChoicePtr>& choices,
                                            unsigned jobs,
                                            const std::function<bool(const Choice&)>& wanted = {});
// The tuning cache of the tuning commands: in memory with --no-cache, else open_cache_in(ctx).
// Null, with the error printed, when that cannot be opened.
[[nodiscard]] std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx);
// Where open_cache_in's records are, for messages: the URL (without credentials), or the folder
// (no URL, or Redis could not be opened: the local cache serves).
[[nodiscard]] std::string cache_location(const CliContext& ctx);
// The check of --cache and $KTUNE_CACHE_URL: empty when `url` parses, else why not.
[[nodiscard]] std::string check_cache_url(const std::string& url);

// The folder of the per-device locks that tuning commands hold while measuring
// (SelectorOptions::lock_dir): <cache dir>/locks, with --no-cache too.
[[nodiscard]] inline SelectorOptions with_device_lock(SelectorOptions o, const CliContext& ctx) {
  o.lock_dir = ctx.cache_dir / "locks";
  return o;
}

// Each registers a subcommand on `app`; its callback runs after parsing and sets ctx.exit_code.
void add_tune_command(CLI::App& app, CliContext& ctx);
void add_space_command(CLI::App& app, CliContext& ctx);
void add_cache_command(CLI::App& app, CliContext& ctx);
void add_compile_command(CLI::App& app, CliContext& ctx);
void add_gemm_command(CLI::App& app, CliContext& ctx);
void add_opencl_command(CLI::App& app, CliContext& ctx);
void add_simulate_command(CLI::App& app, CliContext& ctx);
void add_report_command(CLI::App& app, CliContext& ctx);
// `ktune cache prune` on the `cache` subcommand (cmd_cache_prune.cpp).
void add_prune_command(CLI::App& cache, CliContext& ctx);

}  // namespace ktune::cli

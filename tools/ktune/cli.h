// The ktune CLI: shared context and one registration function per subcommand (cmd_<verb>.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "ktune/cache_sqlite/sqlite_cache.h"
#include "ktune/select/selector.h"

namespace ktune::cli {

// Exit codes: 0 success, 1 a reported error, 2 a usage error.
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct CliContext {
  std::filesystem::path cache_dir;      // --cache-dir, else $KTUNE_CACHE_DIR, else ~/.cache/ktune
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
// The tuning cache of the tuning commands: in memory with --no-cache, else open_sqlite_in(ctx).
// Null, with the error printed, when that cannot be opened.
[[nodiscard]] std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx);

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
// `ktune cache prune` on the `cache` subcommand (cmd_cache_prune.cpp).
void add_prune_command(CLI::App& cache, CliContext& ctx);

}  // namespace ktune::cli

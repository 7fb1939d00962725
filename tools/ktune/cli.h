// The ktune CLI: shared context and one registration function per subcommand (cmd_<verb>.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "ktune/cache_sqlite/sqlite_cache.h"

namespace ktune::cli {

// Exit codes: 0 success, 1 a reported error, 2 a usage error.
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

struct CliContext {
  std::filesystem::path cache_dir;  // --cache-dir, else $KTUNE_CACHE_DIR, else ~/.cache/ktune
  int exit_code = 0;
};

// The tuning cache of the tuning commands: in memory with --no-cache, else the SQLite file in
// ctx.cache_dir. Null, with the error printed, when that cannot be opened.
[[nodiscard]] std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx);

// Each registers a subcommand on `app`; its callback runs after parsing and sets ctx.exit_code.
void add_tune_command(CLI::App& app, CliContext& ctx);
void add_space_command(CLI::App& app, CliContext& ctx);
void add_cache_command(CLI::App& app, CliContext& ctx);
void add_compile_command(CLI::App& app, CliContext& ctx);
void add_gemm_command(CLI::App& app, CliContext& ctx);
void add_opencl_command(CLI::App& app, CliContext& ctx);

}  // namespace ktune::cli

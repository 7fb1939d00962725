// What the subcommands share (cli.h).
#include "cli.h"

#include <fmt/format.h>

#include <cstdio>

namespace ktune::cli {

std::unique_ptr<TuningCache> open_tuning_cache(bool no_cache, const CliContext& ctx) {
  if (no_cache) return make_memory_cache();
  auto opened = open_sqlite_cache(ctx.cache_dir);
  if (!opened) {
    fmt::print(stderr, "error: {}\n", opened.error().message);
    return nullptr;
  }
  return std::move(*opened);
}

}  // namespace ktune::cli

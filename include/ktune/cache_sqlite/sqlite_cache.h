// The TuningCache that the CLI and the tuning layer use: SQLite (WAL) in the cache folder. Its own
// module (ktune::cache_sqlite), so that a program that only reads picks (ktune::runtime) does
// not link SQLite.
#pragma once

#include <filesystem>
#include <memory>

#include "ktune/cache/tuning_cache.h"
#include "ktune/core/status.h"

namespace ktune {

// The SQLite tuning cache's file in a cache folder: <dir>/tuning.sqlite3.
[[nodiscard]] std::filesystem::path sqlite_cache_file(const std::filesystem::path& dir);

// sqlite_cache_file(dir), created with the folder (mode 0700) when missing. A folder or file that
// another user owns, or that group or others can write (a folder without the sticky bit), is
// refused with kInvalidArgument saying why; `allow_shared_dir` uses it with a warning instead.
[[nodiscard]] Result<std::unique_ptr<TuningCache>> open_sqlite_cache(
    const std::filesystem::path& dir, bool allow_shared_dir = false);

}  // namespace ktune
